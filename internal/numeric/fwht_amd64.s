//go:build amd64 && !purego

#include "textflag.h"

// func fwhtWideAVX512(y *float64, n int)
//
// The Walsh–Hadamard stages h = 8, 16, …, n/2 of fwht (sorf.go), in that order, each
// butterfly (y_j, y_{j+h}) ← (y_j + y_{j+h}, y_j − y_{j+h}) done for 8 consecutive j at
// once: the same rounded additions and subtractions as the scalar loop. n is a power of
// two ≥ 16; stages h < 8 are done by the caller.
TEXT ·fwhtWideAVX512(SB), NOSPLIT, $0-16
	MOVQ y+0(FP), DI
	MOVQ n+8(FP), CX
	SHLQ $3, CX              // n in bytes
	MOVQ $64, BX             // h in bytes

fwht_stage:
	CMPQ BX, CX
	JAE  fwht_done
	XORQ SI, SI              // block start i in bytes

fwht_block:
	LEAQ (DI)(SI*1), R8      // y_j
	LEAQ (R8)(BX*1), R9      // y_{j+h}
	MOVQ BX, DX

fwht_inner:
	VMOVUPD (R8), Z0
	VMOVUPD (R9), Z1
	VADDPD  Z1, Z0, Z2
	VSUBPD  Z1, Z0, Z3
	VMOVUPD Z2, (R8)
	VMOVUPD Z3, (R9)
	ADDQ    $64, R8
	ADDQ    $64, R9
	SUBQ    $64, DX
	JNZ     fwht_inner
	LEAQ    (SI)(BX*2), SI
	CMPQ    SI, CX
	JB      fwht_block
	SHLQ    $1, BX
	JMP     fwht_stage

fwht_done:
	VZEROUPPER
	RET
