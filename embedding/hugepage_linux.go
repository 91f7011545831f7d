package embedding

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back the whole 2 MiB pages inside x with transparent huge
// pages before x is first written (for transparent_hugepage=madvise, the common default),
// so that filling a large frequency matrix (28 MB for a version-1 hdd family with D = 7000)
// takes a few page faults instead of one per 4 KiB. Advice only: it never changes x's
// contents, and an error (an old kernel, THP disabled) changes nothing but speed.
func adviseHuge(x []float64) {
	const huge = 2 << 20
	if len(x)*8 < 2*huge {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*8)
	off := (huge - int(uintptr(unsafe.Pointer(&b[0]))%huge)) % huge
	n := (len(b) - off) / huge * huge
	if n == 0 {
		return
	}
	_ = syscall.Madvise(b[off:off+n], syscall.MADV_HUGEPAGE)
}
