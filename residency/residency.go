package residency

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lowmem/llm/expertcache"
	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/syncx"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
)

// Config is what Start needs: the loaded model, its plan, and how to
// report what it does.
type Config struct {
	Mapping *mem.Mapping // the model's file, mapped
	Model   *model.Model // built from Mapping by model.New
	File    *gguf.File   // the parsed file: its tensor table places the blocks
	Shape   *memplan.Shape
	Plan    memplan.Plan
	// Auto: the plan chose the weights mode (memplan.WeightsAuto), so
	// blocks may leave memory even when the plan kept them all resident
	// (more sessions than planned, memory pressure). A plan that streams
	// moves blocks either way; WithWeights(WeightsResident) never does.
	Auto bool
	// Budget is the WithMemoryLimit budget in bytes, 0 when the limit is
	// detected; the watcher measures headroom against it too.
	Budget int64
	// Readers is how many reads of blocks from disk are in flight at once
	// (0: mem.DefaultReaders).
	Readers int
	// OnPressure, if not nil, is told of every pressure report, on the
	// watcher's goroutine. Setting it also starts the watcher.
	OnPressure func(PressureEvent)
	Logger     *slog.Logger // nil: slog.Default()
	// Pool, if not nil, shares the repacking at load among its threads.
	Pool *ops.Pool
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

// Weights decides and enforces, from Load to Close, which of a model's
// blocks stay in memory and which are read from disk on every pass, and
// shares the memory of the plan's pool with the KV caches of the model's
// sessions (KVBudget).
//
// The blocks read from disk are the first n of the plan's
// Residency.Order, n the fewest that leave room for the KV caches (and
// at least the floor memory pressure sets). A growing cache that needs
// more room moves the next blocks out before it grows (Yield: the switch
// waits for the passes running, then the blocks' pages are released); a
// shrinking one lets a background mover read the last blocks that left
// back into memory, one at a time, and switch them back between passes.
type Weights struct {
	cfg     Config
	log     *slog.Logger
	res     memplan.Residency
	dynamic bool // blocks may move between memory and disk
	reader  *mem.RangeReader
	source  *model.DiskSource
	budget  *memplan.KVBudget
	experts *expertcache.Cache // a mixture-of-experts model's experts, read from disk
	// expertRanges are the expert tensors' bytes when experts is set.
	expertRanges []mem.Range
	watcher      *mem.Watcher
	ahead        []mem.Range // parts of the file read ahead at Start
	// repacked are the ranges of the matrices held in the X8 layout, and
	// frees the unmappings of their buffers (Close).
	repacked []mem.Range
	frees    []func() error

	mu        sync.Mutex
	cond      sync.Cond // restore finished or stopped
	plan      memplan.Plan
	n         int  // blocks read from disk: the first n of res.Order
	floor     int  // memory pressure keeps at least this many on disk
	restoring bool // the mover is reading res.Order[n-1] back in
	abort     bool // Yield needs the block being restored to stay out
	buffers   bool // the read buffers hold memory (from the first block out to the last back)
	closed    bool

	wake  chan struct{}  // Regain → mover
	done  chan struct{}  // closed by Close: the mover stops
	moved sync.WaitGroup // the mover

	evictions, restores atomic.Int64
	short               atomic.Bool // memory is short now
}

// hysteresis is how much room beyond a block a block needs to come back:
// the largest block, so that the memory a cache's growth releases right
// after it grew (the old layer it held) never brings back a block the
// next growth sends out again.
func (w *Weights) hysteresis() int64 {
	var h int64
	for _, b := range w.res.Blocks {
		h = max(h, b)
	}
	return h
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

// Start puts the plan into effect: the blocks that do not fit beside an
// empty KV cache leave memory, the resident parts of the file are read
// ahead, the layer source that can read blocks from disk is installed
// (Model.Source, unless the weights must stay resident), and the
// memory-pressure watcher starts when there is something to watch.
func Start(c Config) (*Weights, error) {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	// Keep the tensor table, not the metadata (the vocabulary is large).
	c.File = &gguf.File{Tensors: c.File.Tensors}
	w := &Weights{cfg: c, log: c.Logger, plan: c.Plan.Clone(), wake: make(chan struct{}, 1), done: make(chan struct{})}
	w.cond.L = &w.mu
	w.res = w.plan.Residency
	// A repacked block cannot leave memory: its pages are no longer the
	// file's. The plan repacks only when every block stays resident.
	w.dynamic = (c.Auto || c.Plan.Weights == memplan.WeightsStreaming) && len(w.res.Order) == len(c.Model.Blocks) &&
		len(c.Model.Blocks) > 0 && c.Mapping.Mapped() && w.plan.Repacked == 0
	limit := w.plan.KVLimit()
	if w.dynamic {
		if err := w.startSource(); err != nil {
			return nil, err
		}
		limit = w.res.MaxKV()
	}
	if w.res.Experts > 0 && c.Mapping.Mapped() {
		if err := w.startExperts(); err != nil {
			return nil, err
		}
	}
	if w.plan.Repacked > 0 {
		w.repack()
	}
	w.budget = memplan.NewKVBudget(limit, w.Short)
	if w.dynamic {
		w.budget.Share(w)
		w.n, _ = w.res.OnDisk(0)
		if w.n > 0 {
			w.buffers = true
			w.source.Switch(w.onDisk(w.n), nil)
		}
	}
	w.advise()
	if w.dynamic || w.experts != nil {
		w.moved.Go(w.mover)
	}
	w.startWatch()
	return w, nil
}

// startSource opens the reader of blocks on disk and installs the layer
// source; every block is resident until a switch.
func (w *Weights) startSource() error {
	mm := w.cfg.Model
	ranges := make([]mem.Range, len(mm.Blocks))
	for il, L := range mm.Blocks {
		ranges[il] = mem.Range{Off: L.Start, Len: L.End - L.Start}
	}
	rd, err := mem.NewRangeReader(w.cfg.Mapping.Path(), ranges, memplan.DiskBuffers, w.cfg.Readers)
	if err != nil {
		return fmt.Errorf("residency: reading weights from disk: %w", err)
	}
	log := w.log
	src, err := model.NewDiskSource(mm, w.cfg.File, rd, func(err error) {
		log.Error("llm: reading weights from disk failed; reading them through the page cache from now on", "err", err)
	})
	if err != nil {
		rd.Close()
		return err
	}
	w.reader, w.source = rd, src
	mm.Source = src
	return nil
}

// startExperts installs the expert cache of a mixture-of-experts model
// whose experts are read from disk (Residency.Experts): the budget the plan
// gave them, O_DIRECT reads. The mapping's expert pages are released by
// advise.
func (w *Weights) startExperts() error {
	log := w.log
	cache, err := expertcache.New(w.cfg.Model, w.cfg.Mapping.Path(), w.res.Experts, expertcache.WithReaders(w.cfg.Readers),
		expertcache.WithRepack(w.plan.RepackExperts),
		expertcache.WithErrorHandler(func(err error) {
			log.Error("llm: reading experts from disk failed; reading them through the page cache from now on", "err", err)
		}))
	if err != nil {
		if errors.Is(err, expertcache.ErrBudget) {
			err = fmt.Errorf("%w: %w", err, memplan.ErrOutOfBudget)
		}
		return fmt.Errorf("residency: expert cache: %w", err)
	}
	w.experts = cache
	w.cfg.Model.ExpertSource = cache
	sz := cache.Sizing()
	log.Info("llm: experts read from disk into a cache", "slots", sz.Slots, "experts", sz.Experts,
		"bytes", sz.Bytes(), "budget", w.res.Experts, "direct_io", cache.Direct(), "x8", sz.Repacked)
	return nil
}

// repack holds the matrices the plan repacks (model.Repackable) in the
// X8 layout, one at a time so that memory holds at most one matrix twice:
// each into an anonymous buffer of its own, its mapped pages released at
// once. A failure (no memory for a buffer, a kernel missing) leaves the
// rest in the file's layout, with a warning, and Plan().Repacked says what
// was repacked.
func (w *Weights) repack() {
	defer func() {
		// A fault reading the mapping (the file truncated under it) fails
		// the load: give the buffers back before it goes on up.
		if r := recover(); r != nil {
			for _, free := range w.frees {
				free()
			}
			w.frees = nil
			panic(r)
		}
	}()
	// Building the model touched every tensor's neighbourhood, and each
	// fault read around it (as much as the device's readahead, 8 MiB on
	// this kind of VM disk): page cache of matrices about to be repacked,
	// which would sit beside their growing anonymous copies (a 0.92 GB
	// peak for TinyLlama Q4_0, whose plan is 0.70). Drop it, and fault
	// the repacked ranges without read-around until each matrix's turn,
	// when it is read sequentially (readahead runs at most one window
	// past its end), so memory holds about one matrix twice at the most.
	mp := w.cfg.Mapping
	type matrix struct {
		m  model.RepackUnit
		ti *gguf.TensorInfo
	}
	var ms []matrix
	for _, m := range w.cfg.Model.Repackable() {
		ti, ok := w.cfg.File.Tensor(m.T.Name)
		if !ok || ti.Size != int64(len(m.T.Data)) || !mp.Mapped() {
			w.log.Warn("llm: repacking weights (X8 layout): tensor not in the mapped file as built; it stays in the file's layout", "tensor", m.T.Name)
			continue
		}
		ms = append(ms, matrix{m, ti})
	}
	// In the file's order, so that what one matrix reads ahead past its
	// end is the next one's start, released in its turn.
	slices.SortFunc(ms, func(a, b matrix) int { return cmp.Compare(a.ti.Offset, b.ti.Offset) })
	for _, x := range ms {
		mp.Advise(x.ti.Offset, x.ti.Size, mem.Random)
		mp.Release(x.ti.Offset, x.ti.Size)
	}
	var done int64
	for _, x := range ms {
		mp.Advise(x.ti.Offset, x.ti.Size, mem.Sequential)
		if err := w.repackOne(x.m, x.ti); err != nil {
			w.log.Warn("llm: repacking weights (X8 layout); the rest stay in the file's layout", "tensor", x.m.T.Name, "err", err)
			break
		}
		done += x.ti.Size
	}
	// The last pages read ahead past each matrix's pieces.
	for _, r := range w.repacked {
		mp.Release(r.Off, r.Len)
	}
	if done != w.plan.Repacked {
		w.log.Warn("llm: repacked fewer weights than planned", "planned", w.plan.Repacked, "repacked", done)
	}
	w.plan.Repacked = done
	w.log.Debug("llm: weights repacked (X8 layout)", "bytes", done, "matrices", len(w.repacked))
}

// repackChunk is the file bytes repacked between releases of their mapped
// pages: about the readahead window of a VM disk (8 MiB), so the page
// cache holds a window or two of a matrix being repacked.
const repackChunk = 8 << 20

// repackOne repacks m, the tensor ti of the mapped file, into a buffer of
// its own and releases its mapped range.
func (w *Weights) repackOne(m model.RepackUnit, ti *gguf.TensorInfo) error {
	mp := w.cfg.Mapping
	size := model.RepackedBytes(m.Matrix)
	n := (size + mem.DirectAlign - 1) &^ (mem.DirectAlign - 1)
	bufs, free, err := mem.AllocAligned(1, n)
	if err != nil {
		return err
	}
	mem.AdviseHugePages(bufs[0]) // advice: a refusal changes nothing but speed
	// The file's pages go as soon as each piece is repacked: a large
	// matrix (Llama-3.1-8B's output, 431 MB) is never held twice whole.
	release := func(off, n int64) { mp.Release(ti.Offset+off, n) }
	if err := m.Repack(bufs[0][:size], repackChunk, w.cfg.Pool, release); err != nil {
		free()
		return err
	}
	w.frees = append(w.frees, free)
	r := mem.Range{Off: ti.Offset, Len: ti.Size}
	w.repacked = append(w.repacked, r)
	mp.Advise(r.Off, r.Len, mem.Random) // a fault nearby reads nothing ahead into it
	if err := mp.Release(r.Off, r.Len); err != nil {
		w.log.Warn("llm: releasing the mapped pages of repacked weights", "tensor", m.T.Name, "err", err)
	}
	return nil
}

// Repacked lists the file ranges of the matrices held in the X8 layout,
// whose mapped pages were released.
func (w *Weights) Repacked() []mem.Range { return slices.Clone(w.repacked) }

// advise tells the kernel which parts of the file to read ahead (the
// resident ones, in the background) and which not (the embedding rows of
// an untied embedding and of Gemma 3n's per-layer embeddings, the blocks
// read from disk).
func (w *Weights) advise() {
	mm, mp := w.cfg.Model, w.cfg.Mapping
	// Without a tied output only the rows of the tokens seen are read:
	// readahead around each row would fill the page cache with the rest.
	// Gemma 3n's per-layer embeddings are always read so, a row a token.
	var skip []mem.Range // not to be read ahead
	for _, name := range []string{"token_embd.weight", "per_layer_token_embd.weight"} {
		if ti, ok := w.cfg.File.Tensor(name); ok && (name != "token_embd.weight" || !mm.Tied) {
			mp.Advise(ti.Offset, ti.Size, mem.Random)
			if ti.Size > 0 {
				skip = append(skip, mem.Range{Off: ti.Offset, Len: ti.Size})
			}
		}
	}
	// Repacked matrices are read from their buffers, never the mapping.
	skip = append(skip, w.repacked...)
	// NextN blocks are never run: nothing reads them, nor reads ahead
	// into them from a neighbour's fault.
	for _, r := range model.SkippedRanges(w.cfg.File, &mm.Config) {
		skip = append(skip, mem.Range{Off: r.Off, Len: r.Len})
		mp.Advise(r.Off, r.Len, mem.Random)
	}
	for _, il := range w.onDisk(w.n) {
		L := &mm.Blocks[il]
		skip = append(skip, mem.Range{Off: L.Start, Len: L.End - L.Start})
		w.release(il)
	}
	if w.experts != nil {
		for _, t := range w.cfg.File.Tensors {
			if memplan.IsExpertTensor(t.Name) && t.Size > 0 {
				r := mem.Range{Off: t.Offset, Len: t.Size}
				skip = append(skip, r)
				w.expertRanges = append(w.expertRanges, r)
				mp.Advise(t.Offset, t.Size, mem.Random)
				mp.Release(t.Offset, t.Size)
			}
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
}

// onDisk is the first n blocks of the order, ascending.
func (w *Weights) onDisk(n int) []int {
	return slices.Sorted(slices.Values(w.res.Order[:n]))
}

// release gives back the memory block il holds: no readahead into it,
// its pages unmapped and dropped from the page cache.
func (w *Weights) release(il int) {
	L := &w.cfg.Model.Blocks[il]
	mp := w.cfg.Mapping
	mp.Advise(L.Start, L.End-L.Start, mem.Random)
	if err := mp.Release(L.Start, L.End-L.Start); err != nil {
		w.log.Warn("llm: releasing the memory of a block read from disk from now on", "block", il, "err", err)
	}
}

// KVBudget is the budget the model's sessions reserve their KV caches
// from: with blocks that may move, it takes its room from them.
func (w *Weights) KVBudget() *memplan.KVBudget { return w.budget }

// current is the count of blocks the memory accounting treats as on disk
// now: a block being read back counts as resident. Call with mu held.
func (w *Weights) current() int {
	if w.restoring {
		return w.n - 1
	}
	return w.n
}

// held is the memory the blocks and read buffers hold now, as counted.
// Call with mu held.
func (w *Weights) held() int64 {
	h := w.res.Weights(w.current())
	if w.current() == 0 && w.buffers {
		h += w.res.Buffers // given back only once the last block is back
	}
	return h
}

// Yield makes room for KV caches of kv bytes: it moves the next blocks of
// the order to disk if they do not fit beside the resident ones (waiting
// for the passes running to end), and reports whether kv fits at all
// (memplan.Yielder).
func (w *Weights) Yield(kv int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.yield(kv)
}

// yield is Yield with mu held.
func (w *Weights) yield(kv int64) bool {
	for {
		if w.closed {
			return false
		}
		n, ok := w.fitFrom(max(w.current(), w.floor), kv)
		if w.restoring && n >= w.n {
			// The block coming back must stay out after all.
			w.abort = true
			w.cond.Wait()
			continue
		}
		w.moveOut(n)
		return ok
	}
}

// fitFrom is the fewest blocks on disk, at least lo, that leave room for
// KV caches of kv bytes, and false when even all of them do not. Call
// with mu held.
func (w *Weights) fitFrom(lo int, kv int64) (int, bool) {
	for n := lo; n <= len(w.res.Order); n++ {
		h := w.res.Weights(n)
		if n == 0 && w.buffers {
			h += w.res.Buffers
		}
		if h+kv <= w.res.Pool {
			return n, true
		}
	}
	return len(w.res.Order), false
}

// Room is how much KV caches of kv bytes may grow by before a block must
// leave memory (memplan.Yielder).
func (w *Weights) Room(kv int64) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.res.Pool - w.held() - kv
}

// Regain wakes the mover: the KV caches shrank, blocks may come back
// (memplan.Yielder).
func (w *Weights) Regain() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// moveOut reads the first n blocks of the order from disk from the next
// pass on: the switch waits for running passes, and their pages are
// released before any pass runs again. Call with mu held.
func (w *Weights) moveOut(n int) {
	if n <= w.n {
		return
	}
	start := time.Now()
	from := w.n
	w.buffers = true
	w.source.Switch(w.onDisk(n), func() {
		for _, il := range w.res.Order[from:n] {
			w.release(il)
		}
	})
	w.n = n
	w.evictions.Add(int64(n - from))
	w.plan.Weights = memplan.WeightsStreaming
	w.log.Debug("llm: blocks read from disk from now on", "blocks", w.res.Order[from:n], "streamed", n,
		"resident", len(w.res.Order)-n, "took", time.Since(start))
}

// sweepEvery is how often the mover drops what page-fault readahead put
// into the page cache from ranges read from disk (see sweep).
const sweepEvery = time.Second

// mover brings blocks back into memory when the KV caches shrank, and
// sweeps the page cache.
func (w *Weights) mover() {
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-w.wake:
			for w.restoreOne() {
			}
		case <-tick.C:
			w.sweep()
		case <-w.done:
			return
		}
	}
}

// sweep drops from the page cache the pages of blocks on disk (and of
// experts read from disk) that got there anyway: a page fault in a
// resident neighbour reads around it (read_ahead_kb, often megabytes),
// and those pages would count against the memory limit, cold and unused,
// until the kernel reclaimed them.
func (w *Weights) sweep() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	for _, il := range w.res.Order[:w.current()] {
		L := &w.cfg.Model.Blocks[il]
		w.cfg.Mapping.Release(L.Start, L.End-L.Start)
	}
	for _, r := range w.expertRanges {
		w.cfg.Mapping.Release(r.Off, r.Len)
	}
}

