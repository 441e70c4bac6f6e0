package llm

import (
	"cmp"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/model"
)

// PressureEvent reports memory running short, or recovering, while a model
// is loaded (see WithMemoryPressure).
type PressureEvent struct {
	// Available is how many bytes the process can still allocate: the
	// memory limit minus memory that cannot be reclaimed (page cache,
	// mapped weights included, counts as reclaimable).
	Available int64
	// Limit is the memory limit the headroom is measured against.
	Limit int64
	// Action says what the model did about it, for logs.
	Action string
}

// WithMemoryPressure calls fn when the memory headroom falls below the
// larger of 5% of the limit and 64 MiB, or when memory stalls (the cgroup
// v2 memory.pressure "some avg10") reach 10%, and again when headroom is
// back above twice the threshold. Headroom is polled twice a second on a
// goroutine that runs from Load to Close; fn runs on it and must not close
// the model. The model also logs a warning; while under pressure sessions
// stop growing their KV caches beyond what they hold; and a model whose
// weights the plan kept resident (no WithWeights) switches, once, to
// streaming half of its blocks from disk, so that the page cache they held
// can be reclaimed without the model thrashing on it. Without
// this option the model watches only when its memory plan is tight (more
// than half the limit, or streaming weights).
func WithMemoryPressure(fn func(PressureEvent)) Option {
	return modelOption(func(s *settings) { s.pressure = fn })
}

// weightState is a Model's weight residency machinery: the streamer of
// the layers that do not stay in memory, and the memory-pressure watcher.
type weightState struct {
	streamer  *mem.Streamer
	source    *model.StreamSource
	streamed  []int       // block indices read from disk every pass
	ahead     []mem.Range // parts of the file read ahead at Load
	watcher   *mem.Watcher
	pressure  atomic.Bool
	tensors   *gguf.File  // tensor table only, for a switch to streaming
	switched  atomic.Bool // switched to streaming under pressure
	streaming atomic.Bool // a layer source is installed
	// autoWeights: the weights mode was the plan's choice, not
	// WithWeights, so pressure may switch it.
	autoWeights bool
}

// underPressure reports whether memory headroom is short now: code that
// would grow memory (KV caches) should not.
func (m *Model) underPressure() bool { return m.ws.pressure.Load() }

// adviseBeforeNew prepares the mapping before model.New reads the norm
// weights out of every layer. Each page fault reads around it (the
// device's read_ahead_kb, often megabytes), which for a streamed layer
// fills the page cache with bytes the streamer will read again. With
// streaming weights the whole file is marked random-access here;
// setupWeights restores normal readahead on the resident parts.
func adviseBeforeNew(mp *mem.Mapping, plan MemoryPlan) {
	if plan.Weights == WeightsStreaming {
		mp.Advise(0, mp.Size(), mem.Random)
	}
}

// setupWeights puts the plan's weights mode into effect: advice on which
// parts of the mapped file to read ahead and, when streaming, the streamer
// that reads the non-resident layers with direct I/O.
func (m *Model) setupWeights(f *gguf.File, sh *shape) error {
	mm := m.m
	size := m.mapping.Size()
	// Without a tied output only the rows of the tokens seen are read:
	// readahead around each row would fill the page cache with the rest.
	var embOff, embLen int64
	if ti, ok := f.Tensor("token_embd.weight"); ok && !mm.Tied {
		embOff, embLen = ti.Offset, ti.Size
		m.mapping.Advise(embOff, embLen, mem.Random)
	}
	var skip []mem.Range // not to be read ahead
	if embLen > 0 {
		skip = append(skip, mem.Range{Off: embOff, Len: embLen})
	}
	if m.plan.Weights == WeightsStreaming {
		m.ws.streamed = streamedLayers(sh, mm, m.plan.ResidentWeights)
	}
	// Keep the tensor table (not the metadata) for a later switch to
	// streaming under memory pressure.
	m.ws.tensors = &gguf.File{Tensors: f.Tensors}
	if len(m.ws.streamed) > 0 {
		ranges, err := m.startStreaming(m.ws.streamed)
		if err != nil {
			return err
		}
		skip = append(skip, ranges...)
	}
	// Read the resident weights ahead, in the background: Load stays fast
	// and the first tokens find them cached.
	slices.SortFunc(skip, func(a, b mem.Range) int { return cmp.Compare(a.Off, b.Off) })
	var at int64
	resident := func(off, end int64) {
		if end <= off {
			return
		}
		if m.plan.Weights == WeightsStreaming {
			// A resident page the kernel evicted anyway must come back in
			// large reads, not a page per fault.
			m.mapping.Advise(off, end-off, mem.Normal)
		}
		m.mapping.Prefetch(off, end-off)
		m.ws.ahead = append(m.ws.ahead, mem.Range{Off: off, Len: end - off})
	}
	for _, r := range skip {
		resident(at, r.Off)
		at = max(at, r.Off+r.Len)
	}
	resident(at, size)
	return nil
}

