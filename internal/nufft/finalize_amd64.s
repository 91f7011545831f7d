//go:build amd64 && !purego

#include "textflag.h"

// func rowUpdatesAVX2(src *float64, n int, e *float64, m0 int, ar, ai *float64)
//
// rowUpdatesGo (finalize.go): for mi < m0, ar[mi·n+i] = fma(e[mi], src[i], ar[mi·n+i]) and
// ai[mi·n+i] = fma(e[m0+mi], src[i], ai[mi·n+i]); four i at a time, the last n mod 4 one at
// a time.
TEXT ·rowUpdatesAVX2(SB), NOSPLIT, $0-48
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ e+16(FP), DX
	MOVQ m0+24(FP), R8
	MOVQ ar+32(FP), DI
	MOVQ ai+40(FP), R9
	LEAQ (DX)(R8*8), R10 // e + m0: the imaginary parts
	XORQ R11, R11        // mi

row:
	VBROADCASTSD (DX)(R11*8), Y0  // er
	VBROADCASTSD (R10)(R11*8), Y1 // ei
	XORQ AX, AX                   // i
	MOVQ CX, BX
	ANDQ $-4, BX // n rounded down to 4

quad:
	CMPQ AX, BX
	JGE  tail
	VMOVUPD (SI)(AX*8), Y2
	VMOVUPD (DI)(AX*8), Y3
	VFMADD231PD Y0, Y2, Y3
	VMOVUPD Y3, (DI)(AX*8)
	VMOVUPD (R9)(AX*8), Y4
	VFMADD231PD Y1, Y2, Y4
	VMOVUPD Y4, (R9)(AX*8)
	ADDQ    $4, AX
	JMP     quad

tail:
	CMPQ   AX, CX
	JGE    next
	VMOVSD (SI)(AX*8), X2
	VMOVSD (DI)(AX*8), X3
	VFMADD231SD X0, X2, X3
	VMOVSD X3, (DI)(AX*8)
	VMOVSD (R9)(AX*8), X4
	VFMADD231SD X1, X2, X4
	VMOVSD X4, (R9)(AX*8)
	INCQ   AX
	JMP    tail

next:
	LEAQ (DI)(CX*8), DI
	LEAQ (R9)(CX*8), R9
	INCQ R11
	CMPQ R11, R8
	JLT  row
	VZEROUPPER
	RET

// ACC(E, X, A): A = fma(E, X, A).
#define ACC(E, X, A) \
	VFMADD231PD E, X, A

// func dotColumnsAVX2(xr, xi *float64, n int, e1t *float64, m1p int, br, bi *float64)
//
// dotColumnsGo (finalize.go) for m1p a positive multiple of 4: eight columns at a time
// (then four), each column's four sums accumulated over l in order in its own lane.
TEXT ·dotColumnsAVX2(SB), NOSPLIT, $0-56
	MOVQ xr+0(FP), SI
	MOVQ xi+8(FP), R12
	MOVQ n+16(FP), CX
	MOVQ e1t+24(FP), DX
	MOVQ m1p+32(FP), R8
	MOVQ br+40(FP), DI
	MOVQ bi+48(FP), R9
	MOVQ R8, R13
	SHLQ $4, R13 // row stride of e1t in bytes: 2·m1p·8
	XORQ R11, R11 // first column of the block

block8:
	LEAQ 8(R11), AX
	CMPQ AX, R8
	JGT  block4
	VXORPD Y0, Y0, Y0 // rr, columns 0–3
	VXORPD Y1, Y1, Y1 // ii
	VXORPD Y2, Y2, Y2 // ri
	VXORPD Y3, Y3, Y3 // ir
	VXORPD Y4, Y4, Y4 // rr, columns 4–7
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	LEAQ (DX)(R11*8), BX // e1t row 0, column R11 (real part)
	LEAQ (BX)(R8*8), R10 // imaginary part
	XORQ AX, AX

l8:
	VBROADCASTSD (SI)(AX*8), Y8  // xr[l]
	VBROADCASTSD (R12)(AX*8), Y9 // xi[l]
	VMOVUPD (BX), Y10            // Er, columns 0–3
	VMOVUPD (R10), Y11           // Ei
	ACC(Y10, Y8, Y0)
	ACC(Y11, Y9, Y1)
	ACC(Y10, Y9, Y2)
	ACC(Y11, Y8, Y3)
	VMOVUPD 32(BX), Y12          // columns 4–7
	VMOVUPD 32(R10), Y13
	ACC(Y12, Y8, Y4)
	ACC(Y13, Y9, Y5)
	ACC(Y12, Y9, Y6)
	ACC(Y13, Y8, Y7)
	ADDQ R13, BX
	ADDQ R13, R10
	INCQ AX
	CMPQ AX, CX
	JLT  l8
	VSUBPD  Y1, Y0, Y0 // rr − ii
	VADDPD  Y3, Y2, Y2 // ri + ir
	VSUBPD  Y5, Y4, Y4
	VADDPD  Y7, Y6, Y6
	VMOVUPD Y0, (DI)(R11*8)
	VMOVUPD Y2, (R9)(R11*8)
	VMOVUPD Y4, 32(DI)(R11*8)
	VMOVUPD Y6, 32(R9)(R11*8)
	ADDQ $8, R11
	JMP  block8

