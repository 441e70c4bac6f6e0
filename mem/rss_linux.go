//go:build linux

package mem

import (
	"fmt"
	"os"
)

// ReadRSS returns this process's resident set size from /proc/self/status.
func ReadRSS() (RSS, error) { return readProc("/proc/self/status", "RSS", parseStatus) }

// ReadSmapsRollup returns this process's memory summed over its mappings,
// with the proportional and anonymous breakdown /proc/self/status lacks.
// Reading it walks every mapping, so it costs more than ReadRSS.
func ReadSmapsRollup() (SmapsRollup, error) {
	return readProc("/proc/self/smaps_rollup", "smaps_rollup", parseSmapsRollup)
}

// readProc reads a proc file and parses it.
func readProc[T any](file, what string, parse func([]byte, string) (T, error)) (T, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("mem: read %s: %w", what, err)
	}
	return parse(data, file)
}

// ResetPeak resets RSS.Peak (VmHWM) to the current resident set size by
// writing "5" to /proc/self/clear_refs, so the peak of one phase, such as
// loading or a single decode step, can be measured. Some sandboxes refuse
// the write; the error then matches fs.ErrPermission, and a caller that
// only wants better numbers can ignore it and read the peak since start.
func ResetPeak() error {
	f, err := os.OpenFile("/proc/self/clear_refs", os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("mem: reset peak RSS: %w", err)
	}
	_, err = f.Write([]byte("5"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("mem: reset peak RSS: %w", err)
	}
	return nil
}
