package model

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
)

// ErrBadAdapter is wrapped by every refusal of a LoRA adapter file that
// does not fit the model or is malformed: wrong general.type or
// adapter.type, another architecture, a tensor the model does not have,
// a lora_a without its lora_b, shapes that do not match.
var ErrBadAdapter = errors.New("bad LoRA adapter")

// Adapter suffixes and keys, as llama.cpp's convert_lora_to_gguf.py
// writes them and llama-adapter.cpp reads them.
const (
	loraA          = ".lora_a"
	loraB          = ".lora_b"
	keyAdapterType = "adapter.type"
	keyLoRAAlpha   = "adapter.lora.alpha"
	keyALoRA       = "adapter.alora.invocation_tokens"
	embedTensor    = "token_embd.weight"
	typesTensor    = "token_types.weight"
)

// AdapterHeader is what an adapter file's header says, checked on its
// own (Adapter.Check checks it against a model).
type AdapterHeader struct {
	Alpha float32 // adapter.lora.alpha; 0: the scale is not divided by the rank
	// Pairs are the adapted tensors, in the file's order.
	Pairs []AdapterPair
	// Bytes is the memory the adapter takes once loaded: every lora_a and
	// lora_b in the type ops.LoRAType holds it in (its file's, or
	// float32 for a type quant does not multiply).
	Bytes int64
	// Rank is the widest rank of its pairs.
	Rank int
	// XRowBytes and URowBytes are the widest row of a token's activations
	// converted for a lora_a, and of its rank-wide products converted for
	// a lora_b (ops.LoRARowBytes, ops.NewLoRAScratch).
	XRowBytes, URowBytes int
}

// AdapterPair is one adapted tensor's lora_a and lora_b.
type AdapterPair struct {
	Name string // the model tensor, e.g. "blk.0.attn_q.weight"
	A, B *gguf.TensorInfo
}

// ReadAdapterHeader checks an adapter file's header as llama.cpp's
// llama_adapter_lora_init does before it looks at the model: general.type
// "adapter", adapter.type "lora", a finite alpha, every tensor a lora_a or
// lora_b (llama.cpp skips "…_norm.weight" tensors, and so does this) and
// every lora_a with its lora_b. aLoRA adapters (adapter.alora.*), which
// apply only after their invocation tokens, are refused with
// ErrUnsupportedArch. The architecture is checked by CheckAdapter.
func ReadAdapterHeader(f *gguf.File) (*AdapterHeader, error) {
	if t, _ := f.String("general.type"); t != "adapter" {
		return nil, fmt.Errorf("model: general.type is %q, want \"adapter\": %w", t, ErrBadAdapter)
	}
	if t, _ := f.String(keyAdapterType); t != "lora" {
		return nil, fmt.Errorf("model: %s is %q, want \"lora\": %w", keyAdapterType, t, ErrBadAdapter)
	}
	for _, kv := range f.KV {
		if strings.HasPrefix(kv.Key, "adapter.alora.") {
			return nil, fmt.Errorf("model: %s: activated LoRA (aLoRA) adapters are not supported: %w", kv.Key, ErrUnsupportedArch)
		}
	}
	h := &AdapterHeader{}
	if _, ok := f.Get(keyLoRAAlpha); ok {
		a, ok := f.Float(keyLoRAAlpha)
		if !ok || math.IsNaN(a) || math.IsInf(a, 0) || math.Abs(a) > math.MaxFloat32 {
			return nil, fmt.Errorf("model: %s is not a finite float: %w", keyLoRAAlpha, ErrBadAdapter)
		}
		h.Alpha = float32(a)
	}
	index := map[string]int{}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		var base string
		var isA bool
		switch {
		case strings.HasSuffix(ti.Name, loraA):
			base, isA = strings.TrimSuffix(ti.Name, loraA), true
		case strings.HasSuffix(ti.Name, loraB):
			base = strings.TrimSuffix(ti.Name, loraB)
		case strings.HasSuffix(ti.Name, "_norm.weight"):
			continue // llama.cpp leaves norms out too
		default:
			return nil, fmt.Errorf("model: adapter tensor %q is neither a %s nor a %s: %w", ti.Name, loraA, loraB, ErrBadAdapter)
		}
		j, ok := index[base]
		if !ok {
			j = len(h.Pairs)
			index[base] = j
			h.Pairs = append(h.Pairs, AdapterPair{Name: base})
		}
		p := &h.Pairs[j]
		if isA {
			p.A = ti
		} else {
			p.B = ti
		}
	}
	for _, p := range h.Pairs {
		if p.A == nil || p.B == nil {
			return nil, fmt.Errorf("model: adapter tensor pair for %q is missing its %s or %s: %w", p.Name, loraA, loraB, ErrBadAdapter)
		}
		for _, t := range [2]*gguf.TensorInfo{p.A, p.B} {
			if len(t.Dims) < 2 || len(t.Dims) > 3 || slices.Contains(t.Dims, 0) {
				return nil, fmt.Errorf("model: adapter tensor %q has shape %v, want 2 dimensions (3: experts), none 0: %w", t.Name, t.Dims, ErrBadAdapter)
			}
		}
		// lora_b's first dimension is the rank in both layouts (a matrix's,
		// and token_embd's, where lora_a is stored the other way round).
		rank := p.B.Dims[0]
		if rank > math.MaxInt32 {
			return nil, fmt.Errorf("model: adapter tensor %q: rank %d: %w", p.B.Name, rank, ErrBadAdapter)
		}
		h.Rank = max(h.Rank, int(rank))
		h.Bytes += heldBytes(p.A) + heldBytes(p.B)
		if p.Name != embedTensor { // token_embd's lora_a is rows to pick, not to multiply
			h.XRowBytes = max(h.XRowBytes, ops.LoRARowBytes(p.A.Type, p.A.Dims[0]))
		}
		h.URowBytes = max(h.URowBytes, ops.LoRARowBytes(p.B.Type, rank))
	}
	if len(h.Pairs) == 0 {
		return nil, fmt.Errorf("model: the adapter has no lora_a/lora_b tensors: %w", ErrBadAdapter)
	}
	return h, nil
}

