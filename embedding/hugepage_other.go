//go:build !linux

package embedding

// adviseHuge is a no-op where transparent huge pages are not advised (see the Linux file).
func adviseHuge([]float64) {}
