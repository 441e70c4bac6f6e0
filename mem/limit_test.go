package mem

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// writeTree creates files (slash-separated paths, no leading slash) below
// a fresh directory and returns the directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// merge returns the union of file maps; later maps win.
func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Fixtures. MemTotal 16 GiB, MemAvailable 12 GiB.
var (
	meminfo = map[string]string{
		"proc/meminfo": "MemTotal:       16777216 kB\n" +
			"MemFree:         1048576 kB\n" +
			"MemAvailable:   12582912 kB\n" +
			"Buffers:           5420 kB\n" +
			"Cached:          9000000 kB\n" +
			"HugePages_Total:       0\n" +
			"Hugepagesize:       2048 kB\n",
	}
	mountsV2 = map[string]string{
		"proc/self/mountinfo": "22 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n" +
			"25 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n" +
			"26 22 0:5 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n",
	}
	cgroupV2 = map[string]string{"proc/self/cgroup": "0::/app.slice/llm.service\n"}

	// Docker without a cgroup namespace on a v1 host: the container's
	// cgroup is mounted at /sys/fs/cgroup/memory.
	v1Docker = map[string]string{
		"proc/self/cgroup": "12:memory:/docker/abc\n11:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n",
		"proc/self/mountinfo": "600 500 0:50 / / rw - overlay overlay rw\n" +
			"610 600 0:60 / /sys/fs/cgroup ro - tmpfs tmpfs rw,mode=755\n" +
			"611 610 0:31 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n" +
			"612 610 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
	}
)

func v2Level(dir, max string, current int64, stat string) map[string]string {
	m := map[string]string{dir + "/memory.max": max + "\n"}
	if current >= 0 {
		m[dir+"/memory.current"] = itoa(current) + "\n"
	}
	if stat != "" {
		m[dir+"/memory.stat"] = stat
	}
	return m
}

func v2Stat(anon, activeFile, inactiveFile, shmem int64) string {
	return "anon " + itoa(anon) + "\nfile " + itoa(activeFile+inactiveFile+shmem) +
		"\nkernel 1234\nshmem " + itoa(shmem) + "\nactive_file " + itoa(activeFile) +
		"\ninactive_file " + itoa(inactiveFile) + "\n"
}

func v1Level(dir string, limit, usage int64, stat string) map[string]string {
	m := map[string]string{
		dir + "/memory.limit_in_bytes": itoa(limit) + "\n",
		dir + "/memory.usage_in_bytes": itoa(usage) + "\n",
	}
	if stat != "" {
		m[dir+"/memory.stat"] = stat
	}
	return m
}

const v1Unlimited = 9223372036854771712