// matrixIndex maps the names of the model's matrices an adapter may
// correct to them: every block's dense matrices, the untied output and
// Gemma 3n's projections. The experts are not among them.
func (m *Model) matrixIndex() map[string]*ops.Matrix {
	ix := map[string]*ops.Matrix{}
	add := func(w *ops.Matrix) {
		if w != nil && w.T != nil {
			ix[w.T.Name] = w
		}
	}
	if !m.Tied {
		add(m.Output)
	}
	add(m.PerLayerProj)
	for _, w := range m.AltUpProj {
		add(w)
	}
	for _, w := range m.AltUpUnembd {
		add(w)
	}
	for il := range m.Blocks {
		for _, p := range m.Blocks[il].matrices() {
			add(*p)
		}
	}
	// A matrix made at load (an older deepseek2's attn_k_b, cut from
	// attn_kv_b) multiplies by bands its pass arranges itself.
	for il := range m.Blocks {
		L := &m.Blocks[il]
		for _, w := range [2]*ops.Matrix{L.WkB, L.WvB} {
			if w != nil && w.T != nil {
				delete(ix, w.T.Name)
			}
		}
	}
	return ix
}

// AttachAdapter reads the adapter of header h from r (the file f
// describes) and adds its corrections to the model's matrices, each
// scaled by scale (whose value may change later) times alpha/rank, as
// llama.cpp does. file is the model's GGUF header, to tell a tensor the
// model does not have (ErrBadAdapter, as llama.cpp refuses it) from one
// this library cannot adapt (the experts of a mixture-of-experts block,
// deepseek2's attn_k_b/attn_v_b, norms and other vectors:
// ErrUnsupportedArch). Nothing is attached unless everything checks: the
// architecture, each pair's shapes (llama.cpp's: lora_a's first dimension
// is the matrix's input width, lora_b's second its rows, lora_a's second
// and lora_b's first the rank; token_embd's lora_a is [rank, vocabulary],
// its lora_b [rank, embedding]) and types. Call it before any State is
// made and before the model's blocks are read from disk (its corrections
// belong to the matrices' headers, which streaming copies).
func (m *Model) AttachAdapter(file, f *gguf.File, h *AdapterHeader, r io.ReaderAt, scale *ops.LoRAScale) error {
	if a := f.Arch(); a != m.Arch {
		return fmt.Errorf("model: the adapter's general.architecture is %q, the model's %q: %w", a, m.Arch, ErrBadAdapter)
	}
	ix := m.matrixIndex()
	type pending struct {
		w    *ops.Matrix // nil: token_embd
		l    *ops.LoRA
		a, b *gguf.TensorInfo
	}
	ps := make([]pending, 0, len(h.Pairs))
	for _, p := range h.Pairs {
		a, b := p.A, p.B
		rank := b.Dims[0]
		var w *ops.Matrix
		switch {
		case p.Name == embedTensor && len(a.Dims) == 2 && len(b.Dims) == 2:
			if b.Dims[1] != int64(m.Embd) || a.Dims[1] != int64(m.Vocab) || a.Dims[0] != rank {
				return fmt.Errorf("model: adapter tensor %q: lora_a %v and lora_b %v, want [rank %d] and [rank %d]: %w",
					p.Name, a.Dims, b.Dims, m.Vocab, m.Embd, ErrBadAdapter)
			}
		case ix[p.Name] != nil && twoDims(file, p.Name) && len(a.Dims) == 2 && len(b.Dims) == 2:
			w = ix[p.Name]
			if a.Dims[0] != int64(w.Cols) || b.Dims[1] != int64(w.Rows) {
				return fmt.Errorf("model: adapter tensor %q: lora_a %v and lora_b %v do not fit the matrix's %d columns and %d rows (the wrong base model?): %w",
					p.Name, a.Dims, b.Dims, w.Cols, w.Rows, ErrBadAdapter)
			}
			if a.Dims[1] != rank {
				return fmt.Errorf("model: adapter tensor %q: lora_a %v is not transposed against lora_b %v (an adapter of llama.cpp's old finetune example): %w",
					p.Name, a.Dims, b.Dims, ErrBadAdapter)
			}
		case p.Name == typesTensor && len(a.Dims) == 2 && len(b.Dims) == 2:
			// jina-embeddings-v3's task adapters hold one; llama.cpp loads
			// it and its graph adds token_types' row 0 as it is, so it is
			// checked as llama.cpp checks a pair and then passed over.
			t, ok := file.Tensor(p.Name)
			if !ok || len(t.Dims) != 2 || a.Dims[0] != t.Dims[0] || b.Dims[1] != t.Dims[1] || a.Dims[1] != rank {
				return fmt.Errorf("model: adapter tensor %q: lora_a %v and lora_b %v do not fit the model's token_types (the wrong base model?): %w",
					p.Name, a.Dims, b.Dims, ErrBadAdapter)
			}
			continue
		default:
			if _, ok := file.Tensor(p.Name); ok {
				if (ix[p.Name] != nil && twoDims(file, p.Name)) || p.Name == embedTensor {
					return fmt.Errorf("model: adapter tensor %q: lora_a %v and lora_b %v: want 2 dimensions each: %w", p.Name, a.Dims, b.Dims, ErrBadAdapter)
				}
				return fmt.Errorf("model: adapter tensor %q: this library applies adapters to dense matrices and token_embd only (not to experts, deepseek2's attn_k_b/attn_v_b or vectors): %w", p.Name, ErrUnsupportedArch)
			}
			if _, ok := file.Tensor(fusedQKVName(p.Name)); ok {
				return fmt.Errorf("model: adapter tensor %q does not exist in the model, whose query, key and value projections are fused in %q (llama.cpp refuses it too; adapt that one): %w",
					p.Name, fusedQKVName(p.Name), ErrBadAdapter)
			}
			return fmt.Errorf("model: adapter tensor %q does not exist in the model (the wrong base model?): %w", p.Name, ErrBadAdapter)
		}
		ps = append(ps, pending{w: w, a: a, b: b, l: &ops.LoRA{Rank: int(rank), Factor: loraFactor(h.Alpha, rank), Scale: scale, ID: m.Adapters}})
	}
	for i := range ps {
		p := &ps[i]
		var err error
		if p.l.A, err = readFactor(r, p.a); err != nil {
			return err
		}
		if p.l.B, err = readFactor(r, p.b); err != nil {
			return err
		}
	}
	for _, p := range ps {
		if p.w == nil {
			p.l.Next, m.EmbedLoRA = m.EmbedLoRA, p.l
		} else {
			p.l.Next, p.w.LoRA = p.w.LoRA, p.l
		}
	}
	m.LoRARank = max(m.LoRARank, h.Rank)
	m.loraXRow, m.loraURow = max(m.loraXRow, h.XRowBytes), max(m.loraURow, h.URowBytes)
	m.Adapters++
	m.adapterScales = append(m.adapterScales, scale)
	return nil
}

