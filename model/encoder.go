package model

import (
	"fmt"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/quant"
)

// This file is the encoder architectures' own (Arch.Encoder: bert,
// nomic-bert, nomic-bert-moe), as llama.cpp's llm_build_bert runs them:
// the embeddings (token, type 0, and bert's learned position) go through
// LayerNorm, and each block adds its attention and its feed-forward to
// the residual stream and normalises after each sum (post-norm), where a
// decoder normalises before; nomic-bert-moe's expert layers run the
// decoder's experts in place of the feed-forward. The projections, attention and feed-forward are the
// decoder's (State.qkv, attention, residual, ffn).

// encoderEmbeddings loads an encoder's embedding tensors besides
// token_embd: token_embd_norm's weight and bias, row 0 of token_types (the
// only type llama.cpp feeds; its row count must be the vocabulary's
// tokenizer.ggml.token_type_count). bert's position_embd is build's, as
// a decoder's (gpt2).
func (l *loader) encoderEmbeddings(m *Model) (err error) {
	E := m.Embd
	if m.EmbedNorm, err = l.vector("token_embd_norm.weight", E); err != nil {
		return err
	}
	if m.EmbedNormB, err = l.vector("token_embd_norm.bias", E); err != nil {
		return err
	}
	if l.has("token_types.weight") {
		const key = "tokenizer.ggml.token_type_count"
		types, ok := l.f.Uint(key)
		if !ok || types == 0 || types > maxCount {
			v, _ := l.f.Get(key)
			return fmt.Errorf("model: tensor %q needs %s, a count of token types from 1 to %d (have %v): %w", "token_types.weight", key, maxCount, v, ErrBadModel)
		}
		t, err := l.tensor("token_types.weight", E, int(types))
		if err != nil {
			return err
		}
		m.TypeEmbed, err = l.copyRows("token_types.weight", t, E, 1)
	}
	return err
}

// encoderTensors lists the tensors of an encoder's block: Q, K and V
// (fused or not) and the output projection, each with its bias when the
// file has one (llama.cpp takes them as optional), the LayerNorms after
// the two residual sums, and the feed-forward weights (bert's ffn_up and
// ffn_down with their optional biases; nomic-bert's gated three, whose
// biases llama.cpp does not apply; nomic-bert-moe's expert layers' router
// and experts, without biases).
func encoderTensors(a *Arch, c *Config, il int, has func(name string) bool) []blockTensor {
	e := c.Embd
	q, kv, vv := c.Heads*c.HeadDimK, c.HeadsKV*c.HeadDimK, c.HeadsKV*c.HeadDimV
	ts := qkvTensors(a, c, il, has)
	optional := func(bt blockTensor) {
		if has(bt.name) {
			ts = append(ts, bt)
		}
	}
	switch {
	case c.ALiBi != nil:
		// jina-bert-v2's biases are required, as llama.cpp requires them.
		ts = append(ts,
			vecTensor("attn_q.bias", q, func(L *Layer) *[]float32 { return &L.Bq }),
			vecTensor("attn_k.bias", kv, func(L *Layer) *[]float32 { return &L.Bk }),
			vecTensor("attn_v.bias", vv, func(L *Layer) *[]float32 { return &L.Bv }),
			matTensor("attn_output.weight", c.Heads*c.HeadDimV, e, func(L *Layer) **ops.Matrix { return &L.Wo }),
			vecTensor("attn_output.bias", e, func(L *Layer) *[]float32 { return &L.Bo }),
			vecTensor("attn_output_norm.weight", e, func(L *Layer) *[]float32 { return &L.AttnOutNorm }),
			vecTensor("attn_output_norm.bias", e, func(L *Layer) *[]float32 { return &L.AttnOutNormB }))
		return append(ts, jinaTensors(c, has)...)
	case len(ts) == 1:
		optional(vecTensor("attn_qkv.bias", q+kv+vv, func(L *Layer) *[]float32 { return &L.Bqkv }))
	default:
		optional(vecTensor("attn_q.bias", q, func(L *Layer) *[]float32 { return &L.Bq }))
		optional(vecTensor("attn_k.bias", kv, func(L *Layer) *[]float32 { return &L.Bk }))
		optional(vecTensor("attn_v.bias", vv, func(L *Layer) *[]float32 { return &L.Bv }))
	}
	ts = append(ts, matTensor("attn_output.weight", c.Heads*c.HeadDimV, e, func(L *Layer) **ops.Matrix { return &L.Wo }))
	optional(vecTensor("attn_output.bias", e, func(L *Layer) *[]float32 { return &L.Bo }))
	ts = append(ts,
		vecTensor("attn_output_norm.weight", e, func(L *Layer) *[]float32 { return &L.AttnOutNorm }),
		vecTensor("attn_output_norm.bias", e, func(L *Layer) *[]float32 { return &L.AttnOutNormB }))
	ts = append(ts, ffnTensors(a, c, il, has)...)
	if a.FFN == FFNSequential && !c.ExpertLayer(il) {
		optional(vecTensor("ffn_up.bias", c.FFN, func(L *Layer) *[]float32 { return &L.BUp }))
		optional(vecTensor("ffn_down.bias", e, func(L *Layer) *[]float32 { return &L.BDown }))
	}
	return append(ts,
		vecTensor("layer_output_norm.weight", e, func(L *Layer) *[]float32 { return &L.LayerOutNorm }),
		vecTensor("layer_output_norm.bias", e, func(L *Layer) *[]float32 { return &L.LayerOutNormB }))
}

