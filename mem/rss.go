package mem

import (
	"fmt"
	"reflect"
	"strings"
)

// RSS is the resident set size of this process, in bytes, from
// /proc/self/status.
type RSS struct {
	// Current is the resident set size now (VmRSS): Anon + File + Shmem.
	Current int64 `proc:"VmRSS,required"`
	// Peak is the highest resident set size since the process started or
	// since the last ResetPeak (VmHWM).
	Peak int64 `proc:"VmHWM"`
	// Anon is resident anonymous memory (RssAnon): the Go heap, stacks,
	// the KV cache. It is what the memory limit really constrains.
	Anon int64 `proc:"RssAnon"`
	// File is resident file-backed memory (RssFile): mapped model weights
	// and the executable. The kernel can reclaim it under pressure.
	File int64 `proc:"RssFile"`
	// Shmem is resident shared memory (RssShmem): tmpfs and shared
	// anonymous mappings.
	Shmem int64 `proc:"RssShmem"`
}

// SmapsRollup is this process's memory summed over all its mappings, in
// bytes, from /proc/self/smaps_rollup (Linux 4.14). Proportional figures
// (Pss*) divide each shared page by the number of processes mapping it,
// so several processes serving one mapped model add up correctly.
type SmapsRollup struct {
	Rss      int64 `proc:"Rss,required"` // resident bytes, as RSS.Current
	Pss      int64 `proc:"Pss,required"` // proportional set size
	PssAnon  int64 `proc:"Pss_Anon"`     // anonymous part of Pss (Linux 5.1)
	PssFile  int64 `proc:"Pss_File"`     // file-backed part of Pss (Linux 5.1)
	PssShmem int64 `proc:"Pss_Shmem"`    // shared-memory part of Pss (Linux 5.1)
	// SharedClean, SharedDirty, PrivateClean and PrivateDirty split Rss
	// by whether other processes map the page and whether it was written.
	// Mapped weights are clean; the heap and KV cache are private dirty.
	SharedClean  int64 `proc:"Shared_Clean"`
	SharedDirty  int64 `proc:"Shared_Dirty"`
	PrivateClean int64 `proc:"Private_Clean"`
	PrivateDirty int64 `proc:"Private_Dirty"`
	Anonymous    int64 `proc:"Anonymous"` // anonymous pages, including private copies of file pages
	Swap         int64 `proc:"Swap"`      // anonymous bytes swapped out
	SwapPss      int64 `proc:"SwapPss"`   // proportional share of Swap
	Locked       int64 `proc:"Locked"`    // bytes locked in RAM (MapLock)
}

// parseStatus reads the memory lines of /proc/self/status.
func parseStatus(data []byte, file string) (RSS, error) { return parseTagged[RSS](data, file) }

// parseSmapsRollup reads /proc/self/smaps_rollup.
func parseSmapsRollup(data []byte, file string) (SmapsRollup, error) {
	return parseTagged[SmapsRollup](data, file)
}

// parseTagged is parseKB into a T whose fields are int64s tagged with the
// key of their line, `proc:"Key"`, or `proc:"Key,required"` for a line
// whose absence fails the parse (the first such, in field order, is named):
// the key then stands beside the field's documentation, where a map written
// in each parser said it again.
func parseTagged[T any](data []byte, file string) (T, error) {
	var out T
	v := reflect.ValueOf(&out).Elem()
	fields := make(map[string]*int64, v.NumField())
	var required []string
	for i := range v.NumField() {
		key, opt, _ := strings.Cut(v.Type().Field(i).Tag.Get("proc"), ",")
		fields[key] = v.Field(i).Addr().Interface().(*int64)
		if opt == "required" {
			required = append(required, key)
		}
	}
	seen, err := parseKB(data, file, fields)
	if err != nil {
		return out, err
	}
	for _, k := range required {
		if !seen[k] {
			return out, fmt.Errorf("mem: %s: no %s line", file, k)
		}
	}
	return out, nil
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
