package model

import (
	"fmt"
	"slices"

	"github.com/lowmem/llm/internal/ops"
)

// gemma4Softcap is llama.cpp's default f_final_logit_softcapping, which
// its gemma4 loader keeps when the file has no final_logit_softcapping.
const gemma4Softcap = 30

// gemma4Hparams: Gemma 4 as llama.cpp's gemma4 graph runs it. A sliding
// window (attention.sliding_window, required) on the layers
// attention.sliding_window_pattern flags (required, one flag a layer);
// windowed layers have heads of attention.key_length_swa (=
// value_length_swa, required), rotate rope.dimension_count_swa of them
// (default rope.dimension_count) with base rope.freq_base_swa (default
// rope.freq_base), global layers heads of attention.key_length (=
// value_length) rotated with rope_freqs' factors (proportional RoPE);
// per-layer KV heads and feed-forward widths; the attention unscaled
// (f_attention_scale 1: the Q norm stands in for it) and V normalised per
// head; embedding_length_per_layer_input wide per-layer inputs (required;
// 0 for none); attention.shared_kv_layers trailing layers reading the KV
// of the last layer of their kind before them, as gemma3n's; the logits
// capped at final_logit_softcapping (default 30).
func gemma4Hparams(c *Config, m *meta) {
	c.Window = m.num("attention.sliding_window", maxCount, -1, false)
	if m.err == nil && !m.has("attention.sliding_window_pattern") {
		m.fail("%s missing", m.key("attention.sliding_window_pattern"))
	}
	m.swaPattern(c)
	if m.err == nil && c.SWALayers == nil {
		m.fail("%s is a single value, want one flag per layer", m.key("attention.sliding_window_pattern"))
	}
	c.HeadDimFull = c.HeadDimK
	c.HeadDimSWA = m.num("attention.key_length_swa", maxHeadDim, -1, false)
	vSWA := m.num("attention.value_length_swa", maxHeadDim, -1, false)
	c.RopeDimSWA = m.num("rope.dimension_count_swa", maxHeadDim, c.RopeDim, false)
	c.RopeBaseSWA = m.positive("rope.freq_base_swa", c.RopeBase)
	c.FinalSoftcap = m.softcap("final_logit_softcapping", gemma4Softcap)
	c.QueryScale, c.KQScale = 0, 1
	c.VNorm = true
	if m.err == nil && !m.has("embedding_length_per_layer_input") {
		m.fail("%s missing", m.key("embedding_length_per_layer_input"))
	}
	c.PerLayerEmbd = m.index("embedding_length_per_layer_input", 0)
	heads := m.layerInts("attention.head_count")
	c.LayerKVHeads = m.layerInts("attention.head_count_kv")
	c.LayerFFN = m.layerInts("feed_forward_length")
	if m.err != nil {
		return
	}
	switch {
	case c.HeadDimV != c.HeadDimK:
		m.fail("%s = %d, want %s = %d (Gemma 4's heads are as wide for values as for keys)", m.key("attention.value_length"), c.HeadDimV, m.key("attention.key_length"), c.HeadDimK)
	case vSWA != c.HeadDimSWA:
		m.fail("%s = %d, want %s = %d", m.key("attention.value_length_swa"), vSWA, m.key("attention.key_length_swa"), c.HeadDimSWA)
	case c.RopeDimSWA > c.HeadDimSWA || c.RopeDimSWA%2 != 0:
		m.fail("%s = %d must be even and at most %s = %d", m.key("rope.dimension_count_swa"), c.RopeDimSWA, m.key("attention.key_length_swa"), c.HeadDimSWA)
	case heads != nil && slices.Min(heads) != slices.Max(heads):
		m.err = fmt.Errorf("model: %s differs between layers: models with per-layer query heads are not supported: %w", m.key("attention.head_count"), ErrUnsupportedArch)
	case int64(c.Layers)*int64(c.PerLayerEmbd) > maxCount:
		m.fail("%s = %d × %s = %d per-layer inputs a token, more than %d", m.key("block_count"), c.Layers, m.key("embedding_length_per_layer_input"), c.PerLayerEmbd, maxCount)
	}
	for il, h := range c.LayerKVHeads {
		if m.err == nil && (h <= 0 || c.HeadsKV%h != 0) {
			m.fail("%s of layer %d is %d, want a divisor of %s's largest, %d", m.key("attention.head_count_kv"), il, h, m.key("attention.head_count_kv"), c.HeadsKV)
		}
	}
	for il, f := range c.LayerFFN {
		if m.err == nil && f <= 0 {
			m.fail("%s of layer %d is %d, want at least 1", m.key("feed_forward_length"), il, f)
		}
	}
	// The KV cache holds every layer's heads at the widest head size.
	c.HeadDimK = max(c.HeadDimFull, c.HeadDimSWA)
	c.HeadDimV = c.HeadDimK
	if m.err == nil && int64(c.Heads)*int64(c.HeadDimK) > maxAttnWidth {
		m.fail("%s = %d heads of %d floats are more than %d", m.key("attention.head_count"), c.Heads, c.HeadDimK, maxAttnWidth)
	}
	if m.err == nil && int64(c.Layers)*int64(c.HeadsKV)*int64(2*c.HeadDimK) > maxKVPerToken {
		m.fail("%s = %d layers of %d KV heads of %d floats are more than %d KV elements a token", m.key("block_count"), c.Layers, c.HeadsKV, 2*c.HeadDimK, int64(maxKVPerToken))
	}
	m.sharedKV(c)
	m.gemma4Experts(c)
}

