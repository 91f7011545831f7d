//go:build amd64 && !purego

#include "textflag.h"

// The mmd kernels: for each block of frequencies (8 lanes for AVX-512, 4 for AVX2) and each
// point, θ = ω·u (one multiply, then one FMA per further coordinate), then the sincosPoly
// sequence of sincos.go operation for operation, then the fixed-point conversion of
// fixed.go: fma(v, 2³², 1.5·2⁵²), whose raw bits are summed as int64 (the magic's bit
// pattern is subtracted once per accumulator: the accumulators start at −n·magicBits).
// The result is bit-identical to mmdAccumulateGo; TestMMDKernelPathsBitIdentical checks it.
//
// Argument layout: omega = ω_jr at omega[j*hp + r]; u = n points × d, row-major;
// acc = [sin sums (hp) | cos sums (hp)]; hp is a multiple of 8.

// Offsets into sincosTab: each constant is replicated 4× (one YMM vector).
#define T_TWOOVERPI 0
#define T_MAGIC 32
#define T_PIO2HI 64
#define T_PIO2LO 96
#define T_SINC0 128
#define T_SINC1 160
#define T_SINC2 192
#define T_SINC3 224
#define T_SINC4 256
#define T_SINC5 288
#define T_COSC0 320
#define T_COSC1 352
#define T_COSC2 384
#define T_COSC3 416
#define T_COSC4 448
#define T_COSC5 480
#define T_MINUSHALF 512
#define T_ONE 544
#define T_SCALE32 576
#define T_SIGNMASK 608
#define T_INTONE 640
#define T_INTTWO 672

