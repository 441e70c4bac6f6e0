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

	maxX int // widest quantized activation row (see maxXRowBytes)
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
	// dry checks every tensor's presence, shape and type without making
	// views: tensor, matrix and vector return nil values.
	dry bool
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
	if l.dry {
		l.used[name] = true
		return nil, nil
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
	if err != nil || l.dry {
		if err == nil {
			err = l.checkMatrixType(name)
		}
		return nil, err
	}
	return ops.NewMatrix(t)
}

// checkMatrixType is the type check ops.NewMatrix makes, for a dry run:
// the type must have a dot product and a tile kernel on this CPU.
func (l *loader) checkMatrixType(name string) error {
	ti, _ := l.f.Tensor(name)
	if _, err := quant.Dot(ti.Type); err != nil {
		return fmt.Errorf("model: tensor %q: %w", name, err)
	}
	if tile, _, _ := quant.Tile(ti.Type); tile == nil {
		return fmt.Errorf("model: tensor %q: no matrix kernel for %v: %w", name, ti.Type, quant.ErrUnsupportedType)
	}
	return nil
}

// vector reads a 1-D tensor of n elements as float32 (copied).
func (l *loader) vector(name string, n int) ([]float32, error) {
	t, err := l.tensor(name, n)
	if err != nil || l.dry {
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
	return build(f, data, false)
}

// Check makes every check New makes — configuration, and the presence,
// shape and type of every tensor — from the file's header alone, without
// tensor data. A memory plan calls it so that a model New would refuse is
// refused before anything is sized from its metadata.
func Check(f *gguf.File) (Config, error) {
	m, err := build(f, nil, true)
	if err != nil {
		return Config{}, err
	}
	return m.Config, nil
}

func build(f *gguf.File, data []byte, dry bool) (*Model, error) {
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	l := &loader{f: f, data: data, used: map[string]bool{}, dry: dry}
	m := &Model{Config: cfg}

	embd, ok := f.Tensor("token_embd.weight")
	if !ok {
		return nil, fmt.Errorf("model: tensor %q missing: %w", "token_embd.weight", ErrBadModel)
	}
	if len(embd.Dims) != 2 || embd.Dims[1] <= 0 || embd.Dims[1] > 1<<24 {
		return nil, fmt.Errorf("model: token_embd.weight has shape %v, want [%d vocabulary]: %w", embd.Dims, cfg.Embd, ErrBadModel)
	}
	m.Vocab = int(embd.Dims[1])
	if m.Embed, err = l.tensor("token_embd.weight", cfg.Embd, m.Vocab); err != nil {
		return nil, err
	}
	if m.OutNorm, err = l.vector("output_norm.weight", cfg.Embd); err != nil {
		return nil, err
	}
	switch {
	case l.has("output.weight"):
		m.Output, err = l.matrix("output.weight", cfg.Embd, m.Vocab)
	case dry:
		m.Tied = true
		err = l.checkMatrixType("token_embd.weight")
	default:
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

	// Every block has several tensors, so a block count above the number
	// of tensors is a lie; refusing it here keeps Blocks from being sized
	// by it.
	if cfg.Layers > len(f.Tensors) {
		return nil, fmt.Errorf("model: %s.block_count = %d, but the file has only %d tensors: %w", cfg.Arch, cfg.Layers, len(f.Tensors), ErrBadModel)
	}
	qDim, kDim, vDim := cfg.Heads*cfg.HeadDimK, cfg.HeadsKV*cfg.HeadDimK, cfg.HeadsKV*cfg.HeadDimV
	m.Blocks = make([]Layer, cfg.Layers)
	var ranges [][2]int64
	if !dry {
		ranges = layerRanges(f, cfg.Layers)
	}
	for i := range m.Blocks {
		p := fmt.Sprintf("blk.%d.", i)
		if l.has(p + "ffn_gate_inp.weight") {
			return nil, fmt.Errorf("model: tensor %q: layer %d is mixture-of-experts, which is not supported: %w", p+"ffn_gate_inp.weight", i, ErrUnsupportedArch)
		}
		if !l.has(p+"attn_norm.weight") && !l.has(p+"attn_q.weight") && !l.has(p+"ffn_down.weight") {
			return nil, fmt.Errorf("model: %s.block_count = %d, but the file has no tensors for layer %d (%s*): %w", cfg.Arch, cfg.Layers, i, p, ErrBadModel)
		}
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
				return nil, err
			}
		}
		if !dry {
			L.Start, L.End = ranges[i][0], ranges[i][1]
		}
	}
	// Check builds without data, and so without matrices.
	for _, L := range m.Blocks {
		for _, w := range []*ops.Matrix{L.Wq, L.Wk, L.Wv, L.Wo, L.Gate, L.Up, L.Down} {
			if w != nil {
				m.maxX = max(m.maxX, w.XRowBytes)
			}
		}
	}
	if m.Output != nil {
		m.maxX = max(m.maxX, m.Output.XRowBytes)
	}
	return m, nil
}

// layerRanges returns, for each of n blocks, the smallest byte range
// covering every tensor named "blk.<i>.*", in one pass over the tensors
// (a file may hold very many).
func layerRanges(f *gguf.File, n int) [][2]int64 {
	r := make([][2]int64, n)
	for i := range r {
		r[i][0] = -1
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		il, ok := blockIndex(t.Name)
		if !ok || il >= n {
			continue
		}
		if r[il][0] < 0 || t.Offset < r[il][0] {
			r[il][0] = t.Offset
		}
		r[il][1] = max(r[il][1], t.Offset+t.Size)
	}
	for i := range r {
		r[i][0] = max(r[i][0], 0)
	}
	return r
}

// blockIndex parses the block number of a tensor named "blk.<i>.<rest>".
func blockIndex(name string) (int, bool) {
	const prefix = "blk."
	if len(name) <= len(prefix) || name[:len(prefix)] != prefix {
		return 0, false
	}
	il := 0
	for k := len(prefix); k < len(name); k++ {
		c := name[k]
		switch {
		case c == '.' && k > len(prefix):
			return il, true
		case c < '0' || c > '9' || il > maxCount:
			return 0, false
		}
		il = il*10 + int(c-'0')
	}
	return 0, false
}

// WeightBytes is the total size of every tensor in the file.
func WeightBytes(f *gguf.File) int64 {
	var n int64
	for _, t := range f.Tensors {
		n += t.Size
	}
	return n
}
