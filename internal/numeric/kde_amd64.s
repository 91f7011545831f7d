//go:build amd64 && !purego

#include "textflag.h"

// The AVX-512 kernels of kdeAxis.kdeMass2T (kde.go), which computes the d = 2 binned KDE
// with the summation order of kdeMass, vectorised across independent outputs.

// func kdeDotLanesAVX512(w *float64, ntap int, x *float64, ldx int, out *float64, nblk int)
//
// For 8·nblk lanes k: out[k] = (s0 + s1) + (s2 + s3), where tap t < ntap contributes the
// rounded product w[t]·x[t·ldx + k] (ldx in bytes) to s_{t mod 4} if t < ntap &^ 3 and to
// s0 otherwise, in increasing t from +0 — per lane, the order of dot (rff.go). Two blocks
// of 8 lanes at a time (Z0–Z3 and Z4–Z7 their sums), then one. ntap ≥ 1, nblk ≥ 1.
TEXT ·kdeDotLanesAVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ ntap+8(FP), CX
	MOVQ x+16(FP), DI
	MOVQ ldx+24(FP), R9
	MOVQ out+32(FP), R8
	MOVQ nblk+40(FP), DX
	MOVQ CX, R11
	SHRQ $2, R11              // groups of 4 taps
	MOVQ CX, R12
	ANDQ $3, R12              // taps left over, into s0

dl_pair:
	CMPQ   DX, $2
	JLT    dl_single
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	MOVQ   SI, AX             // tap weights
	MOVQ   DI, BX             // row of tap t
	MOVQ   R11, R13
	TESTQ  R13, R13
	JZ     dl_pair_tail

dl_pair_grp:
	VBROADCASTSD (AX), Z8
	VBROADCASTSD 8(AX), Z9
	VBROADCASTSD 16(AX), Z10
	VBROADCASTSD 24(AX), Z11
	VMULPD       (BX), Z8, Z12
	VMULPD       64(BX), Z8, Z13
	VADDPD       Z12, Z0, Z0
	VADDPD       Z13, Z4, Z4
	ADDQ         R9, BX
	VMULPD       (BX), Z9, Z12
	VMULPD       64(BX), Z9, Z13
	VADDPD       Z12, Z1, Z1
	VADDPD       Z13, Z5, Z5
	ADDQ         R9, BX
	VMULPD       (BX), Z10, Z12
	VMULPD       64(BX), Z10, Z13
	VADDPD       Z12, Z2, Z2
	VADDPD       Z13, Z6, Z6
	ADDQ         R9, BX
	VMULPD       (BX), Z11, Z12
	VMULPD       64(BX), Z11, Z13
	VADDPD       Z12, Z3, Z3
	VADDPD       Z13, Z7, Z7
	ADDQ         R9, BX
	ADDQ         $32, AX
	DECQ         R13
	JNZ          dl_pair_grp

dl_pair_tail:
	MOVQ  R12, R13
	TESTQ R13, R13
	JZ    dl_pair_done

dl_pair_tail_loop:
	VBROADCASTSD (AX), Z8
	VMULPD       (BX), Z8, Z12
	VMULPD       64(BX), Z8, Z13
	VADDPD       Z12, Z0, Z0
	VADDPD       Z13, Z4, Z4
	ADDQ         R9, BX
	ADDQ         $8, AX
	DECQ         R13
	JNZ          dl_pair_tail_loop

dl_pair_done:
	VADDPD  Z1, Z0, Z0
	VADDPD  Z3, Z2, Z2
	VADDPD  Z2, Z0, Z0
	VADDPD  Z5, Z4, Z4
	VADDPD  Z7, Z6, Z6
	VADDPD  Z6, Z4, Z4
	VMOVUPD Z0, (R8)
	VMOVUPD Z4, 64(R8)
	ADDQ    $128, DI
	ADDQ    $128, R8
	SUBQ    $2, DX
	JMP     dl_pair

dl_single:
	TESTQ  DX, DX
	JZ     dl_done
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	MOVQ   SI, AX
	MOVQ   DI, BX
	MOVQ   R11, R13
	TESTQ  R13, R13
	JZ     dl_single_tail

