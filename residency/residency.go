package residency

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
)

// Config is what Start needs: the loaded model, its plan, and how to
// report and serialise what it does.
type Config struct {
	Mapping *mem.Mapping // the model's file, mapped
	Model   *model.Model // built from Mapping by model.New
	File    *gguf.File   // the parsed file: its tensor table places the blocks
	Shape   *memplan.Shape
	Plan    memplan.Plan
	// Auto: the plan chose the weights mode (memplan.WeightsAuto), so
	// memory pressure may change it.
	Auto bool
	// Budget is the WithMemoryLimit budget in bytes, 0 when the limit is
	// detected; the watcher measures headroom against it too.
	Budget int64
	// OnPressure, if not nil, is told of every pressure report, on the
	// watcher's goroutine. Setting it also starts the watcher.
	OnPressure func(PressureEvent)
	Logger     *slog.Logger // nil: slog.Default()
	// Exclusive is held while Weights changes where the forward pass reads
	// layers from: no forward pass may run meanwhile (the model's write
	// lock). Plan and Close must be called holding it (or its read side,
	// for Plan).
	Exclusive sync.Locker
}

// PressureEvent reports memory running short, or recovering, while a model
// is loaded.
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

// Weights decides and enforces which of a model's blocks stay in memory
// and which are read from disk on every pass, from Load to Close, and
// reacts to memory pressure.
type Weights struct {
	cfg     Config
	log     *slog.Logger
	plan    memplan.Plan // the plan, as pressure changed it (under Exclusive)
	reader  *mem.RangeReader
	source  *model.StreamSource
	disk    []int       // blocks read from disk every pass
	ahead   []mem.Range // parts of the file read ahead at Start
	watcher *mem.Watcher
	closed  bool // under Exclusive

	short    atomic.Bool // memory is short now
	switched atomic.Bool // switched to reading from disk under pressure
	fromDisk atomic.Bool // a layer source reading from disk is installed
}

// AdviseBeforeLoad prepares the mapping before model.New reads the norm
// weights out of every layer. Each page fault reads around it (the
// device's read_ahead_kb, often megabytes), which for a layer read from
// disk fills the page cache with bytes read again later. With streaming
// weights the whole file is marked random-access here; Start restores
// normal readahead on the resident parts.
func AdviseBeforeLoad(mp *mem.Mapping, p memplan.Plan) {
	if p.Weights == memplan.WeightsStreaming {
		mp.Advise(0, mp.Size(), mem.Random)
	}
}

// Start puts the plan's weights mode into effect: advice on which parts of
// the mapped file to read ahead and, when streaming, the reader of the
// blocks that do not stay in memory; then it starts the memory-pressure
// watcher when there is something to watch.
func Start(c Config) (*Weights, error) {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	// Keep the tensor table, not the metadata (the vocabulary is large),
	// for a later switch to reading blocks from disk.
	c.File = &gguf.File{Tensors: c.File.Tensors}
	w := &Weights{cfg: c, log: c.Logger, plan: c.Plan.Clone()}
	if err := w.advise(); err != nil {
		return nil, err
	}
	w.startWatch()
	return w, nil
}

// advise tells the kernel which parts of the file to read ahead (the
// resident ones, in the background) and which not (the embedding rows of
// an untied embedding, the blocks read from disk).
func (w *Weights) advise() error {
	mm, mp := w.cfg.Model, w.cfg.Mapping
	// Without a tied output only the rows of the tokens seen are read:
	// readahead around each row would fill the page cache with the rest.
	var skip []mem.Range // not to be read ahead
	if ti, ok := w.cfg.File.Tensor("token_embd.weight"); ok && !mm.Tied {
		mp.Advise(ti.Offset, ti.Size, mem.Random)
		if ti.Size > 0 {
			skip = append(skip, mem.Range{Off: ti.Offset, Len: ti.Size})
		}
	}
	if w.plan.Weights == memplan.WeightsStreaming {
		disk := diskLayers(mm.Blocks, w.cfg.Shape.BlockBudget(w.plan.ResidentWeights))
		if len(disk) > 0 {
			ranges, err := w.readFromDisk(disk)
			if err != nil {
				return err
			}
			skip = append(skip, ranges...)
		}
	}
	slices.SortFunc(skip, func(a, b mem.Range) int { return cmp.Compare(a.Off, b.Off) })
	var at int64
	resident := func(off, end int64) {
		if end <= off {
			return
		}
		if w.plan.Weights == memplan.WeightsStreaming {
			// A resident page the kernel evicted anyway must come back in
			// large reads, not a page per fault.
			mp.Advise(off, end-off, mem.Normal)
		}
		mp.Prefetch(off, end-off)
		w.ahead = append(w.ahead, mem.Range{Off: off, Len: end - off})
	}
	for _, r := range skip {
		resident(at, r.Off)
		at = max(at, r.Off+r.Len)
	}
	resident(at, mp.Size())
	return nil
}

