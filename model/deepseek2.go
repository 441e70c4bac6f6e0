package model

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/tensor"
)

// maxExpertGroups bounds expert_group_count: routing keeps a score per
// group on the stack (DeepSeek V3 has 8 groups).
const maxExpertGroups = 256

// deepseek2Hparams: DeepSeek-V2/V3 as llama.cpp's deepseek2 graph runs
// them — multi-head latent attention (see Config.KVLoraRank) and, after
// leading_dense_block_count dense layers (default 0; feed_forward_length
// wide), expert_count experts of expert_feed_forward_length,
// expert_used_count a token, plus expert_shared_count shared experts run
// as one of their summed width. The router's gating function is
// expert_gating_func (default softmax, as for the V2 files without it;
// sigmoid for GLM-4.7-Flash's, which llama.cpp recognises by 47 or 48
// layers and a vocabulary of 154880), the selection bias exp_probs_b is
// added when a layer has it, the chosen weights are renormalised when
// expert_weights_norm says so and scaled by expert_weights_scale, and
// expert_group_count / expert_group_used_count limit the choice to the
// best groups (V3). The file must be in the form recent converters write
// (attention.key_length_mla and value_length_mla, attn_k_b and attn_v_b:
// the form llama.cpp runs absorbed), or of the older form, one attn_kv_b
// and no _mla keys, whose key_length and value_length are then the
// decompressed heads' and head_count_kv the heads (llama.cpp runs it
// decompressed; here it runs absorbed too: Config.MLAJoined). YaRN's yarn_log_multiplier is a tenth of DeepSeek's
// mscale_all_dim, undone here; the attention scale is llama.cpp's
// mscale²/sqrt(key_length_mla). attention.layer_norm_rms_epsilon is
// required, as llama.cpp requires it.
func deepseek2Hparams(c *Config, m *meta) {
	k := m.key
	if m.err != nil {
		return
	}
	m.require(true, "attention.layer_norm_rms_epsilon")
	if m.has("attention.temperature_scale") {
		m.err = fmt.Errorf("model: %s is set: deepseek2's attention temperature (Mistral Large 3) is not supported: %w", k("attention.temperature_scale"), ErrUnsupportedArch)
		return
	}
	m.latentAttention(c)
	m.routing(c, routingKeys{gating: GatingSoftmax})
	if !m.has("expert_gating_func") && (c.Layers == 47 || c.Layers == 48) && m.vocabSize() == 154880 {
		c.ExpertGating = GatingSigmoid // GLM-4.7-Flash, as llama.cpp recognises it
	}
	if m.err != nil {
		return
	}
	c.YarnMScaleAll = true
	if m.has("rope.scaling.yarn_log_multiplier") {
		c.YarnLogMul = m.finite("rope.scaling.yarn_log_multiplier", 0) / 0.1
	}
	c.KQScale = c.mlaKQScale()
}