dl_single_grp:
	VBROADCASTSD (AX), Z8
	VBROADCASTSD 8(AX), Z9
	VBROADCASTSD 16(AX), Z10
	VBROADCASTSD 24(AX), Z11
	VMULPD       (BX), Z8, Z12
	VADDPD       Z12, Z0, Z0
	ADDQ         R9, BX
	VMULPD       (BX), Z9, Z12
	VADDPD       Z12, Z1, Z1
	ADDQ         R9, BX
	VMULPD       (BX), Z10, Z12
	VADDPD       Z12, Z2, Z2
	ADDQ         R9, BX
	VMULPD       (BX), Z11, Z12
	VADDPD       Z12, Z3, Z3
	ADDQ         R9, BX
	ADDQ         $32, AX
	DECQ         R13
	JNZ          dl_single_grp

dl_single_tail:
	MOVQ  R12, R13
	TESTQ R13, R13
	JZ    dl_single_done

dl_single_tail_loop:
	VBROADCASTSD (AX), Z8
	VMULPD       (BX), Z8, Z12
	VADDPD       Z12, Z0, Z0
	ADDQ         R9, BX
	ADDQ         $8, AX
	DECQ         R13
	JNZ          dl_single_tail_loop

dl_single_done:
	VADDPD  Z1, Z0, Z0
	VADDPD  Z3, Z2, Z2
	VADDPD  Z2, Z0, Z0
	VMOVUPD Z0, (R8)
	ADDQ    $64, DI
	ADDQ    $64, R8
	DECQ    DX
	JMP     dl_single

dl_done:
	VZEROUPPER
	RET

// func kdeSeqLanesAVX512(w *float64, steps int, x *float64, ldx int, out *float64, ldout, rows, mask int)
//
// For each row r < rows and lane l < 8: acc = +0, then for u < steps
// acc += w[8u + l]·x[r·ldx + 8(u + l)] (strides in bytes, every product rounded before it
// is added), and out[r·ldout + 8l] = acc for the lanes set in mask. Four rows at a time
// (Z0–Z3), then one.
TEXT ·kdeSeqLanesAVX512(SB), NOSPLIT, $0-64
	MOVQ  w+0(FP), SI
	MOVQ  steps+8(FP), CX
	MOVQ  x+16(FP), DI
	MOVQ  ldx+24(FP), R9
	MOVQ  out+32(FP), R8
	MOVQ  ldout+40(FP), R10
	MOVQ  rows+48(FP), DX
	MOVQ  mask+56(FP), AX
	KMOVW AX, K1
	LEAQ  (R9)(R9*2), R11     // 3·ldx

sl_quad:
	CMPQ   DX, $4
	JLT    sl_single
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	MOVQ   SI, AX
	MOVQ   DI, BX
	MOVQ   CX, R13

sl_quad_step:
	VMOVUPD (AX), Z8
	VMULPD  (BX), Z8, Z9
	VMULPD  (BX)(R9*1), Z8, Z10
	VMULPD  (BX)(R9*2), Z8, Z11
	VMULPD  (BX)(R11*1), Z8, Z12
	VADDPD  Z9, Z0, Z0
	VADDPD  Z10, Z1, Z1
	VADDPD  Z11, Z2, Z2
	VADDPD  Z12, Z3, Z3
	ADDQ    $64, AX
	ADDQ    $8, BX
	DECQ    R13
	JNZ     sl_quad_step

	MOVQ    R8, BX
	VMOVUPD Z0, K1, (BX)
	ADDQ    R10, BX
	VMOVUPD Z1, K1, (BX)
	ADDQ    R10, BX
	VMOVUPD Z2, K1, (BX)
	ADDQ    R10, BX
	VMOVUPD Z3, K1, (BX)
	LEAQ    (DI)(R9*4), DI
	LEAQ    (R8)(R10*4), R8
	SUBQ    $4, DX
	JMP     sl_quad

sl_single:
	TESTQ  DX, DX
	JZ     sl_done
	VPXORQ Z0, Z0, Z0
	MOVQ   SI, AX
	MOVQ   DI, BX
	MOVQ   CX, R13

