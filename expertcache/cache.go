package expertcache

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
)

// Sentinel errors; New and Size wrap them with what they found.
var (
	// ErrNoExperts: the model has no mixture-of-experts blocks (New, Size).
	ErrNoExperts = errors.New("model has no experts")
	// ErrBudget: the budget is too small for one expert of each size
	// (New, Size).
	ErrBudget = errors.New("expert cache budget too small")
	// ErrBadModel: the model's experts do not lie inside the file, or a
	// block's experts differ in size (New).
	ErrBadModel = errors.New("experts do not match the file")
)

// defaultReaders is how many reads are in flight at once: a local NVMe or
// cloud disk reaches its throughput with 3–4 parallel streams, one stream
// reads at a third of it.
const defaultReaders = 4

type settings struct {
	policy  Policy
	readers int
	repack  bool
	onError func(error)
}

func newSettings(opts []Option) settings {
	s := settings{policy: LFU, readers: defaultReaders, repack: true}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// Option configures New.
type Option func(*settings)

// WithRepack lets the cache hold experts in the X8 layout (see quant.X8),
// repacked in place as each is read, which its kernels multiply faster
// than the file's rows (default true), when the budget holds every expert
// so (Sizing.Repacked): the room it takes (Layout.Repack: a few percent
// for Q4_K, a group of eight rows for the others) would cost a cache
// that misses slots, and its misses the repacking. Size must be given
// the same choice. Experts of a type without an X8 kernel on this CPU
// stay as the file has them either way.
func WithRepack(on bool) Option { return func(s *settings) { s.repack = on } }

// WithPolicy sets the eviction policy (default LFU).
func WithPolicy(p Policy) Option { return func(s *settings) { s.policy = p } }

// WithReaders sets how many reads may be in flight at once (default 4).
func WithReaders(n int) Option {
	return func(s *settings) {
		if n > 0 {
			s.readers = n
		}
	}
}

// WithErrorHandler calls fn once with the first read error (see Cache),
// during the forward pass that meets it; fn must not start another pass.
func WithErrorHandler(fn func(error)) Option { return func(s *settings) { s.onError = fn } }

// Cache is a model.ExpertSource that keeps the experts used most in a
// fixed set of slots and reads the others from the model file when a
// forward pass needs them. Install it as Model.ExpertSource (while no
// pass runs).
//
// Fetch starts every missing read of a block at once, in the order the
// pass will use the experts, on a few reader goroutines, so the reads
// overlap each other and the computation of the experts already cached.
// Reads go straight into the slots with O_DIRECT (see mem.DirectFile): the
// page cache never holds the experts, and the cache's memory is exactly
// Sizing.Bytes, all allocated by New.
//
// A block may need more experts than the cache has slots (a long prompt
// uses most experts of every block): the experts beyond the free slots are
// read as the pass finishes the ones before them, relying on Forward's use
// of one expert at a time (see model.ExpertSource).
//
// Forward passes of different sessions share the cache: each block's
// Fetch to Release holds it, so their blocks take turns.
//
// model.ExpertSource cannot report errors: when a read fails (an I/O
// error, a file truncated under the model), the expert is served from the
// model's own weights (the mapped file) instead, so the pass completes
// correctly if the mapping can still be read; the error is kept for Err
// and handed to the WithErrorHandler function, and from then on experts
// not in the cache are all served from the model.
//
// Fetch, Expert, Release and Prefetch allocate nothing.
type Cache struct {
	m       *model.Model
	file    *mem.DirectFile
	layout  Layout
	x8      [][3]quant.X8Kernel // per block and matrix: the kernel of a repacked one
	sizing  Sizing
	onError func(error)
	free    func() error

	pass sync.Mutex // held from Fetch to Release

	mu     sync.Mutex // guards everything below and the table
	cond   sync.Cond  // a read finished
	t      table
	cur    fetch
	jobs   chan int32 // slot·3 + matrix
	err    error      // first read error
	failed bool       // err != nil: no more reads
	told   bool       // onError called
	st     Stats

	closed atomic.Bool
	wg     sync.WaitGroup
}

// fetch is the block between Fetch and Release.
type fetch struct {
	active   bool
	il       int
	want     []int32 // the announced experts, in order
	slot     []int32 // each one's slot, or one of the codes below
	next     int     // index in want of the next expert expected
	deferred int     // entries waiting for a slot
}

const (
	deferred = -1 // no slot yet
	mapped   = -2 // served from the model
	done     = -3 // used, unpinned
)

// New builds a cache of at most budget bytes (see Size) for the experts of
// m, whose file is path (the file m's weights view). It opens the file for
// direct reads, allocates every slot and starts the readers; Close stops
// them and frees the slots.
func New(m *model.Model, path string, budget int64, opts ...Option) (*Cache, error) {
	set := newSettings(opts)
	if set.policy != LFU && set.policy != LRU {
		return nil, fmt.Errorf("expertcache: unknown policy %v", set.policy)
	}
	l := LayoutOf(m)
	cs, blockClass, sz, err := sizing(l, budget, set.repack)
	if err != nil {
		return nil, err
	}
	maxN := 0
	for il, xs := range l.Experts {
		maxN = max(maxN, len(xs))
		for e, x := range xs {
			if x != [3]model.Range{{Off: x[0].Off, Len: xs[0][0].Len}, {Off: x[1].Off, Len: xs[0][1].Len}, {Off: x[2].Off, Len: xs[0][2].Len}} {
				return nil, fmt.Errorf("expertcache: block %d expert %d: sizes %v differ from expert 0's: %w", il, e, x, ErrBadModel)
			}
		}
	}
	file, err := mem.OpenDirect(path)
	if err != nil {
		return nil, fmt.Errorf("expertcache: %w", err)
	}
	fsize := file.Size()
	for il, xs := range l.Experts {
		for e, x := range xs {
			for k, r := range x {
				if k == 0 && r == (model.Range{}) {
					continue // a gate-less expert's gate (nemotron_h_moe)
				}
				if r.Off < 0 || r.Len <= 0 || r.Off > fsize || r.Len > fsize-r.Off {
					file.Close()
					return nil, fmt.Errorf("expertcache: block %d expert %d matrix %d: bytes [%d, %d) outside %s (%d bytes): %w",
						il, e, k, r.Off, r.Off+r.Len, path, fsize, ErrBadModel)
				}
			}
		}
	}
	c := &Cache{m: m, file: file, layout: l, sizing: sz, onError: set.onError, x8: make([][3]quant.X8Kernel, len(l.Experts))}
	for il, cl := range blockClass {
		if cl < 0 {
			continue
		}
		ex := &m.Blocks[il].Experts[0]
		for k, w := range [3]*ops.Matrix{ex.Gate, ex.Up, ex.Down} {
			if w != nil && cs[cl].room[k] > 0 {
				c.x8[il][k], _ = quant.X8(w.T.Type, w.Cols) // room > 0: it has one
			}
		}
	}
	c.t = newTable(l, cs, blockClass, sz, set.policy, m.ExpertsUsed)
	c.cond.L = &c.mu
	c.cur.want = make([]int32, 0, maxN)
	c.cur.slot = make([]int32, maxN)

	// One mapping per class of slot size.
	var frees []func() error
	c.free = func() error {
		var errs []error
		for _, f := range frees {
			errs = append(errs, f())
		}
		return errors.Join(errs...)
	}
	for i := range c.t.cs {
		cl := &c.t.cs[i]
		bufs, free, err := mem.AllocAligned(cl.slots, int(cl.size))
		if err != nil {
			c.free()
			file.Close()
			return nil, fmt.Errorf("expertcache: %d slots of %d bytes: %w", cl.slots, cl.size, err)
		}
		frees = append(frees, free)
		for j, b := range bufs {
			c.t.slots[cl.lo+j].buf = b
		}
	}
	// Experts a previous run or a parser left in the page cache would sit
	// there for nothing.
	for _, xs := range l.Experts {
		if len(xs) == 0 {
			continue
		}
		for k := range 3 {
			first, last := xs[0][k], xs[len(xs)-1][k]
			file.DropCache(first.Off, last.Off+last.Len-first.Off)
		}
	}
	c.st.Slots, c.st.SlotBytes, c.st.Experts = sz.Slots, sz.SlotBytes, sz.Experts
	c.jobs = make(chan int32, 3*sz.Slots)
	c.wg.Add(set.readers)
	for range set.readers {
		go c.read()
	}
	return c, nil
}

// Sizing is the cache's layout: slots, bytes, minimum budget.
func (c *Cache) Sizing() Sizing { return c.sizing }

// Direct reports whether reads bypass the page cache (O_DIRECT).
func (c *Cache) Direct() bool { return c.file.Direct() }

// Err is the first read error, after which experts not in the cache are
// served from the model's weights (see Cache).
func (c *Cache) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Fetch pins the cached experts among ids and starts reading the others
// (model.ExpertSource). It holds the cache until Release(il).
func (c *Cache) Fetch(il int, ids []int32) {
	c.pass.Lock()
	c.mu.Lock()
	defer c.mu.Unlock()
	f := &c.cur
	f.active, f.il, f.next, f.deferred = true, il, 0, 0
	f.want = f.want[:0]
	if il < 0 || il >= len(c.layout.Experts) || len(c.layout.Experts[il]) == 0 || len(ids) > cap(f.want) {
		return // not an expert block: Expert serves the model's
	}
	n := len(c.layout.Experts[il])
	for _, e := range ids {
		if e < 0 || int(e) >= n {
			f.want = f.want[:0]
			return
		}
	}
	f.want = append(f.want, ids...)
	t := &c.t
	t.clock++
	c.st.Fetches++
	c.st.Requests += int64(len(ids))
	for i, e := range f.want {
		t.count(il, int(e))
		s := t.find(il, int(e))
		if s < 0 {
			f.slot[i] = deferred
			continue
		}
		sl := &t.slots[s]
		sl.pins++
		t.hit(s)
		if sl.prefetched {
			sl.prefetched = false
			c.st.PrefetchHits++
		}
		c.st.Hits++
		f.slot[i] = s
	}
	misses := 0
	for i, e := range f.want {
		if f.slot[i] != deferred {
			continue
		}
		misses++
		c.st.Misses++
		if c.failed || c.closed.Load() {
			f.slot[i] = mapped
			continue
		}
		s, win := t.victim(t.blockClass[il], il, int(e))
		if s < 0 {
			f.deferred++
			continue
		}
		c.load(s, il, int(e), win)
		t.slots[s].pins++
		f.slot[i] = s
	}
	t.observe(t.blockClass[il], misses)
}

// load starts reading expert e of block il into slot s (unpinned, not
// loading). Its matrix headers are set now: nobody reads them until the
// slot is ready. A matrix the class repacks multiplies the X8 layout at
// the start of its part (read writes it there); its T.Data is nil, as
// the file's bytes do not outlive the read.
func (c *Cache) load(s int32, il, e int, window bool) {
	t := &c.t
	if t.place(s, il, e, window) {
		c.st.Evictions++
	}
	sl := &t.slots[s]
	cl := &t.cs[sl.class]
	src := &c.m.Blocks[il].Experts[e]
	off := int64(0)
	for k, mat := range [3]*ops.Matrix{src.Gate, src.Up, src.Down} {
		if mat == nil {
			// A gate-less expert (nemotron_h_moe): its empty gate range
			// reads nothing, and the slot's gate stays nil.
			sl.mats[k] = ops.Matrix{}
			off += cl.parts[k]
			continue
		}
		r := src.Ranges[k]
		_, _, skip := span(r)
		b := off + lead(r, cl.room[k]) + int64(skip)
		sl.tens[k] = *mat.T
		sl.tens[k].Data = sl.buf[b : b+r.Len : b+r.Len]
		sl.mats[k] = *mat
		sl.mats[k].T = &sl.tens[k]
		if cl.room[k] > 0 {
			x8 := int64(quant.X8Bytes(mat.T.Type, mat.Rows, mat.Cols))
			if sl.mats[k].UseX8(sl.buf[off:off+x8:off+x8], c.x8[il][k]) == nil {
				sl.tens[k].Data = nil
			}
		}
		off += cl.parts[k]
	}
	sl.ex = model.Expert{Gate: &sl.mats[0], Up: &sl.mats[1], Down: &sl.mats[2], Ranges: src.Ranges}
	if src.Gate == nil {
		sl.ex.Gate = nil
	}
	sl.state, sl.pending, sl.err = loading, 3, nil
	for k := range int32(3) {
		c.jobs <- s*3 + k // never blocks: room for every slot's reads
	}
}

// Expert returns expert e of block il, waiting for its read
// (model.ExpertSource); nil if the model has no such expert.
func (c *Cache) Expert(il, e int) *model.Expert {
	c.mu.Lock()
	ex, report := c.expert(il, e)
	c.mu.Unlock()
	if report != nil {
		c.onError(report)
	}
	return ex
}

func (c *Cache) expert(il, e int) (*model.Expert, error) {
	f := &c.cur
	t := &c.t
	if il < 0 || il >= len(c.m.Blocks) || e < 0 || e >= len(c.m.Blocks[il].Experts) {
		return nil, nil
	}
	fromModel := &c.m.Blocks[il].Experts[e]
	if !f.active || f.il != il {
		return fromModel, nil
	}
	i := f.next
	for i < len(f.want) && int(f.want[i]) != e {
		i++
	}
	if i == len(f.want) { // out of order: look again from the start
		for i = 0; i < len(f.want) && int(f.want[i]) != e; i++ {
		}
		if i == len(f.want) {
			return fromModel, nil // not announced
		}
	}
	if f.deferred > 0 {
		// Too few slots for the whole block: the experts used so far are
		// done (Forward uses one at a time), so their slots can take the
		// ones still to read.
		for j := range i {
			if s := f.slot[j]; s >= 0 {
				c.unpin(s)
				f.slot[j] = done
			}
		}
		c.startDeferred(i)
	}
	f.next = i + 1
	s := f.slot[i]
	for s == deferred {
		// Every slot is in use: take one back from an expert announced
		// after e, or wait for a read Prefetch started.
		if j := c.lastPinnedAfter(i); j >= 0 && !c.readingUnpinned(t.blockClass[il]) {
			c.unpin(f.slot[j])
			f.slot[j] = deferred
			f.deferred++
		} else {
			c.cond.Wait()
		}
		c.startDeferred(i)
		s = f.slot[i]
	}
	if s == mapped {
		c.st.Fallbacks++
		return fromModel, nil
	}
	sl := &t.slots[s]
	if sl.state == loading {
		start := time.Now()
		for sl.state == loading {
			c.cond.Wait()
		}
		c.st.Stall += time.Since(start)
	}
	if sl.state == failed {
		c.st.Fallbacks++
		var report error
		if !c.told && c.onError != nil {
			c.told = true
			report = c.err
		}
		return fromModel, report
	}
	return &sl.ex, nil
}

// startDeferred gives slots, while there are free ones, to the deferred
// experts from want[i] on, in order, and starts their reads.
func (c *Cache) startDeferred(i int) {
	f := &c.cur
	t := &c.t
	for j := i; j < len(f.want) && f.deferred > 0; j++ {
		if f.slot[j] != deferred {
			continue
		}
		e := int(f.want[j])
		if c.failed || c.closed.Load() {
			f.slot[j] = mapped
			f.deferred--
			continue
		}
		// It may still be cached (a slot taken back in lastPinnedAfter).
		s := t.find(f.il, e)
		if s >= 0 {
			t.hit(s)
		} else {
			var win bool
			if s, win = t.victim(t.blockClass[f.il], f.il, e); s < 0 {
				return
			}
			c.load(s, f.il, e, win)
		}
		t.slots[s].pins++
		f.slot[j] = s
		f.deferred--
	}
}

// lastPinnedAfter is the last entry after want[i] holding a slot, or -1.
func (c *Cache) lastPinnedAfter(i int) int {
	f := &c.cur
	for j := len(f.want) - 1; j > i; j-- {
		if f.slot[j] >= 0 {
			return j
		}
	}
	return -1
}

// readingUnpinned reports whether a slot of class cl is being read with
// no block using it (a Prefetch): waiting for it frees a slot.
func (c *Cache) readingUnpinned(cl int) bool {
	k := &c.t.cs[cl]
	for s := k.lo; s < k.lo+k.slots; s++ {
		if sl := &c.t.slots[s]; sl.state == loading && sl.pins == 0 {
			return true
		}
	}
	return false
}

func (c *Cache) unpin(s int32) {
	sl := &c.t.slots[s]
	sl.pins--
	if sl.pins == 0 && sl.state == failed {
		c.t.drop(s)
	}
}

// Held reports whether every expert the last Fetch(il, …) announced is
// in its slot now, read, and stays there until Release(il)
// (model.HeldExperts): then a pass may use them all at once. It is false
// while some wait for a slot, and while some are still being read: a pass
// taking them one at a time computes the experts already cached while
// the reads of the others go on, which a pass waiting for all of them
// first would not (DeepSeek-V2-Lite under a 6 GB cap, 86 % of requests
// hit, bench -p 64 -n 32, three alternating rounds: tg32 7.2, 7.3 and 7.2
// tok/s waiting for all, 8.0, 7.5 and 8.7 one at a time).
func (c *Cache) Held(il int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := &c.cur
	if !f.active || f.il != il || f.deferred > 0 {
		return false
	}
	for _, s := range f.slot[:len(f.want)] {
		if s >= 0 && c.t.slots[s].state == loading {
			return false
		}
	}
	return true
}

// Release unpins block il's experts and lets another pass in
// (model.ExpertSource).
func (c *Cache) Release(il int) {
	c.mu.Lock()
	f := &c.cur
	for j := range f.want {
		if s := f.slot[j]; s >= 0 {
			c.unpin(s)
		}
	}
	f.active, f.want, f.deferred = false, f.want[:0], 0
	c.mu.Unlock()
	c.pass.Unlock()
}

// Prefetch starts reading those of ids (experts of block il) that are not
// cached, into slots no pass is using, without waiting: a hint, from a
// pass that can predict a block's experts before Fetch, so the reads
// overlap the work before it. It may be called at any time, from any
// goroutine; experts it reads are evicted like any other.
func (c *Cache) Prefetch(il int, ids []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed || c.closed.Load() || il < 0 || il >= len(c.layout.Experts) || len(c.layout.Experts[il]) == 0 {
		return
	}
	t := &c.t
	for _, e := range ids {
		if e < 0 || int(e) >= len(c.layout.Experts[il]) || t.find(il, int(e)) >= 0 {
			continue
		}
		s, win := t.victim(t.blockClass[il], il, int(e))
		if s < 0 {
			return
		}
		c.load(s, il, int(e), win)
		t.slots[s].prefetched = true
		c.st.Prefetches++
	}
}

// read is one reader: it reads one matrix of one expert at a time.
func (c *Cache) read() {
	defer c.wg.Done()
	for j := range c.jobs {
		s, k := j/3, int(j%3)
		sl := &c.t.slots[s]
		// il, e and the class are set before the job is queued and do not
		// change until every read of the slot is done.
		r := c.layout.Experts[sl.il][sl.e][k]
		cl := &c.t.cs[sl.class]
		start, end, skip := span(r)
		off := int64(0)
		for m := range k {
			off += cl.parts[m]
		}
		ld := lead(r, cl.room[k])
		var got int
		var err error
		if !c.closed.Load() {
			got, err = c.file.ReadAt(sl.buf[off+ld:off+ld+end-start], start)
			need := int64(skip) + r.Len
			if int64(got) >= need && (err == nil || errors.Is(err, io.EOF)) {
				err = nil
				if w := &sl.mats[k]; w.X8() {
					err = repackInPlace(w, sl.buf[off:off+cl.parts[k]], int(ld)+skip)
				}
			} else if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("read %d bytes at offset %d, got %d: file truncated: %w", need, start, got, io.ErrUnexpectedEOF)
			}
			if err != nil {
				err = fmt.Errorf("expertcache: %s: block %d expert %d matrix %d [%d, %d): %w",
					c.file.Path(), sl.il, sl.e, k, r.Off, r.Off+r.Len, err)
			}
		}
		c.mu.Lock()
		c.st.BytesRead += int64(got)
		c.st.Reads++
		if err != nil && sl.err == nil {
			sl.err = err
			if c.err == nil {
				c.err, c.failed = err, true
			}
		}
		sl.pending--
		if sl.pending == 0 {
			sl.state = ready
			if sl.err != nil {
				sl.state = failed
				if sl.pins == 0 {
					c.t.drop(s)
				} else if c.t.where[sl.x] == s {
					c.t.where[sl.x] = -1 // no later Fetch finds it
				}
			}
			c.cond.Broadcast()
		}
		c.mu.Unlock()
	}
}

