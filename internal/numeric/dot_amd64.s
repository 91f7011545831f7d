//go:build amd64 && !purego

#include "textflag.h"

// The rffDot kernels: θ_r = ω_r·a for consecutive rows of a row-major matrix, with the
// summation order that rffDotGo (rff.go) spells out: eight lanes, lane k accumulating the
// terms j ≡ k (mod 8) in increasing j with one VFMADD each, starting from +0; in the last,
// incomplete block of 8 (n mod 8 = t > 0) only lanes k < t are updated (AVX-512: merge
// masking; AVX2: the FMA result is blended back under a mask); then the reduction tree
// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)). TestRFFDotPathsBitIdentical checks the
// result against rffDotGo bit for bit.
//
// Several rows share each load of a (8 for AVX-512, 6 for AVX2), which also gives the FMA
// units 8 independent dependency chains. Rows left over are done one at a time.
//
// Registers common to both kernels: SI ω of the current row group, DI a, DX rows left,
// R8 θ output cursor, R9 row stride in bytes (n·8), R12 3·R9, R10 end of a's full blocks,
// BX t = n mod 8, AX/CX row cursors, R13 a cursor.

// tailMask: 8 all-ones quadwords then 8 zero quadwords. The 8 quadwords at byte offset
// (8−t)·8 have their first t lanes set: the AVX2 tail masks for lanes 0–3 and 4–7.
DATA tailMask<>+0(SB)/8, $-1
DATA tailMask<>+8(SB)/8, $-1
DATA tailMask<>+16(SB)/8, $-1
DATA tailMask<>+24(SB)/8, $-1
DATA tailMask<>+32(SB)/8, $-1
DATA tailMask<>+40(SB)/8, $-1
DATA tailMask<>+48(SB)/8, $-1
DATA tailMask<>+56(SB)/8, $-1
DATA tailMask<>+64(SB)/8, $0
DATA tailMask<>+72(SB)/8, $0
DATA tailMask<>+80(SB)/8, $0
DATA tailMask<>+88(SB)/8, $0
DATA tailMask<>+96(SB)/8, $0
DATA tailMask<>+104(SB)/8, $0
DATA tailMask<>+112(SB)/8, $0
DATA tailMask<>+120(SB)/8, $0
GLOBL tailMask<>(SB), RODATA|NOPTR, $128

// REDUCE8 folds the 8 lanes of ZMM zi (its low half yi) into the scalar
// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)) and stores it at off(R8). Clobbers Z14, Z15.
#define REDUCE8(zi, yi, off) \
	VEXTRACTF64X4 $1, zi, Y14 \
	VADDPD        Y14, yi, Y14 \
	VEXTRACTF128  $1, Y14, X15 \
	VADDPD        X15, X14, X14 \
	VPERMILPD     $1, X14, X15 \
	VADDSD        X15, X14, X14 \
	VMOVSD        X14, off(R8)

// REDUCE4x2 is REDUCE8 for the two YMM halves lo (lanes 0–3) and hi (lanes 4–7).
// Clobbers Y14, Y15.
#define REDUCE4x2(lo, hi, off) \
	VADDPD       hi, lo, Y14 \
	VEXTRACTF128 $1, Y14, X15 \
	VADDPD       X15, X14, X14 \
	VPERMILPD    $1, X14, X15 \
	VADDSD       X15, X14, X14 \
	VMOVSD       X14, off(R8)

// func rffDotAVX512(omega, a *float64, n, rows int, theta *float64)
//
// Z0..Z7 the lanes of 8 rows, Z8 a block of a, K1 the tail mask (first t lanes).
TEXT ·rffDotAVX512(SB), NOSPLIT, $0-40
	MOVQ omega+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ rows+24(FP), DX
	MOVQ theta+32(FP), R8

	MOVQ CX, R9
	SHLQ $3, R9              // R9 = n·8
	LEAQ (R9)(R9*2), R12     // R12 = 3·n·8
	MOVQ CX, R10
	ANDQ $-8, R10
	LEAQ (DI)(R10*8), R10    // R10 = &a[n &^ 7]
	MOVQ CX, BX
	ANDQ $7, BX              // BX = t
	MOVQ BX, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1             // K1 = (1<<t) − 1

avx512_group8:
	CMPQ DX, $8
	JB   avx512_single
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	MOVQ   SI, AX            // rows 0..4 at (AX), (AX)(R9), (AX)(2·R9), (AX)(R12), (AX)(4·R9)
	LEAQ   (SI)(R9*4), CX
	ADDQ   R9, CX            // rows 5..7 at (CX), (CX)(R9), (CX)(2·R9)
	MOVQ   DI, R13
	CMPQ   R13, R10
	JAE    avx512_tail8

