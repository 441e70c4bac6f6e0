//go:build !linux

package mem

import (
	"fmt"
	"runtime"
)

// ReadSmapsRollup fails with ErrUnsupported: it reads /proc, which only
// Linux has.
func ReadSmapsRollup() (SmapsRollup, error) {
	return SmapsRollup{}, fmt.Errorf("mem: read smaps_rollup on %s: %w", runtime.GOOS, ErrUnsupported)
}

// ResetPeak fails with ErrUnsupported: it writes /proc, which only Linux
// has.
func ResetPeak() error {
	return fmt.Errorf("mem: reset peak RSS on %s: %w", runtime.GOOS, ErrUnsupported)
}
