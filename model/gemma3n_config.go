package model

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/ops"
)

// Gemma 3n's constants that llama.cpp (d32676d77, src/models/gemma3n-iswa.cpp
// and llama-model.cpp) fixes rather than reads from the file.
const (
	// gemma3nSparseLayers: the first ten layers cut their feed-forward
	// gate (n_layer_sparsity).
	gemma3nSparseLayers = 10
	// gemma3nSparseStd is the standard normal's 0.95 quantile
	// (f_sparsity_std_mul): a gate keeps what lies that many standard
	// deviations above its mean.
	gemma3nSparseStd = 1.6448533535003662
	// gemma3nSoftcap is the final logit soft-capping, llama.cpp's default
	// f_final_logit_softcapping, which its gemma3n loader does not read.
	gemma3nSoftcap = 30
	// maxAltUp bounds altup.num_inputs: the forward pass keeps a token's
	// AltUp coefficients (num_inputs² of them) on the stack.
	maxAltUp = 16
)

// gemma3nHparams: Gemma 3n's text decoder as llama.cpp's gemma3n-iswa
// graph runs it. A sliding window (attention.sliding_window, required)
// on the layers attention.sliding_window_pattern marks (default: four of
// five, as newer llama.cpp reads it; d32676d77 fixes the period 5 the
// released files' per-layer flags spell); windowed layers rotate with
// base rope.freq_base_swa (default 10000) unscaled; the attention is
// unscaled (f_attention_scale 1: the Q norm stands in for it); the logits
// capped at 30. altup.num_inputs streams (at least 2; default 4),
// altup.active_idx the one that runs the block (default 0);
// embedding_length_per_layer_input wide per-layer inputs (default 256);
// attention.shared_kv_layers trailing layers without a KV cache of their
// own (default 0; llama.cpp fixes the first such layer at 20, which both
// released models' 30−10 and 35−15 give); activation sparsity in the
// first ten layers; V normalised per head.
func gemma3nHparams(c *Config, m *meta) {
	c.Window = m.num("attention.sliding_window", maxCount, -1, false)
	c.FullEvery = 5
	m.swaPattern(c)
	c.RopeBaseSWA = m.positive("rope.freq_base_swa", 10000)
	c.RopeScaleSWA = 1
	c.FinalSoftcap = gemma3nSoftcap
	c.QueryScale, c.KQScale = 0, 1
	c.VNorm = true
	c.AltUp = m.num("altup.num_inputs", maxAltUp, 4, false)
	c.AltUpActive = m.index("altup.active_idx", 0)
	c.PerLayerEmbd = m.num("embedding_length_per_layer_input", maxCount, 256, false)
	if m.err != nil {
		return
	}
	switch {
	case c.AltUp < 2:
		m.fail("%s = %d, want at least 2 (one stream runs the block, the others are predicted)", m.key("altup.num_inputs"), c.AltUp)
	case c.AltUpActive >= c.AltUp:
		m.fail("%s = %d is not a stream of %s = %d", m.key("altup.active_idx"), c.AltUpActive, m.key("altup.num_inputs"), c.AltUp)
	case int64(c.Layers)*int64(c.PerLayerEmbd) > maxCount:
		m.fail("%s = %d × %s = %d per-layer inputs a token, more than %d", m.key("block_count"), c.Layers, m.key("embedding_length_per_layer_input"), c.PerLayerEmbd, maxCount)
	}
	m.sharedKV(c)
	c.SparseLayers = min(gemma3nSparseLayers, c.Layers)
	c.SparseStd = gemma3nSparseStd
	m.perLayerFloats("activation_sparsity_scale")
}

// kind names a layer's attention for an error.
func kind(c *Config, il int) string {
	if c.WindowedLayer(il) {
		return "windowed"
	}
	return "global"
}

// index reads a count that may be 0 (an index, or a number of layers):
// an unsigned integer, or a float holding one (early Gemma 3n files wrote
// attention.shared_kv_layers as float32).
func (m *meta) index(k string, def int) int {
	if m.err != nil || !m.has(k) {
		return def
	}
	if v, ok := m.f.Uint(m.key(k)); ok && v <= maxCount {
		return int(v)
	}
	if x, ok := m.f.Float(m.key(k)); ok && x >= 0 && x <= maxCount && x == math.Trunc(x) {
		return int(x)
	}
	raw, _ := m.f.Get(m.key(k))
	m.fail("%s is %s, want a count from 0 to %d", m.key(k), describe(raw), maxCount)
	return 0
}

// perLayerFloats checks that key k, when present, holds one float per
// layer (a value llama.cpp does not read, but a file may not contradict
// its own layer count).
func (m *meta) perLayerFloats(k string) {
	raw, ok := m.f.Get(m.key(k))
	if !ok || m.err != nil {
		return
	}
	if xs, ok := raw.([]float32); !ok || len(xs) != m.layers {
		m.fail("%s is %s, want one float per layer (%d)", m.key(k), describe(raw), m.layers)
	}
}