// restoreChunk is how much of a block the mover reads back between checks
// that a growing KV cache does not need the room after all.
const restoreChunk = 8 << 20

// restoreOne brings the last block that left back into memory, if it
// fits beside the KV caches with room to spare (hysteresis): it reads the
// block in, then switches it back between passes. When one block does
// not fit only because the read buffers are still held, but every block
// would without them, it brings all back at once instead (restoreAll).
// It reports whether it moved anything.
func (w *Weights) restoreOne() bool {
	var il int
	one, all := false, false
	w.budget.Hold(func(kv int64) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.closed || w.restoring || w.n <= w.floor || w.n == 0 {
			return
		}
		h := w.hysteresis()
		after := w.res.Weights(w.n - 1)
		if w.n == 1 {
			after += w.res.Buffers // still held while the block is read back
		}
		switch {
		case after+kv+h <= w.res.Pool:
			il, one = w.res.Order[w.n-1], true
			w.restoring, w.abort = true, false
		case w.floor == 0 && w.res.Weights(0)+kv+h <= w.res.Pool:
			// Held under the budget's lock: no cache grows meanwhile.
			w.restoreAll()
			all = true
		}
	})
	if all || !one {
		return all
	}
	start := time.Now()
	L := &w.cfg.Model.Blocks[il]
	mp := w.cfg.Mapping
	mp.Advise(L.Start, L.End-L.Start, mem.Normal)
	var err error
	for off := L.Start; off < L.End && err == nil; off += restoreChunk {
		w.mu.Lock()
		stop := w.abort || w.closed
		w.mu.Unlock()
		if stop {
			break
		}
		err = mp.Populate(off, min(restoreChunk, L.End-off))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.abort || w.closed || err != nil {
		if err != nil && !w.closed {
			w.log.Warn("llm: reading a block back into memory failed; it stays on disk", "block", il, "err", err)
		}
		w.release(il)
		w.restoring = false
		w.cond.Broadcast()
		return false
	}
	n := w.n - 1
	// Reading the block in read ahead past its ends, into neighbours that
	// stay on disk: their pages go again.
	for _, nb := range w.res.Order[:n] {
		if nb == il-1 || nb == il+1 {
			w.release(nb)
		}
	}
	w.source.Switch(w.onDisk(n), nil)
	if n == 0 {
		w.discardBuffers()
	}
	w.n, w.restoring = n, false
	w.restores.Add(1)
	w.cond.Broadcast()
	w.log.Debug("llm: block back in memory", "block", il, "streamed", n, "took", time.Since(start))
	return true
}

