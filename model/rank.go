package model

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/softmax"
	"github.com/lowmem/llm/tensor"
)

// RankHead is a reranker's classification head, as llama.cpp's
// build_pooling applies it for pooling_type rank: the hidden state of one
// token (the first; Qwen3's rerankers, the last), through cls (a square
// product, its bias, tanh) when the file has it, then cls.output (a
// product to one score per classifier label, its bias) when the file has
// it; Qwen3's scores go through a softmax.
type RankHead struct {
	Cls, Out   *tensor.Tensor // cls.weight [Embd, Embd] ([Embd, 1] for jina-bert-v2), cls.output.weight [Embd, Labels]; either may be nil
	ClsB, OutB []float32      // their biases, or nil
	Labels     int            // scores of the head: classifier.output_labels, default 1
	Last       bool           // pool the last token's state (qwen3), not the first's
	Softmax    bool           // a softmax over the scores (qwen3: P(yes), P(no))
}

// rankHead loads the head of a file whose pooling is rank: cls and
// cls.output with their biases, each optional as in llama.cpp, but not
// both missing.
func (l *loader) rankHead(c *Config) (*RankHead, error) {
	h := &RankHead{Labels: 1, Last: c.Arch == "qwen3", Softmax: c.Arch == "qwen3"}
	key := c.Arch + ".classifier.output_labels"
	if v, ok := l.f.Get(key); ok {
		labels, ok := v.([]string)
		if !ok || len(labels) == 0 || len(labels) > maxCount {
			return nil, fmt.Errorf("model: %s is %s, want a non-empty array of labels: %w", key, describe(v), ErrBadModel)
		}
		h.Labels = len(labels)
	}
	if !l.has("cls.weight") && !l.has("cls.output.weight") {
		return nil, fmt.Errorf("model: pooling_type rank without a classification head (cls.weight or cls.output.weight): %w", ErrUnsupportedArch)
	}
	var err error
	load := func(name string, rows int, w **tensor.Tensor, b *[]float32) {
		if err != nil || !l.has(name+".weight") {
			return
		}
		if *w, err = l.tensor(name+".weight", c.Embd, rows); err == nil && l.has(name+".bias") {
			*b, err = l.vector(name+".bias", rows)
		}
	}
	// jina-bert-v2's head (Jina's v1 rerankers) is one row, its score
	// tanh(cls·x + b), as llama.cpp sizes cls for it [n_embd, 1].
	clsRows := c.Embd
	if c.Arch == "jina-bert-v2" {
		clsRows = 1
	}
	load("cls", clsRows, &h.Cls, &h.ClsB)
	load("cls.output", h.Labels, &h.Out, &h.OutB)
	return h, err
}

// Scores applies the head to a pooled hidden state v (Embd floats) and
// returns its Labels scores; a reranker's relevance score is the first.
func (h *RankHead) Scores(v []float32) ([]float32, error) {
	x := v
	if h.Cls != nil {
		y := make([]float32, h.Cls.Rows())
		if err := denseProduct(y, x, h.Cls); err != nil {
			return nil, err
		}
		for i := range y {
			if h.ClsB != nil {
				y[i] += h.ClsB[i]
			}
			y[i] = float32(math.Tanh(float64(y[i])))
		}
		x = y
	}
	if h.Out != nil {
		y := make([]float32, h.Out.Rows())
		if err := denseProduct(y, x, h.Out); err != nil {
			return nil, err
		}
		for i := range h.OutB {
			y[i] += h.OutB[i]
		}
		x = y
	}
	if h.Softmax { // x is the head's own: rankHead loads cls or cls.output
		softmax.InPlace(x, 1)
	}
	return x, nil
}
