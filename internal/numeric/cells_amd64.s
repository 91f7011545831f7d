//go:build amd64 && !purego

#include "textflag.h"

// Scalar constants of hddCellsAVX512, broadcast where used. The sincos constants are the
// bit patterns of sincos.go's (TestHDDCellsPaths compares against the Go kernel).
DATA cellsTab<>+0(SB)/8, $0x3FE45F306DC9C883   // 2/π
DATA cellsTab<>+8(SB)/8, $0x4338000000000000   // fixedMagic 1.5·2⁵²
DATA cellsTab<>+16(SB)/8, $0x3FF921FB54442D18  // pio2Hi
DATA cellsTab<>+24(SB)/8, $0x3C91A62633145C07  // pio2Lo
DATA cellsTab<>+32(SB)/8, $0x3DE5D8FD1FD19CCD  // sinC0
DATA cellsTab<>+40(SB)/8, $0xBE5AE5E5A9291F5D  // sinC1
DATA cellsTab<>+48(SB)/8, $0x3EC71DE3567D48A1  // sinC2
DATA cellsTab<>+56(SB)/8, $0xBF2A01A019BFDF03  // sinC3
DATA cellsTab<>+64(SB)/8, $0x3F8111111110F7D0  // sinC4
DATA cellsTab<>+72(SB)/8, $0xBFC5555555555548  // sinC5
DATA cellsTab<>+80(SB)/8, $0xBDA8FA49A0861A9B  // cosC0
DATA cellsTab<>+88(SB)/8, $0x3E21EE9D7B4E3F05  // cosC1
DATA cellsTab<>+96(SB)/8, $0xBE927E4F7EAC4BC6  // cosC2
DATA cellsTab<>+104(SB)/8, $0x3EFA01A019C844F5 // cosC3
DATA cellsTab<>+112(SB)/8, $0xBF56C16C16C14F91 // cosC4
DATA cellsTab<>+120(SB)/8, $0x3FA555555555554B // cosC5
DATA cellsTab<>+128(SB)/8, $0xBFE0000000000000 // −0.5
DATA cellsTab<>+136(SB)/8, $0x3FF0000000000000 // 1
DATA cellsTab<>+144(SB)/8, $0x8000000000000000 // sign bit
DATA cellsTab<>+152(SB)/8, $1                  // integer 1
DATA cellsTab<>+160(SB)/8, $2                  // integer 2
GLOBL cellsTab<>(SB), RODATA|NOPTR, $168

#define BC(off, z) VBROADCASTSD cellsTab<>+off(SB), z

// SINCOS_CONSTANTS broadcasts the sin/cos kernel's constants into Z23–Z31, for both
// kernels of this file that evaluate it (hddCellsAVX512, rffEmitAVX512).
#define SINCOS_CONSTANTS \
	BC(144, Z23) \
	BC(152, Z24) \
	BC(160, Z25) \
	BC(0, Z26) \
	BC(8, Z27) \
	BC(16, Z28) \
	BC(24, Z29) \
	BC(128, Z30) \
	BC(136, Z31)

// func hddCellsAVX512(lam, cr, ci float64, sq, lnp, fr, fi *float64, n int)
//
// For 8 cells per pass, the operations of hddCellsGo: θ = lam·l; sincosOctant (FMA where
// it uses math.FMA, rounded operations elsewhere) and sincosPoly's quadrant fix-up with
// masks; re = sq·cos − 1, im = sq·sin, fr = cr·re − ci·im, fi = ci·re + cr·im, every
// operation separately rounded. n is a multiple of 8. A block of 8 cells whose sq and lnp
// all have the bits of the cell before it copies that cell's fr and fi.
//
// Z20 lam, Z21 cr, Z22 ci, Z23 sign bit, Z24 integer 1, Z25 integer 2, Z26 2/π, Z27 magic,
// Z28 pio2Hi, Z29 pio2Lo, Z30 −0.5, Z31 1; Z0.. working registers.
TEXT ·hddCellsAVX512(SB), NOSPLIT, $0-64
	VBROADCASTSD lam+0(FP), Z20
	VBROADCASTSD cr+8(FP), Z21
	VBROADCASTSD ci+16(FP), Z22
	MOVQ         sq+24(FP), SI
	MOVQ         lnp+32(FP), DI
	MOVQ         fr+40(FP), R8
	MOVQ         fi+48(FP), R9
	MOVQ         n+56(FP), CX
	SINCOS_CONSTANTS
	SHRQ $3, CX
	JZ   cells_done
	JMP  cells_compute             // the first block has no previous cell

