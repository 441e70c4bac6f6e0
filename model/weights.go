package model

import (
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/tensor"
)

// Layer holds one transformer block's weights. Matrices are views into the
// mapped file; norm weights and biases are small and copied to float32.
type Layer struct {
	AttnNorm     []float32
	Wq, Wk, Wv   *ops.Matrix
	Wo           *ops.Matrix
	Bq, Bk, Bv   []float32 // qwen2
	PostAttnNorm []float32 // gemma2
	FFNNorm      []float32
	Gate, Up     *ops.Matrix
	Down         *ops.Matrix
	PostFFNNorm  []float32 // gemma2

	// Start and End bound the layer's tensor bytes in the file, for
	// residency advice and streaming.
	Start, End int64
}

// Model is an architecture's configuration plus its weights. It is
// immutable after New and safe to share between goroutines.
type Model struct {
	Config
	Embed     *tensor.Tensor // token_embd, rows are tokens
	OutNorm   []float32
	Output    *ops.Matrix // output, or token_embd when tied
	RopeFreqs []float32   // Llama 3.1 rope_freqs, or nil
	Blocks    []Layer     // one per transformer block
	Tied      bool

	// Source, when set, supplies each block's weights during a forward pass
	// (streaming weights from disk); nil uses Blocks, read in place from the
	// mapped file.
	Source LayerSource
}

// LayerSource supplies layer weights to forward passes, for weights that
// are not all resident. A Model calls Begin before the first layer of a
// pass, Layer(il) for each block in order (it may block until the weights
// are readable), Done(il) when the block is finished, and End after the
// last; passes of different sessions never interleave between Begin and End.
type LayerSource interface {
	Begin()
	Layer(il int) *Layer
	Done(il int)
	End()
}

type loader struct {
	f    *gguf.File
	data []byte
	used map[string]bool
}

func (l *loader) tensor(name string, shape ...int) (*tensor.Tensor, error) {
	ti, ok := l.f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("model: tensor %q missing: %w", name, ErrBadModel)
	}
	if len(ti.Dims) != len(shape) {
		return nil, fmt.Errorf("model: tensor %q has shape %v, want %v: %w", name, ti.Dims, shape, ErrBadModel)
	}
	for i, d := range ti.Dims {
		if d != int64(shape[i]) {
			return nil, fmt.Errorf("model: tensor %q has shape %v, want %v: %w", name, ti.Dims, shape, ErrBadModel)
		}
	}
	if !ti.Type.Supported() {
		return nil, fmt.Errorf("model: tensor %q has type %v, which this library cannot compute with: %w", name, ti.Type, quant.ErrUnsupportedType)
	}
	if ti.Offset < 0 || ti.Size < 0 || ti.Offset+ti.Size > int64(len(l.data)) {
		return nil, fmt.Errorf("model: tensor %q: data [%d, %d) past end of file (%d bytes): %w", name, ti.Offset, ti.Offset+ti.Size, len(l.data), ErrBadModel)
	}
	l.used[name] = true
	t, err := tensor.View(name, ti.Type, shape, l.data[ti.Offset:ti.Offset+ti.Size:ti.Offset+ti.Size])
	if err != nil {
		return nil, fmt.Errorf("model: %w: %w", err, ErrBadModel)
	}
	return t, nil
}

func (l *loader) matrix(name string, cols, rows int) (*ops.Matrix, error) {
	t, err := l.tensor(name, cols, rows)
	if err != nil {
		return nil, err
	}
	return ops.NewMatrix(t)
}

// vector reads a 1-D tensor of n elements as float32 (copied).
func (l *loader) vector(name string, n int) ([]float32, error) {
	t, err := l.tensor(name, n)
	if err != nil {
		return nil, err
	}
	out := make([]float32, n)
	if err := quant.Dequantize(t.Type, out, t.Data); err != nil {
		return nil, fmt.Errorf("model: tensor %q: %w", name, err)
	}
	return out, nil
}

func (l *loader) has(name string) bool {
	_, ok := l.f.Tensor(name)
	return ok
}

