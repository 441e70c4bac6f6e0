package model

import "github.com/lowmem/llm/internal/enum"

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
	PoolingRank                // a reranker's classification head over the first token (not run here)
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
