package mem

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Limit says how much memory the process may use, and why.
//
// Two ceilings apply to a process: the memory cgroup it runs in (a
// container's limit, a systemd slice's MemoryMax) and the machine itself.
// DetectLimit reads both and keeps the tighter one:
//
//	Total     = min(cgroup limit, MemTotal)
//	Available = min(cgroup limit - (cgroup usage - cgroup file cache), MemAvailable)
//
// The cgroup term is evaluated at every level of the cgroup hierarchy that
// has a limit (a parent's limit covers its children's usage) and the
// smallest wins. Cgroup usage counts the page cache of files the group has
// read, mapped model weights included, but the kernel reclaims those pages
// before it lets an allocation fail, so they are not used memory: only the
// rest of the usage (anonymous memory, kernel memory, tmpfs) is subtracted.
// Without that correction a machine that has just read a model file looks
// full (ollama issue 15474). The file cache is taken as the cgroup's
// active_file + inactive_file pages, falling back to its file or cache
// total minus shared memory.
//
// MemAvailable is the kernel's estimate of memory available to new
// allocations without swapping; it already counts reclaimable page cache as
// available. Inside a container /proc/meminfo usually describes the host,
// which is why the cgroup term matters. Swap is not counted.
type Limit struct {
	// Total is the most memory the process can ever use, in bytes: the
	// smallest cgroup limit, or MemTotal if that is smaller or there is
	// no cgroup limit.
	Total int64
	// Available is how many bytes a new allocation can use now, per the
	// arithmetic above. Plan against this number.
	Available int64
	// Source names what bounds Available and the file it came from, e.g.
	// "cgroup v2 memory.max (/sys/fs/cgroup/app.slice/memory.max)",
	// "cgroup v1 memory.limit_in_bytes (...)",
	// "cgroup v1 hierarchical_memory_limit (...)",
	// "MemAvailable (/proc/meminfo)" or "explicit".
	Source string

	// CgroupLimit, CgroupUsage and CgroupFileCache describe the limited
	// cgroup with the least headroom, whether or not MemAvailable turned
	// out tighter still; when Source names a cgroup,
	// Available == CgroupLimit - (CgroupUsage - CgroupFileCache), never
	// below zero. CgroupLimit is 0 when no cgroup limit applies; the usage
	// figures then describe the process's own cgroup, if known.
	CgroupLimit     int64
	CgroupUsage     int64
	CgroupFileCache int64

	// MemTotal and MemAvailable are the machine-wide figures from
	// /proc/meminfo, 0 if it could not be read.
	MemTotal     int64
	MemAvailable int64
}

// ExplicitLimit returns a Limit of n bytes chosen by the user, for callers
// that let a flag or option override detection.
func ExplicitLimit(n int64) Limit {
	return Limit{Total: n, Available: n, Source: "explicit"}
}

// String explains the limit in one line, for logs and error messages.
func (l Limit) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s available of %s total, bounded by %s", formatBytes(l.Available), formatBytes(l.Total), l.Source)
	if l.CgroupLimit > 0 || l.CgroupUsage > 0 {
		fmt.Fprintf(&b, "; cgroup usage %s of which %s reclaimable file cache", formatBytes(l.CgroupUsage), formatBytes(l.CgroupFileCache))
	}
	return b.String()
}

func formatBytes(n int64) string {
	const unit = 1024
	switch {
	case n >= unit*unit*unit:
		return fmt.Sprintf("%.2f GiB", float64(n)/(unit*unit*unit))
	case n >= unit*unit:
		return fmt.Sprintf("%.1f MiB", float64(n)/(unit*unit))
	case n >= unit:
		return fmt.Sprintf("%.1f KiB", float64(n)/unit)
	}
	return fmt.Sprintf("%d B", n)
}

// unlimitedFrom is where cgroup v1 limits stop meaning anything: "no
// limit" reads as the largest page-aligned int64 (9223372036854771712 with
// 4 KiB pages), and no machine has 2^62 bytes.
const unlimitedFrom = 1 << 62

// cgroupLevel is the memory accounting of one cgroup directory.
type cgroupLevel struct {
	source    string
	limited   bool
	limit     int64
	usage     int64
	hasUsage  bool
	fileCache int64
	hierLimit int64 // v1 hierarchical_memory_limit from memory.stat, 0 if absent
	statFile  string
}

