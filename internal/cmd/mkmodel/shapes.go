package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/lowmem/llm/internal/testutil"
)

// shape holds the hyper-parameters of a model, as its GGUF metadata
// states them.
type shape struct {
	Name    string
	Arch    string // general.architecture: llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, gemma3n, gemma4, phi3, granite, granitemoe, granitehybrid, qwen35, qwen35moe, qwen3next, nemotron_h, nemotron_h_moe, smollm3, olmo2, ernie4_5, ernie4_5-moe, seed_oss, exaone4, glm4, lfm2, lfm2moe, gpt-oss, gemma-embedding, bert, nomic-bert, minicpm, minicpm3, olmoe, afmoe, jamba, mamba, mamba2, rwkv7, exaone, starcoder2, gemma, nemotron, stablelm, phi2, gpt2, starcoder, gptneox, nomic-bert-moe, jina-bert-v2 or modern-bert
	Vocab   int
	Embd    int
	Layers  int
	Heads   int
	HeadsKV int
	HeadDim int // attention.key_length and value_length; 0 = Embd/Heads
	FFN     int
	Context int

	RopeBase float32
	RopeDim  int     // rope.dimension_count; 0 = the head size (phi-4-mini rotates 3/4 of it)
	RopeLin  float32 // linear rope scaling factor; 0 = none (gemma-3's global layers: 8)
	RMSEps   float32

	QKVBias    bool // qwen2: attn_q/k/v have biases
	QKNorm     bool // qwen3, gemma3: attn_q_norm and attn_k_norm
	TiedOutput bool // no output.weight: token_embd is the LM head

	// Llama 3.1 rope scaling, stored as the rope_freqs.weight tensor.
	Llama3Rope *llama3Rope
	// LongRoPE (phi3): rope_factors_long/short and their metadata.
	LongRope *longRope

	// gemma2, gemma3: sliding window (gemma3: with its pattern of
	// SWAPattern-1 local layers then one global; the converter writes no
	// pattern key, so the default 6 is implied).
	Window       int
	AttnSoftcap  float32
	FinalSoftcap float32

	// qwen3moe, granitemoe, gpt-oss, lfm2moe, ernie4_5-moe: expert_count,
	// expert_used_count, expert_feed_forward_length.
	Experts, ExpertsUsed, ExpertFFN int
	// DenseLead is lfm2moe's leading_dense_block_count (config.json's
	// num_dense_layers; ernie4_5-moe's moe_layer_start_index): its first
	// layers' feed-forwards are dense, of width FFN; lfm2moe's experts
	// are sigmoid-gated (expert_gating_func 2).
	DenseLead int
	// MoEEvery is nomic-bert-moe's moe_every_n_layers: its layers l with
	// l mod MoEEvery = 1 have Experts gate-less experts of FFN, the
	// others bert's feed-forward.
	MoEEvery int
	// YaRN rope scaling (gpt-oss): rope.scaling.type "yarn", its factor
	// and original context.
	Yarn *testutil.Yarn

	// granite, granitemoe: embedding_scale, residual_scale,
	// attention.scale and logit_scale (config.json's embedding_multiplier,
	// residual_multiplier, attention_multiplier and logits_scaling);
	// minicpm: the same but attention.scale (not written).
	Granite *graniteScales

	// Embedding models: pooling_type (llama.cpp's numbering: 1 mean, 2
	// CLS, 3 last; 0 = none written) and an EOS appended to every text
	// (add_eos_token); bert, nomic-bert: the LayerNorm epsilon (set only
	// for an encoder).
	Pooling uint32
	AddEOS  bool
	NormEps float32
	// Dense is the inner size of an embedding model's projection of its
	// pooled vector (gemma-embedding: dense_2 and dense_3, F32); 0 = none.
	Dense int
	// ConvLayers lists lfm2's short-convolution layers (config.json's
	// "conv" layer_types; the others attend) and ConvKernel their kernel
	// length (conv_L_cache).
	ConvLayers []int
	ConvKernel int
	// Gemma3n holds Gemma 3n's own hyper-parameters.
	Gemma3n *gemma3nShape
	// Gemma4 holds Gemma 4's own hyper-parameters (gemma4.go).
	Gemma4 *gemma4Shape
	// SSM, for granitehybrid, makes the ConvLayers Mamba-2 layers of these
	// sizes (config.json's mamba_d_conv, mamba_expand × hidden_size,
	// mamba_d_state, mamba_n_heads, mamba_n_groups); for qwen35, gated
	// delta-net layers (linear_conv_kernel_dim, value heads × head size,
	// the head size, linear_num_value_heads, linear_num_key_heads); for
	// mamba2, every layer (conv_kernel, expand × hidden_size, state_size,
	// num_heads, n_groups).
	SSM *testutil.SSM
	// Mamba1, for jamba, makes the ConvLayers Mamba-1 layers of these
	// sizes (config.json's mamba_d_conv, mamba_expand × hidden_size,
	// mamba_d_state, mamba_dt_rank); for mamba, every layer (conv_kernel,
	// intermediate_size, state_size, time_step_rank), DtBCNorm its
	// ssm.dt_b_c_rms (Falcon-Mamba's model_type falcon_mamba).
	Mamba1   *testutil.Mamba1
	DtBCNorm bool
	// RWKV7 is an rwkv7's wkv.head_size and low-rank pairs' ranks
	// (config.json's head_size, decay_low_rank_dim, a_low_rank_dim,
	// v_low_rank_dim, gate_low_rank_dim).
	RWKV7 *testutil.RWKV7
	// Pattern is nemotron_h's hybrid_override_pattern, one letter a
	// layer: M Mamba-2 (of SSM's sizes), - a ReLU² feed-forward of FFN,
	// * attention; the first Layers letters count.
	Pattern string
	// NextN is qwen35's NextN (MTP) blocks after the stack
	// (mtp_num_hidden_layers), counted in block_count.
	NextN int
	// SharedFFN is the shared expert's width (granitehybrid's
	// shared_intermediate_size with experts; ernie4_5-moe's shared
	// experts' summed width; 0 = none).
	SharedFFN int
	// DeepSeek2 is deepseek2's latent attention and routing (config.json's
	// kv_lora_rank, q_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
	// v_head_dim, n_shared_experts, routed_scaling_factor, …); HeadsKV is
	// then 1 and RopeDim qk_rope_head_dim, as the converter writes them.
	DeepSeek2 *testutil.DeepSeek2
	// RopeSections is a Qwen vision-language release's
	// rope.dimension_sections (qwen2vl, qwen3vl, qwen3vlmoe: text_config's
	// rope_scaling.mrope_section and a 0) and Deepstack its
	// n_deepstack_layers (vision_config's deepstack_visual_indexes
	// counted).
	RopeSections []int32
	Deepstack    int
	// Routing is glm4moe's and bailingmoe2's routing and shared experts
	// (config.json's n_shared_experts or num_shared_experts,
	// routed_scaling_factor, norm_topk_prob, n_group and topk_group; the
	// gating sigmoid); their NextN blocks are NextN.
	Routing *testutil.Routing
	// Cohere2 is cohere2's LayerNorm epsilon and logit scale
	// (config.json's layer_norm_eps and logit_scale); its window is
	// Window (sliding_window).
	Cohere2 *cohere2Shape
	// BiasNormEps, when not 0, makes the block and final norms LayerNorms
	// of weight and bias of this epsilon (starcoder2's norm_epsilon,
	// nemotron's norm_eps), written as attention.layer_norm_epsilon.
	BiasNormEps float32
	// ModernBert is modern-bert's LayerNorm epsilon, windowed layers'
	// RoPE base and global-layer period (modernbert.go).
	ModernBert *modernBertShape
}

// sharedFFN is the shared experts' width: deepseek2's n_shared_experts of
// the experts' width, run as one, or SharedFFN.
func (s shape) sharedFFN() int {
	if d := s.DeepSeek2; d != nil {
		return d.Shared * s.ExpertFFN
	}
	if r := s.Routing; r != nil {
		return r.Shared * cmp.Or(r.SharedWidth, s.ExpertFFN)
	}
	return s.SharedFFN
}

// gemma3nShape is the part of a Gemma 3n config.json's text_config only
// it has: altup_num_inputs, hidden_size_per_layer_input, laurel_rank and
// num_kv_shared_layers.
type gemma3nShape struct {
	AltUp, PerLayer, LaurelRank, SharedKV int
}

// keepLayers is s cut to its first n blocks: the shared KV layers are
// those past the first KVFrom (20 in both released models, where
// llama.cpp fixes it), none when n does not reach them.
func (s shape) keepLayers(n int) shape {
	if g := s.Gemma3n; g != nil {
		c := *g
		c.SharedKV = max(0, n-(s.Layers-g.SharedKV))
		s.Gemma3n = &c
	}
	if g := s.Gemma4; g != nil {
		c := *g
		c.SharedKV = max(0, n-(s.Layers-g.SharedKV))
		s.Gemma4 = &c
	}
	s.Layers = n
	s.DenseLead = min(s.DenseLead, n) // a count past block_count is refused
	// llama.cpp adds a DeepStack layer's features even to a text's rows
	// and asserts when the last layer, whose rows are cut to the outputs,
	// is one: fewer than n.
	s.Deepstack = min(s.Deepstack, n-1)
	return s
}

// keepExperts returns s with only the first n of each block's routed
// experts (and at most n of them a token).
func (s shape) keepExperts(n int) shape {
	s.Experts = n
	s.ExpertsUsed = min(s.ExpertsUsed, n)
	return s
}

// groupsFit reports whether s's expert groups (bailingmoe2's 8) still
// route n experts as llama.cpp checks them: fewer groups than experts,
// dividing them, the used groups holding the experts used.
func (s shape) groupsFit(n int) bool {
	r := s.Routing
	if r == nil || r.Groups <= 1 {
		return true
	}
	return n > r.Groups && n%r.Groups == 0 && min(s.ExpertsUsed, n) <= r.GroupsUsed*(n/r.Groups)
}

