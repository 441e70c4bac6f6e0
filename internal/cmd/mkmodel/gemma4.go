package main

import (
	"fmt"
	"slices"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
)

// gemma4Shape is the part of a Gemma 4 config.json's text_config only it
// has (HeadDim is global_head_dim, HeadsKV num_key_value_heads).
type gemma4Shape struct {
	HeadDimSWA  int     // head_dim: the sliding layers' heads
	KVHeadsFull int     // num_global_key_value_heads (0: HeadsKV)
	Period      int     // layer_types: Period-1 sliding layers, then a full one
	PerLayer    int     // hidden_size_per_layer_input (0: none)
	SharedKV    int     // num_kv_shared_layers
	DoubleWide  bool    // use_double_wide_mlp: the KV-sharing layers' feed-forward is twice as wide
	KEqV        bool    // attention_k_eq_v: the full layers have no v_proj
	Partial     float64 // the full layers' partial_rotary_factor
	RopeBaseSWA float32 // the sliding layers' rope_theta
}

// gemma4Layers are s's per-layer kinds (windowed or not), KV heads and
// feed-forward widths.
func (s shape) gemma4Layers() (swa []bool, kv, ffn []int32) {
	g := s.Gemma4
	swa, kv, ffn = make([]bool, s.Layers), make([]int32, s.Layers), make([]int32, s.Layers)
	for l := range s.Layers {
		swa[l] = l%g.Period != g.Period-1
		kv[l], ffn[l] = int32(s.HeadsKV), int32(s.FFN)
		if !swa[l] && g.KVHeadsFull > 0 {
			kv[l] = int32(g.KVHeadsFull)
		}
		if g.DoubleWide && l >= s.Layers-g.SharedKV {
			ffn[l] *= 2
		}
	}
	return swa, kv, ffn
}

// addGemma4KV writes Gemma 4's own keys.
func (s shape) addGemma4KV(g *gguf.Writer) {
	swa, kv, ffn := s.gemma4Layers()
	n := s.Gemma4
	testutil.AddGemma4KV(g, testutil.Gemma4Keys{Window: s.Window, HeadDimSWA: n.HeadDimSWA, PerLayer: n.PerLayer, Shared: n.SharedKV,
		SWA: swa, KVHeads: kv, FFN: ffn, RopeBaseSWA: n.RopeBaseSWA})
}

// gemma4RopeFreqs are the global layers' proportional RoPE divisors, as
// the converter writes rope_freqs: 1 for the first Partial of the pairs,
// 1e30 (no rotation) for the others.
func (s shape) gemma4RopeFreqs() []float32 {
	out := make([]float32, s.headDim()/2)
	for i := range out {
		out[i] = 1e30
		if float64(i) < s.Gemma4.Partial*float64(len(out)) {
			out[i] = 1
		}
	}
	return out
}

// gemma4ExpertPlan lists the tensors a Gemma 4 block p has beside its
// dense feed-forward in a mixture of experts (26B-A4B), as llama.cpp's
// converter writes them: the router (F32) and its input scale, the norms
// around the two branches, the experts' fused gate and up, their down
// matrices and their output scales.
func gemma4ExpertPlan(s shape, p string, add func(name string, kind tensorKind, dims ...int64)) {
	e, x, fe := int64(s.Embd), int64(s.Experts), int64(s.ExpertFFN)
	add(p+"ffn_gate_inp.weight", kindRouter, e, x)
	add(p+"ffn_gate_inp.scale", kindNorm, e)
	add(p+"pre_ffw_norm_2.weight", kindNorm, e)
	add(p+"post_ffw_norm_1.weight", kindNorm, e)
	add(p+"post_ffw_norm_2.weight", kindNorm, e)
	add(p+"ffn_gate_up_exps.weight", kindWeight, e, 2*fe, x)
	add(p+"ffn_down_exps.weight", kindWeight, fe, e, x)
	add(p+"ffn_down_exps.scale", kindNorm, x)
}

// gemma4Plan lists a Gemma 4 file's tensors: rope_freqs (with a full
// layer), the embeddings
// and per-layer inputs, then each block at its layer's sizes (no keys or
// values in a KV-sharing layer, no attn_v in a full layer of a K=V
// model), the output norm.
func gemma4Plan(s shape, add func(name string, kind tensorKind, dims ...int64)) {
	g := s.Gemma4
	e, v, h, a := int64(s.Embd), int64(s.Vocab), int64(s.Heads), int64(g.PerLayer)
	swa, kvh, ffn := s.gemma4Layers()
	if slices.Contains(swa, false) {
		// llama.cpp loads rope_freqs with the first full layer, and
		// refuses a file with a tensor it did not load.
		add("rope_freqs.weight", kindRopeFreqs, int64(s.headDim()/2))
	}
	add("token_embd.weight", kindWeight, e, v)
	if a > 0 {
		pl := int64(s.Layers) * a
		add("per_layer_token_embd.weight", kindWeight, pl, v)
		add("per_layer_model_proj.weight", kindKeep, e, pl)
		add("per_layer_proj_norm.weight", kindNorm, a)
	}
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		d := int64(s.headDim())
		if swa[l] {
			d = int64(g.HeadDimSWA)
		}
		q, kv, f := h*d, int64(kvh[l])*d, int64(ffn[l])
		add(p+"attn_norm.weight", kindNorm, e)
		add(p+"attn_q.weight", kindWeight, e, q)
		add(p+"attn_q_norm.weight", kindNorm, d)
		if l < s.Layers-g.SharedKV {
			add(p+"attn_k.weight", kindWeight, e, kv)
			add(p+"attn_k_norm.weight", kindNorm, d)
			if swa[l] || !g.KEqV {
				add(p+"attn_v.weight", kindWeight, e, kv)
			}
		}
		add(p+"attn_output.weight", kindWeight, q, e)
		add(p+"post_attention_norm.weight", kindNorm, e)
		add(p+"ffn_norm.weight", kindNorm, e)
		gatedFFN(add, p, "", e, f)
		add(p+"post_ffw_norm.weight", kindNorm, e)
		if s.Experts > 0 {
			gemma4ExpertPlan(s, p, add)
		}
		add(p+"layer_output_scale.weight", kindNorm, 1)
		if a > 0 {
			add(p+"inp_gate.weight", kindWeight, e, a)
			add(p+"proj.weight", kindWeight, a, e)
			add(p+"post_norm.weight", kindNorm, e)
		}
	}
	add("output_norm.weight", kindNorm, e)
	if !s.TiedOutput {
		add("output.weight", kindWeight, e, v)
	}
}