// twoOverPi at 0
DATA sincosTab<>+0(SB)/8, $0x3FE45F306DC9C883
DATA sincosTab<>+8(SB)/8, $0x3FE45F306DC9C883
DATA sincosTab<>+16(SB)/8, $0x3FE45F306DC9C883
DATA sincosTab<>+24(SB)/8, $0x3FE45F306DC9C883
// magic at 32
DATA sincosTab<>+32(SB)/8, $0x4338000000000000
DATA sincosTab<>+40(SB)/8, $0x4338000000000000
DATA sincosTab<>+48(SB)/8, $0x4338000000000000
DATA sincosTab<>+56(SB)/8, $0x4338000000000000
// pio2Hi at 64
DATA sincosTab<>+64(SB)/8, $0x3FF921FB54442D18
DATA sincosTab<>+72(SB)/8, $0x3FF921FB54442D18
DATA sincosTab<>+80(SB)/8, $0x3FF921FB54442D18
DATA sincosTab<>+88(SB)/8, $0x3FF921FB54442D18
// pio2Lo at 96
DATA sincosTab<>+96(SB)/8, $0x3C91A62633145C07
DATA sincosTab<>+104(SB)/8, $0x3C91A62633145C07
DATA sincosTab<>+112(SB)/8, $0x3C91A62633145C07
DATA sincosTab<>+120(SB)/8, $0x3C91A62633145C07
// sinC0 at 128
DATA sincosTab<>+128(SB)/8, $0x3DE5D8FD1FD19CCD
DATA sincosTab<>+136(SB)/8, $0x3DE5D8FD1FD19CCD
DATA sincosTab<>+144(SB)/8, $0x3DE5D8FD1FD19CCD
DATA sincosTab<>+152(SB)/8, $0x3DE5D8FD1FD19CCD
// sinC1 at 160
DATA sincosTab<>+160(SB)/8, $0xBE5AE5E5A9291F5D
DATA sincosTab<>+168(SB)/8, $0xBE5AE5E5A9291F5D
DATA sincosTab<>+176(SB)/8, $0xBE5AE5E5A9291F5D
DATA sincosTab<>+184(SB)/8, $0xBE5AE5E5A9291F5D
// sinC2 at 192
DATA sincosTab<>+192(SB)/8, $0x3EC71DE3567D48A1
DATA sincosTab<>+200(SB)/8, $0x3EC71DE3567D48A1
DATA sincosTab<>+208(SB)/8, $0x3EC71DE3567D48A1
DATA sincosTab<>+216(SB)/8, $0x3EC71DE3567D48A1
// sinC3 at 224
DATA sincosTab<>+224(SB)/8, $0xBF2A01A019BFDF03
DATA sincosTab<>+232(SB)/8, $0xBF2A01A019BFDF03
DATA sincosTab<>+240(SB)/8, $0xBF2A01A019BFDF03
DATA sincosTab<>+248(SB)/8, $0xBF2A01A019BFDF03
// sinC4 at 256
DATA sincosTab<>+256(SB)/8, $0x3F8111111110F7D0
DATA sincosTab<>+264(SB)/8, $0x3F8111111110F7D0
DATA sincosTab<>+272(SB)/8, $0x3F8111111110F7D0
DATA sincosTab<>+280(SB)/8, $0x3F8111111110F7D0
// sinC5 at 288
DATA sincosTab<>+288(SB)/8, $0xBFC5555555555548
DATA sincosTab<>+296(SB)/8, $0xBFC5555555555548
DATA sincosTab<>+304(SB)/8, $0xBFC5555555555548
DATA sincosTab<>+312(SB)/8, $0xBFC5555555555548
// cosC0 at 320
DATA sincosTab<>+320(SB)/8, $0xBDA8FA49A0861A9B
DATA sincosTab<>+328(SB)/8, $0xBDA8FA49A0861A9B
DATA sincosTab<>+336(SB)/8, $0xBDA8FA49A0861A9B
DATA sincosTab<>+344(SB)/8, $0xBDA8FA49A0861A9B
// cosC1 at 352
DATA sincosTab<>+352(SB)/8, $0x3E21EE9D7B4E3F05
DATA sincosTab<>+360(SB)/8, $0x3E21EE9D7B4E3F05
DATA sincosTab<>+368(SB)/8, $0x3E21EE9D7B4E3F05
DATA sincosTab<>+376(SB)/8, $0x3E21EE9D7B4E3F05
// cosC2 at 384
DATA sincosTab<>+384(SB)/8, $0xBE927E4F7EAC4BC6
DATA sincosTab<>+392(SB)/8, $0xBE927E4F7EAC4BC6
DATA sincosTab<>+400(SB)/8, $0xBE927E4F7EAC4BC6
DATA sincosTab<>+408(SB)/8, $0xBE927E4F7EAC4BC6
// cosC3 at 416
DATA sincosTab<>+416(SB)/8, $0x3EFA01A019C844F5
DATA sincosTab<>+424(SB)/8, $0x3EFA01A019C844F5
DATA sincosTab<>+432(SB)/8, $0x3EFA01A019C844F5
DATA sincosTab<>+440(SB)/8, $0x3EFA01A019C844F5
// cosC4 at 448
DATA sincosTab<>+448(SB)/8, $0xBF56C16C16C14F91
DATA sincosTab<>+456(SB)/8, $0xBF56C16C16C14F91
DATA sincosTab<>+464(SB)/8, $0xBF56C16C16C14F91
DATA sincosTab<>+472(SB)/8, $0xBF56C16C16C14F91
// cosC5 at 480
DATA sincosTab<>+480(SB)/8, $0x3FA555555555554B
DATA sincosTab<>+488(SB)/8, $0x3FA555555555554B
DATA sincosTab<>+496(SB)/8, $0x3FA555555555554B
DATA sincosTab<>+504(SB)/8, $0x3FA555555555554B
// minusHalf at 512
DATA sincosTab<>+512(SB)/8, $0xBFE0000000000000
DATA sincosTab<>+520(SB)/8, $0xBFE0000000000000
DATA sincosTab<>+528(SB)/8, $0xBFE0000000000000
DATA sincosTab<>+536(SB)/8, $0xBFE0000000000000
// one at 544
DATA sincosTab<>+544(SB)/8, $0x3FF0000000000000
DATA sincosTab<>+552(SB)/8, $0x3FF0000000000000
DATA sincosTab<>+560(SB)/8, $0x3FF0000000000000
DATA sincosTab<>+568(SB)/8, $0x3FF0000000000000
// scale32 at 576
DATA sincosTab<>+576(SB)/8, $0x41F0000000000000
DATA sincosTab<>+584(SB)/8, $0x41F0000000000000
DATA sincosTab<>+592(SB)/8, $0x41F0000000000000
DATA sincosTab<>+600(SB)/8, $0x41F0000000000000
// signMask at 608
DATA sincosTab<>+608(SB)/8, $0x8000000000000000
DATA sincosTab<>+616(SB)/8, $0x8000000000000000
DATA sincosTab<>+624(SB)/8, $0x8000000000000000
DATA sincosTab<>+632(SB)/8, $0x8000000000000000
// intOne at 640
DATA sincosTab<>+640(SB)/8, $0x0000000000000001
DATA sincosTab<>+648(SB)/8, $0x0000000000000001
DATA sincosTab<>+656(SB)/8, $0x0000000000000001
DATA sincosTab<>+664(SB)/8, $0x0000000000000001
// intTwo at 672
DATA sincosTab<>+672(SB)/8, $0x0000000000000002
DATA sincosTab<>+680(SB)/8, $0x0000000000000002
DATA sincosTab<>+688(SB)/8, $0x0000000000000002
DATA sincosTab<>+696(SB)/8, $0x0000000000000002
GLOBL sincosTab<>(SB), RODATA|NOPTR, $704

// QUADRANT_SUM(th, t, ps, pc, rz, sa, ca) ends one chain of the three-block loop: the
// quadrant bits of t select and negate sin (s in th, cos in pc) into rz and cos into ps
// (masks K1–K3), which go to fixed point and into the sums sa and ca — avx512_point's
// operations.
#define QUADRANT_SUM(th, t, ps, pc, rz, sa, ca) \
	VPTESTMQ      Z10, t, K1 \
	VPTESTMQ.BCST sincosTab<>+T_INTTWO(SB), t, K2 \
	KXORW         K1, K2, K3 \
	VBLENDMPD     pc, th, K1, rz \
	VBLENDMPD     th, pc, K1, ps \
	VPXORQ        Z11, rz, K2, rz \
	VPXORQ        Z11, ps, K3, ps \
	VFMADD213PD   Z30, Z12, rz \
	VFMADD213PD   Z30, Z12, ps \
	VPADDQ        rz, sa, sa \
	VPADDQ        ps, ca, ca

