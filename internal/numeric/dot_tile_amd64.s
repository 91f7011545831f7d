//go:build amd64 && !purego

#include "textflag.h"

// rffDotTile4x6AVX512: the rffDot summation order (rff.go, dot_amd64.s) for a tile of 4
// rows of ω and 6 input vectors at once, so that each block of 8 ω values loaded from
// memory serves 6 windows and each block of a serves 4 rows. Every one of the 24 outputs
// is computed with exactly the operations of rffDotGo: lane k accumulates
// fma(ω_j, a_j, lane) over j ≡ k (mod 8) in increasing j from +0, the last incomplete
// block updates only lanes k < n mod 8 (merge masking), then the tree
// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)).
//
// Z0..Z23 the lanes of (window w, row r) in Z(4w+r), Z24..Z27 the current block of rows
// 0..3, Z28/Z29 the current block of a window, Z30/Z31 reduction temporaries (the
// reduction uses only 512-bit shuffles and scalar adds, so AVX-512F suffices).
// SI ω rows (stride R9 = n·8), DI windows 0..4 (stride R9), R11 window 5, R10 end of a's
// full blocks, BX t = n mod 8, R8 θ, R13 θ's window stride in bytes.

// TREE folds the 8 lanes of zi into ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)) and stores
// the scalar at mem. VSHUFF64X2 $0x0E brings lanes 4–7 down (lane k+4 next to lane k),
// $0x01 brings lanes 2–3 down; the adds commute exactly, so this is the order of REDUCE8.
#define TREE(zi, mem) \
	VSHUFF64X2 $0x0E, zi, zi, Z30 \
	VADDPD     Z30, zi, Z30 \
	VSHUFF64X2 $0x01, Z30, Z30, Z31 \
	VADDPD     Z31, Z30, Z31 \
	VPERMILPD  $1, Z31, Z30 \
	VADDSD     X30, X31, X30 \
	VMOVSD     X30, mem

// FMA4 updates the 4 rows of one window whose block of a is in za.
#define FMA4(za, z0, z1, z2, z3) \
	VFMADD231PD Z24, za, z0 \
	VFMADD231PD Z25, za, z1 \
	VFMADD231PD Z26, za, z2 \
	VFMADD231PD Z27, za, z3

#define FMA4K(za, z0, z1, z2, z3) \
	VFMADD231PD Z24, za, K1, z0 \
	VFMADD231PD Z25, za, K1, z1 \
	VFMADD231PD Z26, za, K1, z2 \
	VFMADD231PD Z27, za, K1, z3

// TILE_ARGS loads the tile kernels' arguments: SI ω rows, DI windows (stride R9 = n·8,
// R12 = 3·n·8), CX n, R8 θ, R13 θ's window stride in bytes.
#define TILE_ARGS \
	MOVQ omega+0(FP), SI \
	MOVQ a+8(FP), DI \
	MOVQ n+16(FP), CX \
	MOVQ theta+24(FP), R8 \
	MOVQ ldt+32(FP), R13 \
	SHLQ $3, R13 \
	MOVQ CX, R9 \
	SHLQ $3, R9 \
	LEAQ (R9)(R9*2), R12

// TILE_MASK sets R10 = &a_0[n &^ 7] (end of the full blocks), BX = t = n mod 8 and
// K1 = (1<<t) − 1 (the last block's lanes); it uses CX (n) and AX.
#define TILE_MASK \
	MOVQ CX, R10 \
	ANDQ $-8, R10 \
	LEAQ (DI)(R10*8), R10 \
	MOVQ CX, BX \
	ANDQ $7, BX \
	MOVQ BX, CX \
	MOVL $1, AX \
	SHLL CX, AX \
	DECL AX \
	KMOVW AX, K1

// ZERO16 clears the lanes of windows 0–3 (Z0..Z15).
#define ZERO16 \
	VPXORQ Z0, Z0, Z0 \
	VPXORQ Z1, Z1, Z1 \
	VPXORQ Z2, Z2, Z2 \
	VPXORQ Z3, Z3, Z3 \
	VPXORQ Z4, Z4, Z4 \
	VPXORQ Z5, Z5, Z5 \
	VPXORQ Z6, Z6, Z6 \
	VPXORQ Z7, Z7, Z7 \
	VPXORQ Z8, Z8, Z8 \
	VPXORQ Z9, Z9, Z9 \
	VPXORQ Z10, Z10, Z10 \
	VPXORQ Z11, Z11, Z11 \
	VPXORQ Z12, Z12, Z12 \
	VPXORQ Z13, Z13, Z13 \
	VPXORQ Z14, Z14, Z14 \
	VPXORQ Z15, Z15, Z15

// LOAD_ROWS loads the current block of the 4 rows; LOAD_ROWS_K the last, incomplete block
// (lanes ≥ t zeroed). WINDOWS4 and WINDOWS4_K do the same for windows 0–3 and update their
// lanes.
#define LOAD_ROWS \
	VMOVUPD (SI), Z24 \
	VMOVUPD (SI)(R9*1), Z25 \
	VMOVUPD (SI)(R9*2), Z26 \
	VMOVUPD (SI)(R12*1), Z27

