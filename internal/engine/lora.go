package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/internal/snapshot"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/ollama"
)

// AdapterSpec is a LoRA adapter Load is asked to apply: its GGUF file and
// the scale it starts at.
type AdapterSpec struct {
	Path  string
	Scale float32
}

// Adapter is a LoRA adapter applied to the model: its file and its scale,
// which every session reads once per product.
type Adapter struct {
	Path  string
	Scale *ops.LoRAScale
	// sum is the file's snapshot.Fingerprint.
	sum [32]byte
}

// LoRAAdapter is an adapter applied, as llm.LoRAAdapter reports it.
type LoRAAdapter struct {
	ID    int     // its index among Load's adapters (Options.Adapters)
	Path  string  // its file
	Scale float32 // its scale now
}

// LoRAAdapters lists the adapters applied, in Options.Adapters' order.
func (e *Engine) LoRAAdapters() []LoRAAdapter {
	as := make([]LoRAAdapter, len(e.Adapters))
	for i, a := range e.Adapters {
		as[i] = LoRAAdapter{ID: i, Path: a.Path, Scale: a.Scale.Load()}
	}
	return as
}

// AddAdapter asks for the adapter at path at scale (a finite number).
func (s *Settings) AddAdapter(path string, scale float32) {
	if path == "" || math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) {
		s.Fail("LoRA adapter %q at scale %v: want a path and a finite scale", path, scale)
		return
	}
	s.Adapters = append(s.Adapters[:len(s.Adapters):len(s.Adapters)], AdapterSpec{path, scale})
}

// adapterFile is an adapter's open file and checked header.
type adapterFile struct {
	spec AdapterSpec
	fh   *os.File
	f    *gguf.File
	h    *model.AdapterHeader
}

// openAdapters opens and checks the headers of the adapters asked for and
// counts their memory into r (memplan.Request's AdapterBytes, AdapterRank
// and its rows). The caller closes the files (closeAdapters).
func openAdapters(specs []AdapterSpec, r *memplan.Request) ([]adapterFile, error) {
	var fs []adapterFile
	for _, sp := range specs {
		a, err := openAdapter(sp)
		if err != nil {
			closeAdapters(fs)
			return nil, fmt.Errorf("llm: LoRA adapter %s: %w", sp.Path, err)
		}
		fs = append(fs, a)
		r.AdapterBytes += a.h.Bytes
		r.AdapterRank = max(r.AdapterRank, a.h.Rank)
		// A session's scratch serves every adapter: its rows are the widest.
		r.AdapterXRowBytes = max(r.AdapterXRowBytes, a.h.XRowBytes)
		r.AdapterURowBytes = max(r.AdapterURowBytes, a.h.URowBytes)
	}
	return fs, nil
}

func openAdapter(sp AdapterSpec) (adapterFile, error) {
	fh, err := os.Open(sp.Path)
	if err != nil {
		return adapterFile{}, fmt.Errorf("%w: %w", err, seq.ErrInvalidOption)
	}
	st, err := fh.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file: %w", model.ErrBadAdapter)
	}
	var f *gguf.File
	if err == nil {
		f, err = gguf.Read(fh, st.Size())
		if errors.Is(err, gguf.ErrBadFile) {
			err = fmt.Errorf("%w: %w", err, model.ErrBadAdapter)
		}
	}
	var h *model.AdapterHeader
	if err == nil {
		h, err = model.ReadAdapterHeader(f)
	}
	if err != nil {
		fh.Close()
		return adapterFile{}, err
	}
	return adapterFile{spec: sp, fh: fh, f: f, h: h}, nil
}

func closeAdapters(fs []adapterFile) {
	for _, a := range fs {
		a.fh.Close()
	}
}

// attachAdapters reads the adapters' factors into mm's matrices.
func attachAdapters(mm *model.Model, f *gguf.File, fs []adapterFile) ([]Adapter, error) {
	var as []Adapter
	for _, a := range fs {
		sc := &ops.LoRAScale{}
		sc.Store(a.spec.Scale)
		if err := mm.AttachAdapter(f, a.f, a.h, a.fh, sc); err != nil {
			return nil, fmt.Errorf("llm: LoRA adapter %s: %w", a.spec.Path, err)
		}
		sum, err := snapshot.Fingerprint(a.fh, a.f)
		if err != nil {
			return nil, fmt.Errorf("llm: LoRA adapter %s: %w", a.spec.Path, err)
		}
		as = append(as, Adapter{Path: a.spec.Path, Scale: sc, sum: sum})
	}
	return as, nil
}

// SetAdapterScale sets adapter id's scale (its index among Load's
// adapters). It waits for the passes running to end, so that no pass
// mixes scales.
func (e *Engine) SetAdapterScale(id int, scale float32) error {
	if err := seq.CheckLoRAScale(id, len(e.Adapters), scale); err != nil {
		return err
	}
	e.rw.Lock()
	defer e.rw.Unlock()
	if e.closed {
		return seq.ErrClosed
	}
	e.Adapters[id].Scale.Store(scale)
	return nil
}

// ollamaAdapters puts the LoRA adapters of an "ollama:" model's manifest
// (its Modelfile's ADAPTER layers) before o's, at scale 1, as Ollama
// applies them.
func ollamaAdapters(path string, o *Options) error {
	blobs, err := ollama.Adapters(path)
	if err != nil {
		return fmt.Errorf("llm: load %s: %w", path, err)
	}
	if len(blobs) == 0 {
		return nil
	}
	specs := make([]AdapterSpec, 0, len(blobs)+len(o.Adapters))
	for _, b := range blobs {
		specs = append(specs, AdapterSpec{Path: b, Scale: 1})
	}
	o.Adapters = append(specs, o.Adapters...)
	return nil
}

// withAdapters is id with the adapters and their scales now (own's, when
// not nil) mixed into its fingerprint: a session saved under some adapters and scales is
// restored only under the same (snapshot.Read compares the sums).
func (e *Engine) withAdapters(id snapshot.Model, own []float32) snapshot.Model {
	if len(e.Adapters) == 0 {
		return id
	}
	h := sha256.New()
	h.Write(id.Sum[:])
	for i, a := range e.Adapters {
		sc := a.Scale.Load()
		if own != nil {
			sc = own[i]
		}
		h.Write(a.sum[:])
		h.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(sc)))
	}
	h.Sum(id.Sum[:0])
	return id
}
