// Package buildinfo carries the version stamped into the binary at link time
// (-X github.com/distfeat/distfeat/internal/buildinfo.Version=...).
package buildinfo

import "runtime/debug"

// Version is set by the linker; "dev" for plain `go build`.
var Version = "dev"

// String returns the version, falling back to the VCS revision recorded by the Go toolchain.
func String() string {
	if Version != "dev" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return Version
}