cells_loop:
	// A block whose 8 cells have the bits of the previous cell (sq and lnp: a run at the
	// density floor, typically) gets that cell's results: the same function of the same
	// inputs.
	VBROADCASTSD -8(DI), Z16
	VPCMPEQQ     (DI), Z16, K5
	VBROADCASTSD -8(SI), Z17
	VPCMPEQQ     (SI), Z17, K6
	KANDW        K5, K6, K5
	KMOVW        K5, AX
	CMPL         AX, $0xFF
	JNE          cells_compute
	VBROADCASTSD -8(R8), Z15
	VBROADCASTSD -8(R9), Z17
	VMOVUPD      Z15, (R8)
	VMOVUPD      Z17, (R9)
	JMP          cells_next

cells_compute:
	VMOVUPD     (DI), Z0
	VMULPD      Z20, Z0, Z0        // θ = lam·l
	VMOVAPD     Z27, Z1
	VFMADD231PD Z26, Z0, Z1        // t = fma(θ, 2/π, magic); q = bits(t)
	VSUBPD      Z27, Z1, Z2        // k = t − magic
	VMOVAPD     Z0, Z3
	VFNMADD231PD Z28, Z2, Z3       // r = fma(−k, pio2Hi, θ)
	VFNMADD231PD Z29, Z2, Z3       // r = fma(−k, pio2Lo, r)
	VMULPD      Z3, Z3, Z4         // z = r·r

	BC(40, Z5)                     // ps = fma(sinC0, z, sinC1)
	BC(32, Z6)
	VFMADD231PD Z4, Z6, Z5
	BC(48, Z6)
	VFMADD213PD Z6, Z4, Z5         // ps = fma(ps, z, sinC2)
	BC(56, Z6)
	VFMADD213PD Z6, Z4, Z5
	BC(64, Z6)
	VFMADD213PD Z6, Z4, Z5
	BC(72, Z6)
	VFMADD213PD Z6, Z4, Z5

	BC(88, Z7)                     // pc = fma(cosC0, z, cosC1)
	BC(80, Z6)
	VFMADD231PD Z4, Z6, Z7
	BC(96, Z6)
	VFMADD213PD Z6, Z4, Z7
	BC(104, Z6)
	VFMADD213PD Z6, Z4, Z7
	BC(112, Z6)
	VFMADD213PD Z6, Z4, Z7
	BC(120, Z6)
	VFMADD213PD Z6, Z4, Z7
	VFMADD213PD Z30, Z4, Z7        // pc = fma(pc, z, −0.5)
	VFMADD213PD Z31, Z4, Z7        // c = fma(pc, z, 1)

	VMULPD      Z4, Z3, Z8         // rz = r·z
	VFMADD231PD Z8, Z5, Z3         // s = fma(ps, rz, r)

	VPTESTMQ    Z24, Z1, K2        // q odd: swap
	VBLENDMPD   Z7, Z3, K2, Z9     // sin
	VBLENDMPD   Z3, Z7, K2, Z10    // cos
	VPTESTMQ    Z25, Z1, K3        // q&2: negate sin
	VPXORQ      Z23, Z9, K3, Z9
	VPADDQ      Z24, Z1, Z11
	VPTESTMQ    Z25, Z11, K4       // (q+1)&2: negate cos
	VPXORQ      Z23, Z10, K4, Z10

	VMOVUPD     (SI), Z12          // √p
	VMULPD      Z10, Z12, Z13
	VSUBPD      Z31, Z13, Z13      // re = s·cos − 1
	VMULPD      Z9, Z12, Z14       // im = s·sin
	VMULPD      Z13, Z21, Z15      // cr·re
	VMULPD      Z14, Z22, Z16      // ci·im
	VSUBPD      Z16, Z15, Z15      // fr = cr·re − ci·im
	VMULPD      Z13, Z22, Z17      // ci·re
	VMULPD      Z14, Z21, Z18      // cr·im
	VADDPD      Z18, Z17, Z17      // fi = ci·re + cr·im
	VMOVUPD     Z15, (R8)
	VMOVUPD     Z17, (R9)

