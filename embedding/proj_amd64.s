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