// readFromDisk reads the given blocks from disk on every pass from now on:
// it drops their pages from memory, starts the reader and installs the
// layer source. No forward pass may run meanwhile (Start, or Exclusive).
func (w *Weights) readFromDisk(disk []int) ([]mem.Range, error) {
	mm, mp := w.cfg.Model, w.cfg.Mapping
	ranges := make([]mem.Range, len(disk))
	var maxSpan int64
	for i, il := range disk {
		L := &mm.Blocks[il]
		ranges[i] = mem.Range{Off: L.Start, Len: L.End - L.Start}
		maxSpan = max(maxSpan, L.End-L.Start)
		// Loading read the layer's norms through the mapping; unmapping
		// those pages lets the reader drop them from the page cache.
		mp.Advise(L.Start, L.End-L.Start, mem.DontNeed)
	}
	rd, err := mem.NewRangeReader(mp.Path(), ranges, memplan.DiskBuffers)
	if err != nil {
		return nil, fmt.Errorf("residency: reading weights from disk: %w", err)
	}
	log := w.log
	src, err := model.NewStreamSource(mm, w.cfg.File, disk, rd, func(err error) {
		log.Error("llm: reading weights from disk failed; reading them through the page cache from now on", "err", err)
	})
	if err != nil {
		rd.Close()
		return nil, err
	}
	w.disk, w.reader, w.source = disk, rd, src
	mm.Source = src
	w.fromDisk.Store(true)
	log.Info("llm: streaming weights", "streamed_layers", len(ranges), "resident_layers", len(mm.Blocks)-len(ranges),
		"buffers", memplan.FormatBytes(int64(rd.Slots())*maxSpan), "direct_io", rd.Direct())
	return ranges, nil
}

// diskLayers chooses the blocks to read from disk so that the others fit
// in budget bytes (memplan.Shape.BlockBudget). They are spread evenly
// through the pass: while the resident blocks between two of them compute,
// the next one is read.
func diskLayers(blocks []model.Layer, budget int64) []int {
	n := len(blocks)
	for s := 0; s <= n; s++ {
		set := spread(s, n)
		var need int64
		for il := range n {
			if !slices.Contains(set, il) {
				need += blocks[il].End - blocks[il].Start
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

// Plan is the memory plan as it stands: Start's, with the weights mode
// changed if pressure switched it. Call it holding Exclusive's read side.
func (w *Weights) Plan() memplan.Plan { return w.plan.Clone() }

// Short reports whether memory is short now: code that would grow memory
// (KV caches) should not.
func (w *Weights) Short() bool { return w.short.Load() }

// OnDisk lists the blocks read from disk on every pass, ascending.
func (w *Weights) OnDisk() []int { return slices.Clone(w.disk) }

// Close stops the watcher and the reader of blocks on disk. The mapping
// must stay open until no forward pass runs: call it holding Exclusive,
// after StopWatch.
func (w *Weights) Close() error {
	w.closed = true
	if rd := w.reader; rd != nil {
		s := rd.Stats()
		w.log.Debug("llm: weight streaming", "bytes_read", s.BytesRead, "stall", s.Stall)
		return rd.Close()
	}
	return nil
}