// checkPositions fails, wrapping kv.ErrFull, a pass of n tokens from pos0
// that reaches past position_embd's rows: a model of learned positions
// (bert, gpt2) has none past its trained context, and llama.cpp's graph
// would read past the tensor.
func (s *State) checkPositions(pos0, n int) error {
	pe := s.m.PosEmbed
	if last := s.lastPosition(pos0, n); pe != nil && last >= pe.Rows() {
		return fmt.Errorf("model: position %d: position_embd has %d rows (the trained context): %w", last, pe.Rows(), kv.ErrFull)
	}
	return nil
}

// addPositions adds to each row of p.x the row of position_embd at its
// token's position (State.position), dequantised through p.xn; nothing
// without learned positions.
func (s *State) addPositions(p *pass) error {
	pe, E := s.m.PosEmbed, s.m.Embd
	if pe == nil {
		return nil
	}
	for t := range p.n {
		pos := p.xn[t*E : (t+1)*E]
		at := s.position(p.pos0, t)
		if err := quant.Dequantize(pe.Type, pos, pe.Row(at)); err != nil {
			return fmt.Errorf("model: position embedding %d: %w", at, err)
		}
		ops.Add(p.x[t*E:(t+1)*E], pos)
	}
	return nil
}

// encode runs tokens at positions pos0… through an encoder and returns
// its last block's output (len(tokens) rows of Embd, in the arena): the
// hidden states embeddings are pooled from. Keys and values go through
// the KV cache, which attention reads; with non-causal attention every
// token sees the whole batch, which must then be the whole text from
// position 0 — a later batch would be seen by none of the earlier tokens.
func (s *State) encode(tokens []int32, pos0 int) ([]float32, error) {
	m := s.m
	c := &m.Config
	if c.NonCausal && pos0 != 0 {
		return nil, fmt.Errorf("model: %s attends over the whole text, which must come in one pass from position 0 (not from %d): %w", m.Arch, pos0, kv.ErrInvalid)
	}
	if err := s.checkPositions(pos0, len(tokens)); err != nil {
		return nil, err
	}
	p, err := s.begin(tokens, pos0)
	if err != nil {
		return nil, err
	}
	n, x, E := p.n, p.x, c.Embd
	if m.TypeEmbed != nil {
		for t := range n {
			ops.Add(x[t*E:(t+1)*E], m.TypeEmbed)
		}
	}
	if err := s.addPositions(&p); err != nil {
		return nil, err
	}
	s.e.Phase(phNorm)
	s.layerNorm(x, x, m.EmbedNorm, m.EmbedNormB, n)

	qDim, kDim, vDim := c.Heads*c.HeadDimK, c.HeadsKV*c.HeadDimK, c.HeadsKV*c.HeadDimV
	oDim := c.Heads * c.HeadDimV
	var shared [maxShared]projection
	err = s.forLayers(func(il int, L *Layer) error {
		if L.AttnNorm2 != nil {
			copy(p.xn[:n*E], x[:n*E]) // the block's input, added again after attn_output_norm
		}
		if err := s.qkv(il, L, s.acts(x, E, n), &p, &shared); err != nil {
			return err
		}
		s.e.Phase(phAttention)
		if err := s.attention(il, pos0, n, p.qkv, qDim+kDim+vDim, p.att, nil); err != nil {
			return err
		}
		s.e.Phase(phO)
		if err := s.residual(L.Wo, s.acts(p.att, oDim, n), L.Bo, p.tmp, x, nil); err != nil {
			return err
		}
		s.e.Phase(phNorm)
		s.layerNorm(x, x, L.AttnOutNorm, L.AttnOutNormB, n)
		if L.AttnNorm2 != nil {
			ops.Add(x[:n*E], p.xn[:n*E])
			s.layerNorm(x, x, L.AttnNorm2, L.AttnNorm2B, n)
		}
		if L.Router != nil {
			a := s.acts(x, E, n)
			s.e.Phase(phMoE)
			if err := s.experts(il, L, a, a, p.tmp); err != nil {
				return err
			}
			ops.Add(x[:n*E], p.tmp[:n*E])
		} else if err := s.ffn(L, s.acts(x, E, n), p.gu, p.tmp, x, false); err != nil {
			return err
		}
		s.e.Phase(phNorm)
		s.layerNorm(x, x, L.LayerOutNorm, L.LayerOutNormB, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return x, nil
}

// layerNorm writes LayerNorm(src)·w + b of rows rows of Embd floats to dst
// (which may be src).
func (s *State) layerNorm(dst, src, w, b []float32, rows int) {
	E := s.m.Embd
	for t := 0; t < rows; t++ {
		ops.LayerNorm(dst[t*E:(t+1)*E], src[t*E:(t+1)*E], w, b, s.m.NormEps)
	}
}