func TestDetectLimitFS(t *testing.T) {
	leaf := "sys/fs/cgroup/app.slice/llm.service"
	parent := "sys/fs/cgroup/app.slice"
	memTotal, memAvail := 16*gib, 12*gib
	v2Base := merge(meminfo, mountsV2, cgroupV2)
	const (
		fromLeaf    = "cgroup v2 memory.max (/sys/fs/cgroup/app.slice/llm.service/memory.max)"
		fromMeminfo = "MemAvailable (/proc/meminfo)"
	)
	// fromCgroup is the limit of a cgroup whose memory.max (or limit) is
	// the tighter: Total the limit, Available what is left beside the
	// usage that is not page cache.
	fromCgroup := func(source string, limit, usage, cache int64) Limit {
		return Limit{
			Total: limit, Available: limit - (usage - cache), Source: source,
			CgroupLimit: limit, CgroupUsage: usage, CgroupFileCache: cache,
		}
	}
	// fromMem is the limit read from meminfo, the cgroup's figures beside.
	fromMem := func(limit, usage, cache int64) Limit {
		return Limit{
			Total: memTotal, Available: memAvail, Source: fromMeminfo,
			CgroupLimit: limit, CgroupUsage: usage, CgroupFileCache: cache,
		}
	}

	tests := []struct {
		name  string
		files map[string]string
		// want's MemTotal and MemAvailable are the meminfo fixture's
		// wherever files holds it: the loop fills them in.
		want Limit
	}{
		{
			name: "v2 memory.max set",
			files: merge(v2Base,
				v2Level(parent, "max", 2*gib, v2Stat(0, 0, 0, 0)),
				v2Level(leaf, "4294967296", 1*gib, v2Stat(400*mib, 200*mib, 300*mib, 100*mib))),
			want: fromCgroup(fromLeaf, 4*gib, 1*gib, 500*mib),
		},
		{
			name: "v2 max falls back to meminfo",
			files: merge(v2Base,
				v2Level(parent, "max", 2*gib, ""),
				v2Level(leaf, "max", 1*gib, v2Stat(700*mib, 100*mib, 200*mib, 0))),
			want: fromMem(0, 1*gib, 300*mib),
		},
		{
			name: "v2 nested parent smaller",
			files: merge(v2Base,
				v2Level(parent, itoa(2*gib), 1536*mib, v2Stat(1*gib, 256*mib, 256*mib, 0)),
				v2Level(leaf, itoa(8*gib), 1*gib, v2Stat(800*mib, 100*mib, 124*mib, 0))),
			want: fromCgroup("cgroup v2 memory.max (/sys/fs/cgroup/app.slice/memory.max)", 2*gib, 1536*mib, 512*mib),
		},
		{
			// The leaf's limit is the larger of the two but its headroom
			// is the smaller: Available comes from the leaf, Total from
			// the parent.
			name: "v2 nested leaf tighter headroom",
			files: merge(v2Base,
				v2Level(parent, itoa(1*gib), 300*mib, v2Stat(300*mib, 0, 0, 0)),
				v2Level(leaf, itoa(2*gib), 1900*mib, v2Stat(1900*mib, 0, 0, 0))),
			want: Limit{
				Total: 1 * gib, Available: 2*gib - 1900*mib,
				Source:      fromLeaf,
				CgroupLimit: 2 * gib, CgroupUsage: 1900 * mib,
			},
		},
		{
			// ollama #15474: usage is nearly at the limit, but almost all
			// of it is page cache from reading the model file.
			name: "v2 usage is mostly page cache",
			files: merge(v2Base,
				v2Level(leaf, itoa(4*gib), 3900*mib, v2Stat(300*mib, 3000*mib, 500*mib, 100*mib))),
			want: fromCgroup(fromLeaf, 4*gib, 3900*mib, 3500*mib),
		},
		{
			name: "v2 stat without LRU lists uses file minus shmem",
			files: merge(v2Base,
				v2Level(leaf, itoa(4*gib), 2*gib, "anon 1073741824\nfile 1073741824\nshmem 268435456\n")),
			want: fromCgroup(fromLeaf, 4*gib, 2*gib, 768*mib),
		},
		{
			name: "v2 anonymous usage above limit clamps to zero",
			files: merge(v2Base,
				v2Level(leaf, itoa(1*gib), 1100*mib, v2Stat(1100*mib, 0, 0, 0))),
			want: Limit{
				Total: 1 * gib, Available: 0,
				Source:      fromLeaf,
				CgroupLimit: 1 * gib, CgroupUsage: 1100 * mib,
			},
		},
		{
			name: "v2 limit above MemAvailable",
			files: merge(v2Base,
				v2Level(leaf, itoa(64*gib), 1*gib, v2Stat(1*gib, 0, 0, 0))),
			want: fromMem(64*gib, 1*gib, 0),
		},
		{
			// With a cgroup namespace the process sees its own cgroup
			// as the root of the mount.
			name: "v2 cgroup namespace",
			files: merge(meminfo, mountsV2,
				map[string]string{"proc/self/cgroup": "0::/\n"},
				v2Level("sys/fs/cgroup", itoa(3*gib), 1*gib, v2Stat(512*mib, 256*mib, 256*mib, 0))),
			want: fromCgroup("cgroup v2 memory.max (/sys/fs/cgroup/memory.max)", 3*gib, 1*gib, 512*mib),
		},
		{
			name: "v2 without mountinfo assumes /sys/fs/cgroup",
			files: merge(meminfo, cgroupV2,
				v2Level(leaf, itoa(4*gib), 1*gib, v2Stat(1*gib, 0, 0, 0))),
			want: fromCgroup(fromLeaf, 4*gib, 1*gib, 0),
		},
		{
			name: "v2 mounted elsewhere with escaped space",
			files: merge(meminfo, cgroupV2,
				map[string]string{"proc/self/mountinfo": "30 1 0:23 / /run/my\\040cgroup rw - cgroup2 none rw\n"},
				v2Level("run/my cgroup/app.slice/llm.service", itoa(4*gib), 1*gib, v2Stat(1*gib, 0, 0, 0))),
			want: fromCgroup("cgroup v2 memory.max (/run/my cgroup/app.slice/llm.service/memory.max)", 4*gib, 1*gib, 0),
		},
		{
			name: "v1 with limit",
			files: merge(meminfo, v1Docker,
				v1Level("sys/fs/cgroup/memory", 2*gib, 1200*mib,
					"cache 734003200\nrss 503316480\ntotal_cache 734003200\ntotal_rss 503316480\n"+
						"total_active_file 314572800\ntotal_inactive_file 419430400\n"+
						"hierarchical_memory_limit 2147483648\n")),
			want: fromCgroup("cgroup v1 memory.limit_in_bytes (/sys/fs/cgroup/memory/memory.limit_in_bytes)", 2*gib, 1200*mib, 700*mib),
		},
		{
			name: "v1 unlimited",
			files: merge(meminfo, v1Docker,
				v1Level("sys/fs/cgroup/memory", v1Unlimited, 1*gib,
					"total_cache 100\ntotal_shmem 0\nhierarchical_memory_limit 9223372036854771712\n")),
			want: fromMem(0, 1*gib, 100),
		},
		{
			// A parent's limit outside the visible mount shows only in
			// hierarchical_memory_limit.
			name: "v1 hierarchical limit from an invisible parent",
			files: merge(meminfo, v1Docker,
				v1Level("sys/fs/cgroup/memory", v1Unlimited, 600*mib,
					"total_active_file 104857600\ntotal_inactive_file 0\nhierarchical_memory_limit 1073741824\n")),
			want: fromCgroup("cgroup v1 hierarchical_memory_limit (/sys/fs/cgroup/memory/memory.stat)", 1*gib, 600*mib, 100*mib),
		},
		{
			name: "v1 nested walk, cache minus shmem",
			files: merge(meminfo,
				map[string]string{
					"proc/self/cgroup":    "4:memory:/batch/job7\n",
					"proc/self/mountinfo": "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n",
				},
				v1Level("sys/fs/cgroup/memory", v1Unlimited, 5*gib, "total_cache 1\n"),
				v1Level("sys/fs/cgroup/memory/batch", 3*gib, 2*gib, "total_cache 1073741824\ntotal_shmem 536870912\n"),
				v1Level("sys/fs/cgroup/memory/batch/job7", v1Unlimited, 1*gib, "total_cache 0\n")),
			want: fromCgroup("cgroup v1 memory.limit_in_bytes (/sys/fs/cgroup/memory/batch/memory.limit_in_bytes)", 3*gib, 2*gib, 512*mib),
		},
		{
			// Hybrid layout: cgroup2 is mounted but the memory
			// controller lives in the v1 hierarchy.
			name: "hybrid v1 memory with v2 unified",
			files: merge(meminfo,
				map[string]string{
					"proc/self/cgroup": "4:memory:/process_api/x\n1:cpu:/\n0::/\n",
					"proc/self/mountinfo": "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
						"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
						"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
					"sys/fs/cgroup/unified/cgroup.procs": "1\n",
				},
				v1Level("sys/fs/cgroup/memory/process_api/x", 1*gib, 100*mib, "total_active_file 0\ntotal_inactive_file 0\n")),
			want: fromCgroup("cgroup v1 memory.limit_in_bytes (/sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes)", 1*gib, 100*mib, 0),
		},
		{
			name:  "no cgroup files: meminfo only",
			files: merge(meminfo),
			want:  fromMem(0, 0, 0),
		},
		{
			name:  "cgroup named but its files missing: meminfo only",
			files: v2Base,
			want:  fromMem(0, 0, 0),
		},
		{
			name: "cgroup limit without meminfo",
			files: merge(mountsV2, cgroupV2,
				map[string]string{leaf + "/memory.max": itoa(4*gib) + "\n"}),
			want: fromCgroup(fromLeaf, 4*gib, 0, 0),
		},
		{
			name: "meminfo without MemAvailable",
			files: map[string]string{
				"proc/meminfo": "MemTotal: 2048 kB\nMemFree: 512 kB\nBuffers: 128 kB\nCached: 256 kB\n",
			},
			want: Limit{
				Total: 2048 * kib, Available: 896 * kib, Source: "MemFree+Buffers+Cached (/proc/meminfo)",
				MemTotal: 2048 * kib, MemAvailable: 896 * kib,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if tc.files["proc/meminfo"] == meminfo["proc/meminfo"] {
				want.MemTotal, want.MemAvailable = memTotal, memAvail
			}
			root := writeTree(t, tc.files)
			got, err := DetectLimitFS(os.DirFS(root))
			if err != nil {
				t.Fatalf("DetectLimitFS: %v", err)
			}
			if got != want {
				t.Errorf("DetectLimitFS:\n got %+v\nwant %+v", got, want)
			}
			if got.String() == "" {
				t.Error("String is empty")
			}
		})
	}
}