block4:
	CMPQ R11, R8
	JGE  done
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	LEAQ (DX)(R11*8), BX
	LEAQ (BX)(R8*8), R10
	XORQ AX, AX

l4:
	VBROADCASTSD (SI)(AX*8), Y8
	VBROADCASTSD (R12)(AX*8), Y9
	VMOVUPD (BX), Y10
	VMOVUPD (R10), Y11
	ACC(Y10, Y8, Y0)
	ACC(Y11, Y9, Y1)
	ACC(Y10, Y9, Y2)
	ACC(Y11, Y8, Y3)
	ADDQ R13, BX
	ADDQ R13, R10
	INCQ AX
	CMPQ AX, CX
	JLT  l4
	VSUBPD  Y1, Y0, Y0
	VADDPD  Y3, Y2, Y2
	VMOVUPD Y0, (DI)(R11*8)
	VMOVUPD Y2, (R9)(R11*8)
	ADDQ $4, R11
	JMP  block4

done:
	VZEROUPPER
	RET

// IROW(a): row a of target's 8×8 neighbourhood at (R10) (real) and (R11) (imaginary):
// acc = fma(va, vb·g, acc) per lane b (vb·g rounded), va = w0[a] broadcast; then the next row.
#define IROW(a) \
	VBROADCASTSD (a*8)(BX), Y6 \
	VMULPD (R10), Y0, Y7 \
	VFMADD231PD Y6, Y7, Y2 \
	VMULPD 32(R10), Y1, Y8 \
	VFMADD231PD Y6, Y8, Y3 \
	VMULPD (R11), Y0, Y9 \
	VFMADD231PD Y6, Y9, Y4 \
	VMULPD 32(R11), Y1, Y10 \
	VFMADD231PD Y6, Y10, Y5 \
	LEAQ (R10)(R8*8), R10 \
	LEAQ (R11)(R8*8), R11

// REDUCE(LO, HI, OUT): (q0 + q2) + (q1 + q3), q = LO + HI lane by lane, into X register OUT's
// low lane (X12 scratch).
#define REDUCE(LO, HI, XLO, OUT) \
	VADDPD HI, LO, LO \
	VEXTRACTF128 $1, LO, X12 \
	VADDPD X12, XLO, XLO \
	VUNPCKHPD XLO, XLO, X12 \
	VADDSD X12, XLO, OUT

// func interp2AVX2(gr, gi *float64, stride int, start *int32, wts *float64, f int, fr, fi *float64)
//
// interp2Go (finalize.go): per target, the 8×8 neighbourhood weighted lane by lane (one
// lane per column b), then the fixed reduction of the eight lanes.
TEXT ·interp2AVX2(SB), NOSPLIT, $0-64
	MOVQ gr+0(FP), SI
	MOVQ gi+8(FP), R12
	MOVQ stride+16(FP), R8
	MOVQ start+24(FP), R13
	MOVQ wts+32(FP), BX
	MOVQ f+40(FP), CX
	MOVQ fr+48(FP), DI
	MOVQ fi+56(FP), R9
	XORQ R14, R14 // r

target:
	MOVLQSX (R13), AX  // s0
	MOVLQSX 4(R13), DX // s1
	IMULQ   R8, AX
	ADDQ    DX, AX
	LEAQ    (SI)(AX*8), R10
	LEAQ    (R12)(AX*8), R11
	VMOVUPD 64(BX), Y0 // w1[0:4]
	VMOVUPD 96(BX), Y1 // w1[4:8]
	VXORPD  Y2, Y2, Y2
	VXORPD  Y3, Y3, Y3
	VXORPD  Y4, Y4, Y4
	VXORPD  Y5, Y5, Y5
	IROW(0)
	IROW(1)
	IROW(2)
	IROW(3)
	IROW(4)
	IROW(5)
	IROW(6)
	IROW(7)
	REDUCE(Y2, Y3, X2, X13)
	REDUCE(Y4, Y5, X4, X14)
	VMOVSD X13, (DI)(R14*8)
	VMOVSD X14, (R9)(R14*8)
	ADDQ   $8, R13
	ADDQ   $128, BX
	INCQ   R14
	CMPQ   R14, CX
	JLT    target
	VZEROUPPER
	RET
