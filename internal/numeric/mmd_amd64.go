//go:build amd64 && !purego

package numeric

import "golang.org/x/sys/cpu"

// mmdKernelAVX512 is the AVX-512F kernel (mmd_amd64.s): 8 frequencies per instruction.
// Preconditions (checked by MMDAccumulate): n ≥ 1, d ≥ 1, hp a positive multiple of 8,
// omega has d·hp elements, u has n·d, acc has 2·hp.
//
//go:noescape
func mmdKernelAVX512(omega, u *float64, n, d, hp int, acc *int64)

// mmdKernelAVX2 is the AVX2+FMA kernel (mmd_amd64.s): 4 frequencies per instruction, same
// preconditions as mmdKernelAVX512.
//
//go:noescape
func mmdKernelAVX2(omega, u *float64, n, d, hp int, acc *int64)

// MMDPathSupported reports whether path can run on this machine.
func MMDPathSupported(p MMDPath) bool {
	switch p {
	case MMDPathAVX512:
		return cpu.X86.HasAVX512F
	case MMDPathAVX2:
		return cpu.X86.HasAVX2 && cpu.X86.HasFMA
	case MMDPathPortable, MMDPathExact:
		return true
	}
	return false
}

// mmdAccumulateSIMD runs one chunk on an assembly kernel.
func mmdAccumulateSIMD(path MMDPath, omega, u []float64, n, d, hp int, acc []int64) {
	switch {
	case path == MMDPathAVX512 && cpu.X86.HasAVX512F:
		mmdKernelAVX512(&omega[0], &u[0], n, d, hp, &acc[0])
	case path == MMDPathAVX2 && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		mmdKernelAVX2(&omega[0], &u[0], n, d, hp, &acc[0])
	default:
		mmdAccumulateGo(omega, u, n, d, hp, acc)
	}
}
