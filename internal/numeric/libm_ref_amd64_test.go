//go:build amd64 && !amd64.v3

package numeric

// stdlibIsReference: on amd64 below GOAMD64=v3 the compiler never fuses multiply-adds, so
// Go's math.Log (assembly), math.Sincos, math.Cos and math.Tan (pure Go) execute exactly
// the operation sequence the portable functions pin, and must agree with them bit for bit.
const stdlibIsReference = true
