package mem

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fakeLimits returns a Limit source that yields the given Available values
// in turn (Total 4 GiB), repeating the last.
func fakeLimits(avail ...int64) func() (Limit, error) {
	i := 0
	return func() (Limit, error) {
		a := avail[min(i, len(avail)-1)]
		i++
		if a < 0 {
			return Limit{}, errors.New("no limit")
		}
		return Limit{Total: 4 * gib, Available: a}, nil
	}
}

func TestWatcherPollHeadroom(t *testing.T) {
	// 5% of 4 GiB is 204.8 MiB, above the 64 MiB floor.
	thr := 4 * gib / 20
	tests := []struct {
		name  string
		cfg   WatchConfig
		avail []int64
		want  []string // per poll: "" no report, else Reason or "relieved"
	}{
		{"plenty", WatchConfig{}, []int64{gib, gib, gib}, []string{"", "", ""}},
		{"enter once", WatchConfig{}, []int64{gib, thr - 1, 10 * mib, thr - 1}, []string{"", "headroom", "", ""}},
		{"at threshold is not pressure", WatchConfig{}, []int64{thr}, []string{""}},
		{"hysteresis", WatchConfig{}, []int64{thr - 1, thr + 1, 2*thr - 1, 2 * thr, thr - 1},
			[]string{"headroom", "", "", "relieved", "headroom"}},
		{"explicit threshold", WatchConfig{Threshold: gib}, []int64{gib + 1, gib - 1}, []string{"", "headroom"}},
		{"errors skip", WatchConfig{}, []int64{-1, 0, -1, gib}, []string{"", "headroom", "", "relieved"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Limit = fakeLimits(tc.avail...)
			w := &Watcher{cfg: tc.cfg}
			if w.cfg.PSIThreshold == 0 {
				w.cfg.PSIThreshold = DefaultPSIThreshold
			}
			for i, want := range tc.want {
				p, ok := w.poll()
				got := verdict(p, ok)
				if ok && (p.Available != tc.avail[i] || p.Total != 4*gib) {
					t.Errorf("poll %d: report %+v does not carry the limit read", i, p)
				}
				if got != want {
					t.Fatalf("poll %d (available %d): report %q, want %q", i, tc.avail[i], got, want)
				}
			}
		})
	}
}

// verdict names a poll's report: "" for none, "relieved", or its reason.
func verdict(p Pressure, ok bool) string {
	switch {
	case !ok:
		return ""
	case p.Relieved:
		return "relieved"
	}
	return p.Reason
}

func TestWatcherMinimumThreshold(t *testing.T) {
	w := &Watcher{cfg: WatchConfig{PSIThreshold: DefaultPSIThreshold, Limit: func() (Limit, error) {
		return Limit{Total: 512 * mib, Available: 60 * mib}, nil
	}}}
	p, ok := w.poll()
	if !ok || p.Threshold != MinPressureThreshold {
		t.Fatalf("512 MiB limit, 60 MiB available: report %+v, %v; want threshold %d", p, ok, MinPressureThreshold)
	}
}

func TestWatcherPSI(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.pressure")
	setPSI := func(avg10 string) {
		text := "some avg10=" + avg10 + " avg60=0.00 avg300=0.00 total=100\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=50\n"
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := &Watcher{cfg: WatchConfig{Limit: fakeLimits(gib), PSIPath: file, PSIThreshold: 10}}
	steps := []struct {
		avg10 string
		want  string
	}{
		{"0.50", ""},
		{"12.00", "psi"},
		{"8.00", ""}, // above half the threshold: still under pressure
		{"4.99", "relieved"},
		{"10.00", "psi"},
	}
	for i, s := range steps {
		setPSI(s.avg10)
		p, ok := w.poll()
		if got := verdict(p, ok); got != s.want {
			t.Fatalf("step %d (avg10 %s): report %q, want %q (%+v)", i, s.avg10, got, s.want, p)
		}
	}
	// A missing file is no information, not pressure.
	w = &Watcher{cfg: WatchConfig{Limit: fakeLimits(gib), PSIPath: file + ".missing", PSIThreshold: 10}}
	if p, ok := w.poll(); ok {
		t.Fatalf("missing pressure file reported %+v", p)
	}
	// Both signals at once.
	setPSI("50.00")
	w = &Watcher{cfg: WatchConfig{Limit: fakeLimits(mib), PSIPath: file, PSIThreshold: 10}}
	if p, ok := w.poll(); !ok || p.Reason != "headroom+psi" || p.PSI != 50 {
		t.Fatalf("both: report %+v, %v", p, ok)
	}
}

func TestWatchReportsAndStops(t *testing.T) {
	reports := make(chan Pressure, 4)
	w := Watch(WatchConfig{
		Interval:   time.Millisecond,
		Limit:      fakeLimits(gib, gib, 10*mib),
		OnPressure: func(p Pressure) { reports <- p },
	})
	p := <-reports
	w.Stop()
	w.Stop()
	if p.Reason != "headroom" || p.Available != 10*mib || p.Relieved {
		t.Fatalf("report %+v, want headroom pressure at 10 MiB", p)
	}
	select {
	case p := <-reports:
		t.Fatalf("second report %+v for unchanged pressure", p)
	default:
	}
}

func TestCgroupPressurePathFS(t *testing.T) {
	withFile := merge(mountsV2, cgroupV2, map[string]string{
		"sys/fs/cgroup/app.slice/llm.service/memory.pressure": "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	})
	if p, ok := cgroupPressurePathFS(os.DirFS(writeTree(t, withFile))); !ok || p != "/sys/fs/cgroup/app.slice/llm.service/memory.pressure" {
		t.Errorf("cgroup v2 with PSI: %q, %v", p, ok)
	}
	if p, ok := cgroupPressurePathFS(os.DirFS(writeTree(t, merge(mountsV2, cgroupV2)))); ok {
		t.Errorf("cgroup v2 without memory.pressure: %q, want none", p)
	}
	if p, ok := cgroupPressurePathFS(os.DirFS(writeTree(t, v1Docker))); ok {
		t.Errorf("cgroup v1: %q, want none", p)
	}
	// Hybrid: memory on v1, and a v2 hierarchy whose root has a pressure
	// file (the machine's).
	hybrid := map[string]string{
		"proc/self/cgroup": "4:memory:/app\n0::/\n",
		"proc/self/mountinfo": "22 1 252:1 / / rw - ext4 /dev/vda1 rw\n" +
			"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n" +
			"41 30 0:38 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n",
		"sys/fs/cgroup/unified/memory.pressure":          "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"sys/fs/cgroup/memory/app/memory.limit_in_bytes": "1000000\n",
	}
	if p, ok := cgroupPressurePathFS(os.DirFS(writeTree(t, hybrid))); ok {
		t.Errorf("hybrid with memory on v1: %q, want none", p)
	}
}