cells_next:
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, R8
	ADDQ $64, R9
	DECQ CX
	JNZ  cells_loop

cells_done:
	VZEROUPPER
	RET

// Interleave indices for VPERMT2PD (0–7 the sines, 8–15 the cosines).
DATA emitIdx<>+0(SB)/8, $0
DATA emitIdx<>+8(SB)/8, $8
DATA emitIdx<>+16(SB)/8, $1
DATA emitIdx<>+24(SB)/8, $9
DATA emitIdx<>+32(SB)/8, $2
DATA emitIdx<>+40(SB)/8, $10
DATA emitIdx<>+48(SB)/8, $3
DATA emitIdx<>+56(SB)/8, $11
DATA emitIdx<>+64(SB)/8, $4
DATA emitIdx<>+72(SB)/8, $12
DATA emitIdx<>+80(SB)/8, $5
DATA emitIdx<>+88(SB)/8, $13
DATA emitIdx<>+96(SB)/8, $6
DATA emitIdx<>+104(SB)/8, $14
DATA emitIdx<>+112(SB)/8, $7
DATA emitIdx<>+120(SB)/8, $15
GLOBL emitIdx<>(SB), RODATA|NOPTR, $128

// func rffEmitAVX512(theta *float64, n int, scale float64, out *float32)
//
// rff.emit for 8 frequencies per pass: (s, c) = sincosFlat(θ) by the operations of
// sincosOctant and the quadrant masks, then out[2i] = float32(scale·s),
// out[2i+1] = float32(scale·c) (VCVTPD2PS rounds to nearest like Go's conversion).
// n is a multiple of 8 and every |θ| ≤ sincosMaxArg (checked by rff.emit).
TEXT ·rffEmitAVX512(SB), NOSPLIT, $0-32
	MOVQ         theta+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSD scale+16(FP), Z20
	MOVQ         out+24(FP), R8
	VMOVUPD      emitIdx<>+0(SB), Z21
	VMOVUPD      emitIdx<>+64(SB), Z22
	SINCOS_CONSTANTS
	SHRQ $3, CX
	JZ   emit_done

emit_loop:
	VMOVUPD     (DI), Z0
	VMOVAPD     Z27, Z1
	VFMADD231PD Z26, Z0, Z1
	VSUBPD      Z27, Z1, Z2
	VMOVAPD     Z0, Z3
	VFNMADD231PD Z28, Z2, Z3
	VFNMADD231PD Z29, Z2, Z3
	VMULPD      Z3, Z3, Z4

	BC(40, Z5)
	BC(32, Z6)
	VFMADD231PD Z4, Z6, Z5
	BC(48, Z6)
	VFMADD213PD Z6, Z4, Z5
	BC(56, Z6)
	VFMADD213PD Z6, Z4, Z5
	BC(64, Z6)
	VFMADD213PD Z6, Z4, Z5
	BC(72, Z6)
	VFMADD213PD Z6, Z4, Z5

	BC(88, Z7)
	BC(80, Z6)
	VFMADD231PD Z4, Z6, Z7
	BC(96, Z6)
	VFMADD213PD Z6, Z4, Z7
	BC(104, Z6)
	VFMADD213PD Z6, Z4, Z7
	BC(112, Z6)
	VFMADD213PD Z6, Z4, Z7
	BC(120, Z6)
	VFMADD213PD Z6, Z4, Z7
	VFMADD213PD Z30, Z4, Z7
	VFMADD213PD Z31, Z4, Z7

	VMULPD      Z4, Z3, Z8
	VFMADD231PD Z8, Z5, Z3

	VPTESTMQ    Z24, Z1, K2
	VBLENDMPD   Z7, Z3, K2, Z9
	VBLENDMPD   Z3, Z7, K2, Z10
	VPTESTMQ    Z25, Z1, K3
	VPXORQ      Z23, Z9, K3, Z9
	VPADDQ      Z24, Z1, Z11
	VPTESTMQ    Z25, Z11, K4
	VPXORQ      Z23, Z10, K4, Z10

	VMULPD      Z20, Z9, Z9        // scale·sin
	VMULPD      Z20, Z10, Z10      // scale·cos
	VMOVAPD     Z9, Z12
	VPERMT2PD   Z10, Z21, Z12      // s0 c0 s1 c1 s2 c2 s3 c3
	VPERMT2PD   Z10, Z22, Z9       // s4 c4 … s7 c7
	VCVTPD2PS   Z12, Y12
	VCVTPD2PS   Z9, Y9
	VMOVUPS     Y12, (R8)
	VMOVUPS     Y9, 32(R8)

	ADDQ $64, DI
	ADDQ $64, R8
	DECQ CX
	JNZ  emit_loop

