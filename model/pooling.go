package model

import (
	"fmt"

	"github.com/lowmem/llm/internal/enum"
	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/tensor"
)

// Pooling is how an embedding is made of a text's hidden states (the
// output of the final norm, one vector a token), numbered as llama.cpp's
// llama_pooling_type and read from the file's "<arch>.pooling_type".
type Pooling uint8

// Pooling types.
const (
	PoolingNone Pooling = iota // no pooling: the file names none (a generative model)
	PoolingMean                // the mean of every token's vector
	PoolingCLS                 // the first token's vector
	PoolingLast                // the last token's vector (Qwen3-Embedding and other decoder embedders)
	PoolingRank                // a reranker's classification head (RankHead) over the first token (Qwen3: the last)
)

var poolingNames = [...]string{PoolingNone: "none", PoolingMean: "mean", PoolingCLS: "cls", PoolingLast: "last", PoolingRank: "rank"}

func (p Pooling) String() string { return enum.Name(p, poolingNames[:], "Pooling") }

// poolingType reads "<arch>.pooling_type": absent is PoolingNone, a value
// past PoolingRank makes the file bad.
func (m *meta) poolingType() Pooling {
	v := metaValue(m, "pooling_type", 0, m.f.Uint, "a pooling type (0 none, 1 mean, 2 cls, 3 last, 4 rank)")
	if v > uint64(PoolingRank) {
		m.fail("%s = %d, want 0 to %d (none, mean, cls, last, rank)", m.key("pooling_type"), v, PoolingRank)
		return PoolingNone
	}
	return Pooling(v)
}

// Project applies the model's projection of a pooled vector (Dense2 then
// Dense3, as llama.cpp's build_dense_out: two products, no activation) to
// v in place; without one it does nothing. v has Embd elements.
func (m *Model) Project(v []float32) error {
	if m.Dense2 == nil {
		return nil
	}
	if len(v) != m.Embd {
		return fmt.Errorf("model: projecting a vector of %d floats for a model of width %d", len(v), m.Embd)
	}
	inner := make([]float32, m.Dense2.Rows())
	if err := denseProduct(inner, v, m.Dense2); err != nil {
		return err
	}
	return denseProduct(v, inner, m.Dense3)
}

// denseProduct sets out to w·in, w's rows dequantized one at a time and
// the sums taken in float64: for the few products made once per text
// (a pooled vector's projection, a reranker's head), not the forward pass.
func denseProduct(out, in []float32, w *tensor.Tensor) error {
	x := make([]float32, len(in))
	for r := range out {
		if err := quant.Dequantize(w.Type, x, w.Row(r)); err != nil {
			return fmt.Errorf("model: dense product, row %d: %w", r, err)
		}
		out[r] = dot32(x, in)
	}
	return nil
}

// dot32 is Σ a·b, accumulated in float64 and rounded to float32: the
// products made once a text or token outside the matrix kernels (a dense
// projection, a reranker's head, Gemma 3n's AltUp router).
func dot32(a, b []float32) float32 {
	var s float64
	for i, v := range a {
		s += float64(v) * float64(b[i])
	}
	return float32(s)
}
