package mem

import (
	"errors"
	"io/fs"
	"runtime"
	"strings"
	"testing"
)

const statusFixture = `Name:	llm
Umask:	0022
State:	R (running)
Tgid:	4242
VmPeak:	 1300000 kB
VmSize:	 1200000 kB
VmLck:	       0 kB
VmHWM:	  900000 kB
VmRSS:	  800000 kB
RssAnon:	  300000 kB
RssFile:	  499000 kB
RssShmem:	    1000 kB
VmData:	  400000 kB
Threads:	5
Cpus_allowed:	3
Cpus_allowed_list:	0-1
`

const smapsFixture = `55f785bad000-7ffce923b000 ---p 00000000 00:00 0                          [rollup]
Rss:                1728 kB
Pss:                 281 kB
Pss_Dirty:           116 kB
Pss_Anon:            116 kB
Pss_File:            165 kB
Pss_Shmem:             0 kB
Shared_Clean:       1572 kB
Shared_Dirty:          0 kB
Private_Clean:        40 kB
Private_Dirty:       116 kB
Referenced:         1728 kB
Anonymous:           116 kB
KSM:                   0 kB
LazyFree:              0 kB
Swap:                  8 kB
SwapPss:               4 kB
Locked:               12 kB
`

func TestParseStatus(t *testing.T) {
	got, err := parseStatus([]byte(statusFixture), "status")
	if err != nil {
		t.Fatal(err)
	}
	want := RSS{Current: 800000 * kib, Peak: 900000 * kib, Anon: 300000 * kib, File: 499000 * kib, Shmem: 1000 * kib}
	if got != want {
		t.Errorf("parseStatus = %+v, want %+v", got, want)
	}

	// Kernels before 4.5 have no RssAnon/RssFile/RssShmem lines.
	old := "VmHWM:\t 10 kB\nVmRSS:\t 8 kB\n"
	if got, err := parseStatus([]byte(old), "status"); err != nil || got != (RSS{Current: 8 * kib, Peak: 10 * kib}) {
		t.Errorf("parseStatus(old kernel) = %+v, %v", got, err)
	}

	for _, bad := range []string{"Name: x\n", "VmRSS: lots kB\n", "VmRSS: 5 MB\n", "VmRSS:\n"} {
		if _, err := parseStatus([]byte(bad), "status"); err == nil || !strings.Contains(err.Error(), "status") {
			t.Errorf("parseStatus(%q) error %v, want one naming the file", bad, err)
		}
	}
}

func TestParseSmapsRollup(t *testing.T) {
	got, err := parseSmapsRollup([]byte(smapsFixture), "smaps_rollup")
	if err != nil {
		t.Fatal(err)
	}
	want := SmapsRollup{
		Rss: 1728 * kib, Pss: 281 * kib, PssAnon: 116 * kib, PssFile: 165 * kib,
		SharedClean: 1572 * kib, PrivateClean: 40 * kib, PrivateDirty: 116 * kib,
		Anonymous: 116 * kib, Swap: 8 * kib, SwapPss: 4 * kib, Locked: 12 * kib,
	}
	if got != want {
		t.Errorf("parseSmapsRollup =\n %+v\nwant\n %+v", got, want)
	}
	if _, err := parseSmapsRollup([]byte("Rss: 5 kB\n"), "smaps_rollup"); err == nil {
		t.Error("parseSmapsRollup without Pss succeeded")
	}
}

func TestReadRSSReal(t *testing.T) {
	r, err := ReadRSS()
	if runtime.GOARCH == "wasm" {
		if err != nil || r.Current <= 0 || r.Anon != r.Current {
			t.Errorf("ReadRSS on wasm: %+v, %v", r, err)
		}
		return
	}
	if runtime.GOOS != "linux" {
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("ReadRSS on %s: %v, want ErrUnsupported", runtime.GOOS, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.Current <= 0 || r.Peak < r.Current {
		t.Errorf("implausible RSS %+v", r)
	}

	s, err := ReadSmapsRollup()
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no /proc/self/smaps_rollup (Linux before 4.14)")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", s)
	if s.Rss <= 0 || s.Pss <= 0 || s.Pss > s.Rss {
		t.Errorf("implausible smaps_rollup %+v", s)
	}
}

// TestResetPeak grows RSS, shrinks it again and checks that ResetPeak
// brings VmHWM back down.
func TestResetPeak(t *testing.T) {
	if runtime.GOOS != "linux" {
		if err := ResetPeak(); !errors.Is(err, ErrUnsupported) {
			t.Errorf("ResetPeak on %s: %v, want ErrUnsupported", runtime.GOOS, err)
		}
		return
	}
	const grow = 64 << 20
	release := growRSS(t, grow)
	before, err := ReadRSS()
	if err != nil {
		t.Fatal(err)
	}
	release()
	if err := ResetPeak(); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			t.Skipf("ResetPeak refused here: %v", err)
		}
		t.Fatal(err)
	}
	after, err := ReadRSS()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak before %d, after reset %d (current %d)", before.Peak, after.Peak, after.Current)
	if after.Peak > before.Peak-grow/2 {
		t.Errorf("peak after reset %d, want at most %d", after.Peak, before.Peak-grow/2)
	}
}

func TestReadCgroupPeakReal(t *testing.T) {
	p, err := ReadCgroupPeak()
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("ReadCgroupPeak: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cgroup peak %d bytes", p)
	if p <= 0 {
		t.Errorf("cgroup peak %d, want > 0", p)
	}
}