// SetLoRAScales gives the state scales of its own for the model's
// adapters, scales[i] for adapter i (Model.Adapters of them), or takes
// the adapters' own again (nil). It reports whether the scales the state
// computes with changed, after which what its cache holds was computed
// with others. It copies scales.
func (s *State) SetLoRAScales(scales []float32) (changed bool, err error) {
	if scales != nil && len(scales) != len(s.loraBuf) {
		return false, fmt.Errorf("model: %d LoRA scales for %d adapters: %w", len(scales), len(s.loraBuf), ErrBadAdapter)
	}
	cur := s.effectiveScales()
	if scales == nil {
		s.loraScales = nil
	} else {
		copy(s.loraBuf, scales)
		s.loraScales = s.loraBuf
	}
	return !slices.Equal(cur, s.effectiveScales()), nil
}

// LoRAScales are the state's own scales (nil: the adapters').
func (s *State) LoRAScales() []float32 { return s.loraScales }

// effectiveScales are the scales the state computes with now.
func (s *State) effectiveScales() []float32 {
	out := make([]float32, len(s.loraBuf))
	if s.loraScales != nil {
		copy(out, s.loraScales)
		return out
	}
	for i, sc := range s.m.adapterScales {
		out[i] = sc.Load()
	}
	return out
}

