//go:build !linux

package mem

import (
	"fmt"
	"runtime"
)

// DetectLimit fails with ErrUnsupported: memory limits are read from
// cgroups and /proc/meminfo on Linux only. Use ExplicitLimit instead.
func DetectLimit() (Limit, error) {
	return Limit{}, fmt.Errorf("mem: detect memory limit on %s: %w", runtime.GOOS, ErrUnsupported)
}

// ReadCgroupPeak fails with ErrUnsupported: cgroups exist on Linux only.
func ReadCgroupPeak() (int64, error) {
	return 0, fmt.Errorf("mem: cgroup peak on %s: %w", runtime.GOOS, ErrUnsupported)
}