// POLY_CONSTANTS broadcasts the polynomial coefficients into Z16–Z27 (AX = &sincosTab) for
// the one-chain AVX-512 loop.
#define POLY_CONSTANTS \
	VBROADCASTSD T_SINC0(AX), Z27 \
	VBROADCASTSD T_SINC1(AX), Z26 \
	VBROADCASTSD T_SINC2(AX), Z25 \
	VBROADCASTSD T_SINC3(AX), Z24 \
	VBROADCASTSD T_SINC4(AX), Z23 \
	VBROADCASTSD T_SINC5(AX), Z22 \
	VBROADCASTSD T_COSC0(AX), Z21 \
	VBROADCASTSD T_COSC1(AX), Z20 \
	VBROADCASTSD T_COSC2(AX), Z19 \
	VBROADCASTSD T_COSC3(AX), Z18 \
	VBROADCASTSD T_COSC4(AX), Z17 \
	VBROADCASTSD T_COSC5(AX), Z16

// func mmdKernelAVX512(omega, u *float64, n, d, hp int, acc *int64)
//
// Registers: Z0 θ→r→s, Z1 t (quadrant bits), Z2 k/scratch, Z3 z=r², Z4 sin poly → cos,
// Z5 cos poly, Z6 r·z → sin, Z7 sin sums, Z8 cos sums, Z9 accumulator start value,
// Z10..Z14 and Z16..Z31 constants (Z15 is left alone). K1 q odd, K2 q&2, K3 (q+1)&2.
TEXT ·mmdKernelAVX512(SB), NOSPLIT, $0-48
	MOVQ omega+0(FP), SI
	MOVQ u+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ d+24(FP), DX
	MOVQ hp+32(FP), R8
	MOVQ acc+40(FP), R9
	LEAQ sincosTab<>(SB), AX

	VBROADCASTSD T_TWOOVERPI(AX), Z31
	VBROADCASTSD T_MAGIC(AX), Z30
	VBROADCASTSD T_PIO2HI(AX), Z29
	VBROADCASTSD T_PIO2LO(AX), Z28
	POLY_CONSTANTS
	VBROADCASTSD T_MINUSHALF(AX), Z14
	VBROADCASTSD T_ONE(AX), Z13
	VBROADCASTSD T_SCALE32(AX), Z12
	VPBROADCASTQ T_SIGNMASK(AX), Z11
	VPBROADCASTQ T_INTONE(AX), Z10

	// Accumulators start at −n·magicBits (mod 2⁶⁴).
	MOVQ $0x4338000000000000, R10
	IMULQ CX, R10
	NEGQ R10
	VPBROADCASTQ R10, Z9

	SHLQ $3, R8 // R8 = hp·8: byte stride between rows of omega and between acc halves
	XORQ BX, BX // BX = byte offset of the current block of 8 frequencies

	// Two blocks of 8 frequencies at a time (A at BX, B at BX+64), while two are left: the
	// same operations per lane as avx512_point, in two independent chains interleaved
	// instruction by instruction, so the out-of-order core always has work that is not
	// waiting on the previous result (one chain is ~70 cycles of dependent latency). The
	// polynomial coefficients come from memory (embedded broadcast) to free Z16–Z27 for
	// chain B: Z17 θ/r/s, Z18 t, Z19 k, Z20 z, Z21 ps/cos, Z22 pc, Z23 r·z/sin, Z24/Z25 its
	// sin/cos sums; K4–K6 its quadrant masks.
	// Three blocks at a time while three are left: chains A and B as below, chain C in Z9
	// θ/r/s, Z13 t, Z14 k, Z15 z, Z16 ps/cos, Z26 pc, Z27 r·z/sin, Z28/Z29 its sums; the
	// constants the two-block loop keeps in Z9, Z13, Z14, Z28 and Z29 come from memory here
	// and are put back afterwards. The three mask sections run one after the other on K1–K3.
avx512_triple:
	LEAQ 128(BX), AX
	CMPQ AX, R8
	JAE  avx512_triples_done
	VMOVDQA64 Z9, Z7
	VMOVDQA64 Z9, Z8
	VMOVDQA64 Z9, Z24
	VMOVDQA64 Z9, Z25
	VMOVDQA64 Z9, Z28
	VMOVDQA64 Z9, Z29
	LEAQ (SI)(BX*1), R10 // &ω[0][block A]; blocks B and C at +64, +128
	MOVQ DI, R11
	MOVQ CX, R12

avx512_triple_point:
	VBROADCASTSD (R11), Z2
	VMULPD       (R10), Z2, Z0
	VMULPD       64(R10), Z2, Z17
	VMULPD       128(R10), Z2, Z9
	CMPQ         DX, $1
	JEQ          avx512_triple_sincos
	MOVQ         R10, R13
	MOVQ         $1, AX

avx512_triple_dot:
	ADDQ         R8, R13
	VBROADCASTSD (R11)(AX*8), Z2
	VFMADD231PD  (R13), Z2, Z0
	VFMADD231PD  64(R13), Z2, Z17
	VFMADD231PD  128(R13), Z2, Z9
	INCQ         AX
	CMPQ         AX, DX
	JB           avx512_triple_dot

