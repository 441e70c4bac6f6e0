package model

import "github.com/lowmem/llm/internal/ops"

// This file is Qwen 3.5's (qwen35) configuration and tensors, as
// llama.cpp's qwen35 model reads them. Its layers are of two kinds: most
// are gated delta-net layers (linear attention with a recurrent state per
// value head: deltanet.go), and every full_attention_interval-th one, or
// those attention.recurrent_layers leaves out, is full attention whose
// attn_q makes each head's query and an output gate. Every layer's
// feed-forward is a dense SwiGLU after the norm llama.cpp calls
// post_attention_norm. A file may carry nextn_predict_layers NextN
// (multi-token prediction) blocks after the main stack, counted in
// block_count: llama.cpp loads them but does not run them in the main
// pass, and neither does this package (their tensors are not read).

// qwen35Hparams: the delta-net layers' sizes (ssm.conv_kernel,
// ssm.inner_size, ssm.state_size, ssm.time_step_rank — the value heads —
// and ssm.group_count — the key heads — all required), which layers are
// recurrent, the NextN blocks taken off block_count, and
// rope.dimension_sections (ropeSections: llama.cpp rotates qwen35 and
// qwen35moe with interleaved multimodal RoPE).
func qwen35Hparams(c *Config, m *meta) {
	m.ropeSections(c)
	deltaNetHparams(c, m)
}

// deltaNetHparams reads what qwen35, qwen35moe and qwen3next share: the
// delta-net sizes, the recurrent layers and the NextN blocks (qwen35Hparams
// says which).
func deltaNetHparams(c *Config, m *meta) {
	c.DeltaNet, c.AttnGate = true, true
	m.ssmSizes(c, func(k func(string) string) {
		if c.SSMInner != c.SSMHeads*c.SSMState {
			m.fail("%s = %d, want %s × %s = %d (llama.cpp's key and value heads are both of the state size)",
				k("ssm.inner_size"), c.SSMInner, k("ssm.time_step_rank"), k("ssm.state_size"), c.SSMHeads*c.SSMState)
		}
	})
	if m.err == nil && c.HeadDimK != c.HeadDimV {
		m.fail("%s = %d differs from %s = %d (llama.cpp's qwen35 needs them equal)", m.key("attention.key_length"), c.HeadDimK, m.key("attention.value_length"), c.HeadDimV)
	}
	m.nextN(c)
	if m.err != nil {
		return
	}
	c.ConvLayers = m.recurrentPattern(c.Layers, c.Layers+c.NextN)
	if m.err == nil && c.convCount() == c.Layers {
		m.fail("%s makes every layer recurrent: no layer attends", m.key("attention.recurrent_layers"))
	}
}

// ropeSections reads rope.dimension_sections into c.RopeSections, made
// interleaved: llama.cpp rotates qwen35 and qwen35moe with ggml's IMRoPE
// (llama_model_rope_type), over rope.dimension_count dimensions of each
// head. Pair i of those takes the section of sector i mod the sections'
// sum and the frequency base^(-2i/rope.dimension_count) whichever section
// it falls to — ops.Rope's sectioned rotation — so a text turns as plain
// NEOX RoPE but for the pairs left to the extra section, which stay
// unturned. Released files' sections ([11, 11, 10, 0] over 32 pairs)
// leave none. The key is required, at most four non-negative counts (the
// missing ones 0), and refused where ggml's rope asserts: no pair in the
// temporal, height or width section, or a sum above the head size.
func (m *meta) ropeSections(c *Config) {
	k, raw, present := m.lookup("rope.dimension_sections")
	if !present {
		return
	}
	xs, ok := m.f.Int32s(k)
	if !ok || len(xs) == 0 || len(xs) > 4 {
		m.fail("%s is %s, want up to 4 counts", k, describe(raw))
		return
	}
	m.setSections(c, k, xs)
	c.RopeInterleaved = true
}

