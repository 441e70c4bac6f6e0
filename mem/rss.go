package mem

import (
	"fmt"
	"strings"
)

// RSS is the resident set size of this process, in bytes, from
// /proc/self/status.
type RSS struct {
	// Current is the resident set size now (VmRSS): Anon + File + Shmem.
	Current int64
	// Peak is the highest resident set size since the process started or
	// since the last ResetPeak (VmHWM).
	Peak int64
	// Anon is resident anonymous memory (RssAnon): the Go heap, stacks,
	// the KV cache. It is what the memory limit really constrains.
	Anon int64
	// File is resident file-backed memory (RssFile): mapped model weights
	// and the executable. The kernel can reclaim it under pressure.
	File int64
	// Shmem is resident shared memory (RssShmem): tmpfs and shared
	// anonymous mappings.
	Shmem int64
}

// SmapsRollup is this process's memory summed over all its mappings, in
// bytes, from /proc/self/smaps_rollup (Linux 4.14). Proportional figures
// (Pss*) divide each shared page by the number of processes mapping it,
// so several processes serving one mapped model add up correctly.
type SmapsRollup struct {
	Rss      int64 // resident bytes, as RSS.Current
	Pss      int64 // proportional set size
	PssAnon  int64 // anonymous part of Pss (Linux 5.1)
	PssFile  int64 // file-backed part of Pss (Linux 5.1)
	PssShmem int64 // shared-memory part of Pss (Linux 5.1)
	// SharedClean, SharedDirty, PrivateClean and PrivateDirty split Rss
	// by whether other processes map the page and whether it was written.
	// Mapped weights are clean; the heap and KV cache are private dirty.
	SharedClean  int64
	SharedDirty  int64
	PrivateClean int64
	PrivateDirty int64
	Anonymous    int64 // anonymous pages, including private copies of file pages
	Swap         int64 // anonymous bytes swapped out
	SwapPss      int64 // proportional share of Swap
	Locked       int64 // bytes locked in RAM (MapLock)
}

// parseStatus reads the memory lines of /proc/self/status.
func parseStatus(data []byte, file string) (RSS, error) {
	var r RSS
	err := parseRequired(data, file, map[string]*int64{
		"VmRSS":    &r.Current,
		"VmHWM":    &r.Peak,
		"RssAnon":  &r.Anon,
		"RssFile":  &r.File,
		"RssShmem": &r.Shmem,
	}, "VmRSS")
	return r, err
}

// parseSmapsRollup reads /proc/self/smaps_rollup.
func parseSmapsRollup(data []byte, file string) (SmapsRollup, error) {
	var s SmapsRollup
	err := parseRequired(data, file, map[string]*int64{
		"Rss":           &s.Rss,
		"Pss":           &s.Pss,
		"Pss_Anon":      &s.PssAnon,
		"Pss_File":      &s.PssFile,
		"Pss_Shmem":     &s.PssShmem,
		"Shared_Clean":  &s.SharedClean,
		"Shared_Dirty":  &s.SharedDirty,
		"Private_Clean": &s.PrivateClean,
		"Private_Dirty": &s.PrivateDirty,
		"Anonymous":     &s.Anonymous,
		"Swap":          &s.Swap,
		"SwapPss":       &s.SwapPss,
		"Locked":        &s.Locked,
	}, "Rss", "Pss")
	return s, err
}

// parseRequired is parseKB, failing when a required key is missing.
func parseRequired(data []byte, file string, fields map[string]*int64, required ...string) error {
	seen, err := parseKB(data, file, fields)
	if err != nil {
		return err
	}
	for _, k := range required {
		if !seen[k] {
			return fmt.Errorf("mem: %s: no %s line", file, k)
		}
	}
	return nil
}

// parseKB fills fields from the "Key:   value kB" lines of a proc file,
// converting kB to bytes; a value without a unit is taken as is. Lines for
// other keys are ignored, whatever they hold. It reports which keys it saw.
func parseKB(data []byte, file string, fields map[string]*int64) (map[string]bool, error) {
	seen := make(map[string]bool, len(fields))
	for line := range strings.Lines(string(data)) {
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		dst, want := fields[key]
		if !want {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 || len(f) > 2 || len(f) == 2 && f[1] != "kB" {
			return nil, fmt.Errorf("mem: %s: malformed line %q", file, strings.TrimSpace(line))
		}
		v, err := parseInt(f[0])
		if err != nil {
			return nil, fmt.Errorf("mem: %s: %s: %w", file, key, err)
		}
		if len(f) == 2 {
			v *= 1024
		}
		*dst = v
		seen[key] = true
	}
	return seen, nil
}