// repackInPlace rewrites the rows of w, read into part from byte at on
// in the file's layout, in the X8 layout from the part's start: a group
// of eight rows at a time, each written over the room before the rows
// and groups already rewritten, never over its own rows or later ones
// (at is at least Layout.Repack: the layout's growth and one group).
func repackInPlace(w *ops.Matrix, part []byte, at int) error {
	t := w.T.Type
	rb, err := t.RowBytes(int64(w.Cols))
	if err != nil {
		return err
	}
	g, gx := 8*int(rb), quant.X8Bytes(t, 8, w.Cols)
	for i := range w.Rows / 8 {
		src := part[at+i*g : at+(i+1)*g]
		if err := quant.RepackX8(t, part[i*gx:(i+1)*gx], src, 8, w.Cols); err != nil {
			return err
		}
	}
	return nil
}

// Stats returns the cache's counters since New.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.st
	s.Direct = c.file.Direct()
	return s
}

// Close waits for the block in progress, stops the readers and frees the
// slots. Experts served before must not be used after it; a pass after it
// gets every expert from the model. Closing twice is harmless.
func (c *Cache) Close() error {
	c.pass.Lock()
	defer c.pass.Unlock()
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return nil
	}
	c.closed.Store(true)
	close(c.jobs)
	c.mu.Unlock()
	c.wg.Wait()
	c.mu.Lock()
	for s := range c.t.slots {
		c.t.drop(int32(s))
	}
	c.mu.Unlock()
	return errors.Join(c.free(), c.file.Close())
}