// countSum is the sum of xs, the counts key k holds; ok is false, and m
// failed, when one is negative.
func (m *meta) countSum(k string, xs []int32) (sum int64, ok bool) {
	for i, x := range xs {
		if x < 0 {
			m.fail("%s[%d] = %d, want a count", k, i, x)
			return 0, false
		}
		sum += int64(x)
	}
	return sum, true
}

// recurrentPattern marks the delta-net layers among the first n of all
// (block_count, NextN blocks included), as llama.cpp reads them:
// attention.recurrent_layers, one flag a block, when the file has it;
// else every layer but each full_attention_interval-th (default 4).
func (m *meta) recurrentPattern(n, all int) []bool {
	rec := make([]bool, n)
	k := "attention.recurrent_layers"
	if raw, present := m.f.Get(m.key(k)); present {
		flags, ok := m.layerFlags(k, raw, "one flag per layer")
		if !ok {
			return nil
		}
		if len(flags) != all {
			m.fail("%s has %d per-layer values for %d layers (block_count)", m.key(k), len(flags), all)
			return nil
		}
		copy(rec, flags)
		return rec
	}
	every := m.num("full_attention_interval", maxCount, 4, false)
	for il := range rec {
		rec[il] = every > 0 && (il+1)%every != 0
	}
	return rec
}

// deltaNetTensors lists the tensors of a gated delta-net block (qwen35,
// qwen35moe, qwen3next), as llama.cpp's loader takes them: the operator
// norm; the input projections (deltaNetInputs); the kernel ssm_conv1d
// ([SSMConv, channels], no bias); the time steps' bias ssm_dt.bias and
// the decay ssm_a (-exp(A_log), one a value head); the gated norm's
// weight ssm_norm (SSMState, shared by the heads) and ssm_out; then
// post_attention_norm, the feed-forward's norm, and the feed-forward (has
// says whether the block has a tensor: the input projections' layout, a
// fused gate and up of the experts).
func deltaNetTensors(a *Arch, c *Config, il int, has func(name string) bool) []blockTensor {
	e, cw, h := c.Embd, c.ssmConvWidth(), c.SSMHeads
	ts := []blockTensor{vecTensor("attn_norm.weight", e, func(L *Layer) *[]float32 { return &L.AttnNorm })}
	ts = append(ts, deltaNetInputs(c, has)...)
	ts = append(ts,
		rowsTensor("ssm_conv1d.weight", c.SSMConv, cw, func(L *Layer) *[]float32 { return &L.ConvW }),
		vecTensor("ssm_dt.bias", h, func(L *Layer) *[]float32 { return &L.SSMDtB }),
		vecTensor("ssm_a", h, func(L *Layer) *[]float32 { return &L.SSMA }),
		vecTensor("ssm_norm.weight", c.SSMState, func(L *Layer) *[]float32 { return &L.SSMNorm }),
		matTensor("ssm_out.weight", c.SSMInner, e, func(L *Layer) **ops.Matrix { return &L.ConvOut }),
		vecTensor(a.FFNNorm, e, func(L *Layer) *[]float32 { return &L.FFNNorm }))
	return append(ts, ffnTensors(a, c, il, has)...)
}