// headroom is the level's term of the Available formula.
func (l cgroupLevel) headroom() int64 {
	anon := max(l.usage-l.fileCache, 0)
	return max(l.limit-anon, 0)
}

// readCgroupLevel reads one cgroup directory. ok is false if the directory
// has no memory limit file, which means the memory controller is not
// enabled there (or it is the root cgroup of a v2 hierarchy).
func readCgroupLevel(fsys fs.FS, v2 bool, dir string) (lv cgroupLevel, ok bool, err error) {
	limitName, usageName := "memory.limit_in_bytes", "memory.usage_in_bytes"
	version := "v1"
	if v2 {
		limitName, usageName, version = "memory.max", "memory.current", "v2"
	}
	limitFile := path.Join(dir, limitName)
	data, err := readOptional(fsys, limitFile)
	if err != nil || data == nil {
		return lv, false, err
	}
	lv.source = fmt.Sprintf("cgroup %s %s (/%s)", version, limitName, limitFile)
	if s := strings.TrimSpace(string(data)); !(v2 && s == "max") {
		v, err := parseInt(s)
		if err != nil {
			return lv, false, fmt.Errorf("mem: /%s: %w", limitFile, err)
		}
		if v >= 0 && v < unlimitedFrom {
			lv.limited, lv.limit = true, v
		}
	}
	lv.usage, lv.hasUsage, err = readInt(fsys, path.Join(dir, usageName))
	if err != nil {
		return lv, false, err
	}
	lv.statFile = path.Join(dir, "memory.stat")
	stat, err := readKeyValues(fsys, lv.statFile)
	if err != nil {
		return lv, false, err
	}
	lv.fileCache = fileCache(stat, v2)
	if !v2 {
		if h, ok := stat["hierarchical_memory_limit"]; ok && h >= 0 && h < unlimitedFrom {
			lv.hierLimit = h
		}
	}
	return lv, true, nil
}

// fileCache returns the reclaimable file-backed bytes in a memory.stat.
// The LRU lists are preferred: they hold exactly the evictable file pages,
// while the "file"/"cache" totals include tmpfs and shared memory, which
// only swap could free.
func fileCache(stat map[string]int64, v2 bool) int64 {
	sum := func(keys ...string) (int64, bool) {
		var s int64
		found := false
		for _, k := range keys {
			if v, ok := stat[k]; ok {
				s += v
				found = true
			}
		}
		return s, found
	}
	var candidates [][2]string
	if v2 {
		candidates = [][2]string{{"active_file", "inactive_file"}}
	} else {
		// total_* include descendants; the plain names cover only the
		// cgroup's own pages.
		candidates = [][2]string{{"total_active_file", "total_inactive_file"}, {"active_file", "inactive_file"}}
	}
	for _, c := range candidates {
		if v, ok := sum(c[0], c[1]); ok {
			return v
		}
	}
	totals := [][2]string{{"file", "shmem"}}
	if !v2 {
		totals = [][2]string{{"total_cache", "total_shmem"}, {"cache", "shmem"}}
	}
	for _, c := range totals {
		if v, ok := stat[c[0]]; ok {
			return max(v-stat[c[1]], 0)
		}
	}
	return 0
}