// qwen35 reports whether s is one of Qwen 3.5's architectures (gated
// delta-net and gated attention blocks).
func (s shape) qwen35() bool {
	return s.Arch == "qwen35" || s.Arch == "qwen35moe" || s.Arch == "qwen3next"
}

// convLayer reports whether layer l is a short convolution.
func (s shape) convLayer(l int) bool { return slices.Contains(s.ConvLayers, l) }

// keepAttention returns s with its last block attending when none of its
// blocks does (Granite 4.0-H's first attention layer is 5, so its first
// 4 blocks alone would be a hybrid without attention, which neither
// llama.cpp's converter nor this library makes).
func (s shape) keepAttention() shape {
	if s.mixersOnly() {
		return s // no layer attends
	}
	if s.Pattern != "" {
		return s.keepAttentionPattern()
	}
	for l := range s.Layers {
		if !s.convLayer(l) {
			return s
		}
	}
	s.ConvLayers = slices.DeleteFunc(slices.Clone(s.ConvLayers), func(l int) bool { return l >= s.Layers-1 })
	s.Name += fmt.Sprintf(", block %d attending", s.Layers-1)
	return s
}

// jambaExpertLayer reports whether jamba's layer l has experts (a
// router): with more than one expert, Jamba 1.x's odd layers
// (expert_layer_offset 1, period 2); a dense Jamba's experts are its one
// feed-forward.
func (s shape) jambaExpertLayer(l int) bool { return s.Experts > 1 && l%2 == 1 }

// mambaLayers lists the layers of n that are not the attention layers
// given.
func mambaLayers(n int, attention ...int) []int {
	var out []int
	for l := range n {
		if !slices.Contains(attention, l) {
			out = append(out, l)
		}
	}
	return out
}

// encoder reports whether s is a BERT-style embedding model: a WordPiece
// vocabulary, LayerNorms with biases, no output head.
func (s shape) encoder() bool { return s.NormEps != 0 }

// graniteScales are Granite's four multipliers.
type graniteScales struct{ Embedding, Residual, Attention, Logit float32 }

// granite33 is Granite 3.3's multipliers, which Granite 4.0-H-Micro's
// shape takes too.
var granite33 = &graniteScales{Embedding: 12, Residual: 0.22, Attention: 0.015625, Logit: 8}

// longRope is the LongRoPE part of a Phi-3/Phi-4 config.json.
type longRope struct {
	OrigContext int // original_max_position_embeddings
}

// attnFactor is the attention factor llama.cpp's converter writes for
// LongRoPE: sqrt(1 + ln(scale)/ln(original context)), scale being the
// context over the original one.
func (r *longRope) attnFactor(context int) float32 {
	scale := float64(context) / float64(r.OrigContext)
	if scale <= 1 {
		return 1
	}
	return float32(math.Sqrt(1 + math.Log(scale)/math.Log(float64(r.OrigContext))))
}

// ropeDim is the number of rotated dimensions of a head.
func (s shape) ropeDim() int {
	if s.RopeDim != 0 {
		return s.RopeDim
	}
	return s.headDim()
}

// llama3Rope is the rope_scaling block of a Llama 3.1 config.json.
type llama3Rope struct {
	Factor, LowFreqFactor, HighFreqFactor float64
	OriginalContext                       int
}

// llama31Rope is Llama 3.1's rope_scaling, which Apertus-8B's and EXAONE
// 3.5's config.json state too.
var llama31Rope = &llama3Rope{Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalContext: 8192}

// headDim is the size of one attention head.
func (s shape) headDim() int {
	if s.HeadDim != 0 || s.Heads == 0 { // mamba: no heads
		return s.HeadDim
	}
	return s.Embd / s.Heads
}

