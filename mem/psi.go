package mem

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// PSIMemoryPath is the machine-wide memory pressure file (Linux 4.20 with
// CONFIG_PSI). Under cgroup v2 each cgroup has its own memory.pressure in
// the same format.
const PSIMemoryPath = "/proc/pressure/memory"

// PSI is pressure stall information: how much time tasks spent waiting for
// memory (reclaim, refaults, swap-in). Rising Some means the working set
// no longer fits, such as mapped weights being evicted and read back
// every token; Full means all non-idle tasks stalled at once.
type PSI struct {
	Some PSIStat
	Full PSIStat
	// HasFull reports whether the file had a "full" line; kernels before
	// 5.13 omit it from the system-wide cpu file, and a missing line must
	// not read as zero pressure.
	HasFull bool
}

// PSIStat is one line of a pressure file.
type PSIStat struct {
	// Avg10, Avg60 and Avg300 are the share of wall time stalled, in
	// percent, averaged over the last 10, 60 and 300 seconds.
	Avg10, Avg60, Avg300 float64
	// Total is the stall time accumulated since boot (or since the cgroup
	// was created). Differences between two reads give exact stall time.
	Total time.Duration
}

// ReadPSI reads a pressure file such as PSIMemoryPath or a cgroup's
// memory.pressure.
func ReadPSI(path string) (PSI, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return PSI{}, fmt.Errorf("mem: read pressure: %w", err)
	}
	return parsePSI(string(data), path)
}

// parsePSI parses lines of the form
// "some avg10=0.12 avg60=0.05 avg300=0.01 total=123456" (total in
// microseconds). Unknown lines and fields are skipped so that additions in
// later kernels do not break the parse.
func parsePSI(text, file string) (PSI, error) {
	var p PSI
	seenSome := false
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var dst *PSIStat
		switch f[0] {
		case "some":
			dst, seenSome = &p.Some, true
		case "full":
			dst, p.HasFull = &p.Full, true
		default:
			continue
		}
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return PSI{}, fmt.Errorf("mem: %s: malformed field %q in line %q", file, kv, strings.TrimSpace(line))
			}
			var err error
			switch k {
			case "avg10":
				dst.Avg10, err = strconv.ParseFloat(v, 64)
			case "avg60":
				dst.Avg60, err = strconv.ParseFloat(v, 64)
			case "avg300":
				dst.Avg300, err = strconv.ParseFloat(v, 64)
			case "total":
				var us uint64
				us, err = strconv.ParseUint(v, 10, 64)
				dst.Total = time.Duration(min(us, uint64(1<<63-1)/uint64(time.Microsecond))) * time.Microsecond
			}
			if err != nil {
				return PSI{}, fmt.Errorf("mem: %s: malformed %s value %q", file, k, v)
			}
		}
	}
	if !seenSome {
		return PSI{}, fmt.Errorf("mem: %s: no \"some\" line", file)
	}
	return p, nil
}
