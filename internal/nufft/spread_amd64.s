//go:build amd64 && !purego

#include "textflag.h"

DATA half<>+0(SB)/8, $0.5
GLOBL half<>(SB), RODATA|NOPTR, $8
DATA four<>+0(SB)/8, $4.0
GLOBL four<>(SB), RODATA|NOPTR, $8
DATA seven<>+0(SB)/8, $7.0
GLOBL seven<>(SB), RODATA|NOPTR, $8
DATA twoP32<>+0(SB)/8, $0x41f0000000000000
GLOBL twoP32<>(SB), RODATA|NOPTR, $8
DATA magic<>+0(SB)/8, $0x4338000000000000
GLOBL magic<>(SB), RODATA|NOPTR, $8

// POSITION(off, L, I, T): the grid index i0 = ⌈pos − 4⌉ (into I) and the local coordinate
// t = 2(i0 − pos) + 7 (into X register T) of coordinate off(SI), pos = (u − 0.5)·inv + L
// with inv at off(R9) and L at 16+off(R9): position in kernel.go, operation for operation
// (VEX forms throughout: legacy SSE among YMM code costs a state transition on some CPUs).
#define POSITION(off, I, T) \
	VMOVSD off(SI), X0 \
	VSUBSD half<>(SB), X0, X0 \
	VMULSD off(R9), X0, X0 \
	VADDSD 16+off(R9), X0, X0 \
	VSUBSD four<>(SB), X0, T \
	VROUNDSD $2, T, T, T \
	VCVTTSD2SIQ T, I \
	VSUBSD X0, T, T \
	VADDSD T, T, T \
	VADDSD seven<>(SB), T, T

// HORNER(T, LO, HI): the eight kernel pieces at t (broadcast in T) into LO (pieces 0–3)
// and HI (4–7): values8 in kernel.go, v = fma(v, t, c_j).
#define HORNER(T, LO, HI) \
	VMOVUPD 0(DX), LO \
	VMOVUPD 32(DX), HI \
	VFMADD213PD 64(DX), T, LO \
	VFMADD213PD 96(DX), T, HI \
	VFMADD213PD 128(DX), T, LO \
	VFMADD213PD 160(DX), T, HI \
	VFMADD213PD 192(DX), T, LO \
	VFMADD213PD 224(DX), T, HI \
	VFMADD213PD 256(DX), T, LO \
	VFMADD213PD 288(DX), T, HI \
	VFMADD213PD 320(DX), T, LO \
	VFMADD213PD 352(DX), T, HI \
	VFMADD213PD 384(DX), T, LO \
	VFMADD213PD 416(DX), T, HI \
	VFMADD213PD 448(DX), T, LO \
	VMULPD T, HI, HI \
	VADDPD 480(DX), HI, HI

// ROW(K, lane): one row of eight cells at (R10): s = lane `lane` of K (k0·2³², broadcast),
// cells += bits(fma(s, k1, 1.5·2⁵²)) − bits(1.5·2⁵²), k1 in Y6 (cells 0–3) and Y7 (4–7); then
// R10 moves to the next row. term and spread2w8 in spread.go.
#define ROW(K, lane) \
	VPERMPD $lane, K, Y8 \
	VMOVAPD Y14, Y9 \
	VMOVAPD Y14, Y10 \
	VFMADD231PD Y6, Y8, Y9 \
	VFMADD231PD Y7, Y8, Y10 \
	VPSUBQ Y14, Y9, Y9 \
	VPSUBQ Y14, Y10, Y10 \
	VPADDQ (R10), Y9, Y9 \
	VPADDQ 32(R10), Y10, Y10 \
	VMOVDQU Y9, (R10) \
	VMOVDQU Y10, 32(R10) \
	LEAQ (R10)(R8*8), R10

// func spread2w8AVX2(grid *int64, n1 int, pts *float64, n int, coef *float64, par *[4]float64)
TEXT ·spread2w8AVX2(SB), NOSPLIT, $0-48
	MOVQ grid+0(FP), DI
	MOVQ n1+8(FP), R8
	MOVQ pts+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ coef+32(FP), DX
	MOVQ par+40(FP), R9
	VBROADCASTSD twoP32<>(SB), Y15
	VBROADCASTSD magic<>(SB), Y14

point:
	POSITION(0, AX, X1)
	POSITION(8, BX, X2)
	VBROADCASTSD X1, Y1
	VBROADCASTSD X2, Y2
	HORNER(Y1, Y4, Y5)
	HORNER(Y2, Y6, Y7)
	VMULPD Y15, Y4, Y4
	VMULPD Y15, Y5, Y5
	MOVQ AX, R10
	IMULQ R8, R10
	ADDQ BX, R10
	LEAQ (DI)(R10*8), R10
	ROW(Y4, 0x00)
	ROW(Y4, 0x55)
	ROW(Y4, 0xaa)
	ROW(Y4, 0xff)
	ROW(Y5, 0x00)
	ROW(Y5, 0x55)
	ROW(Y5, 0xaa)
	ROW(Y5, 0xff)
	ADDQ $16, SI
	DECQ CX
	JNZ point
	VZEROUPPER
	RET

// func spread1w8AVX2(grid *int64, pts *float64, n int, coef *float64, par *[4]float64)
//
// Spread for d = 1 and w = 8 over n ≥ 1 points: position and values8, then
// cells[i0+a] += bits(fma(k[a], 2³², 1.5·2⁵²)) − bits(1.5·2⁵²) (spread1's term).
TEXT ·spread1w8AVX2(SB), NOSPLIT, $0-40
	MOVQ grid+0(FP), DI
	MOVQ pts+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ coef+24(FP), DX
	MOVQ par+32(FP), R9
	VBROADCASTSD twoP32<>(SB), Y15
	VBROADCASTSD magic<>(SB), Y14

point1:
	POSITION(0, AX, X1)
	VBROADCASTSD X1, Y1
	HORNER(Y1, Y4, Y5)
	LEAQ    (DI)(AX*8), R10
	VMOVAPD Y14, Y9
	VMOVAPD Y14, Y10
	VFMADD231PD Y15, Y4, Y9
	VFMADD231PD Y15, Y5, Y10
	VPSUBQ  Y14, Y9, Y9
	VPSUBQ  Y14, Y10, Y10
	VPADDQ  (R10), Y9, Y9
	VPADDQ  32(R10), Y10, Y10
	VMOVDQU Y9, (R10)
	VMOVDQU Y10, 32(R10)
	ADDQ    $8, SI
	DECQ    CX
	JNZ     point1
	VZEROUPPER
	RET
