package quant

import "golang.org/x/sys/unix"

// threadCPU returns the CPU time of the calling thread in nanoseconds, or
// -1 if it cannot. On a shared machine it measures a kernel without the
// time other processes hold the CPU (lock the goroutine to its thread).
func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return ts.Nano()
}
