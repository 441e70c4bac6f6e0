package residency

import (
	"fmt"
	"runtime/debug"

	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/memplan"
)

// startWatch starts the memory-pressure watcher when there is something to
// watch: the caller asked for reports, the plan leaves less than half the
// limit free, or blocks are read from disk. (Each poll reads a few /proc
// and cgroup files and allocates; a model with room to spare does not
// need it.)
func (w *Weights) startWatch() {
	p := &w.plan
	if w.cfg.OnPressure == nil && p.Total < p.Limit/2 && p.Weights != memplan.WeightsStreaming {
		return
	}
	psi, _ := mem.CgroupPressurePath()
	w.watcher = mem.Watch(mem.WatchConfig{
		Limit:      w.headroom,
		PSIPath:    psi,
		OnPressure: w.onPressure,
	})
}

// StopWatch stops the watcher. The model's Close calls it before closing,
// since a pressure callback may be using the model.
func (w *Weights) StopWatch() {
	if w.watcher != nil {
		w.watcher.Stop()
	}
}

// headroom is the limit the watcher measures: the detected one, or the
// Budget minus this process's anonymous memory when that is tighter.
func (w *Weights) headroom() (mem.Limit, error) {
	lim, err := mem.DetectLimit()
	if budget := w.cfg.Budget; budget > 0 {
		if r, rerr := mem.ReadRSS(); rerr == nil {
			avail := max(budget-r.Anon, 0)
			if err != nil || avail < lim.Available {
				lim, err = mem.Limit{Total: budget, Available: avail, Source: "WithMemoryLimit"}, nil
			}
		}
	}
	return lim, err
}

// onPressure reacts to a watcher report. Under pressure KV growth pauses
// (Short) and, when blocks may move, half of the resident ones leave
// memory (at least one): the page cache they held can go without the
// model thrashing on it. When pressure ends, growth resumes and the
// blocks come back as the KV caches leave room.
func (w *Weights) onPressure(p mem.Pressure) {
	defer w.recoverPanic("the memory-pressure report")
	ev := PressureEvent{Available: p.Available, Limit: p.Total}
	if p.Relieved {
		w.short.Store(false)
		ev.Action = "KV cache growth resumed"
		if w.dynamic {
			w.mu.Lock()
			w.floor = 0
			w.mu.Unlock()
			w.Regain()
			ev.Action += "; blocks come back into memory as room allows"
		}
		w.log.Info("llm: memory pressure relieved", "available", p.Available, "limit", p.Total)
	} else {
		w.short.Store(true)
		ev.Action = "KV cache growth paused"
		if w.dynamic {
			moved := w.relieve()
			ev.Action += "; " + moved
		} else if p.PSI >= mem.DefaultPSIThreshold {
			ev.Action += "; weights are being evicted and read back: load with WithWeights(WeightsStreaming)"
		}
		w.log.Warn("llm: memory pressure", "reason", p.Reason, "available", p.Available,
			"threshold", p.Threshold, "limit", p.Total, "psi_some_avg10", p.PSI, "action", ev.Action)
	}
	if fn := w.cfg.OnPressure; fn != nil {
		fn(ev)
	}
}

// relieve moves half of the resident blocks (at least one) to disk and
// keeps them there until pressure ends, and says what it did.
func (w *Weights) relieve() string {
	var from, to int
	w.budget.Hold(func(kv int64) {
		w.mu.Lock()
		defer w.mu.Unlock()
		from = w.n
		left := len(w.res.Order) - w.current()
		w.floor = min(w.current()+max((left+1)/2, 1), len(w.res.Order))
		w.yield(kv)
		to = w.n
		if to > from {
			w.plan.Steps = append(w.plan.Steps, "blocks resident → read from disk (memory pressure while running)")
		}
	})
	if to == from {
		return "every block is read from disk already"
	}
	return fmt.Sprintf("%d blocks moved to disk (%d of %d read from disk)", to-from, to, len(w.res.Order))
}

// recoverPanic keeps a panic on the watcher's goroutine (a bug here, or in
// the application's OnPressure callback) from killing the process: as
// net/http does with a handler's, it is logged with its stack.
func (w *Weights) recoverPanic(what string) {
	if r := recover(); r != nil {
		w.log.Error("llm: recovered from a panic in "+what, "panic", r, "stack", string(debug.Stack()))
	}
}
