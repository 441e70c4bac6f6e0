package residency

import (
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

// StopWatch stops the watcher. The model's Close calls it before taking
// Exclusive, since a pressure callback may be using the model.
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

// onPressure reacts to a watcher report: KV growth pauses (Short) while
// memory is short, and a model whose weights the plan kept resident
// switches, once, to reading half of its blocks from disk.
func (w *Weights) onPressure(p mem.Pressure) {
	defer w.recoverPanic("the memory-pressure report")
	ev := PressureEvent{Available: p.Available, Limit: p.Total}
	if p.Relieved {
		w.short.Store(false)
		ev.Action = "KV cache growth resumed"
		w.log.Info("llm: memory pressure relieved", "available", p.Available, "limit", p.Total)
	} else {
		w.short.Store(true)
		ev.Action = "KV cache growth paused"
		if w.cfg.Auto && !w.fromDisk.Load() && !w.switched.Load() {
			ev.Action += "; switching weights to streaming"
			// Off the watcher goroutine: the switch waits for running
			// computations, and Close stops the watcher before locking.
			go w.switchToDisk()
		} else if !w.fromDisk.Load() && p.PSI >= mem.DefaultPSIThreshold {
			ev.Action += "; weights are being evicted and read back: load with WithWeights(WeightsStreaming)"
		}
		w.log.Warn("llm: memory pressure", "reason", p.Reason, "available", p.Available,
			"threshold", p.Threshold, "limit", p.Total, "psi_some_avg10", p.PSI, "action", ev.Action)
	}
	if fn := w.cfg.OnPressure; fn != nil {
		fn(ev)
	}
}

// switchToDisk is the response to memory pressure of a model whose
// weights are resident by the plan's choice: half of the blocks, spread
// through the pass, are read from disk from now on, so that the page cache
// they held can go without the model thrashing on it. It waits for running
// computations (Exclusive) and is done once.
func (w *Weights) switchToDisk() {
	defer w.recoverPanic("switching weights to streaming")
	w.cfg.Exclusive.Lock()
	defer w.cfg.Exclusive.Unlock()
	if w.closed || w.cfg.Model.Source != nil || !w.cfg.Auto {
		return
	}
	n := len(w.cfg.Model.Blocks)
	if n < 2 {
		return
	}
	if _, err := w.readFromDisk(spread(n/2, n)); err != nil {
		w.log.Error("llm: switching weights to streaming under memory pressure failed", "err", err)
		return
	}
	w.plan.Weights = memplan.WeightsStreaming
	w.plan.Steps = append(w.plan.Steps, "weights resident → streaming (memory pressure while running)")
	w.switched.Store(true)
}

// recoverPanic keeps a panic on the watcher's goroutines (a bug here, or
// in the application's OnPressure callback) from killing the process: as
// net/http does with a handler's, it is logged with its stack.
func (w *Weights) recoverPanic(what string) {
	if r := recover(); r != nil {
		w.log.Error("llm: recovered from a panic in "+what, "panic", r, "stack", string(debug.Stack()))
	}
}
