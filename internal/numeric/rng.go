package numeric

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// RNG is distfeat's frozen source of random draws. Its algorithm is part of the feature
// contract: changing any step changes everyone's features, and the golden tests fail.
//
//   - Key: SHA-256 of "distfeat/v1\x00" || seed (8 bytes, little endian) || stream name,
//     where the stream name is the family name (or "family/part" for a family's second stage).
//   - Bits: ChaCha8 from math/rand/v2 (a fixed, documented algorithm), 64 bits per call.
//   - Uniform: (bits >> 11) · 2⁻⁵³ ∈ [0, 1).
//   - Normal: Box–Muller on u1 = ((bits>>11)+1)·2⁻⁵³ ∈ (0, 1] and u2 uniform:
//     r = √(−2 ln u1); the pair is (r cos 2πu2, r sin 2πu2), returned first then second.
//     ln, sin and cos are Log and sincosPortable (libm.go): the operations of Go's
//     math.Log and math.Sincos as amd64 executes them, pinned on every architecture.
//
// Library samplers (rand.NormFloat64 and friends) are deliberately not used: their
// algorithms may change between Go releases.
type RNG struct {
	src       *rand.ChaCha8
	spare     float64
	haveSpare bool
}

// NewRNG returns the generator for one named stream of a spec's seed.
func NewRNG(seed uint64, stream string) *RNG {
	h := sha256.New()
	h.Write([]byte("distfeat/v1\x00"))
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(stream))
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return &RNG{src: rand.NewChaCha8(key)}
}

// Uint64 returns the next 64 raw bits.
func (r *RNG) Uint64() uint64 { return r.src.Uint64() }

// Float64 returns a uniform draw in [0, 1) with 53 random bits.
func (r *RNG) Float64() float64 { return float64(r.src.Uint64()>>11) * 0x1p-53 }

// Normal returns a standard normal draw (Box–Muller, pairs cached).
func (r *RNG) Normal() float64 {
	if r.haveSpare {
		r.haveSpare = false
		return r.spare
	}
	u1 := float64((r.src.Uint64()>>11)+1) * 0x1p-53
	u2 := r.Float64()
	rad := math.Sqrt(-2 * Log(u1))
	s, c := sincosPortable(2 * math.Pi * u2)
	r.spare, r.haveSpare = rad*s, true
	return rad * c
}

// normalBlock is how many Box–Muller pairs NormalFill prepares at a time.
const normalBlock = 64

// NormalFill fills dst with the next len(dst) draws of Normal, bit for bit (the same
// sequence as calling Normal len(dst) times, including the cached second value of a pair
// across calls). It is faster for large fills: the uniforms of a block of pairs are drawn
// first, then the Box–Muller transforms run over the block, four pairs at a time with AVX2
// on amd64 (rng_amd64.s: logUnit's and sincosPortable's operations lane by lane).
func (r *RNG) NormalFill(dst []float64) {
	if len(dst) > 0 && r.haveSpare {
		dst[0] = r.spare
		r.haveSpare = false
		dst = dst[1:]
	}
	var u1, u2, c, sn [normalBlock]float64
	for len(dst) >= 2 {
		n := min(normalBlock, len(dst)/2)
		for i := 0; i < n; i++ {
			u1[i] = float64((r.src.Uint64()>>11)+1) * 0x1p-53
			u2[i] = float64(r.src.Uint64()>>11) * 0x1p-53
		}
		for i := boxMullerSIMD(u1[:n], u2[:n], c[:n], sn[:n]); i < n; i++ {
			rad := math.Sqrt(-2 * logUnit(u1[i]))
			s, co := sincosPortable(2 * math.Pi * u2[i])
			c[i], sn[i] = rad*co, rad*s
		}
		out := dst[:2*n]
		for i := 0; i < n; i++ {
			out[2*i], out[2*i+1] = c[i], sn[i]
		}
		dst = dst[2*n:]
	}
	if len(dst) == 1 {
		dst[0] = r.Normal()
	}
}

// logUnit is Log for x in [2⁻⁵³, 1] (Box–Muller's u1): the same operations, without the
// special cases and with the exponent split of a normal number done on its bits (what
// math.Frexp returns for it).
func logUnit(x float64) float64 {
	b := math.Float64bits(x)
	return logFrexp(math.Float64frombits(b&(1<<52-1)|1022<<52), int(b>>52)-1022)
}
