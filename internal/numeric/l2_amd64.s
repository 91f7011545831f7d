//go:build amd64 && !purego

#include "textflag.h"

// The l2Products kernels (l2_amd64.go): for each basis function m, the 8 products of one
// block, ψ = T[i0[m]..+8]·T[i1[m]..+8] (d = 2) or (T[i0]·T[i1])·T[i2] (d = 3), each
// rounded (VMULPD), then fma(ψ, 2³², 1.5·2⁵²) whose raw bits are summed as int64 over
// the 8 points, and acc[m] += sum − 8·magicBits: l2ProductsGo's operations, in any
// order for the integer sum (addition mod 2⁶⁴ is associative). TestL2AddPathsBitIdentical
// checks the result against the original code bit for bit.
//
// Registers: SI tab, R9/R10/R11 i0/i1/i2, CX nb, DX acc, BX m, AX offset / sum,
// R12 8·magicBits (mod 2⁶⁴); vector constants 2³² and 1.5·2⁵².

#define SCALE32 $0x41F0000000000000
#define MAGIC $0x4338000000000000

// HSUM8 adds the 8 int64 lanes of Z0 into AX. Clobbers Z1.
#define HSUM8 \
	VEXTRACTI64X4 $1, Z0, Y1 \
	VPADDQ        Y1, Y0, Y0 \
	VEXTRACTI128  $1, Y0, X1 \
	VPADDQ        X1, X0, X0 \
	VPSHUFD       $0x4E, X0, X1 \
	VPADDQ        X1, X0, X0 \
	VMOVQ         X0, AX

// func l2Products2AVX512(tab *float64, i0, i1 *int32, nb int, acc *int64)
TEXT ·l2Products2AVX512(SB), NOSPLIT, $0-40
	MOVQ tab+0(FP), SI
	MOVQ i0+8(FP), R9
	MOVQ i1+16(FP), R10
	MOVQ nb+24(FP), CX
	MOVQ acc+32(FP), DX
	MOVQ SCALE32, AX
	VPBROADCASTQ AX, Z30
	MOVQ MAGIC, AX
	VPBROADCASTQ AX, Z31
	MOVQ AX, R12
	SHLQ $3, R12
	XORQ BX, BX

l2p2_512_loop:
	MOVLQSX     (R9)(BX*4), AX
	VMOVUPD     (SI)(AX*8), Z0
	MOVLQSX     (R10)(BX*4), AX
	VMULPD      (SI)(AX*8), Z0, Z0
	VFMADD213PD Z31, Z30, Z0 // ψ·2³² + magic
	HSUM8
	SUBQ        R12, AX
	ADDQ        AX, (DX)(BX*8)
	INCQ        BX
	CMPQ        BX, CX
	JB          l2p2_512_loop
	VZEROUPPER
	RET

// func l2Products3AVX512(tab *float64, i0, i1, i2 *int32, nb int, acc *int64)
TEXT ·l2Products3AVX512(SB), NOSPLIT, $0-48
	MOVQ tab+0(FP), SI
	MOVQ i0+8(FP), R9
	MOVQ i1+16(FP), R10
	MOVQ i2+24(FP), R11
	MOVQ nb+32(FP), CX
	MOVQ acc+40(FP), DX
	MOVQ SCALE32, AX
	VPBROADCASTQ AX, Z30
	MOVQ MAGIC, AX
	VPBROADCASTQ AX, Z31
	MOVQ AX, R12
	SHLQ $3, R12
	XORQ BX, BX

l2p3_512_loop:
	MOVLQSX     (R9)(BX*4), AX
	VMOVUPD     (SI)(AX*8), Z0
	MOVLQSX     (R10)(BX*4), AX
	VMULPD      (SI)(AX*8), Z0, Z0
	MOVLQSX     (R11)(BX*4), AX
	VMULPD      (SI)(AX*8), Z0, Z0
	VFMADD213PD Z31, Z30, Z0
	HSUM8
	SUBQ        R12, AX
	ADDQ        AX, (DX)(BX*8)
	INCQ        BX
	CMPQ        BX, CX
	JB          l2p3_512_loop
	VZEROUPPER
	RET

// HSUM4x2 adds the 8 int64 lanes of Y0 and Y2 into AX. Clobbers Y0, Y1.
#define HSUM4x2 \
	VPADDQ       Y2, Y0, Y0 \
	VEXTRACTI128 $1, Y0, X1 \
	VPADDQ       X1, X0, X0 \
	VPSHUFD      $0x4E, X0, X1 \
	VPADDQ       X1, X0, X0 \
	VMOVQ        X0, AX

// func l2Products2AVX2(tab *float64, i0, i1 *int32, nb int, acc *int64)
TEXT ·l2Products2AVX2(SB), NOSPLIT, $0-40
	MOVQ tab+0(FP), SI
	MOVQ i0+8(FP), R9
	MOVQ i1+16(FP), R10
	MOVQ nb+24(FP), CX
	MOVQ acc+32(FP), DX
	MOVQ SCALE32, AX
	VMOVQ AX, X14
	VPBROADCASTQ X14, Y14
	MOVQ MAGIC, AX
	VMOVQ AX, X15
	VPBROADCASTQ X15, Y15
	MOVQ AX, R12
	SHLQ $3, R12
	XORQ BX, BX

l2p2_256_loop:
	MOVLQSX     (R9)(BX*4), AX
	VMOVUPD     (SI)(AX*8), Y0
	VMOVUPD     32(SI)(AX*8), Y2
	MOVLQSX     (R10)(BX*4), AX
	VMULPD      (SI)(AX*8), Y0, Y0
	VMULPD      32(SI)(AX*8), Y2, Y2
	VFMADD213PD Y15, Y14, Y0
	VFMADD213PD Y15, Y14, Y2
	HSUM4x2
	SUBQ        R12, AX
	ADDQ        AX, (DX)(BX*8)
	INCQ        BX
	CMPQ        BX, CX
	JB          l2p2_256_loop
	VZEROUPPER
	RET

// func l2Products3AVX2(tab *float64, i0, i1, i2 *int32, nb int, acc *int64)
TEXT ·l2Products3AVX2(SB), NOSPLIT, $0-48
	MOVQ tab+0(FP), SI
	MOVQ i0+8(FP), R9
	MOVQ i1+16(FP), R10
	MOVQ i2+24(FP), R11
	MOVQ nb+32(FP), CX
	MOVQ acc+40(FP), DX
	MOVQ SCALE32, AX
	VMOVQ AX, X14
	VPBROADCASTQ X14, Y14
	MOVQ MAGIC, AX
	VMOVQ AX, X15
	VPBROADCASTQ X15, Y15
	MOVQ AX, R12
	SHLQ $3, R12
	XORQ BX, BX

l2p3_256_loop:
	MOVLQSX     (R9)(BX*4), AX
	VMOVUPD     (SI)(AX*8), Y0
	VMOVUPD     32(SI)(AX*8), Y2
	MOVLQSX     (R10)(BX*4), AX
	VMULPD      (SI)(AX*8), Y0, Y0
	VMULPD      32(SI)(AX*8), Y2, Y2
	MOVLQSX     (R11)(BX*4), AX
	VMULPD      (SI)(AX*8), Y0, Y0
	VMULPD      32(SI)(AX*8), Y2, Y2
	VFMADD213PD Y15, Y14, Y0
	VFMADD213PD Y15, Y14, Y2
	HSUM4x2
	SUBQ        R12, AX
	ADDQ        AX, (DX)(BX*8)
	INCQ        BX
	CMPQ        BX, CX
	JB          l2p3_256_loop
	VZEROUPPER
	RET