// restoreAll brings every block on disk back at once: the switch waits for
// the passes running, the read buffers are given back, and the blocks are
// read in before any pass runs again, so memory never holds both. The
// pause is about one pass's reads from disk. Call with mu held.
func (w *Weights) restoreAll() {
	start := time.Now()
	back := w.res.Order[:w.n]
	mp := w.cfg.Mapping
	w.source.Switch(nil, func() {
		w.discardBuffers()
		for _, il := range back {
			L := &w.cfg.Model.Blocks[il]
			mp.Advise(L.Start, L.End-L.Start, mem.Normal)
			if err := mp.Populate(L.Start, L.End-L.Start); err != nil {
				w.log.Warn("llm: reading a block back into memory", "block", il, "err", err)
			}
		}
	})
	w.restores.Add(int64(len(back)))
	w.log.Debug("llm: every block back in memory", "blocks", back, "took", time.Since(start))
	w.n = 0
	w.cond.Broadcast()
}

// discardBuffers gives back the read buffers' memory: no block is read
// from disk any more. Call with mu held.
func (w *Weights) discardBuffers() {
	if err := w.reader.Discard(); err != nil {
		w.log.Warn("llm: giving back the read buffers", "err", err)
	}
	w.buffers = false
}

// Plan is the memory plan as it stands: Start's, with the weights mode and
// steps changed when blocks left memory.
func (w *Weights) Plan() memplan.Plan {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.plan.Clone()
}

