package schema

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestPow10Table checks every entry of the generated table against exact rational
// arithmetic: with exp = 1+⌊e·log₂10⌋ as eiselLemire computes it, the entry m (128 bits)
// must satisfy m ≤ 10^e·2^(128−exp) < m+1 and have its high bit set.
func TestPow10Table(t *testing.T) {
	one := big.NewInt(1)
	for e := pow10Min; e <= pow10Max; e++ {
		ent := pow10Tab[e-pow10Min]
		m := new(big.Int).Lsh(new(big.Int).SetUint64(ent[0]), 64)
		m.Or(m, new(big.Int).SetUint64(ent[1]))
		if m.BitLen() != 128 {
			t.Fatalf("1e%d: mantissa has %d bits, want 128", e, m.BitLen())
		}
		shift := 128 - (1 + (e*108853)>>15)
		v := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e))), nil))
		if e < 0 {
			v.Inv(v)
		}
		p := new(big.Rat).SetInt(new(big.Int).Lsh(one, uint(abs(shift))))
		if shift < 0 {
			p.Inv(p)
		}
		v.Mul(v, p)
		lo := new(big.Rat).SetInt(m)
		hi := new(big.Rat).SetInt(new(big.Int).Add(m, one))
		if v.Cmp(lo) < 0 || v.Cmp(hi) >= 0 {
			t.Fatalf("1e%d: table entry %#x is not ⌊10^e·2^%d⌋", e, m, shift)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestEiselLemireMatchesParseFloat: whenever eiselLemire answers, its answer has the bits of
// strconv.ParseFloat on the same decimal; it answers for the typical coordinate (16–17
// significant digits, which Clinger's fast path cannot take).
func TestEiselLemireMatchesParseFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type tc struct {
		mant  uint64
		exp10 int
	}
	cases := []tc{{1, 0}, {9007199254740993, 0}, {9007199254740993, -16}, {17976931348623157, 292},
		{22250738585072014, -324}, {49, -325}, {1, 23}, {1, -400}, {1, 400}, {1<<64 - 1, -19},
		{1<<64 - 1, 289}, {1<<64 - 1, -343}}
	for i := 0; i < 200000; i++ {
		var c tc
		switch i % 4 {
		case 0: // shortest round-trip form of a uniform coordinate
			v := rng.Float64()
			s := strconv.FormatFloat(v, 'e', -1, 64)
			c = decimalOf(t, s)
		case 1: // any float64
			v := math.Float64frombits(rng.Uint64())
			if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
				continue
			}
			c = decimalOf(t, strconv.FormatFloat(math.Abs(v), 'e', -1, 64))
		case 2: // up to 19 random digits, any exponent in the table and beyond
			c = tc{rng.Uint64() % 10_000_000_000_000_000_000, rng.IntN(800) - 400}
		case 3: // halfway between two float64: the exact decimal of an odd 54-bit mantissa
			c = tc{rng.Uint64()>>10 | 1, 0}
		}
		cases = append(cases, c)
	}
	answered := 0
	for _, c := range cases {
		if c.mant == 0 {
			continue
		}
		for _, neg := range []bool{false, true} {
			got, ok := eiselLemire(c.mant, c.exp10, neg)
			if !ok {
				continue
			}
			answered++
			s := strconv.FormatUint(c.mant, 10) + "e" + strconv.Itoa(c.exp10)
			if neg {
				s = "-" + s
			}
			want, _ := strconv.ParseFloat(s, 64)
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("eiselLemire(%s) = %v (%#x), ParseFloat %v (%#x)", s, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
	// Cases 0 and 1 (half of all) are all in range and normal; most must be answered.
	if answered < len(cases)/2 {
		t.Fatalf("eiselLemire answered %d of %d conversions", answered, 2*len(cases))
	}
}

// decimalOf returns the digits and exponent of a positive float in 'e' form, e.g. 1.25e-3 →
// (125, -5).
func decimalOf(t *testing.T, s string) struct {
	mant  uint64
	exp10 int
} {
	t.Helper()
	var digits []byte
	i := 0
	for ; i < len(s) && s[i] != 'e'; i++ {
		if s[i] != '.' {
			digits = append(digits, s[i])
		}
	}
	e, err := strconv.Atoi(s[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	m, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return struct {
		mant  uint64
		exp10 int
	}{m, e - (len(digits) - 1)}
}

// FuzzJSONNumber: whatever number accepts converts to the bits strconv.ParseFloat gives for
// the same bytes (±Inf on overflow included).
func FuzzJSONNumber(f *testing.F) {
	for _, s := range []string{"0.9591519648123261", "1e23", "-0", "4.9e-324", "123456789012345678901e-3",
		"0.000000000000000000012345678901234567891", "1.7976931348623159e308", "9007199254740993"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := jsonDecoder{b: []byte(s)}
		got, ok := d.number()
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s[:d.i], 64)
		if err != nil && !math.IsInf(want, 0) {
			t.Fatalf("number accepted %q, ParseFloat: %v", s[:d.i], err)
		}
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("number(%q) = %v, ParseFloat %v", s[:d.i], got, want)
		}
	})
}

// TestEightDigits compares the SWAR conversion with the digit-by-digit one on every byte
// string that differs from a random 8-digit string in one byte (digits and all neighbours
// of the digit range, which the test must reject).
func TestEightDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 20000; n++ {
		b := []byte(strconv.FormatUint(rng.Uint64()%100_000_000+100_000_000, 10)[1:])
		for pos := 0; pos < 8; pos++ {
			for _, c := range []byte{'0', '5', '9', '/', ':', '.', 'e', 0, 0x30 + 16, 0x39 + 7, 0xB0, 0xFF} {
				x := append([]byte(nil), b...)
				x[pos] = c
				var want uint64
				wantOK := true
				for _, d := range x {
					if d < '0' || d > '9' {
						wantOK = false
						break
					}
					want = want*10 + uint64(d-'0')
				}
				got, ok := eightDigits(x)
				if ok != wantOK || (ok && got != want) {
					t.Fatalf("eightDigits(%q) = %d, %v; want %d, %v", x, got, ok, want, wantOK)
				}
			}
		}
	}
}
