package model

import (
	"fmt"
	"slices"
	"sync"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/tensor"
)

// SlotReader reads byte ranges of the model file into a few reusable
// buffers (slots) on request. mem.RangeReader implements it; its range il
// is block il's [Start, End).
type SlotReader interface {
	// Slots is the number of buffers.
	Slots() int
	// View is where range i lies in slot's buffer, whether or not it is
	// loaded there now.
	View(i, slot int) []byte
	// Load starts reading range i into slot, behind earlier loads.
	Load(i, slot int) error
	// Wait waits for slot's last load and returns its error.
	Wait(slot int) error
}

// DiskSource is a LayerSource that serves each block either from the
// mapped file (resident) or from a SlotReader that reads it from disk ahead
// of use (streamed), and lets its owner change which blocks are which
// between passes (Switch).
//
// For every block and every slot a Layer is built once, its matrices
// viewing the slot's buffer at the block's tensor offsets, so serving a
// streamed block during a pass is a lookup. Norm weights and biases are
// shared with Blocks (heap copies).
//
// A pass whose blocks all stay resident runs beside other passes; passes
// that stream take turns (they share the slots). Reads run ahead in the
// pass's order: while block i computes, the next streamed blocks are read
// into the free slots, and after the last one, the first ones of the next
// pass.
type DiskSource struct {
	m      *Model
	r      SlotReader
	layers [][]Layer // [block][slot]
	slots  int

	// gate orders passes and switches: every pass running shares view,
	// since Switch waits for running passes to end and holds new ones back.
	gate      sync.Mutex
	cond      sync.Cond
	view      *diskView
	running   int  // passes between Begin and End
	switching bool // a Switch is waiting for passes to end, or applying

	mu   sync.Mutex // held by a streaming pass from Begin to End (and by Switch)
	q    []issued   // loads issued, in the order passes will use them
	held []issued   // loaded blocks the running pass is using
	free []int      // idle slots
	next int        // position in view.order of the block to load next

	errMu   sync.Mutex
	err     error
	failed  bool // err != nil; read without errMu inside a pass
	onError func(error)
}

// issued is a block's load into a slot.
type issued struct{ block, slot int }

// diskView is which blocks are streamed: it does not change while a pass
// runs.
type diskView struct {
	streamed []bool // per block
	order    []int  // the streamed blocks, ascending: the order passes use them
}

func newDiskView(blocks int, streamed []int) *diskView {
	v := &diskView{streamed: make([]bool, blocks)}
	for _, il := range streamed {
		v.streamed[il] = true
	}
	for il, s := range v.streamed {
		if s {
			v.order = append(v.order, il)
		}
	}
	return v
}

// NewDiskSource serves m's blocks, all resident until Switch says
// otherwise, reading streamed ones through r, whose range il must be
// exactly the bytes [Blocks[il].Start, End) of the file f describes.
// onError, if not nil, is called once with the first read error (see
// Layer), during a forward pass: it must not start another.
func NewDiskSource(m *Model, f *gguf.File, r SlotReader, onError func(error)) (*DiskSource, error) {
	n := r.Slots()
	s := &DiskSource{m: m, r: r, slots: n, layers: make([][]Layer, len(m.Blocks)),
		view: newDiskView(len(m.Blocks), nil), onError: onError,
		q: make([]issued, 0, n), held: make([]issued, 0, n), free: make([]int, 0, n)}
	s.cond.L = &s.gate
	for slot := range n {
		s.free = append(s.free, slot)
	}
	for il := range m.Blocks {
		src := &m.Blocks[il]
		s.layers[il] = make([]Layer, n)
		for slot := range n {
			buf := r.View(il, slot)
			if int64(len(buf)) != src.End-src.Start {
				return nil, fmt.Errorf("model: streamed layer %d: range holds %d bytes, the layer %d", il, len(buf), src.End-src.Start)
			}
			L, err := viewLayer(f, src, buf)
			if err != nil {
				return nil, fmt.Errorf("model: streamed layer %d: %w", il, err)
			}
			s.layers[il][slot] = L
		}
	}
	return s, nil
}