// Short reports whether memory is short now: code that would grow memory
// (KV caches) should not.
func (w *Weights) Short() bool { return w.short.Load() }

// OnDisk lists the blocks read from disk on every pass now, ascending.
func (w *Weights) OnDisk() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.onDisk(w.n)
}

// Stats describes where the blocks are and what reading them cost.
type Stats struct {
	Blocks    int   // blocks of the model
	OnDisk    int   // blocks read from disk on every pass now
	Evictions int64 // blocks that left memory since Load
	Restores  int64 // blocks read back into memory since Load
	// BytesRead is what was read from disk for blocks (and experts) since
	// Load.
	BytesRead int64
	// Loads is the blocks read from disk since Load.
	Loads int64
	// Stall is the time passes waited for blocks to be read.
	Stall time.Duration
	// Direct reports whether blocks are read with O_DIRECT.
	Direct bool
	// Experts is the expert cache's counters (hits, misses, bytes read,
	// stalls) when a mixture-of-experts model reads its experts from
	// disk; zero otherwise.
	Experts expertcache.Stats
}

// Stats returns the counters since Load.
func (w *Weights) Stats() Stats {
	w.mu.Lock()
	st := Stats{Blocks: len(w.cfg.Model.Blocks), OnDisk: w.n}
	w.mu.Unlock()
	st.Evictions, st.Restores = w.evictions.Load(), w.restores.Load()
	if w.reader != nil {
		rs := w.reader.Stats()
		st.BytesRead, st.Loads, st.Stall, st.Direct = rs.BytesRead, rs.Loads, rs.Stall, w.reader.Direct()
	}
	if w.experts != nil {
		st.Experts = w.experts.Stats()
		st.BytesRead += st.Experts.BytesRead
		st.Stall += st.Experts.Stall
		st.Direct = st.Experts.Direct
	}
	return st
}

// Close stops the mover and the reader of blocks on disk. No forward pass
// may run any more (the model's write lock), and StopWatch comes first.
func (w *Weights) Close() error {
	if !syncx.Close(&w.cond, &w.closed) {
		return nil
	}
	close(w.done)
	w.moved.Wait()
	var err error
	// No pass runs any more: the repacked buffers can go.
	for _, free := range w.frees {
		err = errors.Join(err, free())
	}
	w.frees = nil
	if w.experts != nil {
		err = errors.Join(err, w.experts.Close())
	}
	if rd := w.reader; rd != nil {
		s := rd.Stats()
		w.log.Debug("llm: blocks read from disk", "bytes_read", s.BytesRead, "stall", s.Stall,
			"evictions", w.evictions.Load(), "restores", w.restores.Load())
		err = errors.Join(rd.Close(), err)
	}
	return err
}
