//go:build linux

package mem

import "os"

// DetectLimit reports how much memory this process may use, reading the
// memory cgroup it runs in (v1 or v2, found through /proc/self/cgroup and
// /proc/self/mountinfo) and /proc/meminfo. See Limit for the arithmetic.
// The figures are a snapshot: call it again before a large allocation if
// time has passed.
func DetectLimit() (Limit, error) {
	return DetectLimitFS(os.DirFS("/"))
}

// ReadCgroupPeak returns the highest memory usage in bytes recorded for
// this process's memory cgroup: memory.peak under cgroup v2 (Linux 5.19 and
// later) or memory.max_usage_in_bytes under v1. The cgroup may hold other
// processes, whose usage is included, and its page cache counts too. It
// fails with ErrUnsupported when neither file exists.
func ReadCgroupPeak() (int64, error) {
	return readCgroupPeakFS(os.DirFS("/"))
}