func TestDetectLimitFSErrors(t *testing.T) {
	leaf := "sys/fs/cgroup/app.slice/llm.service"
	base := merge(meminfo, mountsV2, cgroupV2)
	tests := []struct {
		name  string
		files map[string]string
		want  string // substring of the error: the file at fault
	}{
		{"malformed memory.max", merge(base, map[string]string{leaf + "/memory.max": "12abc\n"}),
			"/sys/fs/cgroup/app.slice/llm.service/memory.max: malformed number \"12abc\""},
		{"empty memory.max", merge(base, map[string]string{leaf + "/memory.max": "\n"}),
			"/sys/fs/cgroup/app.slice/llm.service/memory.max"},
		{"malformed memory.current", merge(base, map[string]string{leaf + "/memory.max": "max\n", leaf + "/memory.current": "lots\n"}),
			"/sys/fs/cgroup/app.slice/llm.service/memory.current"},
		{"malformed memory.stat", merge(base, map[string]string{leaf + "/memory.max": "max\n", leaf + "/memory.stat": "file 12x\n"}),
			"/sys/fs/cgroup/app.slice/llm.service/memory.stat: file"},
		{"malformed v1 limit", merge(meminfo, v1Docker, map[string]string{"sys/fs/cgroup/memory/memory.limit_in_bytes": "-\n"}),
			"/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{"malformed meminfo", map[string]string{"proc/meminfo": "MemTotal: 12 MB\n"}, "/proc/meminfo"},
		{"malformed meminfo number", map[string]string{"proc/meminfo": "MemTotal: 1e9 kB\nMemAvailable: 5 kB\n"}, "/proc/meminfo: MemTotal"},
		{"meminfo without MemTotal", map[string]string{"proc/meminfo": "MemAvailable: 5 kB\n"}, "/proc/meminfo: no MemTotal"},
		{"malformed proc cgroup", merge(meminfo, map[string]string{"proc/self/cgroup": "garbage\n"}), "/proc/self/cgroup"},
		{"malformed mountinfo", merge(meminfo, cgroupV2, map[string]string{"proc/self/mountinfo": "1 2 3\n"}), "/proc/self/mountinfo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DetectLimitFS(os.DirFS(writeTree(t, tc.files)))
			if err == nil {
				t.Fatal("DetectLimitFS succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}

	t.Run("nothing to read", func(t *testing.T) {
		_, err := DetectLimitFS(os.DirFS(t.TempDir()))
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("error %v, want ErrUnsupported", err)
		}
	})
}

func TestCgroupPeakFS(t *testing.T) {
	leaf := "sys/fs/cgroup/app.slice/llm.service"
	tests := []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"v2 memory.peak", merge(mountsV2, cgroupV2, map[string]string{leaf + "/memory.peak": "123456789\n"}), 123456789},
		{"v1 max_usage", merge(v1Docker, map[string]string{"sys/fs/cgroup/memory/memory.max_usage_in_bytes": "4096\n"}), 4096},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readCgroupPeakFS(os.DirFS(writeTree(t, tc.files)))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("peak %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		_, err := readCgroupPeakFS(os.DirFS(writeTree(t, merge(mountsV2, cgroupV2))))
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("error %v, want ErrUnsupported", err)
		}
	})
}

func TestExplicitLimit(t *testing.T) {
	want := Limit{Total: 5 * gib, Available: 5 * gib, Source: "explicit"}
	if got := ExplicitLimit(5 * gib); got != want {
		t.Errorf("ExplicitLimit = %+v, want %+v", got, want)
	}
}

func TestLimitString(t *testing.T) {
	l := Limit{Total: 4 * gib, Available: 3*gib + 512*mib, Source: "cgroup v2 memory.max (/x/memory.max)",
		CgroupLimit: 4 * gib, CgroupUsage: 1 * gib, CgroupFileCache: 512 * mib}
	want := "3.50 GiB available of 4.00 GiB total, bounded by cgroup v2 memory.max (/x/memory.max); " +
		"cgroup usage 1.00 GiB of which 512.0 MiB reclaimable file cache"
	if got := l.String(); got != want {
		t.Errorf("String:\n got %q\nwant %q", got, want)
	}
}

func TestDetectLimitReal(t *testing.T) {
	l, err := DetectLimit()
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("DetectLimit: %v", err)
	}
	if err != nil {
		t.Fatalf("DetectLimit: %v", err)
	}
	t.Logf("%v\n%#v", l, l)
	if l.Total <= 0 || l.Available < 0 || l.Available > l.Total || l.Source == "" {
		t.Errorf("implausible limit %+v", l)
	}
}