// shapes are the models mkmodel can imitate, from their config.json.
var shapes = []shape{
	{
		// A very small llama whose row lengths are multiples of 256, so
		// every type (the K-quants too) applies without fallbacks.
		Name: "tiny", Arch: "llama", Vocab: 512, Embd: 256, Layers: 2,
		Heads: 4, HeadsKV: 2, FFN: 512, Context: 512,
		RopeBase: 10000, RMSEps: 1e-5,
	},
	{
		Name: "tinyllama-1.1b", Arch: "llama", Vocab: 32000, Embd: 2048, Layers: 22,
		Heads: 32, HeadsKV: 4, FFN: 5632, Context: 2048,
		RopeBase: 10000, RMSEps: 1e-5,
	},
	{
		Name: "llama-3.1-8b", Arch: "llama", Vocab: 128256, Embd: 4096, Layers: 32,
		Heads: 32, HeadsKV: 8, FFN: 14336, Context: 131072,
		RopeBase: 500000, RMSEps: 1e-5,
		Llama3Rope: llama31Rope,
	},
	{
		// Qwen2.5-0.5B: rows of 896 (28 blocks of 32), which the X8
		// layout takes since it runs the last blocks one at a time, and
		// which llama-quantize's K mixes fall back from (Q5_0, Q8_0).
		Name: "qwen2.5-0.5b", Arch: "qwen2", Vocab: 151936, Embd: 896, Layers: 24,
		Heads: 14, HeadsKV: 2, FFN: 4864, Context: 32768,
		RopeBase: 1000000, RMSEps: 1e-6, QKVBias: true, TiedOutput: true,
	},
	{
		Name: "qwen2.5-7b", Arch: "qwen2", Vocab: 152064, Embd: 3584, Layers: 28,
		Heads: 28, HeadsKV: 4, FFN: 18944, Context: 32768,
		RopeBase: 1000000, RMSEps: 1e-6, QKVBias: true,
	},
	{
		Name: "gemma-2-9b", Arch: "gemma2", Vocab: 256000, Embd: 3584, Layers: 42,
		Heads: 16, HeadsKV: 8, HeadDim: 256, FFN: 14336, Context: 8192,
		RopeBase: 10000, RMSEps: 1e-6, TiedOutput: true,
		Window: 4096, AttnSoftcap: 50, FinalSoftcap: 30,
	},
	{
		Name: "qwen3-8b", Arch: "qwen3", Vocab: 151936, Embd: 4096, Layers: 36,
		Heads: 32, HeadsKV: 8, HeadDim: 128, FFN: 12288, Context: 40960,
		RopeBase: 1000000, RMSEps: 1e-6, QKNorm: true,
	},
	{
		// Qwen3-Embedding-0.6B: last-token pooling over the EOS its
		// vocabulary appends, tied embeddings.
		Name: "qwen3-embedding-0.6b", Arch: "qwen3", Vocab: 151669, Embd: 1024, Layers: 28,
		Heads: 16, HeadsKV: 8, HeadDim: 128, FFN: 3072, Context: 32768,
		RopeBase: 1000000, RMSEps: 1e-6, QKNorm: true, TiedOutput: true,
		Pooling: 3, AddEOS: true,
	},
	{
		// The text model of gemma-3-12b: local layers window 1024 with RoPE
		// base 10000, global ones base 1e6 with linear scaling 8.
		Name: "gemma-3-12b", Arch: "gemma3", Vocab: 262208, Embd: 3840, Layers: 48,
		Heads: 16, HeadsKV: 8, HeadDim: 256, FFN: 15360, Context: 131072,
		RopeBase: 1000000, RopeLin: 8, RMSEps: 1e-6, QKNorm: true, TiedOutput: true,
		Window: 1024,
	},
	{
		// Phi-4-mini-instruct: partial rotary factor 0.75 (96 of 128),
		// LongRoPE from an original context of 4096, tied embeddings.
		Name: "phi-4-mini", Arch: "phi3", Vocab: 200064, Embd: 3072, Layers: 32,
		Heads: 24, HeadsKV: 8, FFN: 8192, Context: 131072,
		RopeBase: 10000, RopeDim: 96, RMSEps: 1e-5, TiedOutput: true,
		LongRope: &longRope{OrigContext: 4096},
	},
	{
		// Granite 3.3 2B (and 3.1 2B): 40 layers of 32 heads of 64, 8 KV
		// heads, tied output.
		Name: "granite-3.3-2b", Arch: "granite", Vocab: 49159, Embd: 2048, Layers: 40,
		Heads: 32, HeadsKV: 8, FFN: 8192, Context: 131072,
		RopeBase: 10000000, RMSEps: 1e-5, TiedOutput: true,
		Granite: granite33,
	},
	{
		// MiniCPM4-8B: llama's layers (32 of 32 heads of 128, 2 KV heads,
		// SwiGLU 16384, untied), MiniCPM's multipliers from config.json's
		// scale_emb 12, scale_depth 1.4 over 32 layers and hidden_size over
		// dim_model_base 256, LongRoPE from an original context of 32768.
		// The widths are MiniCPM4.1-8B's config.json as quoted in public
		// code (MiniCPM4-8B has the same layers).
		Name: "minicpm4-8b", Arch: "minicpm", Vocab: 73448, Embd: 4096, Layers: 32,
		Heads: 32, HeadsKV: 2, FFN: 16384, Context: 32768,
		RopeBase: 10000, RMSEps: 1e-6,
		LongRope: &longRope{OrigContext: 32768},
		Granite:  &graniteScales{Embedding: 12, Residual: float32(1.4 / math.Sqrt(32)), Logit: 4096.0 / 256},
	},
	{
		// Granite 3.1 1B-A400M: 32 experts of width 512, 8 per token.
		Name: "granite-3.1-1b-a400m", Arch: "granitemoe", Vocab: 49155, Embd: 1024, Layers: 24,
		Heads: 16, HeadsKV: 8, FFN: 512, Context: 131072,
		RopeBase: 10000000, RMSEps: 1e-6, TiedOutput: true,
		Experts: 32, ExpertsUsed: 8, ExpertFFN: 512,
		Granite: &graniteScales{Embedding: 12, Residual: 0.22, Attention: 0.015625, Logit: 6},
	},
	{
		// Granite 4.0-H-Micro: 40 layers, attention (32 heads of 64, 8 KV
		// heads, no RoPE) at 5, 15, 25 and 35, the others Mamba-2 (64
		// heads of 64, one group, state 128, kernel 4); a dense SwiGLU of
		// 8192; tied output; the converter's context of 2^20 for a model
		// without RoPE. The multipliers are Granite 3.3's (not checked
		// against the release's config.json).
		Name: "granite-4.0-h-micro", Arch: "granitehybrid", Vocab: 100352, Embd: 2048, Layers: 40,
		Heads: 32, HeadsKV: 8, FFN: 8192, Context: 1 << 20,
		RopeBase: 10000, RMSEps: 1e-5, TiedOutput: true,
		ConvLayers: mambaLayers(40, 5, 15, 25, 35),
		SSM:        &testutil.SSM{Conv: 4, Inner: 4096, State: 128, Heads: 64, Groups: 1},
		Granite:    granite33,
	},
	{
		// Granite 4.0-H-Tiny (7B-A1B): H-Micro's layout at width 1536
		// (attention 12 heads of 128, 4 KV heads; Mamba-2 48 heads of 64),
		// every feed-forward 64 experts of 512, 6 a token, plus a shared
		// expert of 1024. Multipliers as H-Micro's (not checked).
		Name: "granite-4.0-h-tiny", Arch: "granitehybrid", Vocab: 100352, Embd: 1536, Layers: 40,
		Heads: 12, HeadsKV: 4, FFN: 512, Context: 1 << 20,
		RopeBase: 10000, RMSEps: 1e-5, TiedOutput: true,
		ConvLayers: mambaLayers(40, 5, 15, 25, 35),
		SSM:        &testutil.SSM{Conv: 4, Inner: 3072, State: 128, Heads: 48, Groups: 1},
		Experts:    64, ExpertsUsed: 6, ExpertFFN: 512, SharedFFN: 1024,
		Granite: &graniteScales{Embedding: 12, Residual: 0.22, Attention: 0.0078125, Logit: 6},
	},
	{
		// Qwen3.5-0.8B (text): 24 layers, each fourth gated attention (8
		// heads of 256, 2 KV heads, a quarter of the head rotated), the
		// others gated delta-net (16 key and 16 value heads of 128, kernel
		// 4); a dense SwiGLU of 3584; tied output; one NextN block.
		Name: "qwen3.5-0.8b", Arch: "qwen35", Vocab: 248320, Embd: 1024, Layers: 24,
		Heads: 8, HeadsKV: 2, HeadDim: 256, FFN: 3584, Context: 262144,
		RopeBase: 10000000, RopeDim: 64, RMSEps: 1e-6, QKNorm: true, TiedOutput: true,
		ConvLayers: mambaLayers(24, 3, 7, 11, 15, 19, 23),
		SSM:        &testutil.SSM{Conv: 4, Inner: 2048, State: 128, Heads: 16, Groups: 16}, NextN: 1,
	},
	{
		// Qwen3.5-9B (text): 0.8B's layout at width 4096, 32 layers
		// (attention 16 heads of 256, 4 KV heads; delta-net 16 key heads,
		// 32 value heads of 128), a SwiGLU of 12288, untied output.
		Name: "qwen3.5-9b", Arch: "qwen35", Vocab: 248320, Embd: 4096, Layers: 32,
		Heads: 16, HeadsKV: 4, HeadDim: 256, FFN: 12288, Context: 262144,
		RopeBase: 10000000, RopeDim: 64, RMSEps: 1e-6, QKNorm: true,
		ConvLayers: mambaLayers(32, 3, 7, 11, 15, 19, 23, 27, 31),
		SSM:        &testutil.SSM{Conv: 4, Inner: 4096, State: 128, Heads: 32, Groups: 16}, NextN: 1,
	},
	{
		// Qwen3.5-35B-A3B (text), from the model card: 40 layers, each
		// fourth gated attention (16 heads of 256, 2 KV heads, a quarter
		// of the head rotated), the others gated delta-net (16 key and 32
		// value heads of 128, kernel 4); every feed-forward 256 experts of
		// 512, 8 a token, and a shared expert of 512 behind its sigmoid
		// gate; untied output; one NextN block.
		Name: "qwen3.5-35b-a3b", Arch: "qwen35moe", Vocab: 248320, Embd: 2048, Layers: 40,
		Heads: 16, HeadsKV: 2, HeadDim: 256, FFN: 4096, Context: 262144,
		RopeBase: 10000000, RopeDim: 64, RMSEps: 1e-6, QKNorm: true,
		ConvLayers: mambaLayers(40, 3, 7, 11, 15, 19, 23, 27, 31, 35, 39),
		SSM:        &testutil.SSM{Conv: 4, Inner: 4096, State: 128, Heads: 32, Groups: 16}, NextN: 1,
		Experts: 256, ExpertsUsed: 8, ExpertFFN: 512, SharedFFN: 512,
	},
	{
		// Qwen3-Next-80B-A3B (text), from its config.json as third-party
		// copies state it: 48 layers, each fourth gated attention (16
		// heads of 256, 2 KV heads, a quarter of the head rotated, plain
		// NEOX RoPE), the others gated delta-net (16 key and 32 value heads
		// of 128, kernel 4; the value heads read the key heads in blocks);
		// 512 experts of 512, 10 a token, a gated shared expert of 512;
		// untied output; no NextN block (not checked against a converted
		// release).
		Name: "qwen3-next-80b-a3b", Arch: "qwen3next", Vocab: 151936, Embd: 2048, Layers: 48,
		Heads: 16, HeadsKV: 2, HeadDim: 256, FFN: 5120, Context: 262144,
		RopeBase: 10000000, RopeDim: 64, RMSEps: 1e-6, QKNorm: true,
		ConvLayers: mambaLayers(48, 3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47),
		SSM:        &testutil.SSM{Conv: 4, Inner: 4096, State: 128, Heads: 32, Groups: 16},
		Experts:    512, ExpertsUsed: 10, ExpertFFN: 512, SharedFFN: 512,
	},
	{
		// NVIDIA-Nemotron-Nano-9B-v2: 56 layers of one operator each
		// (hybrid_override_pattern: 27 Mamba-2, 25 ReLU² feed-forwards of
		// 15680, attention at 14, 21, 30 and 39 — 40 heads of 128, 8 KV
		// heads, no RoPE); Mamba-2 128 heads of 80 (inner 10240, not
		// 2 × 4480), 8 groups, state 128, kernel 4; untied output.
		// Nemotron-H-8B and Nemotron-Nano-12B-v2 are the same layout at
		// other sizes.
		Name: "nemotron-nano-9b-v2", Arch: "nemotron_h", Vocab: 131072, Embd: 4480, Layers: 56,
		Heads: 40, HeadsKV: 8, HeadDim: 128, FFN: 15680, Context: 131072,
		RopeBase: 10000, RMSEps: 1e-5,
		Pattern: "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
		SSM:     &testutil.SSM{Conv: 4, Inner: 10240, State: 128, Heads: 128, Groups: 8},
	},
	{
		// NVIDIA-Nemotron-3-Nano-30B-A3B: 52 layers of one operator (23
		// Mamba-2 of 64 heads of 64, 8 groups, state 128; 23 of 128
		// gate-less ReLU² experts of 1856, 6 a token, sigmoid-routed with
		// a selection bias, renormalised and scaled by 2.5, beside a shared
		// expert of 3712; 6 attention, 32 heads of 128, 2 KV heads, no
		// RoPE); untied output.
		Name: "nemotron-3-nano-30b-a3b", Arch: "nemotron_h_moe", Vocab: 131072, Embd: 2688, Layers: 52,
		Heads: 32, HeadsKV: 2, HeadDim: 128, FFN: 1856, Context: 262144,
		RopeBase: 10000, RMSEps: 1e-5,
		Pattern: "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
		SSM:     &testutil.SSM{Conv: 4, Inner: 4096, State: 128, Heads: 64, Groups: 8},
		Experts: 128, ExpertsUsed: 6, ExpertFFN: 1856, SharedFFN: 3712,
	},
	{
		// OLMo 2 1B (0425): no pre-norms, Q/K norms across the heads,
		// norms after attention and the feed-forward.
		Name: "olmo-2-1b", Arch: "olmo2", Vocab: 100352, Embd: 2048, Layers: 16,
		Heads: 16, HeadsKV: 16, FFN: 8192, Context: 4096,
		RopeBase: 500000, RMSEps: 1e-6,
	},
	{
		// OLMoE-1B-7B (0924 and 0125): 16 layers (llama.cpp's A1_7B for
		// olmoe) of 16 heads of 128, as many KV heads, Q/K norms across the
		// heads, 64 experts of 1024 (intermediate_size, which llama.cpp
		// sizes them by), 8 a token, not renormalised (norm_topk_prob
		// false); untied. Widths from OLMoE-1B-7B's config.json as
		// recalled (hidden_size 2048, vocab_size 50304,
		// max_position_embeddings 4096), not read from the file here.
		Name: "olmoe-1b-7b", Arch: "olmoe", Vocab: 50304, Embd: 2048, Layers: 16,
		Heads: 16, HeadsKV: 16, FFN: 1024, Context: 4096,
		RopeBase: 10000, RMSEps: 1e-5,
		Experts: 64, ExpertsUsed: 8, ExpertFFN: 1024,
	},
	{
		// Falcon-Mamba-7B: 64 Mamba-1 blocks of width 4096 (inner 8192,
		// state 16, kernel 4, time step rank 256), the rank, B and C
		// RMS-normalised without weights (ssm.dt_b_c_rms, model_type
		// falcon_mamba); vocabulary 65024 (a multiple of 8, which the
		// converter pads to); untied; the converter's context of 2^20 and
		// its head_count and feed_forward_length of 0. Widths recalled
		// from tiiuae/falcon-mamba-7b's config.json (hidden_size 4096,
		// num_hidden_layers 64, intermediate_size 8192, state_size 16,
		// conv_kernel 4, time_step_rank 256, vocab_size 65024,
		// layer_norm_epsilon 1e-5), not read from the file here.
		Name: "falcon-mamba-7b", Arch: "mamba", Vocab: 65024, Embd: 4096, Layers: 64,
		Context: 1 << 20, RMSEps: 1e-5,
		ConvLayers: mambaLayers(64),
		Mamba1:     &testutil.Mamba1{Conv: 4, Inner: 8192, State: 16, DtRank: 256},
		DtBCNorm:   true,
	},
	{
		// RWKV7-G1 1.5B (BlinkDL's RWKV-7 "Goose", the G1 reasoning
		// release): 24 blocks of width 2048 in heads of 64, a channel
		// mix of 4× (8192), the RWKV World vocabulary of 65536, untied,
		// LayerNorm epsilon 1e-5, the converter's context of 2^20 and
		// head_count 0. Recalled, not read from a release: the width,
		// depth and head size (llama.cpp's loader names 24 × 2048 its
		// 1.5B); the ranks (decay 96, in-context rate 96, value mix 64,
		// gate 256) computed from RWKV-LM's sizing rule for width C =
		// 2048 as recalled: 1.8·√C, 1.8·√C, 1.3·√C and 0.6·C^0.8, each
		// rounded to a multiple of 32, at least 32.
		Name: "rwkv7-g1-1.5b", Arch: "rwkv7", Vocab: 65536, Embd: 2048, Layers: 24,
		FFN: 8192, Context: 1 << 20, RMSEps: 1e-5,
		RWKV7: &testutil.RWKV7{Head: 64, Decay: 96, ICLR: 96, Value: 64, Gate: 256},
	},
	{
		// RWKV7-G1 2.9B: 32 blocks of width 2560 in heads of 64, a
		// channel mix of 10240, the same vocabulary and keys. Recalled
		// as the 1.5B's (llama.cpp names 32 × 2560 its 2.9B); ranks from
		// the same rule for width 2560: 96, 96, 64, 320.
		Name: "rwkv7-g1-2.9b", Arch: "rwkv7", Vocab: 65536, Embd: 2560, Layers: 32,
		FFN: 10240, Context: 1 << 20, RMSEps: 1e-5,
		RWKV7: &testutil.RWKV7{Head: 64, Decay: 96, ICLR: 96, Value: 64, Gate: 320},
	},
	{
		// Mamba-Codestral-7B (Mistral): 64 Mamba-2 blocks of width 4096
		// (inner 8192, expand 2, in 128 heads of 64; 8 groups, state 128,
		// kernel 4), each attn_norm, the mixer and the residual; vocabulary
		// 32768 (a multiple of 16, which the converter pads to); untied;
		// the converter's context of 2^20 and its head_count and
		// feed_forward_length of 0. Widths recalled from
		// mistralai/Mamba-Codestral-7B-v0.1's config.json (hidden_size
		// 4096, num_hidden_layers 64, expand 2, head_dim 64, num_heads 128,
		// n_groups 8, state_size 128, conv_kernel 4, vocab_size 32768,
		// layer_norm_epsilon 1e-5, tie_word_embeddings false), not read
		// from the file here; the converter takes conv_kernel, state_size,
		// head_dim, n_groups and layer_norm_epsilon by those names.
		Name: "mamba-codestral-7b", Arch: "mamba2", Vocab: 32768, Embd: 4096, Layers: 64,
		Context: 1 << 20, RMSEps: 1e-5,
		ConvLayers: mambaLayers(64),
		SSM:        &testutil.SSM{Conv: 4, Inner: 8192, State: 128, Heads: 128, Groups: 8},
	},
	{
		// Jamba Reasoning 3B (AI21, dense): 28 layers of width 2560, two
		// of them attention without RoPE (20 query heads of 128 on one
		// KV head), the others Mamba-1 (inner 5120, state 16, kernel 4,
		// time step rank 160 = 2560/16) with Jamba's norms of the rank,
		// B and C; a dense SwiGLU of 8192 in every layer (one expert:
		// the converter writes expert_count 1, no router); vocabulary
		// 65536; untied. Recalled, not read from the release's
		// config.json: the width, depth, two attention layers and their
		// MQA heads as AI21 described the model; the attention layers'
		// places (13 and 27: offset 13, period 14), the feed-forward
		// width 8192 and the vocabulary are guesses; the Mamba sizes are
		// Jamba's defaults (mamba_d_state 16, d_conv 4, expand 2, dt rank
		// ⌈width/16⌉).
		Name: "jamba-reasoning-3b", Arch: "jamba", Vocab: 65536, Embd: 2560, Layers: 28,
		Heads: 20, HeadsKV: 1, HeadDim: 128, FFN: 8192, Context: 262144,
		RMSEps:     1e-6,
		ConvLayers: mambaLayers(28, 13, 27),
		Mamba1:     &testutil.Mamba1{Conv: 4, Inner: 5120, State: 16, DtRank: 160},
		Experts:    1, ExpertsUsed: 1,
	},
	{
		// ERNIE-4.5-0.3B: llama's layers (NORM RoPE), heads of 128 so the
		// query (2048) is twice the width; no biases (use_bias false);
		// tied output.
		Name: "ernie-4.5-0.3b", Arch: "ernie4_5", Vocab: 103424, Embd: 1024, Layers: 18,
		Heads: 16, HeadsKV: 2, HeadDim: 128, FFN: 3072, Context: 131072,
		RopeBase: 500000, RMSEps: 1e-5, TiedOutput: true,
	},
	{
		// ERNIE-4.5-21B-A3B: ernie4_5's attention without biases
		// (use_bias false), layer 0 dense (moe_layer_start_index 1), then
		// 64 experts of 1536, 6 a token (moe_k), softmax-routed with the
		// selection bias exp_probs_b (e_score_correction_bias), beside two
		// shared experts run as one of 3072 (moe_num_shared_experts ×
		// moe_intermediate_size); tied output. 43 GB in F16: -layers 2
		// -type q8_0 keeps a dense and an expert block under 2 GB.
		Name: "ernie-4.5-21b-a3b", Arch: "ernie4_5-moe", Vocab: 103424, Embd: 2560, Layers: 28,
		Heads: 20, HeadsKV: 4, FFN: 12288, Context: 131072,
		RopeBase: 500000, RMSEps: 1e-5, TiedOutput: true,
		Experts: 64, ExpertsUsed: 6, ExpertFFN: 1536, SharedFFN: 3072, DenseLead: 1,
	},
	{
		// SmallThinker-4B-A0.6B (PowerInfer/SmallThinker-4BA0.6B-Instruct's
		// config.json): 1536 wide, 32 layers, 12 heads of 128 on 2 KV
		// heads, 32 ReGLU experts of 768, 4 a token, no shared expert,
		// sigmoid routing (no moe_primary_router_apply_softmax), no
		// sliding window (every layer global and rotated), rope_theta
		// 1.5e6, tied output; feed_forward_length the experts' width, as
		// the converter writes it.
		Name: "smallthinker-4b-a0.6b", Arch: "smallthinker", Vocab: 151936, Embd: 1536, Layers: 32,
		Heads: 12, HeadsKV: 2, HeadDim: 128, FFN: 768, Context: 32768,
		RopeBase: 1500000, RMSEps: 1e-6, TiedOutput: true,
		Experts: 32, ExpertsUsed: 4, ExpertFFN: 768,
	},
	{
		// SmallThinker-21B-A3B: 2560 wide, 52 layers, 28 heads on 4 KV
		// heads, 64 experts of 768, 6 a token, context 16K (the SmallThinker
		// repository's model table); heads of 128, sigmoid routing,
		// rope_theta 1e6 and tied output are its configuration class's
		// defaults (its config.json was not at hand); windowed, as the
		// paper's NoPE-RoPE hybrid and llama.cpp's 52-layer type have it
		// (attention.sliding_window 4096: layers 1-3 of each four windowed
		// and rotated). 42 GB in F16: -layers 5 -experts 8 -vocab 8192
		// -type q8_0 (0.36 GiB) keeps one period of the pattern and a
		// layer.
		Name: "smallthinker-21b-a3b", Arch: "smallthinker", Vocab: 151936, Embd: 2560, Layers: 52,
		Heads: 28, HeadsKV: 4, HeadDim: 128, FFN: 768, Context: 16384,
		RopeBase: 1000000, RMSEps: 1e-6, TiedOutput: true, Window: 4096,
		Experts: 64, ExpertsUsed: 6, ExpertFFN: 768,
	},
	{
		// Trinity Nano (Arcee, afmoe; llama.cpp's 56-layer 6B type): 1024
		// wide, 56 layers, 8 heads of 128 on 2 KV heads (the query as wide
		// as the embedding), per-head Q/K norms, the output gate, norms
		// before and after attention and the feed-forward; layers 0-1 dense
		// (3072), then 128 experts of 256, 8 a token, sigmoid-routed with
		// the selection bias, renormalised (route_norm), scaled by 2.826
		// (route_scale), beside one shared expert; three layers of four
		// windowed (2048) and rotated, every fourth global and unrotated;
		// vocabulary 200192, context 131072, rope_theta 10000, untied.
		// Recalled from Trinity-Nano's config.json and checked against
		// third-party test files quoting it (hidden_size 1024,
		// num_hidden_layers 56, moe_intermediate_size 256); 12 GB in F16:
		// -layers 4 -experts 8 -vocab 8192 -type q8_0 keeps a dense layer,
		// two expert layers and the global one.
		Name: "trinity-nano", Arch: "afmoe", Vocab: 200192, Embd: 1024, Layers: 56,
		Heads: 8, HeadsKV: 2, HeadDim: 128, FFN: 3072, Context: 131072,
		RopeBase: 10000, RMSEps: 1e-5, QKNorm: true, Window: 2048,
		Experts: 128, ExpertsUsed: 8, ExpertFFN: 256, DenseLead: 2,
		Routing: &testutil.Routing{Shared: 1, Scale: 2.826, Norm: true},
	},
	{
		// Trinity Mini (afmoe; llama.cpp's 32-layer 26B type): Trinity
		// Nano's make at 2048 wide, 32 layers, 32 heads of 128 on 4 KV
		// heads (the query twice the width), dense layers of 6144, experts
		// of 1024. Recalled from Trinity-Mini's config.json and checked
		// against third-party files quoting it (hidden_size 2048,
		// intermediate_size 6144, moe_intermediate_size 1024, 32/4 heads,
		// num_dense_layers 2, 128 experts, 8 a token, one shared).
		Name: "trinity-mini", Arch: "afmoe", Vocab: 200192, Embd: 2048, Layers: 32,
		Heads: 32, HeadsKV: 4, HeadDim: 128, FFN: 6144, Context: 131072,
		RopeBase: 10000, RMSEps: 1e-5, QKNorm: true, Window: 2048,
		Experts: 128, ExpertsUsed: 8, ExpertFFN: 1024, DenseLead: 2,
		Routing: &testutil.Routing{Shared: 1, Scale: 2.826, Norm: true},
	},
	{
		// Falcon-H1-1.5B: 2048 wide, 24 layers (llama.cpp's 1.5B type), 8
		// heads of 128 on 2 KV heads, ffn 4608, vocabulary 65537; every
		// layer's Mamba-2 mixer of 48 heads of 64 (inner 3072), 1 group,
		// state 256, kernel 4, with its gated norm (mamba_rms_norm) and
		// conv bias; untied. Widths as a falcon_h1 config quoted in a
		// third-party test states them (a third-party analysis of
		// Falcon-H1-1.5B gives the same width, 48 SSM heads of 64, state
		// 256, 1 group); rope_theta 1e11 and context 131072 assumed. The
		// µP multipliers are folded into the weights by llama.cpp's
		// converter and not in the file.
		Name: "falcon-h1-1.5b", Arch: "falcon-h1", Vocab: 65537, Embd: 2048, Layers: 24,
		Heads: 8, HeadsKV: 2, HeadDim: 128, FFN: 4608, Context: 131072,
		RopeBase: 1e11, RMSEps: 1e-5,
		SSM: &testutil.SSM{Conv: 4, Inner: 3072, State: 256, Heads: 48, Groups: 1},
	},
	{
		// Seed-OSS-36B: NEOX RoPE, Q/K/V biases (attention_bias; none on
		// the output), post_attention_norm before the feed-forward; heads
		// of 128, the query (10240) twice the width. 72 GB in F16:
		// -layers keeps its widths in a file the disk holds.
		Name: "seed-oss-36b", Arch: "seed_oss", Vocab: 155136, Embd: 5120, Layers: 64,
		Heads: 80, HeadsKV: 8, HeadDim: 128, FFN: 27648, Context: 524288,
		RopeBase: 10000000, RMSEps: 1e-6, QKVBias: true,
	},
	{
		// EXAONE 4.0 1.2B: no norms before attention and the feed-forward,
		// norms after them, per-head Q/K norms, NEOX; every layer global
		// and rotated (llama.cpp windows only the 64-layer 32B); Llama 3's
		// rope scaling as rope_freqs (its factors not checked against the
		// release); tied output.
		Name: "exaone-4.0-1.2b", Arch: "exaone4", Vocab: 102400, Embd: 2048, Layers: 30,
		Heads: 32, HeadsKV: 8, FFN: 4096, Context: 65536,
		RopeBase: 1000000, RMSEps: 1e-5, QKNorm: true, TiedOutput: true,
		Llama3Rope: &llama3Rope{Factor: 16, LowFreqFactor: 1, HighFreqFactor: 4, OriginalContext: 8192},
	},
	{
		// GLM-4-9B-0414 (and GLM-Z1-9B-0414, the same shape): Q/K/V
		// biases (attention_bias), half of each head rotated
		// (partial_rotary_factor 0.5) in NORM pairs, norms after
		// attention and the feed-forward besides the ones before, gate
		// and up fused in ffn_up; its own output matrix. The embedding and
		// output alone are 2.5 GB in F16: -layers 2 -type q8_0 keeps its
		// widths under 2 GB.
		Name: "glm-4-9b", Arch: "glm4", Vocab: 151552, Embd: 4096, Layers: 40,
		Heads: 32, HeadsKV: 2, FFN: 13696, Context: 32768,
		RopeBase: 10000, RopeDim: 64, RMSEps: 1e-5, QKVBias: true,
	},
	{
		// GLM-4-32B-0414 (and GLM-Z1-32B): glm-4-9b's block without the
		// Q/K/V biases, 48 heads on 2 KV heads, as bartowski's GLM-Z1-32B
		// file states it (613 tensors: ten a block, four of them norms).
		// -layers 1 -type q4_k_m keeps it under 2 GB.
		Name: "glm-4-32b", Arch: "glm4", Vocab: 151552, Embd: 6144, Layers: 61,
		Heads: 48, HeadsKV: 2, FFN: 23040, Context: 32768,
		RopeBase: 10000, RopeDim: 64, RMSEps: 1e-5,
	},
	{
		// LFM2-1.2B: 10 gated short-convolution layers (kernel 3) and 6
		// GQA layers (2, 5, 8, 10, 12, 14) with per-head Q/K norms;
		// block_ff_dim 12288 auto-adjusted to 8192 as the converter
		// writes it; tied output.
		Name: "lfm2-1.2b", Arch: "lfm2", Vocab: 65536, Embd: 2048, Layers: 16,
		Heads: 32, HeadsKV: 8, FFN: 8192, Context: 128000,
		RopeBase: 1000000, RMSEps: 1e-5, QKNorm: true, TiedOutput: true,
		ConvLayers: []int{0, 1, 3, 4, 6, 7, 9, 11, 13, 15}, ConvKernel: 3,
	},
	{
		// LFM2-8B-A1B: LFM2's layout at 24 layers (attention at 2, 6, 10,
		// 14, 18 and 21, the others short convolutions of kernel 3); the
		// first 2 feed-forwards dense (7168 wide), the others 32 experts
		// of width 1792, 4 a token, sigmoid-gated with a selection bias;
		// tied output. -layers 4 keeps a dense conv layer, the attention
		// layer 2 with experts and the conv layer 3 with experts.
		Name: "lfm2-8b-a1b", Arch: "lfm2moe", Vocab: 65536, Embd: 2048, Layers: 24,
		Heads: 32, HeadsKV: 8, FFN: 7168, Context: 128000,
		RopeBase: 1000000, RMSEps: 1e-5, QKNorm: true, TiedOutput: true,
		ConvLayers: []int{0, 1, 3, 4, 5, 7, 8, 9, 11, 12, 13, 15, 16, 17, 19, 20, 22, 23}, ConvKernel: 3,
		Experts: 32, ExpertsUsed: 4, ExpertFFN: 1792, DenseLead: 2,
	},
	{
		// DeepSeek-V2-Lite (DeepSeek-Coder-V2-Lite has the same shape):
		// latent attention of rank 512 with no query rank (attn_q), heads
		// of 128 unrotated and 64 rotated query dims and values of 128;
		// layer 0's feed-forward dense (10944), the others 64 experts of
		// 1408, 6 a token, softmax-routed, not renormalised, scaled by
		// routed_scaling_factor 1, beside 2 shared experts; YaRN ×40 over
		// 4096 positions with mscale_all_dim 0.707 (written as a tenth).
		Name: "deepseek-v2-lite", Arch: "deepseek2", Vocab: 102400, Embd: 2048, Layers: 27,
		Heads: 16, HeadsKV: 1, FFN: 10944, Context: 163840,
		RopeBase: 10000, RopeDim: 64, RMSEps: 1e-6,
		Experts: 64, ExpertsUsed: 6, ExpertFFN: 1408, DenseLead: 1,
		Yarn:      &testutil.Yarn{Factor: 40, OrigContext: 4096, LogMul: 0.0707},
		DeepSeek2: &testutil.DeepSeek2{KVLora: 512, Nope: 128, Rope: 64, VHead: 128, Shared: 2, Scale: 1},
	},
	{
		// GLM-4.7-Flash (30B-A3B), which llama.cpp's converter writes as
		// deepseek2: config.json's hidden 2048, 47 layers, 20 heads,
		// q_lora_rank 768, kv_lora_rank 512, heads of 192 unrotated and 64
		// rotated query dims and values of 256, layer 0 dense (10240), the
		// others 64 experts of 1536, 4 a token, sigmoid-routed with a
		// selection bias, renormalised, scaled by 1.8, beside 1 shared
		// expert; rope_theta 1e6, RMS eps 1e-5, 202752 positions, 154880
		// tokens (hidden, layers, heads, widths, θ, ε and vocabulary as a
		// copy of its config.json states them; the MLA ranks from a model
		// card's architecture list; the expert width 1536 from the 30B
		// total they give).
		Name: "glm-4.7-flash", Arch: "deepseek2", Vocab: 154880, Embd: 2048, Layers: 47,
		Heads: 20, HeadsKV: 1, FFN: 10240, Context: 202752,
		RopeBase: 1000000, RopeDim: 64, RMSEps: 1e-5,
		Experts: 64, ExpertsUsed: 4, ExpertFFN: 1536, DenseLead: 1,
		DeepSeek2: &testutil.DeepSeek2{KVLora: 512, QLora: 768, Nope: 192, Rope: 64, VHead: 256, Shared: 1, Scale: 1.8, Norm: true, Gating: 2, SelBias: true},
	},
	{
		// MiniCPM3-4B: 62 layers (llama.cpp's LLM_TYPE_4B for minicpm3)
		// of deepseek2's latent attention in the older form (one
		// attn_kv_b): 40 heads of 64 unrotated and 32 rotated query dims
		// and values of 64, kv_lora_rank 256, q_lora_rank 768; a dense
		// SwiGLU of 6400; LongRoPE from an original context of 32768; the
		// multipliers are fixed in llama.cpp's graph, so none is written.
		// Widths from MiniCPM3-4B's config.json (hidden_size 2560,
		// num_key_value_heads 40, vocab_size 73448), as recalled, not
		// read from the file here.
		Name: "minicpm3-4b", Arch: "minicpm3", Vocab: 73448, Embd: 2560, Layers: 62,
		Heads: 40, HeadsKV: 40, FFN: 6400, Context: 32768,
		RopeBase: 10000, RopeDim: 32, RMSEps: 1e-5,
		LongRope:  &longRope{OrigContext: 32768},
		DeepSeek2: &testutil.DeepSeek2{KVLora: 256, QLora: 768, Nope: 64, Rope: 32, VHead: 64, Joined: true},
	},
	{
		// SmolLM3 3B: llama's graph, every fourth layer without RoPE.
		Name: "smollm3-3b", Arch: "smollm3", Vocab: 128256, Embd: 2048, Layers: 36,
		Heads: 16, HeadsKV: 4, FFN: 11008, Context: 65536,
		RopeBase: 5000000, RMSEps: 1e-6, TiedOutput: true,
	},
	{
		// Qwen3-VL-8B-Instruct's text model (config.json's text_config:
		// Qwen3-8B's widths, RoPE base 5e6, 262144 positions; interleaved
		// mrope_section [24, 20, 20]; 3 DeepStack layers).
		Name: "qwen3-vl-8b", Arch: "qwen3vl", Vocab: 151936, Embd: 4096, Layers: 36,
		Heads: 32, HeadsKV: 8, HeadDim: 128, FFN: 12288, Context: 262144,
		RopeBase: 5000000, RMSEps: 1e-6, QKNorm: true,
		RopeSections: []int32{24, 20, 20, 0}, Deepstack: 3,
	},
	{
		// Qwen3-VL-30B-A3B-Instruct's text model: Qwen3-30B-A3B's experts
		// (128 of width 768, 8 a token) and widths, qwen3-vl-8b's RoPE.
		Name: "qwen3-vl-30b-a3b", Arch: "qwen3vlmoe", Vocab: 151936, Embd: 2048, Layers: 48,
		Heads: 32, HeadsKV: 4, HeadDim: 128, FFN: 6144, Context: 262144,
		RopeBase: 5000000, RMSEps: 1e-6, QKNorm: true,
		Experts: 128, ExpertsUsed: 8, ExpertFFN: 768,
		RopeSections: []int32{24, 20, 20, 0}, Deepstack: 3,
	},
	{
		// Qwen2.5-VL-7B-Instruct's text model: Qwen2.5-7B's widths and
		// biases, 128000 positions, contiguous mrope_section [16, 24, 24].
		Name: "qwen2.5-vl-7b", Arch: "qwen2vl", Vocab: 152064, Embd: 3584, Layers: 28,
		Heads: 28, HeadsKV: 4, FFN: 18944, Context: 128000,
		RopeBase: 1000000, RMSEps: 1e-6, QKVBias: true,
		RopeSections: []int32{16, 24, 24, 0},
	},
	{
		// Command R7B (c4ai-command-r7b-12-2024): widths from its model
		// card's module listing (embedding 256000×4096, q 4096, k and v
		// 1024: 8 KV heads of 128, gate and up 14336, 32 layers), the
		// window of 4096 from transformers' Cohere2 page; rope_theta 50000,
		// logit_scale 0.25 and layer_norm_eps 1e-5 as its config.json
		// states them (recalled, not checked against a stored copy). Three
		// windowed rotated layers of four, the fourth global without RoPE;
		// tied output. -layers 4 -vocab 32000 keeps one of each kind.
		Name: "command-r7b", Arch: "cohere2", Vocab: 256000, Embd: 4096, Layers: 32,
		Heads: 32, HeadsKV: 8, FFN: 14336, Context: 131072,
		RopeBase: 50000, RMSEps: 1e-5, TiedOutput: true, Window: 4096,
		Cohere2: &cohere2Shape{NormEps: 1e-5, LogitScale: 0.25},
	},
	{
		// AFM-4.5B: widths from the config.json of a fine-tune of it
		// (Delta-Vector/Austral-AFM-SFT: hidden 2560, intermediate 18432,
		// 20 heads of 128 on 4 KV heads, 36 layers, YaRN ×20 over 4096
		// positions to 65536, rope_theta 10000; its vocab_size 128005 is
		// one past AFM-4.5B's 128004, taken here); a gate-less ReLU²
		// feed-forward; its own output matrix.
		Name: "afm-4.5b", Arch: "arcee", Vocab: 128004, Embd: 2560, Layers: 36,
		Heads: 20, HeadsKV: 4, FFN: 18432, Context: 65536,
		RopeBase: 10000, RMSEps: 1e-5,
		Yarn: &testutil.Yarn{Factor: 20, OrigContext: 4096},
	},
	{
		// Apertus-8B-Instruct-2509: config.json (as nm-testing's NVFP4 copy
		// states it: hidden 4096, intermediate 21504, 32 heads on 8 KV
		// heads, 32 layers, rope_theta 1.2e7 with Llama 3's scaling ×8
		// over 8192, 65536 positions, untied); per-head Q/K norms, a
		// gate-less xIELU feed-forward whose parameters (xielu.* arrays)
		// are its initial ones in every layer here.
		Name: "apertus-8b", Arch: "apertus", Vocab: 131072, Embd: 4096, Layers: 32,
		Heads: 32, HeadsKV: 8, FFN: 21504, Context: 65536,
		RopeBase: 12000000, RMSEps: 1e-5, QKNorm: true,
		Llama3Rope: llama31Rope,
	},
	{
		// Hunyuan-7B-Instruct: hidden 4096, intermediate 14336, 32 heads
		// of 128 on 8 KV heads, 32 layers, vocab 128167, rope_theta 10000
		// with dynamic alpha 1000 (as a public test fixture of its
		// config.json states it); the converter writes the base as
		// 10000·1000^(128/126) and a context of 256K. Per-head Q/K norms
		// after RoPE; tied output.
		Name: "hunyuan-7b", Arch: "hunyuan-dense", Vocab: 128167, Embd: 4096, Layers: 32,
		Heads: 32, HeadsKV: 8, FFN: 14336, Context: 262144,
		RopeBase: 11158840, RMSEps: 1e-5, QKNorm: true, TiedOutput: true,
	},
	{
		// EXAONE-3.5-2.4B-Instruct: hidden 2560, intermediate 7168, 32
		// heads of 80 on 8 KV heads, 30 layers, vocab 102400, 32768
		// positions, rope_theta 1e6 with Llama 3's scaling ×8 over 8192
		// (rope_freqs), tied output — all recalled from its config.json,
		// not checked against a stored copy.
		Name: "exaone-3.5-2.4b", Arch: "exaone", Vocab: 102400, Embd: 2560, Layers: 30,
		Heads: 32, HeadsKV: 8, FFN: 7168, Context: 32768,
		RopeBase: 1000000, RMSEps: 1e-5, TiedOutput: true,
		Llama3Rope: llama31Rope,
	},
	{
		// StarCoder2-3B: hidden 3072, intermediate 12288, 24 heads of 128
		// on 2 KV heads, 30 layers, vocab 49152, 16384 positions,
		// rope_theta about 999999.44, norm_epsilon 1e-5, tied output
		// (recalled from its config.json, not checked). LayerNorms with
		// biases, biases on every projection, GELU without a gate; its
		// sliding_window of 4096 llama.cpp does not read.
		Name: "starcoder2-3b", Arch: "starcoder2", Vocab: 49152, Embd: 3072, Layers: 30,
		Heads: 24, HeadsKV: 2, FFN: 12288, Context: 16384,
		RopeBase: 999999.44, QKVBias: true, TiedOutput: true, BiasNormEps: 1e-5,
	},
	{
		// CodeGemma-2B (Gemma-2B's widths): hidden 2048, intermediate
		// 16384, 8 heads of 256 on 1 KV head, 18 layers, vocab 256000,
		// 8192 positions, rope_theta 10000, rms_norm_eps 1e-6 (recalled,
		// not checked); the output always the embedding.
		Name: "codegemma-2b", Arch: "gemma", Vocab: 256000, Embd: 2048, Layers: 18,
		Heads: 8, HeadsKV: 1, HeadDim: 256, FFN: 16384, Context: 8192,
		RopeBase: 10000, RMSEps: 1e-6, TiedOutput: true,
	},
	{
		// Nemotron-Mini-4B-Instruct (Minitron-4B's widths): hidden 3072,
		// intermediate 9216, 24 heads of 128 on 8 KV heads, 32 layers,
		// vocab 256000, 4096 positions, rope_theta 10000, partial_rotary_factor
		// 0.5 (64 of 128 rotated), norm_eps 1e-5, untied (recalled from
		// its config.json, not checked). LayerNorms with biases (the
		// converter's layernorm1p +1), ReLU² without a gate, no biases on
		// the projections.
		Name: "nemotron-mini-4b", Arch: "nemotron", Vocab: 256000, Embd: 3072, Layers: 32,
		Heads: 24, HeadsKV: 8, HeadDim: 128, FFN: 9216, Context: 4096,
		RopeBase: 10000, RopeDim: 64, BiasNormEps: 1e-5,
	},
	{
		// StableLM 2 1.6B (and its Zephyr chat model): hidden 2048,
		// intermediate 5632, 32 heads of 64 (32 KV heads), 24 layers,
		// vocab 100352, 4096 positions, rope_theta 10000,
		// partial_rotary_factor 0.25 (16 of 64 rotated), layer_norm_eps
		// 1e-5, use_qkv_bias, untied (from the brief's reading of its
		// config.json, not checked here). LayerNorms with biases, SwiGLU,
		// ffn_norm in every block.
		Name: "stablelm-2-1.6b", Arch: "stablelm", Vocab: 100352, Embd: 2048, Layers: 24,
		Heads: 32, HeadsKV: 32, FFN: 5632, Context: 4096,
		RopeBase: 10000, RopeDim: 16, QKVBias: true, BiasNormEps: 1e-5,
	},
	{
		// Phi-2 (microsoft/phi-2's config.json, checked against public
		// copies of its module printout and config): hidden 2560,
		// intermediate 10240, 32 heads of 80 (no grouped KV heads), 32
		// layers, vocab 51200, 2048 positions, rope_theta 10000,
		// partial_rotary_factor 0.4 (32 of 80 rotated), layer_norm_eps
		// 1e-5, untied lm_head with a bias. One LayerNorm before
		// attention and the feed-forward in parallel, biases on Q, K, V,
		// dense, fc1 and fc2, GELU without a gate.
		Name: "phi-2", Arch: "phi2", Vocab: 51200, Embd: 2560, Layers: 32,
		Heads: 32, HeadsKV: 32, FFN: 10240, Context: 2048,
		RopeBase: 10000, RopeDim: 32, QKVBias: true, BiasNormEps: 1e-5,
	},
	{
		// GPT-2 XL (openai-community/gpt2-xl's config.json: n_embd 1600,
		// n_layer 48, n_head 25 of 64, n_inner unset: 4 × 1600,
		// n_positions 1024, vocab 50257, layer_norm_epsilon 1e-5,
		// gelu_new): learned positions, pre-LayerNorms with bias, fused
		// c_attn with bias, biases everywhere, lm_head tied to wte (the
		// converter writes no output.weight). GPT-2 124M to 1.5B and
		// distilgpt2 are this layout, narrower and shallower.
		Name: "gpt2-xl", Arch: "gpt2", Vocab: 50257, Embd: 1600, Layers: 48,
		Heads: 25, HeadsKV: 25, FFN: 6400, Context: 1024, BiasNormEps: 1e-5, TiedOutput: true,
	},
	{
		// StarCoderBase-1B (bigcode/starcoderbase-1b, GPTBigCode: n_embd
		// 2048, n_layer 24, n_head 16 of 128 with multi_query (one KV
		// head), n_inner 8192, n_positions 8192, vocab 49152,
		// layer_norm_epsilon 1e-5): gpt2's layout with attn_qkv 2048 +
		// 2 × 128 wide; lm_head tied to wte, GPTBigCode's default.
		Name: "starcoderbase-1b", Arch: "starcoder", Vocab: 49152, Embd: 2048, Layers: 24,
		Heads: 16, HeadsKV: 1, FFN: 8192, Context: 8192, BiasNormEps: 1e-5, TiedOutput: true,
	},
	{
		// Pythia-1.4B (EleutherAI/pythia-1.4b's config.json, GPTNeoX:
		// hidden 2048, 24 layers of 16 heads of 128, intermediate 8192,
		// rotary_pct 0.25 (32 of 128 rotated), rotary_emb_base 10000,
		// max_position_embeddings 2048, vocab 50304, layer_norm_eps
		// 1e-5, use_parallel_residual, untied embed_out): LayerNorms with
		// bias, fused query_key_value with bias, biases everywhere.
		Name: "pythia-1.4b", Arch: "gptneox", Vocab: 50304, Embd: 2048, Layers: 24,
		Heads: 16, HeadsKV: 16, FFN: 8192, Context: 2048,
		RopeBase: 10000, RopeDim: 32, BiasNormEps: 1e-5,
	},
	{
		// Qwen3-30B-A3B: 128 experts of width 768, 8 per token.
		Name: "qwen3-30b-a3b", Arch: "qwen3moe", Vocab: 151936, Embd: 2048, Layers: 48,
		Heads: 32, HeadsKV: 4, HeadDim: 128, FFN: 6144, Context: 40960,
		RopeBase: 1000000, RMSEps: 1e-6, QKNorm: true,
		Experts: 128, ExpertsUsed: 8, ExpertFFN: 768,
	},
	{
		// gpt-oss-20b: biases on every projection, the router and each
		// expert; attention sinks; a window of 128 on the even layers;
		// 32 experts, 4 a token; YaRN ×32 over 4096 positions.
		Name: "gpt-oss-20b", Arch: "gpt-oss", Vocab: 201088, Embd: 2880, Layers: 24,
		Heads: 64, HeadsKV: 8, HeadDim: 64, FFN: 2880, Context: 131072,
		RopeBase: 150000, RMSEps: 1e-5, QKVBias: true,
		Window: 128, Experts: 32, ExpertsUsed: 4, ExpertFFN: 2880,
		Yarn: &testutil.Yarn{Factor: 32, OrigContext: 4096},
	},
	{
		// Gemma 3n E2B's text decoder (Ollama's gemma3n:e2b): 30 layers
		// of 8 heads of 256, 2 KV heads; four of five layers windowed
		// (512, RoPE base 10000), the others global (base 1e6); the
		// last 10 reading the KV caches of layers 18 and 19; 4 AltUp
		// streams, per-layer inputs of 256, LAuReL of rank 64; the
		// vocabulary padded to 262400 for the vision and audio tokens.
		Name: "gemma-3n-e2b", Arch: "gemma3n", Vocab: 262400, Embd: 2048, Layers: 30,
		Heads: 8, HeadsKV: 2, HeadDim: 256, FFN: 8192, Context: 32768,
		RopeBase: 1000000, RMSEps: 1e-6, QKNorm: true, TiedOutput: true,
		Window: 512, Gemma3n: &gemma3nShape{AltUp: 4, PerLayer: 256, LaurelRank: 64, SharedKV: 10},
	},
	{
		// Gemma 3n E4B: E2B's widths at 35 layers, the feed-forward
		// 16384 wide, the last 15 layers sharing KV caches.
		Name: "gemma-3n-e4b", Arch: "gemma3n", Vocab: 262400, Embd: 2048, Layers: 35,
		Heads: 8, HeadsKV: 2, HeadDim: 256, FFN: 16384, Context: 32768,
		RopeBase: 1000000, RMSEps: 1e-6, QKNorm: true, TiedOutput: true,
		Window: 512, Gemma3n: &gemma3nShape{AltUp: 4, PerLayer: 256, LaurelRank: 64, SharedKV: 15},
	},
	{
		// Gemma 4 E2B's text decoder: 35 layers of 8 heads, 1 KV head;
		// four sliding layers (512, heads of 256, RoPE base 10000) then
		// a full one (heads of 512, base 1e6, a quarter of the pairs
		// rotated); the last 20 layers reading the caches of layers 13
		// and 14, their feed-forward twice as wide; per-layer inputs of
		// 256.
		Name: "gemma-4-e2b", Arch: "gemma4", Vocab: 262144, Embd: 1536, Layers: 35,
		Heads: 8, HeadsKV: 1, HeadDim: 512, FFN: 6144, Context: 131072,
		RopeBase: 1000000, RMSEps: 1e-6, QKNorm: true, TiedOutput: true, Window: 512,
		Gemma4: &gemma4Shape{HeadDimSWA: 256, Period: 5, PerLayer: 256, SharedKV: 20, DoubleWide: true, Partial: 0.25, RopeBaseSWA: 10000},
	},
	{
		// Gemma 4 31B: 60 layers of 32 heads; five sliding layers
		// (1024, heads of 256, 16 KV heads) then a full one (heads of
		// 512, 4 KV heads whose keys are their values); no per-layer
		// inputs, no shared KV.
		Name: "gemma-4-31b", Arch: "gemma4", Vocab: 262144, Embd: 5376, Layers: 60,
		Heads: 32, HeadsKV: 16, HeadDim: 512, FFN: 21504, Context: 262144,
		RopeBase: 1000000, RMSEps: 1e-6, QKNorm: true, TiedOutput: true, Window: 1024,
		Gemma4: &gemma4Shape{HeadDimSWA: 256, KVHeadsFull: 4, Period: 6, KEqV: true, Partial: 0.25, RopeBaseSWA: 10000},
	},
	{
		// Gemma 4 26B-A4B, the mixture of experts: 30 layers of 16
		// heads; five sliding layers (1024, heads of 256, 8 KV heads)
		// then a full one (heads of 512, 2 KV heads whose keys are
		// their values); every layer a dense feed-forward of 2112 beside
		// 128 experts of 704, 8 a token, their gate and up fused as the
		// converter writes them.
		Name: "gemma-4-26b-a4b", Arch: "gemma4", Vocab: 262144, Embd: 2816, Layers: 30,
		Heads: 16, HeadsKV: 8, HeadDim: 512, FFN: 2112, Context: 262144,
		RopeBase: 1000000, RMSEps: 1e-6, QKNorm: true, TiedOutput: true, Window: 1024,
		Experts: 128, ExpertsUsed: 8, ExpertFFN: 704,
		Gemma4: &gemma4Shape{HeadDimSWA: 256, KVHeadsFull: 2, Period: 6, KEqV: true, Partial: 0.25, RopeBaseSWA: 10000},
	},
	{
		// EmbeddingGemma 300M (Ollama's embeddinggemma): Gemma 3's layers
		// over the whole text, a symmetric window of 512 on five layers of
		// six, mean pooling, a dense projection through 3072.
		Name: "embeddinggemma-300m", Arch: "gemma-embedding", Vocab: 262144, Embd: 768, Layers: 24,
		Heads: 3, HeadsKV: 1, HeadDim: 256, FFN: 1152, Context: 2048,
		RopeBase: 1000000, RMSEps: 1e-6, QKNorm: true, TiedOutput: true,
		Window: 512, Pooling: 1, Dense: 3072,
	},
	{
		// nomic-embed-text-v1.5 (Ollama's nomic-embed-text): fused QKV
		// without biases, NEOX RoPE of base 1000, SwiGLU, mean pooling;
		// the converter sets its context to the 2048 it was trained at.
		Name: "nomic-embed-text-v1.5", Arch: "nomic-bert", Vocab: 30522, Embd: 768, Layers: 12,
		Heads: 12, HeadsKV: 12, FFN: 3072, Context: 2048,
		RopeBase: 1000, NormEps: 1e-12, Pooling: 1,
	},
	{
		// nomic-embed-text-v2-moe: nomic-bert with Q/K/V, output and
		// feed-forward biases, GELU feed-forwards, every other layer's
		// (1, 3, …) 8 experts of 3072, 2 a token; NEOX RoPE, mean pooling;
		// the converter sets its context to the 512 it was trained at.
		// Recalled from its config.json, not checked here: the vocabulary
		// (XLM-R's 250048), rotary_emb_base 10000, layer_norm_epsilon
		// 1e-5.
		Name: "nomic-embed-text-v2-moe", Arch: "nomic-bert-moe", Vocab: 250048, Embd: 768, Layers: 12,
		Heads: 12, HeadsKV: 12, FFN: 3072, Context: 512,
		RopeBase: 10000, NormEps: 1e-5, Pooling: 1,
		Experts: 8, ExpertsUsed: 2, ExpertFFN: 3072, MoEEvery: 2,
	},
	{
		// ModernBERT-base (answerdotai; the stack of
		// granite-embedding-english-r2 and nomic-modernbert-embed):
		// pre-norm LayerNorms without bias, fused QKV and GeGLU, no
		// biases, attention over the whole text, a window of 128 (64
		// either side) on two layers of three from layer 1, global RoPE
		// base 160000 and local 10000. Recalled from its config.json, not
		// checked here: every width and base above, the vocabulary of
		// 50368, the context of 8192, norm_eps 1e-5. The MLM checkpoint
		// names no pooling.
		Name: "modernbert-base", Arch: "modern-bert", Vocab: 50368, Embd: 768, Layers: 22,
		Heads: 12, HeadsKV: 12, FFN: 1152, Context: 8192, RopeBase: 160000, RMSEps: 1e-5,
		TiedOutput: true, Window: 128,
		ModernBert: &modernBertShape{NormEps: 1e-5, RopeBaseSWA: 10000, Every: 3},
	},
	{
		// jina-embeddings-v2-base-en (jina-bert-v2): BERT's post-norm
		// blocks with q/k/v/output biases but no position embeddings —
		// ALiBi biases the scores (llama.cpp's maximum bias 8) — and a
		// GELU-gated feed-forward (gated_layers split into ffn_gate and
		// ffn_up, no bias; ffn_down with one), mean pooling. Recalled from
		// its config.json, not checked here: the vocabulary of 30528, 12
		// heads, intermediate 3072, layer_norm_eps 1e-12, the context of
		// 8192 (ALiBi lets it run past the 512 it was trained at).
		Name: "jina-embeddings-v2-base-en", Arch: "jina-bert-v2", Vocab: 30528, Embd: 768, Layers: 12,
		Heads: 12, HeadsKV: 12, FFN: 3072, Context: 8192,
		NormEps: 1e-12, Pooling: 1, QKVBias: true,
	},
	{
		// bge-small-en-v1.5: BERT with learned positions and every bias,
		// GELU feed-forward, CLS pooling.
		Name: "bge-small-en-v1.5", Arch: "bert", Vocab: 30522, Embd: 384, Layers: 12,
		Heads: 12, HeadsKV: 12, FFN: 1536, Context: 512,
		NormEps: 1e-12, Pooling: 2, QKVBias: true,
	},
	{
		// all-MiniLM-L6-v2: bge-small's shape in 6 layers, mean pooling.
		Name: "all-minilm-l6-v2", Arch: "bert", Vocab: 30522, Embd: 384, Layers: 6,
		Heads: 12, HeadsKV: 12, FFN: 1536, Context: 512,
		NormEps: 1e-12, Pooling: 1, QKVBias: true,
	},
	{
		// GLM-4.5-Air (glm4moe): 46 layers and one NextN block, layer 0
		// dense (first_k_dense_replace 1), then 128 experts of 1408, 8 a
		// token, sigmoid-routed with the selection bias, renormalised,
		// scale 1.0, beside one shared expert; 96 heads of 128 on 8 KV
		// heads (the query 3 × the width), Q/K/V biases, no Q/K norms,
		// NEOX RoPE over half of each head (partial_rotary_factor 0.5).
		// Widths from NVIDIA Megatron Bridge's GLM 4.5 page and the
		// model's config.json. -layers 2 -experts 8 keeps a dense and an
		// expert block and the NextN block small.
		Name: "glm-4.5-air", Arch: "glm4moe", Vocab: 151552, Embd: 4096, Layers: 46, NextN: 1,
		Heads: 96, HeadsKV: 8, HeadDim: 128, FFN: 10944, Context: 131072,
		RopeBase: 1000000, RopeDim: 64, RMSEps: 1e-5, QKVBias: true,
		Experts: 128, ExpertsUsed: 8, ExpertFFN: 1408, DenseLead: 1,
		Routing: &testutil.Routing{Shared: 1, Scale: 1, Norm: true, Gating: 2},
	},
	{
		// GLM-4.6 (and GLM-4.7, of the same shape; GLM-4.5's but for its
		// 131072 context): 92 layers and one NextN block, the first 3
		// dense, then 160 experts of 1536, 8 a token, scale 2.5, one
		// shared expert; 96 heads of 128 on 8, Q/K/V biases and per-head
		// Q/K norms (use_qk_norm), half the head rotated. Widths from a
		// GLM-4.6 config.json (hidden_size 5120, intermediate_size 12288,
		// max_position_embeddings 202752) and NVIDIA's GLM 4.5 page.
		Name: "glm-4.6", Arch: "glm4moe", Vocab: 151552, Embd: 5120, Layers: 92, NextN: 1,
		Heads: 96, HeadsKV: 8, HeadDim: 128, FFN: 12288, Context: 202752,
		RopeBase: 1000000, RopeDim: 64, RMSEps: 1e-5, QKVBias: true, QKNorm: true,
		Experts: 160, ExpertsUsed: 8, ExpertFFN: 1536, DenseLead: 3,
		Routing: &testutil.Routing{Shared: 1, Scale: 2.5, Norm: true, Gating: 2},
	},
	{
		// Ling-mini-2.0 (bailingmoe2; Ring-mini-2.0 is the same shape): 20
		// layers (no NextN block in the published checkpoints), one fused
		// attn_qkv of 16 heads of 128 on 4, per-head Q/K norms, NEOX RoPE
		// over half of each head; layer 0 dense (first_k_dense_replace
		// 1), then 256 experts of 512, 8 a token from the best 4 of 8
		// groups, sigmoid-routed with the selection bias, renormalised,
		// scale 2.5, beside one shared expert of 512. Sizes from a
		// BailingMoeV2Config whose defaults mirror Ling-mini-2.0's
		// config.json (vocab_size 157184, hidden_size 2048,
		// intermediate_size 5120, 16/4 heads of 128, 256 experts of 512,
		// 8 groups, 4 used, rope_theta 600000; half-RoPE, as it notes
		// Mini sets partial_rotary_factor 0.5); the scale 2.5 is Ling
		// 2.0's routed_scaling_factor in the flash-based configs seen,
		// not checked for mini (it moves no byte count). -layers 2
		// -experts 16 keeps 8 groups of 2.
		Name: "ling-mini-2.0", Arch: "bailingmoe2", Vocab: 157184, Embd: 2048, Layers: 20,
		Heads: 16, HeadsKV: 4, HeadDim: 128, FFN: 5120, Context: 32768,
		RopeBase: 600000, RopeDim: 64, RMSEps: 1e-6, QKNorm: true,
		Experts: 256, ExpertsUsed: 8, ExpertFFN: 512, DenseLead: 1,
		Routing: &testutil.Routing{Shared: 1, SharedWidth: 512, Scale: 2.5, Norm: true, Gating: 2, Groups: 8, GroupsUsed: 4},
	},
}