// deltaNetInputs lists a delta-net block's input projections: qwen35's
// attn_qkv (Embd → the convolution's q, k and v channels), attn_gate
// (Embd → z), ssm_beta and ssm_alpha (Embd → one a value head);
// qwen3next's attn_qkv and attn_gate, or (older files) ssm_in making both
// grouped by key head, and ssm_ba making β and α grouped by key head (in
// WBeta, WAlpha nil).
func deltaNetInputs(c *Config, has func(name string) bool) []blockTensor {
	e, cw, h, I := c.Embd, c.ssmConvWidth(), c.SSMHeads, c.SSMInner
	qkv := matTensor("attn_qkv.weight", e, cw, func(L *Layer) **ops.Matrix { return &L.ConvIn })
	z := matTensor("attn_gate.weight", e, I, func(L *Layer) **ops.Matrix { return &L.WZ })
	if !c.DeltaBlocks {
		return []blockTensor{qkv, z,
			matTensor("ssm_beta.weight", e, h, func(L *Layer) **ops.Matrix { return &L.WBeta }),
			matTensor("ssm_alpha.weight", e, h, func(L *Layer) **ops.Matrix { return &L.WAlpha })}
	}
	ba := matTensor("ssm_ba.weight", e, 2*h, func(L *Layer) **ops.Matrix { return &L.WBeta })
	if has != nil && has("ssm_in.weight") && !has("attn_qkv.weight") {
		return []blockTensor{matTensor("ssm_in.weight", e, cw+I, func(L *Layer) **ops.Matrix { return &L.ConvIn }), ba}
	}
	return []blockTensor{qkv, z, ba}
}

// qwen35moeHparams: Qwen 3.5's mixture-of-experts models (35B-A3B,
// 122B-A10B, 397B-A17B), qwen35's layers with llama.cpp's qwen35moe
// feed-forward in every block: expert_count experts, expert_used_count of
// them a token, each expert_feed_forward_length wide (default
// feed_forward_length / expert_used_count), chosen by a softmax over all
// and weighted by their probabilities renormalised to sum to 1 (no
// expert_weights_scale: llama.cpp does not read it for qwen35moe); then a
// shared expert expert_shared_feed_forward_length wide (default
// feed_forward_length) whose output is scaled by the sigmoid of its own
// gate, ffn_gate_inp_shexp. llama.cpp requires the shared expert's
// tensors in every block, and so does this package.
func qwen35moeHparams(c *Config, m *meta) {
	qwen35Hparams(c, m)
	qwen35Experts(c, m)
}

// qwen3nextHparams: Qwen3-Next (80B-A3B), as llama.cpp's qwen3next reads
// it: qwen35moe's keys but rope.dimension_sections (plain NEOX RoPE of
// rope.dimension_count dimensions), the same experts and gated shared
// expert (expert_count 0 refused, as llama.cpp refuses it), and delta-net
// layers whose value heads read the key heads repeated in blocks
// (Config.DeltaBlocks) and whose ssm_ba — and ssm_in, in the older files
// without attn_qkv and attn_gate — group their outputs by key head.
func qwen3nextHparams(c *Config, m *meta) {
	deltaNetHparams(c, m)
	qwen35Experts(c, m)
	c.DeltaBlocks = true
	if m.err == nil && c.Experts == 0 {
		m.fail("%s = 0: llama.cpp's qwen3next has experts in every block", m.key("expert_count"))
	}
}

// qwen35Experts reads qwen35moe's and qwen3next's feed-forward: the
// routed experts, their weights renormalised, and the shared expert with
// its gate.
func qwen35Experts(c *Config, m *meta) {
	m.gatedSharedExperts(c)
	c.ExpertNorm = true
}

// gatedSharedExperts reads the feed-forward qwen2moe, qwen35moe and
// qwen3next share: expert_count experts, expert_used_count a token, each
// expert_feed_forward_length wide (default feed_forward_length /
// expert_used_count), and a shared expert of
// expert_shared_feed_forward_length (default feed_forward_length) scaled
// by the sigmoid of its gate ffn_gate_inp_shexp, as llama.cpp sizes them.
func (m *meta) gatedSharedExperts(c *Config) {
	m.experts(c, true)
	c.SharedGate = true
	def := -1
	if c.FFN > 0 {
		def = c.FFN
	}
	c.SharedFFN = m.num("expert_shared_feed_forward_length", maxCount, def, false)
	if m.err == nil && c.SharedFFN == 0 {
		m.fail("%s = 0: %s's blocks all have a shared expert", m.key("expert_shared_feed_forward_length"), c.Arch)
	}
}
