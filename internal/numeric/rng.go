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