avx512_loop8:
	VMOVUPD     (R13), Z8
	VFMADD231PD (AX), Z8, Z0
	VFMADD231PD (AX)(R9*1), Z8, Z1
	VFMADD231PD (AX)(R9*2), Z8, Z2
	VFMADD231PD (AX)(R12*1), Z8, Z3
	VFMADD231PD (AX)(R9*4), Z8, Z4
	VFMADD231PD (CX), Z8, Z5
	VFMADD231PD (CX)(R9*1), Z8, Z6
	VFMADD231PD (CX)(R9*2), Z8, Z7
	ADDQ        $64, R13
	ADDQ        $64, AX
	ADDQ        $64, CX
	CMPQ        R13, R10
	JB          avx512_loop8

avx512_tail8:
	TESTQ       BX, BX
	JZ          avx512_reduce8
	VMOVUPD.Z   (R13), K1, Z8
	VFMADD231PD (AX), Z8, K1, Z0
	VFMADD231PD (AX)(R9*1), Z8, K1, Z1
	VFMADD231PD (AX)(R9*2), Z8, K1, Z2
	VFMADD231PD (AX)(R12*1), Z8, K1, Z3
	VFMADD231PD (AX)(R9*4), Z8, K1, Z4
	VFMADD231PD (CX), Z8, K1, Z5
	VFMADD231PD (CX)(R9*1), Z8, K1, Z6
	VFMADD231PD (CX)(R9*2), Z8, K1, Z7

avx512_reduce8:
	REDUCE8(Z0, Y0, 0)
	REDUCE8(Z1, Y1, 8)
	REDUCE8(Z2, Y2, 16)
	REDUCE8(Z3, Y3, 24)
	REDUCE8(Z4, Y4, 32)
	REDUCE8(Z5, Y5, 40)
	REDUCE8(Z6, Y6, 48)
	REDUCE8(Z7, Y7, 56)
	ADDQ $64, R8
	LEAQ (SI)(R9*8), SI
	SUBQ $8, DX
	JMP  avx512_group8

avx512_single:
	TESTQ  DX, DX
	JZ     avx512_done
	VPXORQ Z0, Z0, Z0
	MOVQ   SI, AX
	MOVQ   DI, R13
	CMPQ   R13, R10
	JAE    avx512_tail1

avx512_loop1:
	VMOVUPD     (R13), Z8
	VFMADD231PD (AX), Z8, Z0
	ADDQ        $64, R13
	ADDQ        $64, AX
	CMPQ        R13, R10
	JB          avx512_loop1

avx512_tail1:
	TESTQ       BX, BX
	JZ          avx512_reduce1
	VMOVUPD.Z   (R13), K1, Z8
	VFMADD231PD (AX), Z8, K1, Z0

avx512_reduce1:
	REDUCE8(Z0, Y0, 0)
	ADDQ $8, R8
	ADDQ R9, SI
	DECQ DX
	JMP  avx512_single

avx512_done:
	VZEROUPPER
	RET

// AVX2HALF updates one half (4 lanes) of a row's lanes in the incomplete last block:
// Y14 the mask of that half, Y12 that half of a (masked lanes 0), mem the row's ω half.
// The FMA runs on all 4 lanes and the blend keeps the old value in the masked-out ones.
#define AVX2HALF(acc, mem) \
	VMASKMOVPD  mem, Y14, Y13 \
	VFMADD213PD acc, Y12, Y13 \
	VBLENDVPD   Y14, Y13, acc, acc

// func rffDotAVX2(omega, a *float64, n, rows int, theta *float64)
//
// Y0..Y11 the lanes of 6 rows (row r: Y(2r) lanes 0–3, Y(2r+1) lanes 4–7), Y12/Y13 a
// block of a, R11 the tail masks (tailMask + (8−t)·8).
TEXT ·rffDotAVX2(SB), NOSPLIT, $0-40
	MOVQ omega+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ rows+24(FP), DX
	MOVQ theta+32(FP), R8

	MOVQ CX, R9
	SHLQ $3, R9
	LEAQ (R9)(R9*2), R12
	MOVQ CX, R10
	ANDQ $-8, R10
	LEAQ (DI)(R10*8), R10
	MOVQ CX, BX
	ANDQ $7, BX
	MOVQ $8, AX
	SUBQ BX, AX
	LEAQ tailMask<>(SB), R11
	LEAQ (R11)(AX*8), R11

