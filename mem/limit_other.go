//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd && !windows && !wasm

package mem

import (
	"fmt"
	"runtime"
)

// DetectLimit fails with ErrUnsupported: this system has no reader for its
// memory figures (Linux, the BSDs, macOS, Windows and WebAssembly do).
// Use ExplicitLimit instead.
func DetectLimit() (Limit, error) {
	return Limit{}, fmt.Errorf("mem: detect memory limit on %s: %w", runtime.GOOS, ErrUnsupported)
}