// viewLayer is a copy of src whose matrices, experts included, view buf,
// which holds the file bytes [src.Start, src.End). Vectors are shared.
func viewLayer(f *gguf.File, src *Layer, buf []byte) (Layer, error) {
	L := *src
	for _, p := range L.matrices() {
		if *p == nil {
			continue
		}
		ti, ok := f.Tensor((*p).T.Name)
		if !ok {
			return L, fmt.Errorf("tensor %q not in the file: %w", (*p).T.Name, ErrBadModel)
		}
		mat, err := viewMatrix(*p, Range{ti.Offset, ti.Size}, src.Start, buf)
		if err != nil {
			return L, err
		}
		*p = mat
	}
	if src.Experts != nil {
		L.Experts = make([]Expert, len(src.Experts))
		for e := range src.Experts {
			x := src.Experts[e]
			for k, p := range []**ops.Matrix{&x.Gate, &x.Up, &x.Down} {
				if *p == nil {
					continue // a gate-less expert's gate
				}
				mat, err := viewMatrix(*p, x.Ranges[k], src.Start, buf)
				if err != nil {
					return L, err
				}
				*p = mat
			}
			L.Experts[e] = x
		}
	}
	return L, nil
}

// viewMatrix is w, whose bytes are r of the file, re-pointed into buf,
// which holds the file bytes from offset start on.
func viewMatrix(w *ops.Matrix, r Range, start int64, buf []byte) (*ops.Matrix, error) {
	off := r.Off - start
	if off < 0 || off+r.Len > int64(len(buf)) {
		return nil, fmt.Errorf("tensor %q [%d, %d) outside the layer's range [%d, %d): %w",
			w.T.Name, r.Off, r.Off+r.Len, start, start+int64(len(buf)), ErrBadModel)
	}
	t, err := tensor.View(w.T.Name, w.T.Type, w.T.Shape, buf[off:off+r.Len:off+r.Len])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrBadModel)
	}
	// The buffer holds the file's rows, whatever layout w has in memory.
	m := w.RowLayout()
	m.T = t
	return &m, nil
}

// Switch makes the blocks listed in streamed (and no others) read from
// disk from the next pass on. It waits for the passes running to end and
// holds new ones back meanwhile, so the pause is at most one pass; during,
// if not nil, runs in that window, when no pass touches any block (the
// place to drop the pages of blocks that stop being resident). When no
// block streams any more, the reads in flight are waited for before
// during runs, so it may give the slots' memory back. Switches are
// serialised.
func (s *DiskSource) Switch(streamed []int, during func()) error {
	for _, il := range streamed {
		if il < 0 || il >= len(s.m.Blocks) {
			return fmt.Errorf("model: switch: streamed block %d of %d", il, len(s.m.Blocks))
		}
	}
	nv := newDiskView(len(s.m.Blocks), streamed)
	s.gate.Lock()
	for s.switching {
		s.cond.Wait()
	}
	s.switching = true
	for s.running > 0 {
		s.cond.Wait()
	}
	s.gate.Unlock()
	if len(nv.order) == 0 {
		s.mu.Lock()
		s.drain(0)
		s.mu.Unlock()
	}
	if during != nil {
		during()
	}
	s.gate.Lock()
	s.view = nv
	s.switching = false
	s.cond.Broadcast()
	s.gate.Unlock()
	return nil
}

// OnDisk lists the blocks read from disk now, ascending.
func (s *DiskSource) OnDisk() []int {
	s.gate.Lock()
	defer s.gate.Unlock()
	return slices.Clone(s.view.order)
}

// Err is the first read error, after which streamed layers are served
// from the mapped file (see Layer).
func (s *DiskSource) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Begin starts a forward pass: it waits for a Switch in progress, and a
// pass that streams waits for other streaming passes (they share the
// slots), then starts the reads of its first streamed blocks that are not
// already on their way.
func (s *DiskSource) Begin() {
	s.gate.Lock()
	for s.switching {
		s.cond.Wait()
	}
	s.running++
	v := s.view
	s.gate.Unlock()
	if len(v.order) == 0 {
		return
	}
	s.mu.Lock()
	if s.failed {
		return
	}
	// The loads issued by the last pass ran ahead into this one in the
	// order it had; keep those that match this pass's order.
	want := min(s.slots, len(v.order))
	k := 0
	for k < len(s.q) && k < want && s.q[k].block == v.order[k] {
		k++
	}
	s.drain(k)
	s.next = k % len(v.order)
	s.fill(v)
}