// twoDims reports whether the model's tensor name is a plain matrix,
// not a stack of experts' matrices viewed as one.
func twoDims(file *gguf.File, name string) bool {
	ti, ok := file.Tensor(name)
	return ok && len(ti.Dims) == 2
}

// loraFactor is llama.cpp's get_scale without the user's scale: alpha
// over the rank, or 1 without alpha.
func loraFactor(alpha float32, rank int64) float32 {
	if alpha == 0 {
		return 1
	}
	return alpha / float32(rank)
}

// AdapterScratchBytes is the memory a State takes for the adapters'
// products at batch tokens per pass: rank their widest rank, xRow and
// uRow the widest of their headers' XRowBytes and URowBytes.
func AdapterScratchBytes(batch, rank, xRow, uRow int) int64 {
	return int64(ops.LoRAScratchBytes(batch, rank, xRow, uRow))
}

// heldBytes is the memory factor t takes once loaded (ops.LoRAType).
func heldBytes(t *gguf.TensorInfo) int64 {
	if ops.LoRAType(t.Type) == t.Type {
		return t.Size
	}
	return 4 * t.Elems()
}

// readFactor reads tensor t from r as a LoRA factor (ops.NewLoRAFactor).
func readFactor(r io.ReaderAt, t *gguf.TensorInfo) (*ops.Matrix, error) {
	cols, rows := t.Dims[0], t.Dims[1]
	rb, err := t.Type.RowBytes(cols)
	if err != nil || rb <= 0 || rows > t.Size/rb || rb*rows != t.Size {
		return nil, fmt.Errorf("model: adapter tensor %q: type %v of %d columns: %w", t.Name, t.Type, cols, errors.Join(err, ErrBadAdapter))
	}
	buf := make([]byte, t.Size)
	if _, err := r.ReadAt(buf, t.Offset); err != nil {
		return nil, fmt.Errorf("model: adapter tensor %q: %w", t.Name, err)
	}
	f, err := ops.NewLoRAFactor(t.Name, t.Type, int(cols), int(rows), buf)
	if err != nil {
		return nil, fmt.Errorf("model: adapter tensor: %w: %w", err, ErrBadAdapter)
	}
	return f, nil
}

// fusedQKVName is the attn_qkv that --fuse-qkv makes of name when name is
// a block's attn_q, attn_k or attn_v, else "".
func fusedQKVName(name string) string {
	for _, proj := range []string{"attn_q.weight", "attn_k.weight", "attn_v.weight"} {
		if p, ok := strings.CutSuffix(name, "."+proj); ok {
			return p + ".attn_qkv.weight"
		}
	}
	return ""
}