// latentAttention reads multi-head latent attention's sizes
// (Config.KVLoraRank) as llama.cpp's deepseek2 and minicpm3 loaders take
// them: attention.kv_lora_rank (required) and q_lora_rank (0 or absent:
// attn_q), and either the recent form's key_length_mla and
// value_length_mla or the older form's decompressed heads (MLAJoined).
func (m *meta) latentAttention(c *Config) {
	k := m.key
	if m.err != nil {
		return
	}
	if m.has("attention.key_length_mla") != m.has("attention.value_length_mla") {
		m.fail("%s and %s come together (the file has one)", k("attention.key_length_mla"), k("attention.value_length_mla"))
		return
	}
	c.KVLoraRank = m.num("attention.kv_lora_rank", maxHeadDim, -1, false)
	c.QLoraRank = m.count("attention.q_lora_rank", maxCount)
	if m.has("attention.key_length_mla") {
		c.HeadDimKMLA = m.num("attention.key_length_mla", maxHeadDim, -1, false)
		c.HeadDimVMLA = m.num("attention.value_length_mla", maxHeadDim, -1, false)
	} else if m.err == nil {
		// The older form: the file's sizes are the decompressed heads';
		// the cache holds the latent all the same.
		if c.HeadsKV != c.Heads {
			m.fail("%s = %d, want %s = %d in a file without %s (decompressed heads)", k("attention.head_count_kv"), c.HeadsKV, k("attention.head_count"), c.Heads, k("attention.key_length_mla"))
			return
		}
		c.MLAJoined = true
		c.HeadDimKMLA, c.HeadDimVMLA = c.HeadDimK, c.HeadDimV
		c.HeadsKV, c.HeadDimK, c.HeadDimV = 1, c.KVLoraRank+c.RopeDim, c.KVLoraRank
	}
	if m.err != nil {
		return
	}
	switch {
	case c.HeadsKV != 1:
		m.fail("%s = %d, want 1: the latent is one KV head", k("attention.head_count_kv"), c.HeadsKV)
	case c.RopeDim >= c.HeadDimKMLA:
		m.fail("%s = %d leaves no unrotated part of %s = %d", k("rope.dimension_count"), c.RopeDim, k("attention.key_length_mla"), c.HeadDimKMLA)
	case c.HeadDimK != c.KVLoraRank+c.RopeDim:
		m.fail("%s = %d, want %s + %s = %d", k("attention.key_length"), c.HeadDimK, k("attention.kv_lora_rank"), k("rope.dimension_count"), c.KVLoraRank+c.RopeDim)
	case c.HeadDimV != c.KVLoraRank:
		m.fail("%s = %d, want %s = %d", k("attention.value_length"), c.HeadDimV, k("attention.kv_lora_rank"), c.KVLoraRank)
	case int64(c.Heads)*int64(c.HeadDimKMLA) > maxAttnWidth || int64(c.Heads)*int64(c.HeadDimVMLA) > maxAttnWidth:
		m.fail("%s = %d heads of %d and %d floats are more than %d", k("attention.head_count"), c.Heads, c.HeadDimKMLA, c.HeadDimVMLA, maxAttnWidth)
	}
}

// mlaKQScale is llama.cpp's deepseek2 attention scale, in float32 as it
// computes it: the RoPE attention factor with YaRN's magnitude correction
// taken back out, times 1 + 0.1·mscale_all_dim·ln(factor), squared, over
// sqrt(key_length_mla).
func (c *Config) mlaKQScale() float32 {
	lnf := float32(math.Log(float64(c.RopeScale))) // ln(1/freq_scale)
	org := c.RopeMScale() * (1 + 0.1*lnf)
	ms := org * (1 + 0.1*c.YarnLogMul*lnf)
	return ms * ms / float32(math.Sqrt(float64(c.HeadDimKMLA)))
}

// vocabSize is the vocabulary's size as llama.cpp reads it for
// deepseek2: the vocab_size key, else the token list's length (0 when
// neither says).
func (m *meta) vocabSize() int {
	if v, ok := m.f.Uint(m.key("vocab_size")); ok {
		return int(min(v, maxCount+1))
	}
	toks, _ := m.f.Strings("tokenizer.ggml.tokens")
	return len(toks)
}

// count reads a non-negative integer of at most limit (0 when absent).
func (m *meta) count(k string, limit int) int {
	raw, present := m.f.Get(m.key(k))
	if !present || m.err != nil {
		return 0
	}
	v, ok := m.f.Uint(m.key(k))
	if !ok || v > uint64(limit) {
		m.fail("%s is %s, want a count from 0 to %d", m.key(k), describe(raw), limit)
		return 0
	}
	return int(v)
}

// denseLead reads leading_dense_block_count into c.DenseLead: a count of
// layers from 0 to block_count (required, or 0 when absent), the dense
// layers needing feed_forward_length.
func (m *meta) denseLead(c *Config, required bool) {
	k := "leading_dense_block_count"
	if m.err == nil && required && !m.has(k) {
		m.fail("%s missing", m.key(k))
	}
	if v, ok := m.f.Uint(m.key(k)); m.err == nil && m.has(k) && (!ok || v > uint64(c.Layers)) {
		raw, _ := m.f.Get(m.key(k))
		m.fail("%s is %s, want a count of layers from 0 to %s = %d", m.key(k), describe(raw), m.key("block_count"), c.Layers)
	} else if m.err == nil {
		c.DenseLead = int(v)
	}
	if m.err == nil && c.DenseLead > 0 && c.FFN == 0 {
		m.fail("%s missing: the %d leading dense layers need it", m.key("feed_forward_length"), c.DenseLead)
	}
}