// longRopeFactors are LongRoPE factors shaped like Phi-4-mini's: per
// rotated pair, the short factors stay near 1 and the long ones rise from
// 1 at the shortest wavelength to about scale·1.25 at the longest. The
// values of a real checkpoint come from a search; speed and memory do not
// depend on them.
func longRopeFactors(pairs int, scale float64, long bool) []float32 {
	out := make([]float32, pairs)
	for i := range out {
		x := float64(i) / float64(max(pairs-1, 1))
		if long {
			out[i] = float32(math.Pow(1.25*scale, x))
		} else {
			out[i] = float32(1 + 0.05*x)
		}
	}
	return out
}

// ropeFactors computes the rope_freqs.weight tensor as llama.cpp's
// converter does for Llama 3 rope scaling: per rotated pair, the factor its
// frequency is divided by (1 for short wavelengths, Factor for long ones,
// a smooth blend in between). The arithmetic is float32, as in the
// converter's torch tensors.
func ropeFactors(r *llama3Rope, base float32, dim int) []float32 {
	lowWavelen := float64(r.OriginalContext) / r.LowFreqFactor
	highWavelen := float64(r.OriginalContext) / r.HighFreqFactor
	out := make([]float32, dim/2)
	for i := range out {
		exp := float32(2*i) / float32(dim)
		freq := 1 / float32(math.Pow(float64(base), float64(exp)))
		wavelen := float32(2*math.Pi) / freq
		switch {
		case float64(wavelen) < highWavelen:
			out[i] = 1
		case float64(wavelen) > lowWavelen:
			out[i] = float32(r.Factor)
		default:
			smooth := (float32(r.OriginalContext)/wavelen - float32(r.LowFreqFactor)) /
				float32(r.HighFreqFactor-r.LowFreqFactor)
			out[i] = 1 / ((1-smooth)/float32(r.Factor) + smooth)
		}
	}
	return out
}

func (s shape) name() string { return s.Name }