avx2_group6:
	CMPQ   DX, $6
	JB     avx2_single
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	MOVQ   SI, AX            // rows 0..4 at (AX), (AX)(R9), (AX)(2·R9), (AX)(R12), (AX)(4·R9)
	LEAQ   (SI)(R9*4), CX
	ADDQ   R9, CX            // row 5 at (CX)
	MOVQ   DI, R13
	CMPQ   R13, R10
	JAE    avx2_tail6

avx2_loop6:
	VMOVUPD     (R13), Y12
	VMOVUPD     32(R13), Y13
	VFMADD231PD (AX), Y12, Y0
	VFMADD231PD 32(AX), Y13, Y1
	VFMADD231PD (AX)(R9*1), Y12, Y2
	VFMADD231PD 32(AX)(R9*1), Y13, Y3
	VFMADD231PD (AX)(R9*2), Y12, Y4
	VFMADD231PD 32(AX)(R9*2), Y13, Y5
	VFMADD231PD (AX)(R12*1), Y12, Y6
	VFMADD231PD 32(AX)(R12*1), Y13, Y7
	VFMADD231PD (AX)(R9*4), Y12, Y8
	VFMADD231PD 32(AX)(R9*4), Y13, Y9
	VFMADD231PD (CX), Y12, Y10
	VFMADD231PD 32(CX), Y13, Y11
	ADDQ        $64, R13
	ADDQ        $64, AX
	ADDQ        $64, CX
	CMPQ        R13, R10
	JB          avx2_loop6

avx2_tail6:
	TESTQ      BX, BX
	JZ         avx2_reduce6
	VMOVDQU    (R11), Y14       // lanes 0–3
	VMASKMOVPD (R13), Y14, Y12  // masked-out lanes read as 0 and never fault
	AVX2HALF(Y0, (AX))
	AVX2HALF(Y2, (AX)(R9*1))
	AVX2HALF(Y4, (AX)(R9*2))
	AVX2HALF(Y6, (AX)(R12*1))
	AVX2HALF(Y8, (AX)(R9*4))
	AVX2HALF(Y10, (CX))
	VMOVDQU    32(R11), Y14     // lanes 4–7
	VMASKMOVPD 32(R13), Y14, Y12
	AVX2HALF(Y1, 32(AX))
	AVX2HALF(Y3, 32(AX)(R9*1))
	AVX2HALF(Y5, 32(AX)(R9*2))
	AVX2HALF(Y7, 32(AX)(R12*1))
	AVX2HALF(Y9, 32(AX)(R9*4))
	AVX2HALF(Y11, 32(CX))

avx2_reduce6:
	REDUCE4x2(Y0, Y1, 0)
	REDUCE4x2(Y2, Y3, 8)
	REDUCE4x2(Y4, Y5, 16)
	REDUCE4x2(Y6, Y7, 24)
	REDUCE4x2(Y8, Y9, 32)
	REDUCE4x2(Y10, Y11, 40)
	ADDQ $48, R8
	LEAQ (SI)(R9*4), SI
	LEAQ (SI)(R9*2), SI
	SUBQ $6, DX
	JMP  avx2_group6

avx2_single:
	TESTQ  DX, DX
	JZ     avx2_done
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	MOVQ   SI, AX
	MOVQ   DI, R13
	CMPQ   R13, R10
	JAE    avx2_tail1

avx2_loop1:
	VMOVUPD     (R13), Y12
	VMOVUPD     32(R13), Y13
	VFMADD231PD (AX), Y12, Y0
	VFMADD231PD 32(AX), Y13, Y1
	ADDQ        $64, R13
	ADDQ        $64, AX
	CMPQ        R13, R10
	JB          avx2_loop1

avx2_tail1:
	TESTQ      BX, BX
	JZ         avx2_reduce1
	VMOVDQU    (R11), Y14
	VMASKMOVPD (R13), Y14, Y12
	AVX2HALF(Y0, (AX))
	VMOVDQU    32(R11), Y14
	VMASKMOVPD 32(R13), Y14, Y12
	AVX2HALF(Y1, 32(AX))

avx2_reduce1:
	REDUCE4x2(Y0, Y1, 0)
	ADDQ $8, R8
	ADDQ R9, SI
	DECQ DX
	JMP  avx2_single

avx2_done:
	VZEROUPPER
	RET