emit_done:
	VZEROUPPER
	RET

// Constants of hddLogSqrtAVX512 (logPortable's, libm.go).
DATA logTab<>+0(SB)/8, $0x3FE62E42FEE00000   // ln2Hi
DATA logTab<>+8(SB)/8, $0x3DEA39EF35793C76   // ln2Lo
DATA logTab<>+16(SB)/8, $0x3FE5555555555593  // l1
DATA logTab<>+24(SB)/8, $0x3FD999999997FA04  // l2
DATA logTab<>+32(SB)/8, $0x3FD2492494229359  // l3
DATA logTab<>+40(SB)/8, $0x3FCC71C51D8E78AF  // l4
DATA logTab<>+48(SB)/8, $0x3FC7466496CB03DE  // l5
DATA logTab<>+56(SB)/8, $0x3FC39A09D078C69F  // l6
DATA logTab<>+64(SB)/8, $0x3FC2F112DF3E5244  // l7
DATA logTab<>+72(SB)/8, $0x3FE6A09E667F3BCD  // √2/2
DATA logTab<>+80(SB)/8, $0x4000000000000000  // 2
DATA logTab<>+88(SB)/8, $0x3FE0000000000000  // 0.5
DATA logTab<>+96(SB)/8, $0x0010000000000000  // smallest normal
DATA logTab<>+104(SB)/8, $0x7FEFFFFFFFFFFFFF // largest finite
DATA logTab<>+112(SB)/8, $0x7FFFFFFFFFFFFFFF // abs mask
GLOBL logTab<>(SB), RODATA|NOPTR, $120

#define LB(off, z) VBROADCASTSD logTab<>+off(SB), z

// func hddLogSqrtAVX512(p, sq, lnp *float64, n int) (done int, maxAbs float64)
//
// For 8 cells per pass: sq = √p (VSQRTPD, correctly rounded like math.Sqrt), and
// lnp = logPortable(p) for p > 0, 0 otherwise, with the operations of logPortable: the
// exact frexp (VGETEXPPD, VGETMANTPD to [½, 1)), the exact √2/2 adjustment, then every
// product, sum and quotient separately rounded in the same order. maxAbs is the largest
// |lnp| of the cells done. A block with a lane that is > 0 but not a finite normal number
// (subnormal, +Inf) stops the kernel before it: done (a multiple of 8) is the number of
// cells written, and the caller computes that block with logPortable. n is a multiple of 8.
//
// Z20 ln2Hi, Z21 ln2Lo, Z22 l1 … Z28 l7, Z29 √2/2, Z30 2, Z31 0.5, Z19 1, Z18 smallest
// normal, Z17 largest finite, Z16 0, Z15 running max, Z14 abs mask.
TEXT ·hddLogSqrtAVX512(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), SI
	MOVQ sq+8(FP), R8
	MOVQ lnp+16(FP), DI
	MOVQ n+24(FP), CX
	LB(0, Z20)
	LB(8, Z21)
	LB(16, Z22)
	LB(24, Z23)
	LB(32, Z24)
	LB(40, Z25)
	LB(48, Z26)
	LB(56, Z27)
	LB(64, Z28)
	LB(72, Z29)
	LB(80, Z30)
	LB(88, Z31)
	BC(136, Z19)
	LB(96, Z18)
	LB(104, Z17)
	LB(112, Z14)
	VPXORQ Z16, Z16, Z16
	VPXORQ Z15, Z15, Z15
	XORQ   AX, AX
	SHRQ   $3, CX
	JZ     log_done

