package mem

import (
	"io/fs"
	"os"
	"path"
	"sync"
	"time"
)

// Defaults of WatchConfig.
const (
	// DefaultWatchInterval is how often a Watcher polls: reading the
	// cgroup files costs tens of microseconds, so twice a second is cheap
	// and still reacts within a token or two.
	DefaultWatchInterval = 500 * time.Millisecond
	// MinPressureThreshold is the least headroom that counts as enough,
	// whatever the limit: below 64 MiB a single KV-cache growth or
	// activation buffer can hit the limit.
	MinPressureThreshold = 64 << 20
	// DefaultPSIThreshold is the share of time (percent, 10-second
	// average) tasks may stall on memory before it counts as pressure:
	// around 10% a model whose weights are being evicted and read back
	// is already several times slower.
	DefaultPSIThreshold = 10.0
)

// Pressure is what a Watcher reports when memory runs short, and again
// when it recovers.
type Pressure struct {
	// Available and Total are the Limit read at the time (bytes).
	Available, Total int64
	// Threshold is the headroom below which Available counts as pressure.
	Threshold int64
	// PSI is the "some" 10-second average of the pressure file (percent
	// of time stalled), 0 when no file is watched.
	PSI float64
	// Reason says what crossed its threshold: "headroom", "psi" or both
	// joined with "+". Empty when Relieved.
	Reason string
	// Relieved is true for the report that pressure has ended: headroom
	// back above twice the threshold and stalls below half theirs.
	Relieved bool
}

// WatchConfig configures Watch. The zero value watches DetectLimit every
// DefaultWatchInterval without PSI and reports to nobody.
type WatchConfig struct {
	// Interval between polls; 0 means DefaultWatchInterval.
	Interval time.Duration
	// Limit reads the current limit; nil means DetectLimit. Errors skip
	// the poll.
	Limit func() (Limit, error)
	// Threshold is the headroom (Limit.Available) below which memory
	// counts as short; 0 means the larger of 5% of Limit.Total and
	// MinPressureThreshold.
	Threshold int64
	// PSIPath is a pressure file (a cgroup v2 memory.pressure, see
	// CgroupPressurePath, or PSIMemoryPath) whose "some avg10" also
	// signals pressure; "" watches none. The machine-wide file counts
	// stalls of every process on the machine.
	PSIPath string
	// PSIThreshold is the stall percentage that counts as pressure; 0
	// means DefaultPSIThreshold.
	PSIThreshold float64
	// OnPressure is called on the watcher's goroutine when pressure
	// starts and when it ends (Relieved), not on every poll.
	OnPressure func(Pressure)
}

// Watcher polls memory headroom and pressure stalls on a goroutine and
// reports when either crosses its threshold. Stop ends it.
type Watcher struct {
	cfg   WatchConfig
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	under bool // inside pressure; only the goroutine touches it
}

// Watch starts a Watcher. The first poll happens after one interval.
func Watch(cfg WatchConfig) *Watcher {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultWatchInterval
	}
	if cfg.Limit == nil {
		cfg.Limit = DetectLimit
	}
	if cfg.PSIThreshold <= 0 {
		cfg.PSIThreshold = DefaultPSIThreshold
	}
	w := &Watcher{cfg: cfg, stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *Watcher) run() {
	defer close(w.done)
	t := time.NewTicker(w.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			if p, ok := w.poll(); ok && w.cfg.OnPressure != nil {
				w.cfg.OnPressure(p)
			}
		}
	}
}

// Stop ends the watcher and waits for a report in progress to return.
// Calling it twice is harmless. It must not be called from OnPressure.
func (w *Watcher) Stop() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

// poll reads the limit and the pressure file once and says whether the
// state changed, with the report for it.
func (w *Watcher) poll() (Pressure, bool) {
	lim, err := w.cfg.Limit()
	if err != nil {
		return Pressure{}, false
	}
	p := Pressure{Available: lim.Available, Total: lim.Total, Threshold: w.cfg.Threshold}
	if p.Threshold <= 0 {
		p.Threshold = max(lim.Total/20, MinPressureThreshold)
	}
	havePSI := false
	if w.cfg.PSIPath != "" {
		if psi, err := ReadPSI(w.cfg.PSIPath); err == nil {
			p.PSI, havePSI = psi.Some.Avg10, true
		}
	}
	low := p.Available < p.Threshold
	stalled := havePSI && p.PSI >= w.cfg.PSIThreshold
	if !w.under {
		if !low && !stalled {
			return Pressure{}, false
		}
		switch {
		case low && stalled:
			p.Reason = "headroom+psi"
		case low:
			p.Reason = "headroom"
		default:
			p.Reason = "psi"
		}
		w.under = true
		return p, true
	}
	// Hysteresis: a value hovering at the threshold must not report on
	// every poll.
	if p.Available >= 2*p.Threshold && (!havePSI || p.PSI < w.cfg.PSIThreshold/2) {
		w.under = false
		p.Relieved = true
		return p, true
	}
	return Pressure{}, false
}

// CgroupPressurePath returns the memory.pressure file of this process's
// cgroup v2 (Linux 4.20 with PSI), which counts only the stalls of the
// processes in the cgroup, unlike the machine-wide PSIMemoryPath. ok is
// false without PSI, and when the memory controller is in a cgroup v1
// hierarchy: the v2 cgroup of a hybrid system then does not account
// memory, and its pressure file is the whole machine's.
func CgroupPressurePath() (string, bool) {
	return cgroupPressurePathFS(os.DirFS("/"))
}

func cgroupPressurePathFS(fsys fs.FS) (string, bool) {
	cgs, err := findMemCgroups(fsys)
	if err != nil {
		return "", false
	}
	var v2 *memCgroup
	for i := range cgs {
		if !cgs[i].v2 {
			return "", false
		}
		v2 = &cgs[i]
	}
	if v2 == nil {
		return "", false
	}
	p := path.Join(v2.dir, "memory.pressure")
	if _, err := fs.Stat(fsys, p); err != nil {
		return "", false
	}
	return "/" + p, true
}
