package main

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/lowmem/llm/internal/testutil"
)

// shape holds the hyper-parameters of a model, as its GGUF metadata
// states them.
type shape struct {
	Name    string
	Arch    string // general.architecture: llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, gemma3n, gemma4, phi3, granite, granitemoe, granitehybrid, qwen35, qwen35moe, qwen3next, nemotron_h, nemotron_h_moe, smollm3, olmo2, ernie4_5, ernie4_5-moe, seed_oss, exaone4, glm4, lfm2, lfm2moe, gpt-oss, gemma-embedding, bert, nomic-bert, minicpm, minicpm3, olmoe, afmoe, jamba, mamba, mamba2, rwkv7, exaone, starcoder2, gemma, nemotron, stablelm, phi2, gpt2, starcoder, gptneox, bitnet, chatglm, internlm2, olmo, falcon, qwen2moe, rwkv6, rwkv6qwen2, phimoe, bloom, mpt, arwkv7, hunyuan-moe, dots1, mellum, grovemoe, maincoder, plamo3, jais2, nanbeige, talkie, xverse, orion, refact, baichuan, codeshell, minimax-m2, exaone-moe, llama4, laguna, mimo2, kimi-linear, mistral4, cohere2moe, nomic-bert-moe, jina-bert-v2, jina-bert-v3, eurobert, neo-bert, llama-embed, modern-bert, deci or openelm
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
	// FuseQKV writes attn_q, attn_k and attn_v (and their biases) as one
	// attn_qkv (-fuse-qkv), never from shapes.jsonc.
	FuseQKV bool `json:"-"`

	// Llama 3.1 rope scaling, stored as the rope_freqs.weight tensor.
	Llama3Rope *llama3Rope
	// LongRoPE (phi3): rope_factors_long/short and their metadata.
	LongRope *longRope
	// ControlTokens take the last ids of the vocabulary, as control
	// tokens: those llama.cpp's vocabulary loader looks up by text for
	// the model's general.name (a name with "phi-3" needs <|endoftext|>).
	ControlTokens []string

	// gemma2, gemma3: sliding window (gemma3: with its pattern of
	// SWAPattern-1 local layers then one global; the converter writes no
	// pattern key, so the default 6 is implied).
	Window       int
	AttnSoftcap  float32
	FinalSoftcap float32
	// SWAPattern, when above 0, is written as
	// attention.sliding_window_pattern, a period whose last layer is
	// global (mellum, whose llama.cpp loader requires the key with a
	// window; plamo3, whose converter writes it).
	SWAPattern int

	// nanbeige: num_loops, the runs of the stack of blocks (0: none
	// written, one run).
	Loops int
	// talkie: logit_scale, which multiplies the logits.
	LogitScale float32

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
	// MoEStep is llama4's interleave_moe_layer_step: its layers l with
	// l+1 a multiple of it have experts (and a shared expert as wide as
	// one), the others a dense feed-forward of FFN.
	MoEStep int
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
	// RWKV7 is an rwkv7's or arwkv7's wkv.head_size and low-rank pairs' ranks
	// (config.json's head_size, decay_low_rank_dim, a_low_rank_dim,
	// v_low_rank_dim, gate_low_rank_dim).
	RWKV7 *testutil.RWKV7
	// RWKV6 is an rwkv6's wkv.head_size, time_mix_extra_dim,
	// time_decay_extra_dim and rescale_every_n_layers (config.json's
	// head_size and rescale_every; the extra dims as llama.cpp's
	// converter picks them from the width).
	RWKV6 *testutil.RWKV6
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
	// FusedExps writes each expert block's gate and up experts as one
	// ffn_gate_up_exps, as mistral4's converter writes Mistral Small 4's
	// stacked gate_up_proj.
	FusedExps bool
	// KDA makes a kimi-linear's ConvLayers Kimi Delta Attention layers
	// (linear_attn_config's short_conv_kernel_size and head_dim; its
	// num_heads is Heads), the others DeepSeek2's latent attention.
	KDA *kdaShape
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
	// Grove is grovemoe's adjugate experts: one of Grove.FFN for each
	// group of Grove.PerGroup experts, their sum scaled by Grove.Scale.
	Grove *testutil.Grove
	// Cohere is cohere2's, command-r's and cohere2moe's LayerNorm
	// epsilon and logit scale (config.json's layer_norm_eps and
	// logit_scale); a cohere2's or cohere2moe's window is Window
	// (sliding_window).
	Cohere *cohereShape
	// MPT is mpt's LayerNorm epsilon and ALiBi maximum bias.
	MPT *mptShape
	// BiasNormEps, when not 0, makes the block and final norms LayerNorms
	// of weight and bias of this epsilon (starcoder2's norm_epsilon,
	// nemotron's norm_eps), written as attention.layer_norm_epsilon.
	BiasNormEps float32
	// HiddenAct is bitnet's hidden_activation (config.json's hidden_act:
	// relu2), written when not empty.
	HiddenAct string
	// ModernBert is modern-bert's LayerNorm epsilon, windowed layers'
	// RoPE base and global-layer period (modernbert.go).
	ModernBert *modernBertShape
	// Laguna is laguna's global layers' query heads (Heads: the windowed
	// layers'), its per-head gate and its windowed layers' RoPE
	// (config.json's num_attention_heads_per_layer, the g_proj width,
	// the sliding-window rope's partial_rotary_factor and theta); its
	// routing is Routing's.
	Laguna *testutil.Laguna
	// Mimo2 is mimo2's per-layer attention (mimo2.go: config.json's
	// num_key_value_heads, v_head_dim, hybrid_layer_pattern's period,
	// swa_rope_theta, attention_value_scale).
	Mimo2 *mimo2Shape
	// PerLayer is deci's and openelm's per-layer query heads, KV heads
	// and feed-forward widths (Heads, HeadsKV and FFN their largest):
	// DeciLM's block_configs, OpenELM's num_query_heads, num_kv_heads and
	// ffn widths.
	PerLayer *testutil.PerLayer
}