#define LOAD_ROWS_K \
	VMOVUPD.Z (SI), K1, Z24 \
	VMOVUPD.Z (SI)(R9*1), K1, Z25 \
	VMOVUPD.Z (SI)(R9*2), K1, Z26 \
	VMOVUPD.Z (SI)(R12*1), K1, Z27

#define WINDOWS4 \
	VMOVUPD (DI), Z28 \
	VMOVUPD (DI)(R9*1), Z29 \
	FMA4(Z28, Z0, Z1, Z2, Z3) \
	FMA4(Z29, Z4, Z5, Z6, Z7) \
	VMOVUPD (DI)(R9*2), Z28 \
	VMOVUPD (DI)(R12*1), Z29 \
	FMA4(Z28, Z8, Z9, Z10, Z11) \
	FMA4(Z29, Z12, Z13, Z14, Z15)

#define WINDOWS4_K \
	VMOVUPD.Z (DI), K1, Z28 \
	VMOVUPD.Z (DI)(R9*1), K1, Z29 \
	FMA4K(Z28, Z0, Z1, Z2, Z3) \
	FMA4K(Z29, Z4, Z5, Z6, Z7) \
	VMOVUPD.Z (DI)(R9*2), K1, Z28 \
	VMOVUPD.Z (DI)(R12*1), K1, Z29 \
	FMA4K(Z28, Z8, Z9, Z10, Z11) \
	FMA4K(Z29, Z12, Z13, Z14, Z15)

// STORE4(z0, z1, z2, z3) reduces one window's 4 rows into θ at R8 and moves R8 to the next
// window.
#define STORE4(z0, z1, z2, z3) \
	TREE(z0, 0(R8)) \
	TREE(z1, 8(R8)) \
	TREE(z2, 16(R8)) \
	TREE(z3, 24(R8)) \
	ADDQ R13, R8

// func rffDotTile4x6AVX512(omega, a *float64, n int, theta *float64, ldt int)
TEXT ·rffDotTile4x6AVX512(SB), NOSPLIT, $0-40
	TILE_ARGS
	LEAQ (DI)(R9*4), R11
	ADDQ R9, R11             // R11 = window 5
	TILE_MASK
	ZERO16
	VPXORQ Z16, Z16, Z16
	VPXORQ Z17, Z17, Z17
	VPXORQ Z18, Z18, Z18
	VPXORQ Z19, Z19, Z19
	VPXORQ Z20, Z20, Z20
	VPXORQ Z21, Z21, Z21
	VPXORQ Z22, Z22, Z22
	VPXORQ Z23, Z23, Z23
	CMPQ   DI, R10
	JAE    tile_tail

tile_loop:
	LOAD_ROWS
	WINDOWS4
	VMOVUPD (DI)(R9*4), Z28
	VMOVUPD (R11), Z29
	FMA4(Z28, Z16, Z17, Z18, Z19)
	FMA4(Z29, Z20, Z21, Z22, Z23)
	ADDQ    $64, SI
	ADDQ    $64, DI
	ADDQ    $64, R11
	CMPQ    DI, R10
	JB      tile_loop

tile_tail:
	TESTQ     BX, BX
	JZ        tile_reduce
	LOAD_ROWS_K
	WINDOWS4_K
	VMOVUPD.Z (DI)(R9*4), K1, Z28
	VMOVUPD.Z (R11), K1, Z29
	FMA4K(Z28, Z16, Z17, Z18, Z19)
	FMA4K(Z29, Z20, Z21, Z22, Z23)

tile_reduce:
	STORE4(Z0, Z1, Z2, Z3)
	STORE4(Z4, Z5, Z6, Z7)
	STORE4(Z8, Z9, Z10, Z11)
	STORE4(Z12, Z13, Z14, Z15)
	STORE4(Z16, Z17, Z18, Z19)
	STORE4(Z20, Z21, Z22, Z23)
	VZEROUPPER
	RET

// rffDotTile4x4AVX512 is rffDotTile4x6AVX512 for 4 windows (Z0..Z15 the lanes of (window
// w, row r) in Z(4w+r)): the same operations for every output, for the 4 windows left over
// from the groups of 6, which would otherwise be padded to 6.
// func rffDotTile4x4AVX512(omega, a *float64, n int, theta *float64, ldt int)
TEXT ·rffDotTile4x4AVX512(SB), NOSPLIT, $0-40
	TILE_ARGS
	TILE_MASK
	ZERO16
	CMPQ DI, R10
	JAE  tile4_tail

tile4_loop:
	LOAD_ROWS
	WINDOWS4
	ADDQ $64, SI
	ADDQ $64, DI
	CMPQ DI, R10
	JB   tile4_loop

tile4_tail:
	TESTQ BX, BX
	JZ    tile4_reduce
	LOAD_ROWS_K
	WINDOWS4_K

tile4_reduce:
	STORE4(Z0, Z1, Z2, Z3)
	STORE4(Z4, Z5, Z6, Z7)
	STORE4(Z8, Z9, Z10, Z11)
	STORE4(Z12, Z13, Z14, Z15)
	VZEROUPPER
	RET
