//go:build amd64 && !purego

#include "textflag.h"

// Offsets in the constant table of boxMullerAVX2 (boxMullerConsts in rng_amd64.go).
#define K_MAGIC 0
#define K_SQRT2H 8
#define K_ONE 16
#define K_TWO 24
#define K_HALF 32
#define K_L1 40
#define K_L2 48
#define K_L3 56
#define K_L4 64
#define K_L5 72
#define K_L6 80
#define K_L7 88
#define K_LN2HI 96
#define K_LN2LO 104
#define K_M2 112
#define K_TWOPI 120
#define K_FOURPI 128
#define K_P4A 136
#define K_P4B 144
#define K_P4C 152
#define K_S0 160
#define K_S1 168
#define K_S2 176
#define K_S3 184
#define K_S4 192
#define K_S5 200
#define K_C0 208
#define K_C1 216
#define K_C2 224
#define K_C3 232
#define K_C4 240
#define K_C5 248
#define K_MANT 256
#define K_EXP1022 264
#define K_I1022 272
#define K_I1 280
#define K_I4 288
#define K_I2 296
#define K_SIGN 304

#define BC(k, R) VBROADCASTSD k(DX), R

// func boxMullerAVX2(u1, u2 *float64, n int, cosOut, sinOut *float64, k *[40]float64)
//
// For i < n (a positive multiple of 4): rad = √(−2·logUnit(u1[i])), (s, c) =
// sincosPortable(2π·u2[i]), cosOut[i] = rad·c, sinOut[i] = rad·s — the operations of
// logUnit and sincosPortable (libm.go, rng.go) lane by lane, every product and sum
// separately rounded as there (no fused multiply-add), the branches as masks.
TEXT ·boxMullerAVX2(SB), NOSPLIT, $0-48
	MOVQ u1+0(FP), SI
	MOVQ u2+8(FP), R12
	MOVQ n+16(FP), CX
	MOVQ cosOut+24(FP), DI
	MOVQ sinOut+32(FP), R9
	MOVQ k+40(FP), DX
	XORQ AX, AX