// layerHeads is layer l's query heads.
func (s shape) layerHeads(l int) int {
	if s.Laguna == nil {
		return s.Heads
	}
	return s.Laguna.LayerHeads(l, s.Heads, s.Window != 0)
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
	if s.Arch == "llama4" {
		return s.ExpertFFN // llama.cpp sizes the shared expert so, from no key
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
	if p := s.PerLayer; p != nil {
		s.PerLayer = &testutil.PerLayer{Heads: p.Heads[:n], HeadsKV: p.HeadsKV[:n], FFN: p.FFN[:n]}
	}
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
	if gr := s.Grove; gr != nil {
		// grovemoe: the adjugate experts' groups divide them and are no
		// fewer than the experts a token.
		return n%gr.PerGroup == 0 && min(s.ExpertsUsed, n) <= n/gr.PerGroup
	}
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

// denseNextN reports whether block l is a NextN block whose feed-forward
// llama.cpp loads dense (exaone-moe's), not as experts.
func (s shape) denseNextN(l int) bool { return s.Arch == "exaone-moe" && l >= s.Layers }

// fullQKNorm reports whether s's attn_q_norm and attn_k_norm span all
// the heads at once, as wide as the query and the keys: olmo2's, and
// olmoe's and minimax-m2's beside llama's pre-norms.
func (s shape) fullQKNorm() bool {
	return s.Arch == "olmo2" || s.Arch == "olmoe" || s.Arch == "minimax-m2"
}

// selBias reports whether s's expert blocks have the router's selection
// bias, exp_probs_b.bias (ERNIE's and MiniMax's e_score_correction_bias).
func (s shape) selBias() bool {
	return s.Arch == "lfm2moe" || s.Arch == "ernie4_5-moe" || s.Arch == "minimax-m2" || s.Mimo2 != nil || s.DeepSeek2 != nil && s.DeepSeek2.SelBias || s.Routing != nil && s.Arch != "cohere2moe"
}

// ffnWideExperts reports whether llama.cpp sizes s's experts by
// feed_forward_length, whatever expert_feed_forward_length says
// (granitemoe, olmoe, phimoe, minimax-m2).
func (s shape) ffnWideExperts() bool {
	return s.Arch == "granitemoe" || s.Arch == "olmoe" || s.Arch == "phimoe" || s.Arch == "hunyuan-moe" || s.Arch == "minimax-m2"
}

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

// headDim is the size of one attention head.
func (s shape) headDim() int {
	if s.HeadDim != 0 || s.Heads == 0 { // mamba: no heads
		return s.HeadDim
	}
	return s.Embd / s.Heads
}

// shapesFile is the shapes as data, with the sources of their numbers
// beside them.
//
//go:embed shapes.jsonc
var shapesFile []byte

// kdaShape is a kimi-linear's ssm.conv_kernel and kda.head_dim.
type kdaShape struct{ Conv, HeadDim int }

// shapes are the models mkmodel can imitate; shapesErr, when not nil, says
// why shapes.jsonc does not give them, and every run fails with it.
var shapes, shapesErr = parseShapes(shapesFile)

// shapeRecord is one element of shapes.jsonc.
type shapeRecord struct {
	shape
	// AttentionLayers are the layers of a hybrid that attend, its others
	// being ConvLayers: the few listed rather than the many (Granite
	// 4.0-H's 4 of 40).
	AttentionLayers []int
}

// parseShapes reads shapes.jsonc: a JSON array of shapeRecords whose
// lines beginning with // are comments. It refuses what would otherwise
// surface as a wrong file much later: an unknown field, a name given
// twice, a layer list or sizes that do not fit the shape.
func parseShapes(file []byte) ([]shape, error) {
	// Blanking the comments keeps every byte where it was, so that the
	// decoder's offsets name the file's lines.
	text := slices.Clone(file)
	for rest := text; len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("//")) {
			copy(line, bytes.Repeat([]byte(" "), len(line)))
		}
		rest = after
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	var recs []shapeRecord
	err := dec.Decode(&recs)
	if err == nil && dec.Decode(new(json.RawMessage)) != io.EOF {
		err = errors.New("more after the array")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where(file, err), err)
	}
	out := make([]shape, len(recs))
	for i, r := range recs {
		s := r.shape
		if r.AttentionLayers != nil || s.mixersOnly() {
			if s.ConvLayers != nil {
				return nil, fmt.Errorf("shapes.jsonc: %s: both ConvLayers and AttentionLayers", s.Name)
			}
			if err := ascending(r.AttentionLayers, s.Layers); err != nil {
				return nil, fmt.Errorf("shapes.jsonc: %s: AttentionLayers: %w", s.Name, err)
			}
			s.ConvLayers = mambaLayers(s.Layers, r.AttentionLayers...)
		}
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("shapes.jsonc: %s: %w", cmp.Or(s.Name, fmt.Sprintf("shape %d", i+1)), err)
		}
		if slices.ContainsFunc(out[:i], func(o shape) bool { return o.Name == s.Name }) {
			return nil, fmt.Errorf("shapes.jsonc: %s given twice", s.Name)
		}
		out[i] = s
	}
	return out, nil
}