// New builds a Model from a parsed GGUF file and the bytes of the whole
// file (usually a read-only mapping). Weight matrices are views into data;
// nothing large is copied.
func New(f *gguf.File, data []byte) (*Model, error) {
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	l := &loader{f: f, data: data, used: map[string]bool{}}
	m := &Model{Config: cfg}

	embd, ok := f.Tensor("token_embd.weight")
	if !ok {
		return nil, fmt.Errorf("model: tensor %q missing: %w", "token_embd.weight", ErrBadModel)
	}
	if len(embd.Dims) != 2 || embd.Dims[1] <= 0 || embd.Dims[1] > 1<<24 {
		return nil, fmt.Errorf("model: token_embd.weight has shape %v: %w", embd.Dims, ErrBadModel)
	}
	m.Vocab = int(embd.Dims[1])
	if m.Embed, err = l.tensor("token_embd.weight", cfg.Embd, m.Vocab); err != nil {
		return nil, err
	}
	if m.OutNorm, err = l.vector("output_norm.weight", cfg.Embd); err != nil {
		return nil, err
	}
	if l.has("output.weight") {
		m.Output, err = l.matrix("output.weight", cfg.Embd, m.Vocab)
	} else {
		m.Tied = true
		m.Output, err = ops.NewMatrix(m.Embed)
	}
	if err != nil {
		return nil, err
	}
	if l.has("rope_freqs.weight") {
		if m.RopeFreqs, err = l.vector("rope_freqs.weight", cfg.RopeDim/2); err != nil {
			return nil, err
		}
	}

	qDim, kDim, vDim := cfg.Heads*cfg.HeadDimK, cfg.HeadsKV*cfg.HeadDimK, cfg.HeadsKV*cfg.HeadDimV
	m.Blocks = make([]Layer, cfg.Layers)
	for i := range m.Blocks {
		p := fmt.Sprintf("blk.%d.", i)
		L := &m.Blocks[i]
		steps := []func() error{
			func() (e error) { L.AttnNorm, e = l.vector(p+"attn_norm.weight", cfg.Embd); return },
			func() (e error) { L.Wq, e = l.matrix(p+"attn_q.weight", cfg.Embd, qDim); return },
			func() (e error) { L.Wk, e = l.matrix(p+"attn_k.weight", cfg.Embd, kDim); return },
			func() (e error) { L.Wv, e = l.matrix(p+"attn_v.weight", cfg.Embd, vDim); return },
			func() (e error) { L.Wo, e = l.matrix(p+"attn_output.weight", cfg.Heads*cfg.HeadDimV, cfg.Embd); return },
			func() (e error) { L.FFNNorm, e = l.vector(p+"ffn_norm.weight", cfg.Embd); return },
			func() (e error) { L.Gate, e = l.matrix(p+"ffn_gate.weight", cfg.Embd, cfg.FFN); return },
			func() (e error) { L.Up, e = l.matrix(p+"ffn_up.weight", cfg.Embd, cfg.FFN); return },
			func() (e error) { L.Down, e = l.matrix(p+"ffn_down.weight", cfg.FFN, cfg.Embd); return },
		}
		if cfg.QKVBias {
			steps = append(steps,
				func() (e error) { L.Bq, e = l.vector(p+"attn_q.bias", qDim); return },
				func() (e error) { L.Bk, e = l.vector(p+"attn_k.bias", kDim); return },
				func() (e error) { L.Bv, e = l.vector(p+"attn_v.bias", vDim); return },
			)
		}
		if cfg.PostNorms {
			steps = append(steps,
				func() (e error) { L.PostAttnNorm, e = l.vector(p+"post_attention_norm.weight", cfg.Embd); return },
				func() (e error) { L.PostFFNNorm, e = l.vector(p+"post_ffw_norm.weight", cfg.Embd); return },
			)
		}
		for _, s := range steps {
			if err := s(); err != nil {
				if l.has(p + "ffn_gate_inp.weight") {
					return nil, fmt.Errorf("model: layer %d is mixture-of-experts, which is not supported: %w", i, ErrUnsupportedArch)
				}
				return nil, err
			}
		}
		L.Start, L.End = layerRange(f, p)
	}
	return m, nil
}

// layerRange returns the smallest byte range covering every tensor whose
// name starts with prefix.
func layerRange(f *gguf.File, prefix string) (start, end int64) {
	start = -1
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if len(t.Name) < len(prefix) || t.Name[:len(prefix)] != prefix {
			continue
		}
		if start < 0 || t.Offset < start {
			start = t.Offset
		}
		end = max(end, t.Offset+t.Size)
	}
	return max(start, 0), end
}

// WeightBytes is the total size of every tensor in the file.
func WeightBytes(f *gguf.File) int64 {
	var n int64
	for _, t := range f.Tensors {
		n += t.Size
	}
	return n
}
