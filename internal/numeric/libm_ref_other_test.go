//go:build !amd64 || amd64.v3

package numeric

// stdlibIsReference is false where the math library may fuse multiply-adds or use other
// assembly: there only the committed checksums are the reference.
const stdlibIsReference = false
