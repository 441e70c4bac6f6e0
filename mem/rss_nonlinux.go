//go:build !linux && !wasm

package mem

import (
	"fmt"
	"runtime"
)

// ReadRSS fails with ErrUnsupported: it reads /proc, which only Linux has
// (WebAssembly builds answer from the Go runtime).
func ReadRSS() (RSS, error) {
	return RSS{}, fmt.Errorf("mem: read RSS on %s: %w", runtime.GOOS, ErrUnsupported)
}
