package model

import (
	"fmt"
	"sync"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/tensor"
)

// SlotReader delivers byte ranges of the model file into a few reusable
// buffers (slots), in a fixed cyclic order. mem.RangeReader implements it;
// range i of the reader is the i-th streamed layer's [Start, End).
type SlotReader interface {
	// Slots is the number of buffers.
	Slots() int
	// View is where range i lies in slot's buffer, whether or not it is
	// loaded there now.
	View(i, slot int) []byte
	// Acquire waits until range i is loaded and returns its bytes and slot.
	Acquire(i int) ([]byte, int, error)
	// Release gives back the slot holding range i.
	Release(i int)
}

// StreamSource is a LayerSource for weights that do not all fit in memory:
// resident layers are served from Blocks (the mapped file), streamed layers
// from a SlotReader that reads them from disk ahead of use.
//
// For every streamed layer and every slot a Layer is built once, its
// matrices viewing the slot's buffer at the layer's tensor offsets, so
// serving a layer during a forward pass is a lookup. Norm weights and
// biases are shared with Blocks (heap copies).
type StreamSource struct {
	m      *Model
	r      SlotReader
	index  []int     // per layer: its range in r, or -1 if resident
	layers [][]Layer // [range][slot]

	mu   sync.Mutex // held from Begin to End
	held []int      // ranges acquired and not yet Done

	errMu   sync.Mutex
	err     error
	failed  bool // err != nil, read without errMu inside a pass
	onError func(error)
}

// NewStreamSource serves the layers listed in streamed (ascending block
// indices) through r, whose range i must be exactly the bytes
// [Blocks[streamed[i]].Start, End) of the file f describes; every other
// layer is served from m.Blocks. onError, if not nil, is called once with
// the first read error (see Layer), during a forward pass: it must not
// start another.
func NewStreamSource(m *Model, f *gguf.File, streamed []int, r SlotReader, onError func(error)) (*StreamSource, error) {
	s := &StreamSource{m: m, r: r, index: make([]int, len(m.Blocks)), layers: make([][]Layer, len(streamed)),
		held: make([]int, 0, r.Slots()), onError: onError}
	for il := range s.index {
		s.index[il] = -1
	}
	for i, il := range streamed {
		if il < 0 || il >= len(m.Blocks) || s.index[il] >= 0 {
			return nil, fmt.Errorf("model: streamed layer %d: out of range or listed twice", il)
		}
		s.index[il] = i
		src := &m.Blocks[il]
		s.layers[i] = make([]Layer, r.Slots())
		for slot := range s.layers[i] {
			buf := r.View(i, slot)
			if int64(len(buf)) != src.End-src.Start {
				return nil, fmt.Errorf("model: streamed layer %d: range %d holds %d bytes, the layer %d", il, i, len(buf), src.End-src.Start)
			}
			L, err := viewLayer(f, src, buf)
			if err != nil {
				return nil, fmt.Errorf("model: streamed layer %d: %w", il, err)
			}
			s.layers[i][slot] = L
		}
	}
	return s, nil
}

// viewLayer is a copy of src whose matrices, experts included, view buf,
// which holds the file bytes [src.Start, src.End). Vectors are shared.
func viewLayer(f *gguf.File, src *Layer, buf []byte) (Layer, error) {
	L := *src
	for _, p := range []**ops.Matrix{&L.Wq, &L.Wk, &L.Wv, &L.Wqkv, &L.Wo, &L.Gate, &L.Up, &L.GateUp, &L.Down, &L.Router} {
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
	m := *w
	m.T = t
	return &m, nil
}

// Streamed reports whether layer il is read through the SlotReader.
func (s *StreamSource) Streamed(il int) bool { return s.index[il] >= 0 }

// Err is the first read error, after which streamed layers are served
// from the mapped file (see Layer).
func (s *StreamSource) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Begin starts a forward pass; passes of concurrent sessions wait for each
// other here, since they share the slots.
func (s *StreamSource) Begin() { s.mu.Lock() }

// Layer returns layer il's weights, waiting for a streamed layer to be
// read. LayerSource has no error path, so when a read fails the layer is
// served from the mapped file instead (correct, but through the page
// cache), the error is kept for Err and handed to onError, and every later
// pass does the same.
func (s *StreamSource) Layer(il int) *Layer {
	i := s.index[il]
	if i < 0 || s.failed {
		return &s.m.Blocks[il]
	}
	_, slot, err := s.r.Acquire(i)
	if err != nil {
		s.failed = true
		s.errMu.Lock()
		s.err = err
		s.errMu.Unlock()
		if s.onError != nil {
			s.onError(err)
		}
		return &s.m.Blocks[il]
	}
	s.held = append(s.held, i)
	return &s.layers[i][slot]
}

// Done releases layer il's slot for the reads ahead.
func (s *StreamSource) Done(il int) {
	i := s.index[il]
	if i < 0 {
		return
	}
	for k, h := range s.held {
		if h == i {
			s.r.Release(i)
			s.held = append(s.held[:k], s.held[k+1:]...)
			return
		}
	}
}

// End finishes a pass, releasing any layer a failed pass left acquired.
func (s *StreamSource) End() {
	for _, i := range s.held {
		s.r.Release(i)
	}
	s.held = s.held[:0]
	s.mu.Unlock()
}