log_loop:
	VMOVUPD  (SI), Z0
	VCMPPD   $0x1E, Z16, Z0, K1 // pos: p > 0
	VCMPPD   $0x1D, Z18, Z0, K2 // p ≥ smallest normal
	VCMPPD   $0x12, Z17, Z0, K3 // p ≤ largest finite
	KANDW    K2, K3, K2
	KANDNW   K1, K2, K4         // pos ∧ ¬normal
	KORTESTW K4, K4
	JNZ      log_done

	VSQRTPD Z0, Z1
	VMOVUPD Z1, (R8)

	VGETEXPPD  Z0, Z2            // e = ⌊log₂ p⌋
	VGETMANTPD $2, Z0, Z3        // f1 ∈ [½, 1): p = f1·2^(e+1)
	VADDPD     Z19, Z2, Z4       // k = e + 1
	VCMPPD     $0x11, Z29, Z3, K5 // f1 < √2/2
	VADDPD     Z3, Z3, K5, Z3    // f1 *= 2
	VSUBPD     Z19, Z4, K5, Z4   // k--
	VSUBPD     Z19, Z3, Z5       // f = f1 − 1

	VADDPD  Z30, Z5, Z6          // 2 + f
	VDIVPD  Z6, Z5, Z6           // s = f / (2 + f)
	VMULPD  Z6, Z6, Z7           // s2
	VMULPD  Z7, Z7, Z8           // s4
	VMULPD  Z28, Z8, Z9          // s4·l7
	VADDPD  Z26, Z9, Z9          // l5 + …
	VMULPD  Z9, Z8, Z9
	VADDPD  Z24, Z9, Z9          // l3 + …
	VMULPD  Z9, Z8, Z9
	VADDPD  Z22, Z9, Z9          // l1 + …
	VMULPD  Z9, Z7, Z9           // t1 = s2·(…)
	VMULPD  Z27, Z8, Z10         // s4·l6
	VADDPD  Z25, Z10, Z10        // l4 + …
	VMULPD  Z10, Z8, Z10
	VADDPD  Z23, Z10, Z10        // l2 + …
	VMULPD  Z10, Z8, Z10         // t2 = s4·(…)
	VADDPD  Z10, Z9, Z9          // r = t1 + t2
	VMULPD  Z31, Z5, Z10         // 0.5·f
	VMULPD  Z5, Z10, Z10         // hfsq = (0.5·f)·f
	VADDPD  Z9, Z10, Z11         // hfsq + r
	VMULPD  Z11, Z6, Z11         // s·(hfsq + r)
	VMULPD  Z21, Z4, Z12         // k·ln2Lo
	VADDPD  Z12, Z11, Z11        // s·(hfsq+r) + k·ln2Lo
	VSUBPD  Z11, Z10, Z11        // hfsq − (…)
	VSUBPD  Z5, Z11, Z11         // (…) − f
	VMULPD  Z20, Z4, Z12         // k·ln2Hi
	VSUBPD  Z11, Z12, Z12        // k·ln2Hi − (…)
	VBLENDMPD Z12, Z16, K1, Z12  // p > 0 ? log p : 0
	VMOVUPD Z12, (DI)
	VPANDQ  Z14, Z12, Z12
	VMAXPD  Z12, Z15, Z15

	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, DI
	ADDQ $8, AX
	DECQ CX
	JNZ  log_loop

log_done:
	MOVQ AX, done+32(FP)
	VEXTRACTF64X4 $1, Z15, Y0
	VMAXPD        Y0, Y15, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPD        X1, X0, X0
	VPERMILPD     $1, X0, X1
	VMAXSD        X1, X0, X0
	VMOVSD        X0, maxAbs+40(FP)
	VZEROUPPER
	RET