// sharedKV reads attention.shared_kv_layers (default 0): the trailing
// layers that keep no KV cache of their own but read that of the last
// layer of their kind before them (KVSource), which must be layers
// KVFrom-1 (global) and KVFrom-2 (windowed), as llama.cpp places them.
func (m *meta) sharedKV(c *Config) {
	shared := m.index("attention.shared_kv_layers", 0)
	switch {
	case m.err != nil || shared == 0:
	case shared > c.Layers-2:
		m.fail("%s = %d of %s = %d layers: the shared layers read the caches of the two layers before them, which must keep their own", m.key("attention.shared_kv_layers"), shared, m.key("block_count"), c.Layers)
	default:
		c.KVFrom = c.Layers - shared
		if c.WindowedLayer(c.KVFrom-1) || !c.WindowedLayer(c.KVFrom-2) {
			m.fail("%s = %d: layers %d and %d, whose caches the shared layers read, must be global and windowed (they are %s and %s)",
				m.key("attention.shared_kv_layers"), shared, c.KVFrom-1, c.KVFrom-2, kind(c, c.KVFrom-1), kind(c, c.KVFrom-2))
		}
	}
}

// layerInts reads key k's per-layer values when it holds an array (the
// common keys checked its length), nil when it holds one value.
func (m *meta) layerInts(k string) []int {
	xs, ok := m.f.Int32s(m.key(k))
	if m.err != nil || !ok {
		return nil
	}
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

// LayerHeadDim is layer il's true head size: HeadDimK, or in a Gemma 4
// model its kind's (HeadDimSWA or HeadDimFull).
func (c *Config) LayerHeadDim(il int) int {
	switch {
	case c.HeadDimSWA == 0:
		return c.HeadDimK
	case c.WindowedLayer(il):
		return c.HeadDimSWA
	}
	return c.HeadDimFull
}

// LayerHeadsKV is layer il's KV heads.
func (c *Config) LayerHeadsKV(il int) int {
	if c.LayerKVHeads != nil {
		return c.LayerKVHeads[il]
	}
	return c.HeadsKV
}

// layerFFN is layer il's feed-forward width.
func (c *Config) layerFFN(il int) int {
	if c.LayerFFN != nil {
		return c.LayerFFN[il]
	}
	return c.FFN
}

// gemma4Tensors lists a Gemma 4 block's tensors, as llama.cpp's gemma4
// loader takes them, at layer il's own sizes: attn_k and attn_k_norm only
// in a layer that keeps its KV, attn_v when the block has it (the keys
// serve as values otherwise), layer_output_scale when present, and the
// per-layer input's gate, projection and norm when the model has
// per-layer inputs.
func gemma4Tensors(c *Config, il int, has func(name string) bool) []blockTensor {
	e, d, f := c.Embd, c.LayerHeadDim(il), c.layerFFN(il)
	q, kv := c.Heads*d, c.LayerHeadsKV(il)*d
	ts := []blockTensor{
		vecTensor("attn_norm.weight", e, func(L *Layer) *[]float32 { return &L.AttnNorm }),
		matTensor("attn_q.weight", e, q, func(L *Layer) **ops.Matrix { return &L.Wq }),
		vecTensor("attn_q_norm.weight", d, func(L *Layer) *[]float32 { return &L.QNorm }),
	}
	if c.OwnsKV(il) {
		ts = append(ts,
			matTensor("attn_k.weight", e, kv, func(L *Layer) **ops.Matrix { return &L.Wk }),
			vecTensor("attn_k_norm.weight", d, func(L *Layer) *[]float32 { return &L.KNorm }))
		if has("attn_v.weight") {
			ts = append(ts, matTensor("attn_v.weight", e, kv, func(L *Layer) **ops.Matrix { return &L.Wv }))
		}
	}
	ts = append(ts,
		matTensor("attn_output.weight", q, e, func(L *Layer) **ops.Matrix { return &L.Wo }),
		vecTensor("post_attention_norm.weight", e, func(L *Layer) *[]float32 { return &L.PostAttnNorm }),
		vecTensor("ffn_norm.weight", e, func(L *Layer) *[]float32 { return &L.FFNNorm }),
		matTensor("ffn_gate.weight", e, f, func(L *Layer) **ops.Matrix { return &L.Gate }),
		matTensor("ffn_up.weight", e, f, func(L *Layer) **ops.Matrix { return &L.Up }),
		matTensor("ffn_down.weight", f, e, func(L *Layer) **ops.Matrix { return &L.Down }),
		vecTensor("post_ffw_norm.weight", e, func(L *Layer) *[]float32 { return &L.PostFFNNorm }))
	if has("layer_output_scale.weight") {
		ts = append(ts, vecTensor("layer_output_scale.weight", 1, func(L *Layer) *[]float32 { return &L.OutScale }))
	}
	if c.ExpertLayer(il) {
		ts = append(ts, gemma4ExpertTensors(c, has)...)
	}
	if a := c.PerLayerEmbd; a > 0 {
		ts = append(ts,
			matTensor("inp_gate.weight", e, a, func(L *Layer) **ops.Matrix { return &L.InpGate }),
			matTensor("proj.weight", a, e, func(L *Layer) **ops.Matrix { return &L.PLProj }),
			vecTensor("post_norm.weight", e, func(L *Layer) *[]float32 { return &L.PLNorm }))
	}
	return ts
}

// gemma4Globals loads what a Gemma 4 model has outside its blocks beyond
// Gemma 3's: the per-layer inputs' tensors (when it has them) and
// rope_freqs, which a model with a global layer must have.
func (l *loader) gemma4Globals(m *Model) error {
	c := &m.Config
	if slices.Contains(c.SWALayers, false) && !l.has("rope_freqs.weight") {
		return fmt.Errorf("model: tensor %q missing (the global layers' proportional RoPE): %w", "rope_freqs.weight", ErrBadModel)
	}
	if c.PerLayerEmbd == 0 {
		return nil
	}
	return l.perLayerGlobals(m)
}