avx512_triple_sincos:
	VMOVAPD      Z30, Z1
	VMOVAPD      Z30, Z18
	VMOVAPD      Z30, Z13
	VFMADD231PD  Z31, Z0, Z1
	VFMADD231PD  Z31, Z17, Z18
	VFMADD231PD  Z31, Z9, Z13
	VSUBPD       Z30, Z1, Z2
	VSUBPD       Z30, Z18, Z19
	VSUBPD       Z30, Z13, Z14
	VFNMADD231PD.BCST sincosTab<>+T_PIO2HI(SB), Z2, Z0
	VFNMADD231PD.BCST sincosTab<>+T_PIO2HI(SB), Z19, Z17
	VFNMADD231PD.BCST sincosTab<>+T_PIO2HI(SB), Z14, Z9
	VFNMADD231PD.BCST sincosTab<>+T_PIO2LO(SB), Z2, Z0
	VFNMADD231PD.BCST sincosTab<>+T_PIO2LO(SB), Z19, Z17
	VFNMADD231PD.BCST sincosTab<>+T_PIO2LO(SB), Z14, Z9
	VMULPD       Z0, Z0, Z3
	VMULPD       Z17, Z17, Z20
	VMULPD       Z9, Z9, Z15
	VBROADCASTSD sincosTab<>+T_SINC0(SB), Z4
	VBROADCASTSD sincosTab<>+T_SINC0(SB), Z21
	VBROADCASTSD sincosTab<>+T_SINC0(SB), Z16
	VBROADCASTSD sincosTab<>+T_COSC0(SB), Z5
	VBROADCASTSD sincosTab<>+T_COSC0(SB), Z22
	VBROADCASTSD sincosTab<>+T_COSC0(SB), Z26
	VFMADD213PD.BCST sincosTab<>+T_SINC1(SB), Z3, Z4
	VFMADD213PD.BCST sincosTab<>+T_SINC1(SB), Z20, Z21
	VFMADD213PD.BCST sincosTab<>+T_SINC1(SB), Z15, Z16
	VFMADD213PD.BCST sincosTab<>+T_COSC1(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_COSC1(SB), Z20, Z22
	VFMADD213PD.BCST sincosTab<>+T_COSC1(SB), Z15, Z26
	VFMADD213PD.BCST sincosTab<>+T_SINC2(SB), Z3, Z4
	VFMADD213PD.BCST sincosTab<>+T_SINC2(SB), Z20, Z21
	VFMADD213PD.BCST sincosTab<>+T_SINC2(SB), Z15, Z16
	VFMADD213PD.BCST sincosTab<>+T_COSC2(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_COSC2(SB), Z20, Z22
	VFMADD213PD.BCST sincosTab<>+T_COSC2(SB), Z15, Z26
	VFMADD213PD.BCST sincosTab<>+T_SINC3(SB), Z3, Z4
	VFMADD213PD.BCST sincosTab<>+T_SINC3(SB), Z20, Z21
	VFMADD213PD.BCST sincosTab<>+T_SINC3(SB), Z15, Z16
	VFMADD213PD.BCST sincosTab<>+T_COSC3(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_COSC3(SB), Z20, Z22
	VFMADD213PD.BCST sincosTab<>+T_COSC3(SB), Z15, Z26
	VFMADD213PD.BCST sincosTab<>+T_SINC4(SB), Z3, Z4
	VFMADD213PD.BCST sincosTab<>+T_SINC4(SB), Z20, Z21
	VFMADD213PD.BCST sincosTab<>+T_SINC4(SB), Z15, Z16
	VFMADD213PD.BCST sincosTab<>+T_COSC4(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_COSC4(SB), Z20, Z22
	VFMADD213PD.BCST sincosTab<>+T_COSC4(SB), Z15, Z26
	VFMADD213PD.BCST sincosTab<>+T_SINC5(SB), Z3, Z4
	VFMADD213PD.BCST sincosTab<>+T_SINC5(SB), Z20, Z21
	VFMADD213PD.BCST sincosTab<>+T_SINC5(SB), Z15, Z16
	VFMADD213PD.BCST sincosTab<>+T_COSC5(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_COSC5(SB), Z20, Z22
	VFMADD213PD.BCST sincosTab<>+T_COSC5(SB), Z15, Z26
	VFMADD213PD.BCST sincosTab<>+T_MINUSHALF(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_MINUSHALF(SB), Z20, Z22
	VFMADD213PD.BCST sincosTab<>+T_MINUSHALF(SB), Z15, Z26
	VFMADD213PD.BCST sincosTab<>+T_ONE(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_ONE(SB), Z20, Z22
	VFMADD213PD.BCST sincosTab<>+T_ONE(SB), Z15, Z26
	VMULPD       Z3, Z0, Z6
	VMULPD       Z20, Z17, Z23
	VMULPD       Z15, Z9, Z27
	VFMADD231PD  Z6, Z4, Z0
	VFMADD231PD  Z23, Z21, Z17
	VFMADD231PD  Z27, Z16, Z9
	QUADRANT_SUM(Z0, Z1, Z4, Z5, Z6, Z7, Z8)
	QUADRANT_SUM(Z17, Z18, Z21, Z22, Z23, Z24, Z25)
	QUADRANT_SUM(Z9, Z13, Z16, Z26, Z27, Z28, Z29)

	LEAQ (R11)(DX*8), R11
	DECQ R12
	JNZ  avx512_triple_point

	LEAQ      (R9)(R8*1), R13
	VPADDQ    (R9)(BX*1), Z7, Z7
	VMOVDQU64 Z7, (R9)(BX*1)
	VPADDQ    64(R9)(BX*1), Z24, Z24
	VMOVDQU64 Z24, 64(R9)(BX*1)
	VPADDQ    128(R9)(BX*1), Z28, Z28
	VMOVDQU64 Z28, 128(R9)(BX*1)
	VPADDQ    (R13)(BX*1), Z8, Z8
	VMOVDQU64 Z8, (R13)(BX*1)
	VPADDQ    64(R13)(BX*1), Z25, Z25
	VMOVDQU64 Z25, 64(R13)(BX*1)
	VPADDQ    128(R13)(BX*1), Z29, Z29
	VMOVDQU64 Z29, 128(R13)(BX*1)
	ADDQ      $192, BX
	// Chain C's registers back to the accumulator start for the next block.
	MOVQ         $0x4338000000000000, AX
	IMULQ        CX, AX
	NEGQ         AX
	VPBROADCASTQ AX, Z9
	JMP          avx512_triple

avx512_triples_done:
	LEAQ         sincosTab<>(SB), AX
	VBROADCASTSD T_PIO2HI(AX), Z29
	VBROADCASTSD T_PIO2LO(AX), Z28
	VBROADCASTSD T_MINUSHALF(AX), Z14
	VBROADCASTSD T_ONE(AX), Z13

avx512_pair:
	LEAQ 64(BX), AX
	CMPQ AX, R8
	JAE  avx512_pairs_done
	VMOVDQA64 Z9, Z7
	VMOVDQA64 Z9, Z8
	VMOVDQA64 Z9, Z24
	VMOVDQA64 Z9, Z25
	LEAQ (SI)(BX*1), R10 // &ω[0][block A]; block B at +64
	MOVQ DI, R11         // current point
	MOVQ CX, R12         // points left

avx512_pair_point:
	VBROADCASTSD (R11), Z2
	VMULPD       (R10), Z2, Z0
	VMULPD       64(R10), Z2, Z17
	CMPQ         DX, $1
	JEQ          avx512_pair_sincos
	MOVQ         R10, R13
	MOVQ         $1, AX

avx512_pair_dot:
	ADDQ         R8, R13
	VBROADCASTSD (R11)(AX*8), Z2
	VFMADD231PD  (R13), Z2, Z0
	VFMADD231PD  64(R13), Z2, Z17
	INCQ         AX
	CMPQ         AX, DX
	JB           avx512_pair_dot

avx512_pair_sincos:
	VMOVAPD      Z30, Z1
	VMOVAPD      Z30, Z18
	VFMADD231PD  Z31, Z0, Z1
	VFMADD231PD  Z31, Z17, Z18
	VSUBPD       Z30, Z1, Z2
	VSUBPD       Z30, Z18, Z19
	VFNMADD231PD Z29, Z2, Z0
	VFNMADD231PD Z29, Z19, Z17
	VFNMADD231PD Z28, Z2, Z0
	VFNMADD231PD Z28, Z19, Z17
	VMULPD       Z0, Z0, Z3
	VMULPD       Z17, Z17, Z20
	VBROADCASTSD sincosTab<>+T_SINC0(SB), Z4
	VBROADCASTSD sincosTab<>+T_SINC0(SB), Z21
	VBROADCASTSD sincosTab<>+T_COSC0(SB), Z5
	VBROADCASTSD sincosTab<>+T_COSC0(SB), Z22
	VFMADD213PD.BCST sincosTab<>+T_SINC1(SB), Z3, Z4
	VFMADD213PD.BCST sincosTab<>+T_SINC1(SB), Z20, Z21
	VFMADD213PD.BCST sincosTab<>+T_COSC1(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_COSC1(SB), Z20, Z22
	VFMADD213PD.BCST sincosTab<>+T_SINC2(SB), Z3, Z4
	VFMADD213PD.BCST sincosTab<>+T_SINC2(SB), Z20, Z21
	VFMADD213PD.BCST sincosTab<>+T_COSC2(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_COSC2(SB), Z20, Z22
	VFMADD213PD.BCST sincosTab<>+T_SINC3(SB), Z3, Z4
	VFMADD213PD.BCST sincosTab<>+T_SINC3(SB), Z20, Z21
	VFMADD213PD.BCST sincosTab<>+T_COSC3(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_COSC3(SB), Z20, Z22
	VFMADD213PD.BCST sincosTab<>+T_SINC4(SB), Z3, Z4
	VFMADD213PD.BCST sincosTab<>+T_SINC4(SB), Z20, Z21
	VFMADD213PD.BCST sincosTab<>+T_COSC4(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_COSC4(SB), Z20, Z22
	VFMADD213PD.BCST sincosTab<>+T_SINC5(SB), Z3, Z4
	VFMADD213PD.BCST sincosTab<>+T_SINC5(SB), Z20, Z21
	VFMADD213PD.BCST sincosTab<>+T_COSC5(SB), Z3, Z5
	VFMADD213PD.BCST sincosTab<>+T_COSC5(SB), Z20, Z22
	VFMADD213PD  Z14, Z3, Z5
	VFMADD213PD  Z14, Z20, Z22
	VFMADD213PD  Z13, Z3, Z5
	VFMADD213PD  Z13, Z20, Z22
	VMULPD       Z3, Z0, Z6
	VMULPD       Z20, Z17, Z23
	VFMADD231PD  Z6, Z4, Z0
	VFMADD231PD  Z23, Z21, Z17
	VPTESTMQ     Z10, Z1, K1
	VPTESTMQ     Z10, Z18, K4
	VPTESTMQ.BCST sincosTab<>+T_INTTWO(SB), Z1, K2
	VPTESTMQ.BCST sincosTab<>+T_INTTWO(SB), Z18, K5
	KXORW        K1, K2, K3
	KXORW        K4, K5, K6
	VBLENDMPD    Z5, Z0, K1, Z6
	VBLENDMPD    Z22, Z17, K4, Z23
	VBLENDMPD    Z0, Z5, K1, Z4
	VBLENDMPD    Z17, Z22, K4, Z21
	VPXORQ       Z11, Z6, K2, Z6
	VPXORQ       Z11, Z23, K5, Z23
	VPXORQ       Z11, Z4, K3, Z4
	VPXORQ       Z11, Z21, K6, Z21
	VFMADD213PD  Z30, Z12, Z6
	VFMADD213PD  Z30, Z12, Z23
	VFMADD213PD  Z30, Z12, Z4
	VFMADD213PD  Z30, Z12, Z21
	VPADDQ       Z6, Z7, Z7
	VPADDQ       Z23, Z24, Z24
	VPADDQ       Z4, Z8, Z8
	VPADDQ       Z21, Z25, Z25

	LEAQ (R11)(DX*8), R11
	DECQ R12
	JNZ  avx512_pair_point

	VPADDQ    (R9)(BX*1), Z7, Z7
	VMOVDQU64 Z7, (R9)(BX*1)
	VPADDQ    64(R9)(BX*1), Z24, Z24
	VMOVDQU64 Z24, 64(R9)(BX*1)
	LEAQ      (R9)(R8*1), R13
	VPADDQ    (R13)(BX*1), Z8, Z8
	VMOVDQU64 Z8, (R13)(BX*1)
	VPADDQ    64(R13)(BX*1), Z25, Z25
	VMOVDQU64 Z25, 64(R13)(BX*1)
	ADDQ      $128, BX
	JMP       avx512_pair

avx512_pairs_done:
	// At most one block is left, for the one-chain loop: its constants back in Z16–Z27.
	LEAQ sincosTab<>(SB), AX
	POLY_CONSTANTS

avx512_block:
	CMPQ BX, R8
	JAE  avx512_done
	VMOVDQA64 Z9, Z7
	VMOVDQA64 Z9, Z8
	LEAQ (SI)(BX*1), R10 // &ω[0][block]
	MOVQ DI, R11         // current point
	MOVQ CX, R12         // points left

avx512_point:
	// θ = ω_0·u_0, then θ = fma(ω_j, u_j, θ) for j = 1..d−1.
	VBROADCASTSD (R11), Z0
	VMULPD       (R10), Z0, Z0
	CMPQ         DX, $1
	JEQ          avx512_sincos
	MOVQ         R10, R13
	MOVQ         $1, AX

avx512_dot:
	ADDQ         R8, R13
	VBROADCASTSD (R11)(AX*8), Z2
	VFMADD231PD  (R13), Z2, Z0
	INCQ         AX
	CMPQ         AX, DX
	JB           avx512_dot

avx512_sincos:
	VMOVAPD      Z30, Z1
	VFMADD231PD  Z31, Z0, Z1 // t = θ·(2/π) + magic
	VSUBPD       Z30, Z1, Z2 // k = t − magic
	VFNMADD231PD Z29, Z2, Z0 // r = θ − k·P1
	VFNMADD231PD Z28, Z2, Z0 // r = r − k·P2
	VMULPD       Z0, Z0, Z3  // z = r·r

	VMOVAPD     Z27, Z4
	VFMADD213PD Z26, Z3, Z4
	VFMADD213PD Z25, Z3, Z4
	VFMADD213PD Z24, Z3, Z4
	VFMADD213PD Z23, Z3, Z4
	VFMADD213PD Z22, Z3, Z4 // ps

	VMOVAPD     Z21, Z5
	VFMADD213PD Z20, Z3, Z5
	VFMADD213PD Z19, Z3, Z5
	VFMADD213PD Z18, Z3, Z5
	VFMADD213PD Z17, Z3, Z5
	VFMADD213PD Z16, Z3, Z5
	VFMADD213PD Z14, Z3, Z5 // pc·z − ½
	VFMADD213PD Z13, Z3, Z5 // c = (pc·z − ½)·z + 1

	VMULPD      Z3, Z0, Z6 // r·z
	VFMADD231PD Z6, Z4, Z0 // s = ps·(r·z) + r

	VPTESTMQ      Z10, Z1, K1                         // K1: q odd
	VPTESTMQ.BCST sincosTab<>+T_INTTWO(SB), Z1, K2    // K2: q&2
	KXORW         K1, K2, K3                          // K3: (q+1)&2 = q&2 xor q&1
	VBLENDMPD     Z5, Z0, K1, Z6                      // sin = odd ? c : s
	VBLENDMPD     Z0, Z5, K1, Z4                      // cos = odd ? s : c
	VPXORQ        Z11, Z6, K2, Z6                     // sin = −sin when q&2
	VPXORQ        Z11, Z4, K3, Z4                     // cos = −cos when (q+1)&2

	VFMADD213PD Z30, Z12, Z6 // sin·2³² + magic
	VPADDQ      Z6, Z7, Z7
	VFMADD213PD Z30, Z12, Z4 // cos·2³² + magic
	VPADDQ      Z4, Z8, Z8

	LEAQ (R11)(DX*8), R11
	DECQ R12
	JNZ  avx512_point

	VPADDQ    (R9)(BX*1), Z7, Z7
	VMOVDQU64 Z7, (R9)(BX*1)
	LEAQ      (R9)(R8*1), R13
	VPADDQ    (R13)(BX*1), Z8, Z8
	VMOVDQU64 Z8, (R13)(BX*1)
	ADDQ      $64, BX
	JMP       avx512_block

avx512_done:
	VZEROUPPER
	RET

// func mmdKernelAVX2(omega, u *float64, n, d, hp int, acc *int64)
//
// Registers: Y0 θ→r→s, Y1 t, Y2 k/scratch, Y3 z, Y4 sin poly, Y5 cos poly, Y6 r·z / sin
// (chain A; chain B in Y9–Y12, Y14, Y15), Y7 sin sums, Y8 cos sums, Y13 2³²; every other
// constant is a memory operand, so that two points run as two independent chains.
TEXT ·mmdKernelAVX2(SB), NOSPLIT, $0-48
	MOVQ omega+0(FP), SI
	MOVQ u+8(FP), DI
	MOVQ d+24(FP), DX
	MOVQ hp+32(FP), R8
	MOVQ acc+40(FP), R9

	VMOVUPD sincosTab<>+T_SCALE32(SB), Y13

	SHLQ $3, R8
	XORQ BX, BX

avx2_block:
	CMPQ  BX, R8
	JAE   avx2_done
	MOVQ  n+16(FP), R12 // points left
	// Accumulators start at −n·magicBits (mod 2⁶⁴).
	MOVQ         $0x4338000000000000, AX
	IMULQ        R12, AX
	NEGQ         AX
	VMOVQ        AX, X7
	VPBROADCASTQ X7, Y7
	VMOVDQU      Y7, Y8
	LEAQ         (SI)(BX*1), R10
	MOVQ         DI, R11

	// Two points at a time (A at R11, B at CX), two independent chains interleaved
	// instruction by instruction, both summed into Y7/Y8 (integer sums: the order does not
	// matter). Chain B: Y9 θ/r/s, Y10 t, Y11 k/r·z/mask, Y12 z/sin, Y14 ps/cos, Y15 pc.
avx2_pair:
	CMPQ         R12, $2
	JB           avx2_tail
	LEAQ         (R11)(DX*8), CX
	VBROADCASTSD (R11), Y0
	VBROADCASTSD (CX), Y9
	VMULPD       (R10), Y0, Y0
	VMULPD       (R10), Y9, Y9
	CMPQ         DX, $1
	JEQ          avx2_pair_sincos
	MOVQ         R10, R13
	MOVQ         $1, AX

avx2_pair_dot:
	ADDQ         R8, R13
	VBROADCASTSD (R11)(AX*8), Y2
	VBROADCASTSD (CX)(AX*8), Y11
	VFMADD231PD  (R13), Y2, Y0
	VFMADD231PD  (R13), Y11, Y9
	INCQ         AX
	CMPQ         AX, DX
	JB           avx2_pair_dot

avx2_pair_sincos:
	VMOVUPD      sincosTab<>+T_MAGIC(SB), Y1
	VMOVUPD      sincosTab<>+T_MAGIC(SB), Y10
	VFMADD231PD  sincosTab<>+T_TWOOVERPI(SB), Y0, Y1
	VFMADD231PD  sincosTab<>+T_TWOOVERPI(SB), Y9, Y10
	VSUBPD       sincosTab<>+T_MAGIC(SB), Y1, Y2
	VSUBPD       sincosTab<>+T_MAGIC(SB), Y10, Y11
	VFNMADD231PD sincosTab<>+T_PIO2HI(SB), Y2, Y0
	VFNMADD231PD sincosTab<>+T_PIO2HI(SB), Y11, Y9
	VFNMADD231PD sincosTab<>+T_PIO2LO(SB), Y2, Y0
	VFNMADD231PD sincosTab<>+T_PIO2LO(SB), Y11, Y9
	VMULPD       Y0, Y0, Y3
	VMULPD       Y9, Y9, Y12
	VMOVUPD      sincosTab<>+T_SINC0(SB), Y4
	VMOVUPD      sincosTab<>+T_SINC0(SB), Y14
	VMOVUPD      sincosTab<>+T_COSC0(SB), Y5
	VMOVUPD      sincosTab<>+T_COSC0(SB), Y15
	VFMADD213PD  sincosTab<>+T_SINC1(SB), Y3, Y4
	VFMADD213PD  sincosTab<>+T_SINC1(SB), Y12, Y14
	VFMADD213PD  sincosTab<>+T_COSC1(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_COSC1(SB), Y12, Y15
	VFMADD213PD  sincosTab<>+T_SINC2(SB), Y3, Y4
	VFMADD213PD  sincosTab<>+T_SINC2(SB), Y12, Y14
	VFMADD213PD  sincosTab<>+T_COSC2(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_COSC2(SB), Y12, Y15
	VFMADD213PD  sincosTab<>+T_SINC3(SB), Y3, Y4
	VFMADD213PD  sincosTab<>+T_SINC3(SB), Y12, Y14
	VFMADD213PD  sincosTab<>+T_COSC3(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_COSC3(SB), Y12, Y15
	VFMADD213PD  sincosTab<>+T_SINC4(SB), Y3, Y4
	VFMADD213PD  sincosTab<>+T_SINC4(SB), Y12, Y14
	VFMADD213PD  sincosTab<>+T_COSC4(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_COSC4(SB), Y12, Y15
	VFMADD213PD  sincosTab<>+T_SINC5(SB), Y3, Y4
	VFMADD213PD  sincosTab<>+T_SINC5(SB), Y12, Y14
	VFMADD213PD  sincosTab<>+T_COSC5(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_COSC5(SB), Y12, Y15
	VFMADD213PD  sincosTab<>+T_MINUSHALF(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_MINUSHALF(SB), Y12, Y15
	VFMADD213PD  sincosTab<>+T_ONE(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_ONE(SB), Y12, Y15
	VMULPD       Y3, Y0, Y6
	VMULPD       Y12, Y9, Y11
	VFMADD231PD  Y6, Y4, Y0
	VFMADD231PD  Y11, Y14, Y9
	VPSLLQ       $63, Y1, Y2
	VPSLLQ       $63, Y10, Y11
	VBLENDVPD    Y2, Y5, Y0, Y6
	VBLENDVPD    Y11, Y15, Y9, Y12
	VBLENDVPD    Y2, Y0, Y5, Y4
	VBLENDVPD    Y11, Y9, Y15, Y14
	VPSLLQ       $62, Y1, Y2
	VPSLLQ       $62, Y10, Y11
	VPAND        sincosTab<>+T_SIGNMASK(SB), Y2, Y2
	VPAND        sincosTab<>+T_SIGNMASK(SB), Y11, Y11
	VXORPD       Y2, Y6, Y6
	VXORPD       Y11, Y12, Y12
	VPADDQ       sincosTab<>+T_INTONE(SB), Y1, Y1
	VPADDQ       sincosTab<>+T_INTONE(SB), Y10, Y10
	VPSLLQ       $62, Y1, Y1
	VPSLLQ       $62, Y10, Y10
	VPAND        sincosTab<>+T_SIGNMASK(SB), Y1, Y1
	VPAND        sincosTab<>+T_SIGNMASK(SB), Y10, Y10
	VXORPD       Y1, Y4, Y4
	VXORPD       Y10, Y14, Y14
	VFMADD213PD  sincosTab<>+T_MAGIC(SB), Y13, Y6
	VFMADD213PD  sincosTab<>+T_MAGIC(SB), Y13, Y12
	VFMADD213PD  sincosTab<>+T_MAGIC(SB), Y13, Y4
	VFMADD213PD  sincosTab<>+T_MAGIC(SB), Y13, Y14
	VPADDQ       Y6, Y7, Y7
	VPADDQ       Y12, Y7, Y7
	VPADDQ       Y4, Y8, Y8
	VPADDQ       Y14, Y8, Y8

	LEAQ (CX)(DX*8), R11
	SUBQ $2, R12
	JMP  avx2_pair

avx2_tail:
	TESTQ        R12, R12
	JZ           avx2_store
	VBROADCASTSD (R11), Y0
	VMULPD       (R10), Y0, Y0
	CMPQ         DX, $1
	JEQ          avx2_sincos
	MOVQ         R10, R13
	MOVQ         $1, AX

avx2_dot:
	ADDQ         R8, R13
	VBROADCASTSD (R11)(AX*8), Y2
	VFMADD231PD  (R13), Y2, Y0
	INCQ         AX
	CMPQ         AX, DX
	JB           avx2_dot

avx2_sincos:
	VMOVUPD      sincosTab<>+T_MAGIC(SB), Y1
	VFMADD231PD  sincosTab<>+T_TWOOVERPI(SB), Y0, Y1
	VSUBPD       sincosTab<>+T_MAGIC(SB), Y1, Y2
	VFNMADD231PD sincosTab<>+T_PIO2HI(SB), Y2, Y0
	VFNMADD231PD sincosTab<>+T_PIO2LO(SB), Y2, Y0
	VMULPD       Y0, Y0, Y3
	VMOVUPD      sincosTab<>+T_SINC0(SB), Y4
	VMOVUPD      sincosTab<>+T_COSC0(SB), Y5
	VFMADD213PD  sincosTab<>+T_SINC1(SB), Y3, Y4
	VFMADD213PD  sincosTab<>+T_COSC1(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_SINC2(SB), Y3, Y4
	VFMADD213PD  sincosTab<>+T_COSC2(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_SINC3(SB), Y3, Y4
	VFMADD213PD  sincosTab<>+T_COSC3(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_SINC4(SB), Y3, Y4
	VFMADD213PD  sincosTab<>+T_COSC4(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_SINC5(SB), Y3, Y4
	VFMADD213PD  sincosTab<>+T_COSC5(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_MINUSHALF(SB), Y3, Y5
	VFMADD213PD  sincosTab<>+T_ONE(SB), Y3, Y5
	VMULPD       Y3, Y0, Y6
	VFMADD231PD  Y6, Y4, Y0
	VPSLLQ       $63, Y1, Y2
	VBLENDVPD    Y2, Y5, Y0, Y6
	VBLENDVPD    Y2, Y0, Y5, Y4
	VPSLLQ       $62, Y1, Y2
	VPAND        sincosTab<>+T_SIGNMASK(SB), Y2, Y2
	VXORPD       Y2, Y6, Y6
	VPADDQ       sincosTab<>+T_INTONE(SB), Y1, Y1
	VPSLLQ       $62, Y1, Y1
	VPAND        sincosTab<>+T_SIGNMASK(SB), Y1, Y1
	VXORPD       Y1, Y4, Y4
	VFMADD213PD  sincosTab<>+T_MAGIC(SB), Y13, Y6
	VFMADD213PD  sincosTab<>+T_MAGIC(SB), Y13, Y4
	VPADDQ       Y6, Y7, Y7
	VPADDQ       Y4, Y8, Y8

avx2_store:
	VPADDQ  (R9)(BX*1), Y7, Y7
	VMOVDQU Y7, (R9)(BX*1)
	LEAQ    (R9)(R8*1), R13
	VPADDQ  (R13)(BX*1), Y8, Y8
	VMOVDQU Y8, (R13)(BX*1)
	ADDQ    $32, BX
	JMP     avx2_block

avx2_done:
	VZEROUPPER
	RET
