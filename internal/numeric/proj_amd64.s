//go:build amd64 && !purego

#include "textflag.h"

// func projLanesAVX512(th *float64, h int, v *float64, ldv int, out *float64)
//
// 32 independent lanes k (projLanesGo spells out the order): a0_k = Σ_{c even} th_c·v_{c,k},
// a1_k = Σ_{c odd} th_c·v_{c,k}, each product rounded (VMULPD) and then added (VADDPD) in
// increasing c, both sums starting from +0; out_k = a0_k + a1_k. Row c of v starts at
// v + c·ldv bytes. Z0–Z3 a0, Z4–Z7 a1, Z8/Z9 th_c and th_{c+1} broadcast, Z10–Z13 products.
TEXT ·projLanesAVX512(SB), NOSPLIT, $0-40
	MOVQ th+0(FP), SI
	MOVQ h+8(FP), CX
	MOVQ v+16(FP), DI
	MOVQ ldv+24(FP), R9
	MOVQ out+32(FP), R8
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	MOVQ   CX, DX
	SHRQ   $1, DX            // DX = pairs of c
	JZ     proj_odd

proj_loop:
	VBROADCASTSD (SI), Z8
	VBROADCASTSD 8(SI), Z9
	VMULPD       (DI), Z8, Z10
	VMULPD       64(DI), Z8, Z11
	VMULPD       128(DI), Z8, Z12
	VMULPD       192(DI), Z8, Z13
	VADDPD       Z10, Z0, Z0
	VADDPD       Z11, Z1, Z1
	VADDPD       Z12, Z2, Z2
	VADDPD       Z13, Z3, Z3
	VMULPD       (DI)(R9*1), Z9, Z10
	VMULPD       64(DI)(R9*1), Z9, Z11
	VMULPD       128(DI)(R9*1), Z9, Z12
	VMULPD       192(DI)(R9*1), Z9, Z13
	VADDPD       Z10, Z4, Z4
	VADDPD       Z11, Z5, Z5
	VADDPD       Z12, Z6, Z6
	VADDPD       Z13, Z7, Z7
	ADDQ         $16, SI
	LEAQ         (DI)(R9*2), DI
	DECQ         DX
	JNZ          proj_loop

proj_odd:
	TESTQ        $1, CX
	JZ           proj_done
	VBROADCASTSD (SI), Z8
	VMULPD       (DI), Z8, Z10
	VMULPD       64(DI), Z8, Z11
	VMULPD       128(DI), Z8, Z12
	VMULPD       192(DI), Z8, Z13
	VADDPD       Z10, Z0, Z0
	VADDPD       Z11, Z1, Z1
	VADDPD       Z12, Z2, Z2
	VADDPD       Z13, Z3, Z3

proj_done:
	VADDPD  Z4, Z0, Z0
	VADDPD  Z5, Z1, Z1
	VADDPD  Z6, Z2, Z2
	VADDPD  Z7, Z3, Z3
	VMOVUPD Z0, (R8)
	VMOVUPD Z1, 64(R8)
	VMOVUPD Z2, 128(R8)
	VMOVUPD Z3, 192(R8)
	VZEROUPPER
	RET

// func projLanes8AVX512(th *float64, h int, v *float64, ldv int, out *float64)
//
// projLanesAVX512 for 8 lanes: Z0 a0, Z1 a1, Z8/Z9 th_c and th_{c+1}, Z10/Z11 products.
TEXT ·projLanes8AVX512(SB), NOSPLIT, $0-40
	MOVQ th+0(FP), SI
	MOVQ h+8(FP), CX
	MOVQ v+16(FP), DI
	MOVQ ldv+24(FP), R9
	MOVQ out+32(FP), R8
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	MOVQ   CX, DX
	SHRQ   $1, DX
	JZ     proj8_odd

proj8_loop:
	VBROADCASTSD (SI), Z8
	VBROADCASTSD 8(SI), Z9
	VMULPD       (DI), Z8, Z10
	VMULPD       (DI)(R9*1), Z9, Z11
	VADDPD       Z10, Z0, Z0
	VADDPD       Z11, Z1, Z1
	ADDQ         $16, SI
	LEAQ         (DI)(R9*2), DI
	DECQ         DX
	JNZ          proj8_loop

proj8_odd:
	TESTQ        $1, CX
	JZ           proj8_done
	VBROADCASTSD (SI), Z8
	VMULPD       (DI), Z8, Z10
	VADDPD       Z10, Z0, Z0

proj8_done:
	VADDPD  Z1, Z0, Z0
	VMOVUPD Z0, (R8)
	VZEROUPPER
	RET