// drain drops the loads issued after the first keep, once they complete.
func (s *DiskSource) drain(keep int) {
	for _, e := range s.q[keep:] {
		s.r.Wait(e.slot) // an error shows again if the block is loaded again
		s.free = append(s.free, e.slot)
	}
	s.q = s.q[:keep]
}

// fill issues loads into free slots, in the view's cyclic order, until as
// many blocks are loading or in use as there are slots (or streamed
// blocks, if fewer).
func (s *DiskSource) fill(v *diskView) {
	for len(s.q)+len(s.held) < min(s.slots, len(v.order)) && len(s.free) > 0 {
		slot := s.free[len(s.free)-1]
		b := v.order[s.next]
		if err := s.r.Load(b, slot); err != nil {
			s.fail(err)
			return
		}
		s.free = s.free[:len(s.free)-1]
		s.q = append(s.q, issued{b, slot})
		s.next = (s.next + 1) % len(v.order)
	}
}

// fail records the first read error and serves every streamed block from
// the mapped file from now on.
func (s *DiskSource) fail(err error) {
	s.failed = true
	s.errMu.Lock()
	first := s.err == nil
	if first {
		s.err = err
	}
	s.errMu.Unlock()
	if first && s.onError != nil {
		s.onError(err)
	}
}

// Layer returns layer il's weights, waiting for a streamed block's read.
// LayerSource has no error path, so when a read fails the layer is served
// from the mapped file instead (correct, but through the page cache), the
// error is kept for Err and handed to onError, and every later pass does
// the same.
func (s *DiskSource) Layer(il int) *Layer {
	if !s.view.streamed[il] || s.failed {
		return &s.m.Blocks[il]
	}
	// The head of the queue is il unless a pass stopped halfway; loads
	// for blocks this pass has gone past are dropped.
	for len(s.q) > 0 && s.q[0].block != il {
		s.r.Wait(s.q[0].slot)
		s.free = append(s.free, s.q[0].slot)
		s.q = append(s.q[:0], s.q[1:]...)
	}
	if len(s.q) == 0 {
		if len(s.free) == 0 {
			s.fail(fmt.Errorf("model: layer %d asked for with every read slot in use", il))
			return &s.m.Blocks[il]
		}
		slot := s.free[len(s.free)-1]
		if err := s.r.Load(il, slot); err != nil {
			s.fail(err)
			return &s.m.Blocks[il]
		}
		s.free = s.free[:len(s.free)-1]
		s.q = append(s.q, issued{il, slot})
	}
	e := s.q[0]
	s.q = append(s.q[:0], s.q[1:]...)
	if err := s.r.Wait(e.slot); err != nil {
		s.free = append(s.free, e.slot)
		s.fail(err)
		return &s.m.Blocks[il]
	}
	s.held = append(s.held, e)
	return &s.layers[il][e.slot]
}

// Done releases layer il's slot and starts the next read in it.
func (s *DiskSource) Done(il int) {
	v := s.view
	if !v.streamed[il] || s.failed {
		return
	}
	for k, h := range s.held {
		if h.block == il {
			s.free = append(s.free, h.slot)
			s.held = append(s.held[:k], s.held[k+1:]...)
			break
		}
	}
	s.fill(v)
}

// End finishes a pass, giving back any slot a failed pass left in use.
func (s *DiskSource) End() {
	if len(s.view.order) > 0 {
		for _, h := range s.held {
			s.free = append(s.free, h.slot)
		}
		s.held = s.held[:0]
		s.mu.Unlock()
	}
	s.gate.Lock()
	s.running--
	if s.running == 0 {
		s.cond.Broadcast()
	}
	s.gate.Unlock()
}

// forLayers runs fn on each block in order, with the weights the model's
// layer source gives (read once: the whole pass uses one source), or the
// Blocks themselves without one; the first error stops it.
func (s *State) forLayers(fn func(il int, L *Layer) error) error {
	m := s.m
	lsrc := m.Source
	if lsrc != nil {
		lsrc.Begin()
		defer lsrc.End()
	}
	s.xs = m.ExpertSource
	defer func() { s.xs = nil }()
	for il := range m.Blocks {
		L := &m.Blocks[il]
		if lsrc != nil {
			L = lsrc.Layer(il)
		}
		if err := fn(il, L); err != nil {
			return err
		}
		if lsrc != nil {
			lsrc.Done(il)
		}
	}
	return nil
}