// startStreaming reads the given blocks from disk on every pass from now
// on: it drops their pages from memory, starts the streamer and installs
// the layer source. No forward pass may run meanwhile (Load, or the write
// lock).
func (m *Model) startStreaming(streamed []int) ([]mem.Range, error) {
	mm := m.m
	ranges := make([]mem.Range, len(streamed))
	for i, il := range streamed {
		L := &mm.Blocks[il]
		ranges[i] = mem.Range{Off: L.Start, Len: L.End - L.Start}
		// Loading read the layer's norms through the mapping; unmapping
		// those pages lets the streamer drop them from the page cache.
		m.mapping.Advise(L.Start, L.End-L.Start, mem.DontNeed)
	}
	st, err := mem.NewStreamer(m.mapping.Path(), ranges, streamBuffers)
	if err != nil {
		return nil, fmt.Errorf("streaming weights: %w", err)
	}
	logger := m.set.logger
	src, err := model.NewStreamSource(mm, m.ws.tensors, streamed, st, func(err error) {
		logger.Error("llm: reading streamed weights failed; reading them through the page cache from now on", "err", err)
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	m.ws.streamed, m.ws.streamer, m.ws.source = streamed, st, src
	mm.Source = src
	m.ws.streaming.Store(true)
	var maxSpan int64
	for _, r := range ranges {
		maxSpan = max(maxSpan, r.Len)
	}
	logger.Info("llm: streaming weights", "streamed_layers", len(ranges), "resident_layers", len(mm.Blocks)-len(ranges),
		"buffers", fmtBytes(int64(st.Slots())*maxSpan), "direct_io", st.Direct())
	return ranges, nil
}

// switchToStreaming is the response to memory pressure of a model whose
// weights are resident by the plan's choice (not WithWeights): half of the
// blocks, spread through the pass, are read from disk from now on, so that
// the page cache they held can go without the model thrashing on it. It
// waits for running computations (the write lock) and is done once.
func (m *Model) switchToStreaming() {
	m.rw.Lock()
	defer m.rw.Unlock()
	if m.closed || m.m.Source != nil || !m.ws.autoWeights || m.ws.tensors == nil {
		return
	}
	n := len(m.m.Blocks)
	if n < 2 {
		return
	}
	if _, err := m.startStreaming(spread(n/2, n)); err != nil {
		m.set.logger.Error("llm: switching weights to streaming under memory pressure failed", "err", err)
		return
	}
	m.plan.Weights = WeightsStreaming
	m.plan.Steps = append(m.plan.Steps, "weights resident → streaming (memory pressure while running)")
	m.ws.switched.Store(true)
}

// streamedLayers chooses the blocks to stream so that the rest fit in the
// plan's resident weights, beside the embedding, output and other tensors
// (residentWeights minus the layers) and the streaming buffers. The
// streamed blocks are spread evenly through the pass: while the resident
// blocks between two of them compute, the next one is read.
func streamedLayers(sh *shape, mm *model.Model, resident int64) []int {
	var maxLayer int64
	for _, b := range sh.layerBytes {
		maxLayer = max(maxLayer, b)
	}
	budget := resident - (sh.residentWeights() - sum(sh.layerBytes)) - streamBuffers*maxLayer
	n := len(mm.Blocks)
	for s := 0; s <= n; s++ {
		set := spread(s, n)
		var need int64
		for il := range n {
			if !slices.Contains(set, il) {
				need += mm.Blocks[il].End - mm.Blocks[il].Start
			}
		}
		if need <= budget {
			return set
		}
	}
	return spread(n, n)
}

// spread picks s of n indices, evenly spaced: the middle of each of s
// equal parts of [0, n).
func spread(s, n int) []int {
	out := make([]int, s)
	for k := range out {
		out[k] = (2*k + 1) * n / (2 * s)
	}
	return out
}

// startWatch starts the memory-pressure watcher when there is something to
// watch: the caller asked for reports, or the plan leaves less than half
// the limit free. (Each poll reads a few /proc and cgroup files and
// allocates; a model with room to spare does not need it.)
func (m *Model) startWatch() {
	if m.set.pressure == nil && m.plan.Total < m.plan.Limit/2 && m.plan.Weights != WeightsStreaming {
		return
	}
	psi, _ := mem.CgroupPressurePath()
	m.ws.watcher = mem.Watch(mem.WatchConfig{
		Limit:      m.headroom,
		PSIPath:    psi,
		OnPressure: m.onPressure,
	})
}

// headroom is the limit the watcher measures: the detected one, or the
// WithMemoryLimit budget minus this process's anonymous memory when that
// is tighter.
func (m *Model) headroom() (mem.Limit, error) {
	lim, err := mem.DetectLimit()
	if budget := m.set.memory; budget > 0 {
		if r, rerr := mem.ReadRSS(); rerr == nil {
			avail := max(budget-r.Anon, 0)
			if err != nil || avail < lim.Available {
				lim, err = mem.Limit{Total: budget, Available: avail, Source: "WithMemoryLimit"}, nil
			}
		}
	}
	return lim, err
}

func (m *Model) onPressure(p mem.Pressure) {
	ev := PressureEvent{Available: p.Available, Limit: p.Total}
	if p.Relieved {
		m.ws.pressure.Store(false)
		ev.Action = "KV cache growth resumed"
		m.set.logger.Info("llm: memory pressure relieved", "available", p.Available, "limit", p.Total)
	} else {
		m.ws.pressure.Store(true)
		ev.Action = "KV cache growth paused"
		if m.ws.autoWeights && !m.ws.streaming.Load() && !m.ws.switched.Load() {
			ev.Action += "; switching weights to streaming"
			// Off the watcher goroutine: the switch waits for running
			// computations, and Close stops the watcher before locking.
			go m.switchToStreaming()
		} else if !m.ws.streaming.Load() && p.PSI >= mem.DefaultPSIThreshold {
			ev.Action += "; weights are being evicted and read back: load with WithWeights(WeightsStreaming)"
		}
		m.set.logger.Warn("llm: memory pressure", "reason", p.Reason, "available", p.Available,
			"threshold", p.Threshold, "limit", p.Total, "psi_some_avg10", p.PSI, "action", ev.Action)
	}
	if fn := m.set.pressure; fn != nil {
		fn(ev)
	}
}

// stopWatch stops the watcher; Close calls it before locking the model,
// since a pressure callback may be using the model.
func (m *Model) stopWatch() {
	if w := m.ws.watcher; w != nil {
		w.Stop()
	}
}

// closeWeights stops streaming; the mapping must still be open until no
// forward pass runs, which Close guarantees.
func (m *Model) closeWeights() error {
	if st := m.ws.streamer; st != nil {
		s := st.Stats()
		m.set.logger.Debug("llm: weight streaming", "bytes_read", s.BytesRead, "stall", s.Stall)
		return st.Close()
	}
	return nil
}