// func foldLinesAVX512(fn *float64, width, pairs int, plus, minus *float64)
//
// project2DT's fold for c < pairs: with a = line c and b = line G−1−c of the G×G grid fn
// (line c at fn + c·G·8 bytes), plus[c·G + o] = a[o] + b[o] and minus[c·G + o] = a[o] − b[o]
// (one rounded VADDPD and VSUBPD per element, as in Go). The last g mod 8 elements of each
// line use a merge mask K1. g ≥ 1, pairs ≥ 1.
TEXT ·foldLinesAVX512(SB), NOSPLIT, $0-40
	MOVQ fn+0(FP), SI
	MOVQ width+8(FP), CX
	MOVQ pairs+16(FP), DX
	MOVQ plus+24(FP), R8
	MOVQ minus+32(FP), R9
	MOVQ CX, R10
	SHLQ $3, R10             // R10 = line length in bytes
	MOVQ CX, AX
	DECQ AX
	IMULQ R10, AX
	LEAQ (SI)(AX*1), DI      // DI = line G−1
	MOVQ CX, R11
	SHRQ $3, R11             // full blocks per line
	MOVQ CX, BX
	ANDQ $7, BX              // BX = g mod 8
	MOVQ BX, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1             // tail mask: the first g mod 8 lanes

fold_line:
	XORQ R12, R12            // byte offset in the line
	MOVQ R11, R13
	TESTQ R13, R13
	JZ   fold_tail

fold_block:
	VMOVUPD (SI)(R12*1), Z0
	VMOVUPD (DI)(R12*1), Z1
	VADDPD  Z1, Z0, Z2
	VSUBPD  Z1, Z0, Z3
	VMOVUPD Z2, (R8)(R12*1)
	VMOVUPD Z3, (R9)(R12*1)
	ADDQ    $64, R12
	DECQ    R13
	JNZ     fold_block

fold_tail:
	TESTQ BX, BX
	JZ    fold_next
	VMOVUPD.Z (SI)(R12*1), K1, Z0
	VMOVUPD.Z (DI)(R12*1), K1, Z1
	VADDPD  Z1, Z0, Z2
	VSUBPD  Z1, Z0, Z3
	VMOVUPD Z2, K1, (R8)(R12*1)
	VMOVUPD Z3, K1, (R9)(R12*1)

fold_next:
	ADDQ R10, SI
	SUBQ R10, DI
	ADDQ R10, R8
	ADDQ R10, R9
	DECQ DX
	JNZ  fold_line
	VZEROUPPER
	RET

// func projLanes8x2AVX512(thR, thI *float64, h int, v *float64, ldv int, outR, outI *float64)
//
// projLanes8AVX512 for two tables thR and thI over the same 8 lanes of v at once (each
// value of v loaded once): per lane and table, the same products and sums in the same
// order. Z0/Z1 a0/a1 of thR, Z2/Z3 a0/a1 of thI, Z4–Z7 th broadcasts, Z8/Z9 rows of v,
// Z10–Z13 products.
TEXT ·projLanes8x2AVX512(SB), NOSPLIT, $0-56
	MOVQ   thR+0(FP), SI
	MOVQ   thI+8(FP), R10
	MOVQ   h+16(FP), CX
	MOVQ   v+24(FP), DI
	MOVQ   ldv+32(FP), R9
	MOVQ   outR+40(FP), R8
	MOVQ   outI+48(FP), R11
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	MOVQ   CX, DX
	SHRQ   $1, DX
	JZ     p8x2_odd

p8x2_loop:
	VBROADCASTSD (SI), Z4
	VBROADCASTSD 8(SI), Z5
	VBROADCASTSD (R10), Z6
	VBROADCASTSD 8(R10), Z7
	VMOVUPD      (DI), Z8
	VMOVUPD      (DI)(R9*1), Z9
	VMULPD       Z8, Z4, Z10
	VMULPD       Z9, Z5, Z11
	VMULPD       Z8, Z6, Z12
	VMULPD       Z9, Z7, Z13
	VADDPD       Z10, Z0, Z0
	VADDPD       Z11, Z1, Z1
	VADDPD       Z12, Z2, Z2
	VADDPD       Z13, Z3, Z3
	ADDQ         $16, SI
	ADDQ         $16, R10
	LEAQ         (DI)(R9*2), DI
	DECQ         DX
	JNZ          p8x2_loop

p8x2_odd:
	TESTQ        $1, CX
	JZ           p8x2_done
	VBROADCASTSD (SI), Z4
	VBROADCASTSD (R10), Z6
	VMOVUPD      (DI), Z8
	VMULPD       Z8, Z4, Z10
	VMULPD       Z8, Z6, Z12
	VADDPD       Z10, Z0, Z0
	VADDPD       Z12, Z2, Z2

p8x2_done:
	VADDPD  Z1, Z0, Z0
	VADDPD  Z3, Z2, Z2
	VMOVUPD Z0, (R8)
	VMOVUPD Z2, (R11)
	VZEROUPPER
	RET
