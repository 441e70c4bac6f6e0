//go:build !linux

package mem

import (
	"fmt"
	"runtime"
)

// ReadCgroupPeak fails with ErrUnsupported: cgroups exist on Linux only.
func ReadCgroupPeak() (int64, error) {
	return 0, fmt.Errorf("mem: cgroup peak on %s: %w", runtime.GOOS, ErrUnsupported)
}