loop:
	// logUnit(u1): ki = exponent − 1022, f1 = mantissa with exponent 1022 (math.Frexp).
	VMOVUPD      (SI)(AX*8), Y0
	VPSRLQ       $52, Y0, Y1
	VPBROADCASTQ K_I1022(DX), Y2
	VPSUBQ       Y2, Y1, Y1
	VPBROADCASTQ K_MANT(DX), Y2
	VPAND        Y2, Y0, Y3
	VPBROADCASTQ K_EXP1022(DX), Y2
	VPOR         Y2, Y3, Y3
	// f1 < √2/2: f1 *= 2, ki−− (the mask is −1 in those lanes).
	BC(K_SQRT2H, Y2)
	VCMPPD       $1, Y2, Y3, Y4
	VADDPD       Y3, Y3, Y5
	VBLENDVPD    Y4, Y5, Y3, Y3
	VPADDQ       Y4, Y1, Y1
	BC(K_ONE, Y2)
	VSUBPD       Y2, Y3, Y3 // f = f1 − 1
	BC(K_MAGIC, Y2)
	VPADDQ       Y2, Y1, Y1
	VSUBPD       Y2, Y1, Y1 // k = float64(ki), exact
	BC(K_TWO, Y2)
	VADDPD       Y2, Y3, Y4
	VDIVPD       Y4, Y3, Y4 // s = f/(2+f)
	VMULPD       Y4, Y4, Y5 // s2
	VMULPD       Y5, Y5, Y6 // s4
	// t1 = s2·(l1 + s4·(l3 + s4·(l5 + s4·l7)))
	BC(K_L7, Y7)
	VMULPD       Y7, Y6, Y7
	BC(K_L5, Y2)
	VADDPD       Y2, Y7, Y7
	VMULPD       Y7, Y6, Y7
	BC(K_L3, Y2)
	VADDPD       Y2, Y7, Y7
	VMULPD       Y7, Y6, Y7
	BC(K_L1, Y2)
	VADDPD       Y2, Y7, Y7
	VMULPD       Y7, Y5, Y7
	// t2 = s4·(l2 + s4·(l4 + s4·l6))
	BC(K_L6, Y8)
	VMULPD       Y8, Y6, Y8
	BC(K_L4, Y2)
	VADDPD       Y2, Y8, Y8
	VMULPD       Y8, Y6, Y8
	BC(K_L2, Y2)
	VADDPD       Y2, Y8, Y8
	VMULPD       Y8, Y6, Y8
	VADDPD       Y8, Y7, Y7 // r = t1 + t2
	BC(K_HALF, Y2)
	VMULPD       Y2, Y3, Y9
	VMULPD       Y3, Y9, Y9 // hfsq = (0.5·f)·f
	// k·ln2Hi − ((hfsq − (s·(hfsq + r) + k·ln2Lo)) − f)
	VADDPD       Y7, Y9, Y10
	VMULPD       Y10, Y4, Y10
	BC(K_LN2LO, Y2)
	VMULPD       Y2, Y1, Y11
	VADDPD       Y11, Y10, Y10
	VSUBPD       Y10, Y9, Y10
	VSUBPD       Y3, Y10, Y10
	BC(K_LN2HI, Y2)
	VMULPD       Y2, Y1, Y11
	VSUBPD       Y10, Y11, Y10
	BC(K_M2, Y2)
	VMULPD       Y2, Y10, Y10
	VSQRTPD      Y10, Y15 // rad

	// sincosPortable(2π·u2): x ∈ [0, 2π), no sign, no special cases needed (x = 0 gives
	// sin +0 and cos 1 through the general path too).
	VMOVUPD      (R12)(AX*8), Y0
	BC(K_TWOPI, Y2)
	VMULPD       Y2, Y0, Y0 // x
	BC(K_FOURPI, Y2)
	VMULPD       Y2, Y0, Y1
	VROUNDPD     $3, Y1, Y1 // j as a float (truncated)
	BC(K_MAGIC, Y2)
	VADDPD       Y2, Y1, Y3
	VPSUBQ       Y2, Y3, Y3 // j as an integer
	VPBROADCASTQ K_I1(DX), Y4
	VPAND        Y4, Y3, Y5
	VPADDQ       Y5, Y3, Y3 // odd j: j++
	VPADDQ       Y2, Y3, Y6
	VSUBPD       Y2, Y6, Y6 // y = float64(j)
	BC(K_P4A, Y2)
	VMULPD       Y2, Y6, Y8
	VSUBPD       Y8, Y0, Y7
	BC(K_P4B, Y2)
	VMULPD       Y2, Y6, Y8
	VSUBPD       Y8, Y7, Y7
	BC(K_P4C, Y2)
	VMULPD       Y2, Y6, Y8
	VSUBPD       Y8, Y7, Y7 // z
	VPBROADCASTQ K_I4(DX), Y4
	VPAND        Y4, Y3, Y5
	VPCMPEQQ     Y4, Y5, Y5 // m4: j&7 > 3 (flip sin and cos)
	VPBROADCASTQ K_I2(DX), Y4
	VPAND        Y4, Y3, Y6
	VPCMPEQQ     Y4, Y6, Y6 // m2: (j&7) mod 4 > 1 (flip cos, swap)
	VMULPD       Y7, Y7, Y8 // zz
	BC(K_C0, Y9)
	VMULPD       Y8, Y9, Y9
	BC(K_C1, Y11)
	VADDPD       Y11, Y9, Y9
	BC(K_S0, Y10)
	VMULPD       Y8, Y10, Y10
	BC(K_S1, Y11)
	VADDPD       Y11, Y10, Y10
	VMULPD       Y8, Y9, Y9
	BC(K_C2, Y11)
	VADDPD       Y11, Y9, Y9
	VMULPD       Y8, Y10, Y10
	BC(K_S2, Y11)
	VADDPD       Y11, Y10, Y10
	VMULPD       Y8, Y9, Y9
	BC(K_C3, Y11)
	VADDPD       Y11, Y9, Y9
	VMULPD       Y8, Y10, Y10
	BC(K_S3, Y11)
	VADDPD       Y11, Y10, Y10
	VMULPD       Y8, Y9, Y9
	BC(K_C4, Y11)
	VADDPD       Y11, Y9, Y9
	VMULPD       Y8, Y10, Y10
	BC(K_S4, Y11)
	VADDPD       Y11, Y10, Y10
	VMULPD       Y8, Y9, Y9
	BC(K_C5, Y11)
	VADDPD       Y11, Y9, Y9 // pc
	VMULPD       Y8, Y10, Y10
	BC(K_S5, Y11)
	VADDPD       Y11, Y10, Y10 // ps
	// cos = (1 − 0.5·zz) + (zz·zz)·pc
	BC(K_HALF, Y11)
	VMULPD       Y11, Y8, Y11
	BC(K_ONE, Y12)
	VSUBPD       Y11, Y12, Y12
	VMULPD       Y8, Y8, Y11
	VMULPD       Y9, Y11, Y11
	VADDPD       Y11, Y12, Y12
	// sin = z + (z·zz)·ps
	VMULPD       Y8, Y7, Y11
	VMULPD       Y10, Y11, Y11
	VADDPD       Y11, Y7, Y13
	// swap where m2, then the signs
	VBLENDVPD    Y6, Y13, Y12, Y14 // cos'
	VBLENDVPD    Y6, Y12, Y13, Y13 // sin'
	VPBROADCASTQ K_SIGN(DX), Y11
	VPAND        Y11, Y5, Y9
	VPXOR        Y6, Y5, Y10
	VPAND        Y11, Y10, Y10
	VXORPD       Y9, Y13, Y13
	VXORPD       Y10, Y14, Y14
	VMULPD       Y14, Y15, Y14
	VMULPD       Y13, Y15, Y13
	VMOVUPD      Y14, (DI)(AX*8)
	VMOVUPD      Y13, (R9)(AX*8)
	ADDQ         $4, AX
	CMPQ         AX, CX
	JLT          loop
	VZEROUPPER
	RET