// expertGroups reads expert_group_count and expert_group_used_count
// (both optional) with llama.cpp's checks: fewer groups than experts;
// with more than one group, groups that divide the experts and from 1 to
// one less than the groups used.
func (m *meta) expertGroups(c *Config) {
	c.ExpertGroups = m.count("expert_group_count", maxExpertGroups)
	c.ExpertGroupsUsed = m.count("expert_group_used_count", maxExpertGroups)
	if m.err != nil {
		return
	}
	k := m.key
	switch g, u := c.ExpertGroups, c.ExpertGroupsUsed; {
	case g >= c.Experts && g > 0:
		m.fail("%s = %d, want fewer than %s = %d", k("expert_group_count"), g, k("expert_count"), c.Experts)
	case g <= 1:
	case c.Experts%g != 0:
		m.fail("%s = %d does not divide %s = %d", k("expert_group_count"), g, k("expert_count"), c.Experts)
	case u < 1 || u >= g:
		m.fail("%s = %d, want from 1 to %d (fewer than %s = %d)", k("expert_group_used_count"), u, g-1, k("expert_group_count"), g)
	case c.ExpertsUsed > u*(c.Experts/g):
		m.fail("%s = %d is more than the %d experts of %s = %d groups", k("expert_used_count"), c.ExpertsUsed, u*(c.Experts/g), k("expert_group_used_count"), u)
	}
}

// keyHeads makes attn_k_b from an older deepseek2 file's attn_kv_b (w,
// the tensor name): for each head h, its unrotated key rows (the first
// HeadDimKMLA-RopeDim of its rows) transposed into KVLoraRank rows, one
// matrix of heads × KVLoraRank rows, as the converter's attn_k_b would
// be: in F16 when attn_kv_b is a float type, else in Q8_0, whose
// integer products give a token the same bits in any batch (a float
// matrix's do not, and each head's 512 products are rounded to F16 for
// the attention). A dry run counts its bytes instead.
func (l *loader) keyHeads(name string, c *Config, w *ops.Matrix) (*ops.Matrix, error) {
	H, r, nope := c.Heads, c.KVLoraRank, c.HeadDimKMLA-c.RopeDim
	per := nope + c.HeadDimVMLA
	ti, _ := l.f.Tensor(name)
	typ := quant.Q8_0
	if ti.Type == quant.F32 || ti.Type == quant.F16 || ti.Type == quant.BF16 || nope%32 != 0 {
		typ = quant.F16
	}
	rb, err := typ.RowBytes(int64(nope))
	if err != nil {
		return nil, fmt.Errorf("model: tensor %q: %w", name, err)
	}
	l.made += rb * int64(H*r)
	if l.dry {
		return nil, nil
	}
	data := make([]byte, int(rb)*H*r)
	rows := make([]float32, nope*r)
	col := make([]float32, nope)
	for h := range H {
		for i := range nope {
			if err := quant.Dequantize(w.T.Type, rows[i*r:(i+1)*r], w.T.Row(h*per+i)); err != nil {
				return nil, fmt.Errorf("model: tensor %q: %w", name, err)
			}
		}
		for j := range r {
			for i := range nope {
				col[i] = rows[i*r+j]
			}
			k := (h*r + j) * int(rb)
			if err := quant.QuantizeRow(typ, data[k:k+int(rb)], col); err != nil {
				return nil, fmt.Errorf("model: tensor %q: %w", name, err)
			}
		}
	}
	t, err := tensor.View(name+" (attn_k_b)", typ, []int{nope, H * r}, data)
	if err != nil {
		return nil, fmt.Errorf("model: %w: %w", err, ErrBadModel)
	}
	return ops.NewMatrix(t)
}