// where is the place in shapes.jsonc a decoding error points at: the file
// and line, or the file alone for an error without an offset (an unknown
// field, which it names).
func where(file []byte, err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("shapes.jsonc:%d", lineOf(file, syntax.Offset))
	case errors.As(err, &typ):
		return fmt.Sprintf("shapes.jsonc:%d", lineOf(file, typ.Offset))
	}
	return "shapes.jsonc"
}

// lineOf is the line, from 1, that byte off of file is on.
func lineOf(file []byte, off int64) int {
	return 1 + bytes.Count(file[:min(max(off, 0), int64(len(file)))], []byte("\n"))
}

// check reports what in s no file could be made of, or llama.cpp would
// refuse to load.
func (s shape) check() error {
	switch {
	case s.Name == "" || s.Arch == "":
		return fmt.Errorf("Name %q, Arch %q: want both", s.Name, s.Arch)
	case s.Vocab <= 0 || s.Embd <= 0 || s.Layers <= 0 || s.Context <= 0:
		return fmt.Errorf("Vocab %d, Embd %d, Layers %d, Context %d: want each above 0", s.Vocab, s.Embd, s.Layers, s.Context)
	case s.HeadsKV > s.Heads || s.HeadsKV > 0 && s.Heads%s.HeadsKV != 0:
		return fmt.Errorf("%d heads on %d KV heads: want a whole number of heads a KV head", s.Heads, s.HeadsKV)
	case s.ExpertsUsed > s.Experts:
		return fmt.Errorf("%d experts a token of %d", s.ExpertsUsed, s.Experts)
	case s.Pattern != "" && len(s.Pattern) < s.Layers:
		return fmt.Errorf("Pattern of %d layers for %d", len(s.Pattern), s.Layers)
	}
	if err := ascending(s.ConvLayers, s.Layers); err != nil {
		return fmt.Errorf("ConvLayers: %w", err)
	}
	if p := s.PerLayer; p != nil {
		if len(p.Heads) != s.Layers || len(p.HeadsKV) != s.Layers || len(p.FFN) != s.Layers {
			return fmt.Errorf("PerLayer: %d, %d and %d values for %d layers", len(p.Heads), len(p.HeadsKV), len(p.FFN), s.Layers)
		}
		if slices.Max(p.Heads) != s.Heads || slices.Max(p.HeadsKV) != s.HeadsKV || slices.Max(p.FFN) != s.FFN {
			return fmt.Errorf("PerLayer: largest %d heads, %d KV heads, %d wide; want Heads %d, HeadsKV %d, FFN %d",
				slices.Max(p.Heads), slices.Max(p.HeadsKV), slices.Max(p.FFN), s.Heads, s.HeadsKV, s.FFN)
		}
	}
	return nil
}

// ascending says why layers are not ascending layers of n, each once, or
// returns nil when they are.
func ascending(layers []int, n int) error {
	for i, l := range layers {
		if l < 0 || l >= n || i > 0 && l <= layers[i-1] {
			return fmt.Errorf("%v: want ascending layers of %d, each once", layers, n)
		}
	}
	return nil
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