sl_single_step:
	VMOVUPD (AX), Z8
	VMULPD  (BX), Z8, Z9
	VADDPD  Z9, Z0, Z0
	ADDQ    $64, AX
	ADDQ    $8, BX
	DECQ    R13
	JNZ     sl_single_step

	VMOVUPD Z0, K1, (R8)
	ADDQ    R9, DI
	ADDQ    R10, R8
	DECQ    DX
	JMP     sl_single

sl_done:
	VZEROUPPER
	RET

DATA kdeIota<>+0(SB)/8, $0
DATA kdeIota<>+8(SB)/8, $1
DATA kdeIota<>+16(SB)/8, $2
DATA kdeIota<>+24(SB)/8, $3
DATA kdeIota<>+32(SB)/8, $4
DATA kdeIota<>+40(SB)/8, $5
DATA kdeIota<>+48(SB)/8, $6
DATA kdeIota<>+56(SB)/8, $7
GLOBL kdeIota<>(SB), RODATA|NOPTR, $64

// func kdeCountsTAVX512(counts *int64, n int, cur *float64, ldc int)
//
// The transposed conversion of an n×n grid of counts: cur[p1·ldc + p0] = float64(counts[p0·n + p1])
// (VCVTQQ2PD rounds to nearest, like Go's conversion) for p0, p1 < n; the lanes p0 ≥ n of
// the last block are neither read nor written. 8 values of p0 per gather. n ≥ 1.
//
// Z0 p0·n of the current block's lanes, Z1 8·n broadcast, Z2 gathered counts, K1 the
// block's lanes, K2 gather mask (consumed by the gather).
TEXT ·kdeCountsTAVX512(SB), NOSPLIT, $0-32
	MOVQ         counts+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         cur+16(FP), DI
	MOVQ         ldc+24(FP), R9
	SHLQ         $3, R9              // row stride of cur in bytes
	VPBROADCASTQ CX, Z3
	VMOVDQU64    kdeIota<>+0(SB), Z4
	VPMULLQ      Z3, Z4, Z4          // l·n
	MOVQ         CX, AX
	SHLQ         $3, AX
	VPBROADCASTQ AX, Z1              // 8·n
	XORQ         R10, R10            // p1

ct_col:
	VMOVDQA64 Z4, Z0
	MOVQ      DI, R11                // cur row p1, block 0
	MOVQ      CX, R12                // lanes left
	LEAQ      (SI)(R10*8), BX        // &counts[p1]

ct_blk:
	MOVL  $0xFF, AX
	CMPQ  R12, $8
	JGE   ct_mask
	MOVQ  R12, R13
	MOVL  $1, AX
	XCHGQ R13, CX
	SHLL  CX, AX
	XCHGQ R13, CX
	DECL  AX

ct_mask:
	KMOVW      AX, K1
	KMOVW      AX, K2
	VPXORQ     Z2, Z2, Z2
	VPGATHERQQ (BX)(Z0*8), K2, Z2
	VCVTQQ2PD  Z2, Z5
	VMOVUPD    Z5, K1, (R11)
	VPADDQ     Z1, Z0, Z0
	ADDQ       $64, R11
	SUBQ       $8, R12
	JG         ct_blk

	ADDQ R9, DI
	INCQ R10
	CMPQ R10, CX
	JLT  ct_col
	VZEROUPPER
	RET

// func kdeScaleFloorAVX512(x *float64, n int, scale, floor float64)
//
// normalizeDensity's last loop for n values, n a multiple of 8: v = x·scale (rounded), and
// floor where v < floor (ordered: NaN stays), written back.
TEXT ·kdeScaleFloorAVX512(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD scale+16(FP), Z1
	VBROADCASTSD floor+24(FP), Z2
	SHRQ         $3, CX
	JZ           sf_done

sf_loop:
	VMULPD  (SI), Z1, Z0
	VCMPPD  $0x11, Z2, Z0, K1   // v < floor
	VMOVAPD Z2, K1, Z0
	VMOVUPD Z0, (SI)
	ADDQ    $64, SI
	DECQ    CX
	JNZ     sf_loop

sf_done:
	VZEROUPPER
	RET