// DetectLimitFS is DetectLimit reading from fsys instead of the real root
// directory: fsys must present the files at their usual absolute paths
// without the leading slash (proc/self/cgroup, proc/self/mountinfo,
// proc/meminfo, and the cgroup files below the mount points mountinfo
// names). os.DirFS("/") gives the real machine; tests use a fake tree.
//
// Missing or unreadable files mean less information, not an error; a file
// holding a malformed number is an error that names the file. It fails if
// neither a cgroup limit nor /proc/meminfo is found.
func DetectLimitFS(fsys fs.FS) (Limit, error) {
	var l Limit
	cgs, err := findMemCgroups(fsys)
	if err != nil {
		return l, err
	}
	var best, leaf *cgroupLevel
	var cgTotal int64 = -1
	consider := func(lv cgroupLevel) {
		if cgTotal < 0 || lv.limit < cgTotal {
			cgTotal = lv.limit
		}
		if best == nil || lv.headroom() < best.headroom() {
			best = &lv
		}
	}
	for _, cg := range cgs {
		for i, dir := range cg.levels() {
			lv, ok, err := readCgroupLevel(fsys, cg.v2, dir)
			if err != nil {
				return l, err
			}
			if !ok {
				continue
			}
			if leaf == nil && lv.hasUsage {
				leaf = &lv
			}
			if lv.limited {
				consider(lv)
			}
			// hierarchical_memory_limit covers ancestors that may lie
			// above the visible mount; their usage is unknown, so this
			// cgroup's usage stands in for it.
			if i == 0 && lv.hierLimit > 0 && (!lv.limited || lv.hierLimit < lv.limit) {
				h := lv
				h.limited, h.limit = true, lv.hierLimit
				h.source = fmt.Sprintf("cgroup v1 hierarchical_memory_limit (/%s)", lv.statFile)
				consider(h)
			}
		}
	}

	memTotal, memAvail, memSource, haveMem, err := readMeminfo(fsys)
	if err != nil {
		return l, err
	}
	if best == nil && !haveMem {
		return l, fmt.Errorf("mem: detect memory limit: no cgroup memory limit and no /%s: %w", meminfoFile, ErrUnsupported)
	}

	if best != nil {
		l.CgroupLimit, l.CgroupUsage, l.CgroupFileCache = best.limit, best.usage, best.fileCache
		l.Total, l.Available, l.Source = cgTotal, best.headroom(), best.source
	} else if leaf != nil {
		l.CgroupUsage, l.CgroupFileCache = leaf.usage, leaf.fileCache
	}
	if haveMem {
		l.MemTotal, l.MemAvailable = memTotal, memAvail
		if best == nil || memTotal < l.Total {
			l.Total = memTotal
		}
		if best == nil || memAvail < l.Available {
			l.Available, l.Source = memAvail, memSource
		}
	}
	return l, nil
}

// readMeminfo returns MemTotal and MemAvailable in bytes from
// /proc/meminfo. Kernels before 3.14 lack MemAvailable; MemFree + Buffers +
// Cached, which overestimates a little, stands in for it.
func readMeminfo(fsys fs.FS) (total, avail int64, source string, ok bool, err error) {
	data, err := readOptional(fsys, meminfoFile)
	if err != nil || data == nil {
		return 0, 0, "", false, err
	}
	var free, buffers, cached int64
	seen, err := parseKB(data, "/"+meminfoFile, map[string]*int64{
		"MemTotal":     &total,
		"MemAvailable": &avail,
		"MemFree":      &free,
		"Buffers":      &buffers,
		"Cached":       &cached,
	})
	if err != nil {
		return 0, 0, "", false, err
	}
	if !seen["MemTotal"] {
		return 0, 0, "", false, fmt.Errorf("mem: /%s: no MemTotal", meminfoFile)
	}
	if seen["MemAvailable"] {
		return total, avail, "MemAvailable (/" + meminfoFile + ")", true, nil
	}
	if !seen["MemFree"] {
		return 0, 0, "", false, fmt.Errorf("mem: /%s: neither MemAvailable nor MemFree", meminfoFile)
	}
	return total, free + buffers + cached, "MemFree+Buffers+Cached (/" + meminfoFile + ")", true, nil
}

// readCgroupPeakFS returns the highest memory usage recorded for this
// process's memory cgroup: memory.peak (cgroup v2, Linux 5.19) or
// memory.max_usage_in_bytes (v1).
func readCgroupPeakFS(fsys fs.FS) (int64, error) {
	cgs, err := findMemCgroups(fsys)
	if err != nil {
		return 0, err
	}
	for _, cg := range cgs {
		name := "memory.max_usage_in_bytes"
		if cg.v2 {
			name = "memory.peak"
		}
		v, ok, err := readInt(fsys, path.Join(cg.dir, name))
		if err != nil {
			return 0, err
		}
		if ok {
			return v, nil
		}
	}
	return 0, fmt.Errorf("mem: cgroup peak: no memory.peak or memory.max_usage_in_bytes for this process: %w", ErrUnsupported)
}