// gemma3nTensors lists the tensors a Gemma 3n block has beyond Gemma 3's:
// the per-layer input's gate, projection and norm, AltUp's router, its
// norm, its prediction and correction coefficients and the correction's
// scale, and LAuReL's two matrices and norm.
func gemma3nTensors(c *Config) []blockTensor {
	e, a, k, r := c.Embd, c.PerLayerEmbd, c.AltUp, c.LaurelRank
	return []blockTensor{
		matTensor("inp_gate.weight", e, a, func(L *Layer) **ops.Matrix { return &L.InpGate }),
		matTensor("proj.weight", a, e, func(L *Layer) **ops.Matrix { return &L.PLProj }),
		vecTensor("post_norm.weight", e, func(L *Layer) *[]float32 { return &L.PLNorm }),
		rowsTensor("altup_correct_coef.weight", k, k, func(L *Layer) *[]float32 { return &L.AltCorrect }),
		vecTensor("altup_correct_scale.weight", e, func(L *Layer) *[]float32 { return &L.AltCorrectScale }),
		rowsTensor("altup_predict_coef.weight", k, k*k, func(L *Layer) *[]float32 { return &L.AltPredict }),
		rowsTensor("altup_router.weight", e, k, func(L *Layer) *[]float32 { return &L.AltRouter }),
		vecTensor("altup_router_norm.weight", e, func(L *Layer) *[]float32 { return &L.AltRouterNorm }),
		matTensor("laurel_l.weight", e, r, func(L *Layer) **ops.Matrix { return &L.LaurelL }),
		matTensor("laurel_r.weight", r, e, func(L *Layer) **ops.Matrix { return &L.LaurelR }),
		vecTensor("laurel_post_norm.weight", e, func(L *Layer) *[]float32 { return &L.LaurelNorm }),
	}
}

// gemma3nGlobals loads what a Gemma 3n model has outside its blocks: the
// per-layer inputs' tensors (perLayerGlobals) and AltUp's projections
// into and out of the extra streams (the 3-D altup_proj and
// altup_unembd_proj, one matrix a stream).
func (l *loader) gemma3nGlobals(m *Model) (err error) {
	c := &m.Config
	if err := l.perLayerGlobals(m); err != nil {
		return err
	}
	if m.AltUpProj, err = l.stack("altup_proj.weight", c.Embd, c.AltUp-1); err != nil {
		return err
	}
	m.AltUpUnembd, err = l.stack("altup_unembd_proj.weight", c.Embd, c.AltUp-1)
	return err
}

// perLayerGlobals loads the per-layer inputs' tensors outside the blocks
// (Gemma 3n, Gemma 4): the per-layer token embeddings (a view: only the
// rows of the tokens evaluated are read), their projection from the
// token embedding and its norm.
func (l *loader) perLayerGlobals(m *Model) (err error) {
	c := &m.Config
	w := c.Layers * c.PerLayerEmbd
	const name = "per_layer_token_embd.weight"
	if ti, ok := l.f.Tensor(name); ok && len(ti.Dims) == 2 && ti.Dims[0] != int64(w) {
		return fmt.Errorf("model: tensor %q has rows of %d, but %s.block_count = %d × %s.embedding_length_per_layer_input = %d make %d: %w",
			name, ti.Dims[0], c.Arch, c.Layers, c.Arch, c.PerLayerEmbd, w, ErrBadModel)
	}
	if m.PerLayerEmbed, err = l.tensor(name, w, m.Vocab); err != nil {
		return err
	}
	if m.PerLayerProj, err = l.matrix("per_layer_model_proj.weight", c.Embd, w); err != nil {
		return err
	}
	m.PerLayerProjNorm, err = l.vector("per_layer_proj_norm.weight", c.PerLayerEmbd)
	return err
}

// stack splits the 3-D tensor name ([n, n, count]) into count square
// matrices, as experts splits an expert tensor.
func (l *loader) stack(name string, n, count int) ([]*ops.Matrix, error) {
	L := Layer{Experts: make([]Expert, count)}
	if err := l.experts(name, n, n, count, &L, 0); err != nil || l.dry {
		return nil, err
	}
	ms := make([]*ops.Matrix, count)
	for i := range L.Experts {
		ms[i] = L.Experts[i].Gate
	}
	return ms, nil
}

// laurelRank reads LAuReL's inner width from blk.0.laurel_l.weight
// (llama.cpp fixes it at 64, the released models' rank).
func (l *loader) laurelRank(c *Config) error {
	const name = "blk.0.laurel_l.weight"
	ti, ok := l.f.Tensor(name)
	if !ok {
		return fmt.Errorf("model: tensor %q missing: %w", name, ErrBadModel)
	}
	if len(ti.Dims) != 2 || ti.Dims[0] != int64(c.Embd) || ti.Dims[1] < 1 || ti.Dims[1] > int64(c.Embd) {
		return fmt.Errorf("model: tensor %q has shape %v, want [%d, rank] with rank from 1 to %d: %w", name, ti.Dims, c.Embd, c.Embd, ErrBadModel)
	}
	c.LaurelRank = int(ti.Dims[1])
	return nil
}
