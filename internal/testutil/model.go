package testutil

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// ModelSpec describes a synthetic model. Zero fields take the defaults
// noted; Vocab, Embd, Layers, Heads and FFN are required.
type ModelSpec struct {
	// Arch may also be "smallthinker", "falcon-h1" or "afmoe".
	Arch    string // "llama" (default) or another architecture model.Supported lists
	Vocab   int    // at least MinVocab
	Embd    int
	Layers  int
	Heads   int
	HeadsKV int // 0 = Heads
	HeadDim int // 0 = Embd/Heads
	FFN     int
	Context int // 0 = 2048

	// Label names a variant in subtest names (Variant) where the fields
	// that make it one are not among those Variant tells apart.
	Label string
	// NonCausal writes attention.causal = false for a llama-embed, whose
	// converter writes no such key (eurobert and neo-bert always have it).
	NonCausal bool

	RopeBase float32 // 0 = 10000 (bert has no RoPE: not written)
	RMSEps   float32 // 0 = 1e-5 for llama, 1e-6 for qwen2 and gemma2
	// NormEps is an encoder's (bert, nomic-bert) LayerNorm epsilon; 0 =
	// 1e-12, BERT's.
	NormEps float32
	// TokenTypes is the rows of an encoder's token_types (and the
	// vocabulary's token_type_count); 0 = 2, BERT's.
	TokenTypes int

	// WeightType is the type of the 2-D weights (norms and biases stay
	// F32); its zero value is F32. Row lengths (Embd, FFN, Heads*HeadDim)
	// must be multiples of its block size: 32 for Q8_0 and Q4_0, 256 for
	// the K-quants. A type quant can name but not encode is filled with
	// random bytes: for those it decodes (IQ2_XXS …) with each block's
	// scale set for the spread a quantized weight would have; for those it
	// cannot (F64 …), for testing that loaders reject them.
	WeightType quant.Type
	// OutputType is the type of output.weight, or of token_embd.weight
	// when the output is tied. Its zero value (F32) means WeightType, so
	// an F32 output with quantized weights cannot be asked for.
	OutputType quant.Type
	// TiedOutput leaves out output.weight, so token_embd.weight is the LM
	// head, as in Qwen2 and Gemma2 checkpoints.
	TiedOutput bool
	// QKVBias writes attn_q/k/v.bias in an architecture where llama.cpp
	// takes them as optional (ernie4_5, seed_oss, glm4, chatglm: attn_qkv.bias
	// with FusedQKV); qwen2, qwen2moe and gpt-oss always have them.
	QKVBias bool
	// Loops writes a nanbeige's num_loops (0: none, so one run of the
	// blocks), SkipLoopNorm its skip_loop_final_norm true.
	Loops        int
	SkipLoopNorm bool
	// FusedQKV writes a glm4's or chatglm's query, key and value projections as one
	// attn_qkv (phi3's always are; a falcon's must be).
	FusedQKV bool
	// FuseQKV writes every block's attn_q, attn_k and attn_v (and their
	// biases) as one attn_qkv (and attn_qkv.bias), their rows in that
	// order, as convert_hf_to_gguf.py's --fuse-qkv does: the same weights
	// as the spec without it, so the two files' outputs can be compared.
	// Unlike FusedQKV it works for any architecture and draws no new
	// values.
	FuseQKV bool
	// NoFFNNorm leaves out a stablelm's ffn_norm, as StableLM 2 12B's
	// blocks have none (attention and the feed-forward in parallel), and
	// writes its per-head Q/K LayerNorms.
	NoFFNNorm bool
	// Sequential writes a gptneox's use_parallel_residual false: the
	// feed-forward after the attention, not beside it.
	Sequential bool
	// HiddenAct is written as a bitnet's hidden_activation when not empty
	// (relu2: BitNet b1.58 2B-4T's); Scales writes its projections'
	// one-element .scale tensors.
	HiddenAct string
	Scales    bool
	// ClampKQV is written as an olmo's or mpt's attention.clamp_kqv when not 0.
	ClampKQV float32

	Seed uint64

	SlidingWindow int // gemma2 and gemma3; 0 = 4096
	// SWAPattern is gemma3's attention.sliding_window_pattern (every
	// SWAPattern-th layer is global); 0 writes no key, so llama.cpp's
	// default of 6 applies, as in real conversions.
	SWAPattern int
	// RopeBaseSWA is gemma3's or plamo3's rope.freq_base_swa; 0 writes no
	// key (gemma3: 10000; plamo3: rope.freq_base).
	RopeBaseSWA float32

	// LongRope, for phi3 and phimoe, writes LongRoPE's rope_factors_long and
	// rope_factors_short tensors and its metadata.
	LongRope *LongRope
	// Yarn writes rope.scaling.type "yarn" with this factor and original
	// context (a Qwen3 made long, as its 128K GGUF files are).
	Yarn *Yarn

	// Experts of a qwen3moe, granitemoe, gpt-oss, lfm2moe or gemma4 model:
	// expert_count, expert_used_count and expert_feed_forward_length
	// (required there).
	Experts, ExpertsUsed, ExpertFFN int
	// Grove is a grovemoe's adjugate experts (ffn_*_chexps and their
	// keys); nil for other models.
	Grove *Grove
	// DenseLead is an lfm2moe's leading_dense_block_count: its first
	// layers have a dense feed-forward (ffn_gate, ffn_up, ffn_down of FFN),
	// the others experts.
	DenseLead int
	// MoEEvery is a nomic-bert-moe's moe_every_n_layers: its layers l
	// with l mod MoEEvery = 1 have experts (ExpertFFN must be FFN, as the
	// converter writes no expert_feed_forward_length), the others bert's
	// feed-forward.
	MoEEvery int
	// MoEStep is a llama4's interleave_moe_layer_step: its layers l with
	// l+1 a multiple of MoEStep have experts, the others a dense
	// feed-forward.
	MoEStep int
	// Gating is an lfm2moe's expert_gating_func (llama.cpp's numbering: 1
	// softmax, 2 sigmoid, 3 softmax of the chosen); 0 writes 2, LFM2's.
	Gating uint32
	// SelBiasGain is the spread of an lfm2moe's selection bias
	// (exp_probs_b.bias, one per expert); 0 = 0.5, against sigmoid
	// probabilities in (0, 1), enough to change which experts are chosen.
	SelBiasGain float64
	// ExpertType is the type of the expert tensors (ffn_*_exps); its zero
	// value (F32) means WeightType. MXFP4 with WeightType Q8_0 is
	// llama-quantize's MXFP4_MOE mix (general.file_type 38).
	ExpertType quant.Type
	// Granite's multipliers (granite, granitemoe): embedding_scale,
	// residual_scale, attention.scale and logit_scale; all zero writes
	// Granite 3.3's (12, 0.22, 1/128, 8).
	EmbeddingScale, ResidualScale, AttentionScale, LogitScale float32
	// RouterGain multiplies the router weights' spread (0 = 1); a large
	// gain makes the routing decisive.
	RouterGain float64
	// Windowed writes a smallthinker's, afmoe's or mellum's
	// attention.sliding_window (SlidingWindow), which gives it windowed
	// layers (a mellum's as SWAPattern or SWALayers say, when set).
	Windowed bool

	// ChatTemplate is written as tokenizer.chat_template when not empty.
	ChatTemplate string
	// Pooling is written as <arch>.pooling_type when not 0 (llama.cpp's
	// numbering: 1 mean, 2 cls, 3 last, 4 rank), as embedding models have.
	Pooling uint32
	// Unigram gives an encoder XLM-RoBERTa's kind of vocabulary, a
	// SentencePiece unigram one (UGMVocab, tokenizer.ggml.model "t5"), as
	// bge-m3's, multilingual-e5's and nomic-embed-text-v2-moe's files
	// carry, instead of WordPiece.
	Unigram bool
	// AddEOS makes the vocabulary ask for EOS after every text
	// (tokenizer.ggml.add_eos_token), as embedding models' do.
	AddEOS bool
	// RankLabels, with Pooling 4, makes a reranker's classification head:
	// cls.weight and cls.bias (Embd to Embd) for an encoder, and
	// cls.output.weight and .bias to one score a label, the labels written
	// as <arch>.classifier.output_labels when there are more than one.
	RankLabels []string
	// RerankTemplate is written as tokenizer.chat_template.rerank when not
	// empty.
	RerankTemplate string
	// Dense, for gemma-embedding, writes the pooled vector's projection
	// (dense_2.weight, Embd to Dense, and dense_3.weight back, F32); 0
	// writes none.
	Dense int
	// Jina shapes a jina-bert-v2's blocks beyond bert's; nil: neither Q/K
	// norms nor attn_norm_2, ffn_gate and ffn_up apart.
	Jina *JinaBertV2
	// Biases gives an encoder every bias llama.cpp applies: bert's have
	// them anyway; nomic-bert's converted files have none, and this adds
	// attn_qkv.bias and attn_output.bias.
	Biases bool
	// ConvLayers lists an lfm2's short-convolution layers or a
	// granitehybrid's Mamba-2 layers (the others attend); ConvKernel is
	// their kernel length, shortconv.l_cache or ssm.conv_kernel (0 = 3 for
	// lfm2, 4 for granitehybrid).
	ConvLayers []int
	ConvKernel int
	// RopeDim is rope.dimension_count when not 0 (HeadDim: the whole
	// head); NextN is a qwen35's nextn_predict_layers, NextN blocks after
	// the Layers main ones (block_count counts both).
	RopeDim, NextN int
	// A granitehybrid's Mamba-2 sizes: ssm.state_size, ssm.time_step_rank
	// (the heads) and ssm.group_count; its inner size is 2×Embd, a
	// nemotron_h's SSMInner.
	SSMState, SSMHeads, SSMGroups, SSMInner int
	// SSMDtRank is a jamba's or mamba's ssm.time_step_rank (its inner
	// size is 2×Embd); DtBCNorm a mamba's ssm.dt_b_c_rms (Falcon-Mamba).
	SSMDtRank int
	DtBCNorm  bool
	// RWKV7 is an rwkv7's or arwkv7's head size and ranks (an rwkv7's
	// NormEps the LayerNorms' epsilon, an arwkv7's RMSEps its RMSNorms').
	RWKV7 *RWKV7
	// RWKV6 is an rwkv6's head size, extra dims and rescaling (its
	// NormEps the LayerNorms' epsilon).
	RWKV6 *RWKV6
	// Pattern is a nemotron_h's layers as its config.json's
	// hybrid_override_pattern writes them, one letter a layer: M Mamba-2,
	// - a feed-forward alone, * attention alone (Layers is its length).
	Pattern string
	// MaxALiBiBias is an mpt's attention.max_alibi_bias (MPT's
	// alibi_bias_max), written when not 0.
	MaxALiBiBias float32
	// AttnNorm2 writes a falcon's attn_norm_2 and its bias in every block
	// (Falcon-40B's ln_attn, the attention's norm beside attn_norm, the
	// feed-forward's).
	AttnNorm2 bool
	// SharedFFN is a granitemoe's or granitehybrid's shared expert width,
	// expert_shared_feed_forward_length (0: none). A deepseek2's is
	// DeepSeek2.Shared × ExpertFFN, set by the spec's defaults.
	SharedFFN int
	// SSMIn writes a qwen3next's delta-net input projections as older
	// converters did: one ssm_in making each key head's query, key, values
	// and z together, instead of attn_qkv and attn_gate.
	SSMIn bool
	// FusedExps writes each expert block's gate and up experts as one
	// ffn_gate_up_exps ([Embd, 2·ExpertFFN, Experts]: each expert's gate
	// rows, then its up rows), as llama.cpp's create_tensor_gate_up_exps
	// takes them (qwen35moe).
	FusedExps bool
	// DeepSeek2 is a deepseek2's latent attention and routing (required
	// there); HeadsKV is then 1 and HeadDim unused.
	DeepSeek2 *DeepSeek2
	// OutputNorm names the final norm's tensor instead of the
	// architecture's usual one (lfm2: output_norm.weight, as Ollama's
	// converter writes it, for token_embd_norm.weight).
	OutputNorm string
	// Gemma 3n's (gemma3n): AltUp streams (altup.num_inputs; 0 = 4), the
	// per-layer input width (embedding_length_per_layer_input; 0 = 32),
	// LAuReL's rank (laurel_l's rows; 0 = 32), the trailing layers that
	// share an earlier layer's KV cache (attention.shared_kv_layers), and
	// which layers are windowed (attention.sliding_window_pattern, one flag
	// a layer; nil: four of five).
	AltUp, PerLayerEmbd, LaurelRank, SharedKV int
	SWALayers                                 []bool
	// Gemma4 is a gemma4's own sizes (gemma4.go; nil: none differ).
	Gemma4 *Gemma4
	// RopeSections is a vision-language release's rope.dimension_sections
	// (qwen2vl, qwen3vl, qwen3vlmoe: "qwen2", "qwen3", "qwen3moe" with
	// multimodal RoPE), or a qwen35's in place of the converter's split
	// of its rotated pairs, written as given when not nil; Deepstack its
	// n_deepstack_layers (0: no key).
	RopeSections []int32
	Deepstack    int
	// Routing is a glm4moe's or bailingmoe2's routing and shared experts
	// (glm4moe.go; required there).
	Routing *Routing
	// Laguna is what a laguna file says beyond afmoe's routing (nil for
	// other architectures).
	Laguna *Laguna
	// Mimo2 is what a mimo2 file says beyond its experts (nil for
	// other models).
	Mimo2 *Mimo2
	// PerLayer is a deci's or openelm's per-layer heads and widths
	// (deci.go; Heads, HeadsKV and FFN are then their largest).
	PerLayer *PerLayer
	// XIELU is an apertus's raw xIELU parameters, one [alpha_n, alpha_p,
	// beta, eps] a layer (nil: Apertus's initial ones in every layer).
	XIELU [][4]float32
	// ChatTokens are control tokens (e.g. "<|im_start|>", "<|im_end|>")
	// that take the last ids of the vocabulary, in order, so that a chat
	// template's markers are single tokens; the vocabulary size stays Vocab.
	ChatTokens []string
}

// HermesTemplate is a small chat template in the format of Qwen 2.5
// (ChatML turns, tools offered in the system turn, tool calls as
// <tool_call>{json}</tool_call>, tool results as <tool_response>).
const HermesTemplate = chatMLHead +
	`{% for tc in m.tool_calls %}<tool_call>{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}</tool_call>{% endfor %}` +
	chatMLTail

// chatMLHead and chatMLTail are a ChatML template with tools around the
// calls of an assistant turn, which HermesTemplate and XMLCallTemplate
// write each in their form.
const (
	chatMLHead = `{%- if tools %}<|im_start|>system
<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools><|im_end|>
{% endif %}
{%- for m in messages %}
{%- if m.role == 'assistant' and m.tool_calls %}<|im_start|>assistant
`
	chatMLTail = `<|im_end|>
{% elif m.role == 'tool' %}<|im_start|>user
<tool_response>{{ m.content }}</tool_response><|im_end|>
{% else %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}`
)

// DeepSeek2 holds what a deepseek2 file says of its multi-head latent
// attention and its routing, beside the common keys.
type DeepSeek2 struct {
	// KVLora and QLora are attention.kv_lora_rank and q_lora_rank (0:
	// attn_q, no q_lora_rank key unless QLoraKey); Nope, Rope and VHead
	// are the head's unrotated and rotated query/key sizes and its value
	// size (qk_nope_head_dim, qk_rope_head_dim, v_head_dim).
	KVLora, QLora, Nope, Rope, VHead int
	// QLoraKey writes attention.q_lora_rank even when QLora is 0 (llama.cpp
	// requires the key unless the block count is a V2-Lite's).
	QLoraKey bool
	// Shared is expert_shared_count; Scale expert_weights_scale (0: no
	// key); Norm expert_weights_norm (written when true); Gating
	// expert_gating_func (0: no key, softmax); Groups and GroupsUsed
	// expert_group_count and expert_group_used_count (0: no keys).
	Shared     int
	Scale      float32
	Norm       bool
	Gating     uint32
	Groups     int
	GroupsUsed int
	// SelBias writes exp_probs_b.bias in every expert layer (V3).
	SelBias bool
	// Joined writes the older form: one attn_kv_b (each head's unrotated
	// key rows, then its value rows) and no _mla keys, key_length and
	// value_length the decompressed heads' and head_count_kv the heads.
	Joined bool
}

// AddTo writes d under arch's key prefix as llama.cpp's converter does:
// the latent attention's sizes (key_length and value_length are the
// cache's: the latent with the rotated key, and the latent), then the
// routing's keys. rope.dimension_count is the caller's.
func (d *DeepSeek2) AddTo(g *gguf.Writer, arch string) {
	a := arch + "."
	if d.QLora > 0 || d.QLoraKey {
		g.AddKV(a+"attention.q_lora_rank", uint32(d.QLora))
	}
	g.AddKV(a+"attention.kv_lora_rank", uint32(d.KVLora))
	if d.Joined {
		g.AddKV(a+"attention.key_length", uint32(d.Nope+d.Rope))
		g.AddKV(a+"attention.value_length", uint32(d.VHead))
	} else {
		g.AddKV(a+"attention.key_length", uint32(d.KVLora+d.Rope))
		g.AddKV(a+"attention.value_length", uint32(d.KVLora))
		g.AddKV(a+"attention.key_length_mla", uint32(d.Nope+d.Rope))
		g.AddKV(a+"attention.value_length_mla", uint32(d.VHead))
	}
	if d.Shared > 0 { // minicpm3 has no experts, nor their keys
		(&Routing{Shared: d.Shared, Scale: d.Scale, Norm: d.Norm, Gating: d.Gating, Groups: d.Groups, GroupsUsed: d.GroupsUsed}).AddTo(g, arch)
	}
}

// tiny is s, the fields that make a Tiny* spec its architecture, on the
// layout every one starts from: where s leaves them 0, a 320-token
// vocabulary, 64 wide, 2 layers of 4 query and 2 KV heads, a feed-forward
// of 128, 256 positions and Q8_0 weights.
func tiny(s ModelSpec) ModelSpec {
	for _, f := range []struct {
		field *int
		size  int
	}{
		{&s.Vocab, 320}, {&s.Embd, 64}, {&s.Layers, 2}, {&s.Heads, 4}, {&s.HeadsKV, 2}, {&s.FFN, 128}, {&s.Context, 256},
	} {
		orDefault(f.field, f.size)
	}
	orDefault(&s.WeightType, quant.Q8_0)
	return s
}

// tinyMoE is tiny for a mixture of experts, on the experts every Tiny MoE
// spec starts from: where s leaves them 0, 8 experts of width 32, 2 a
// token, the router's logits spread (RouterGain 4) so that the choice of
// experts is not a near tie.
func tinyMoE(s ModelSpec) ModelSpec {
	orDefault(&s.Experts, 8)
	orDefault(&s.ExpertsUsed, 2)
	orDefault(&s.ExpertFFN, 32)
	orDefault(&s.RouterGain, 4)
	return tiny(s)
}

// orDefault sets *field to v where it is 0.
func orDefault[T comparable](field *T, v T) {
	var zero T
	if *field == zero {
		*field = v
	}
}

// TinyDeepSeek2 is a 3-layer deepseek2 as DeepSeek-V2-Lite is made:
// latent attention of rank 64 (heads of 32 unrotated and 16 rotated query
// dims, values of 32) with attn_q, layer 0's feed-forward dense and the
// others' 8 experts of width 32, 2 a token, softmax-routed, not
// renormalised, scaled by 1.5, beside 2 shared experts; YaRN ×4 over 32
// positions with DeepSeek's mscale_all_dim of 0.707; Q8_0 weights.
func TinyDeepSeek2() ModelSpec {
	s := tinyMoE(ModelSpec{
		Arch: "deepseek2", Seed: 23, Layers: 3, RopeBase: 10000, RMSEps: 1e-6,
		DenseLead: 1,
		Yarn:      &Yarn{Factor: 4, OrigContext: 32, LogMul: 0.0707},
		DeepSeek2: &DeepSeek2{KVLora: 64, Nope: 32, Rope: 16, VHead: 32, Shared: 2, Scale: 1.5},
	})
	s.HeadsKV = 0 // withDefaults derives it from the latent attention
	return s
}

// TinyDeepSeek3 is TinyDeepSeek2 made as DeepSeek V3 is: the query through
// a rank of 32 (attn_q_a, its norm, attn_q_b), sigmoid routing with a
// selection bias, the chosen weights renormalised and scaled by 2.5, and
// the experts in 4 groups of 2, a token's from its best 2 groups.
func TinyDeepSeek3() ModelSpec {
	s := TinyDeepSeek2()
	s.Seed = 29
	d := *s.DeepSeek2
	d.QLora, d.Gating, d.SelBias, d.Norm, d.Scale, d.Groups, d.GroupsUsed = 32, 2, true, true, 2.5, 4, 2
	s.DeepSeek2 = &d
	return s
}

// Variant names s for a subtest: its architecture, and for a deepseek2
// whether its query has a rank of its own, as V3's does ("deepseek2/v3"),
// or it is of the older form ("deepseek2/kv_b"); for a glm4 whether its
// Q, K and V are fused ("glm4/qkv"); for an olmo whether it clamps Q, K
// and V ("olmo/clamp"); for a command-r whether it is as deep as Command
// R+, with its Q/K norms ("command-r/plus"); for a falcon whether it has
// Falcon-40B's attn_norm_2 ("falcon/attn_norm_2"); for a spec with a
// Label, its label ("exaone4/swa").
func (s ModelSpec) Variant() string {
	if s.Label != "" {
		return s.Arch + "/" + s.Label
	}
	switch d := s.DeepSeek2; {
	case d != nil && d.Joined:
		return s.Arch + "/kv_b"
	case d != nil && d.QLora > 0:
		return s.Arch + "/v3"
	case s.FusedQKV && s.Arch != "phi3" && s.Arch != "falcon":
		return s.Arch + "/qkv"
	}
	switch {
	case s.FusedExps:
		return s.Arch + "/gate_up"
	case s.SSMIn:
		return s.Arch + "/ssm_in"
	case s.NoFFNNorm:
		return s.Arch + "/parallel"
	case s.Sequential:
		return s.Arch + "/sequential"
	case s.Scales:
		return s.Arch + "/scales"
	case s.ClampKQV != 0:
		return s.Arch + "/clamp"
	case s.Arch == "command-r" && s.headRowNormed():
		return s.Arch + "/plus"
	case s.AttnNorm2:
		return s.Arch + "/attn_norm_2"
	}
	return s.Arch
}

// TinyDeepSeek2KVB is TinyDeepSeek2 in the older form llama.cpp's
// converter wrote before it split attn_kv_b (Ollama's deepseek-coder-v2
// blobs date from then): one attn_kv_b a layer, no _mla keys.
func TinyDeepSeek2KVB() ModelSpec {
	s := TinyDeepSeek2()
	s.Seed = 31
	d := *s.DeepSeek2
	d.Joined = true
	s.DeepSeek2 = &d
	return s
}

// TinyChat is TinyLlama (context 1024) with HermesTemplate and its two turn markers as
// control tokens (<|im_end|> is an end-of-generation token by its text,
// as llama.cpp recognises it).
func TinyChat() ModelSpec {
	s := TinyLlama()
	s.Context = 1024 // room for a conversation with tools in a 320-token vocabulary
	s.ChatTemplate = HermesTemplate
	s.ChatTokens = []string{"<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"}
	return s
}

// Yarn is the YaRN part of a configuration.
type Yarn struct {
	Factor      float32 // rope.scaling.factor
	OrigContext int     // rope.scaling.original_context_length
	LogMul      float32 // rope.scaling.yarn_log_multiplier; 0 writes none
	// TempScale is mistral3's attention.temperature_scale; 0 writes none.
	TempScale float32
}

// LongRope is the LongRoPE part of a Phi-3 (128k) configuration.
type LongRope struct {
	OrigContext int     // rope.scaling.original_context_length
	AttnFactor  float32 // rope.scaling.attn_factor
}

// TinyLlama is a 2-layer llama with grouped-query attention and Q8_0
// weights, about 130 KB.
func TinyLlama() ModelSpec {
	return tiny(ModelSpec{Arch: "llama", Seed: 1, RopeBase: 10000, RMSEps: 1e-5})
}

// TinyQwen2 is a 2-layer qwen2 (q/k/v biases, tied output) with Q8_0
// weights.
func TinyQwen2() ModelSpec {
	return tiny(ModelSpec{Arch: "qwen2", Seed: 2, RopeBase: 1000000, RMSEps: 1e-6, TiedOutput: true})
}

// TinyGemma2 is a 2-layer gemma2 (four norms per layer, soft-capping,
// sliding window on layer 0, tied output) whose head size 32 differs from
// Embd/Heads, with Q8_0 weights.
func TinyGemma2() ModelSpec {
	return tiny(ModelSpec{
		Arch: "gemma2", Seed: 3, HeadDim: 32, RopeBase: 10000, RMSEps: 1e-6, TiedOutput: true,
		SlidingWindow: 16,
	})
}

// TinyQwen3 is a 2-layer qwen3 (per-head q/k norms, no biases, tied
// output) with Q8_0 weights.
func TinyQwen3() ModelSpec {
	return tiny(ModelSpec{
		Arch: "qwen3", Seed: 4, HeadDim: 32, RopeBase: 1000000, RMSEps: 1e-6, TiedOutput: true,
	})
}

// TinyGemma3 is a 4-layer gemma3 with a window of 16 on layers 0 and 1
// (a pattern of 3: every third layer global), q/k norms, four norms per
// layer and a tied output, with Q8_0 weights.
func TinyGemma3() ModelSpec {
	return tiny(ModelSpec{
		Arch: "gemma3", Seed: 5, Layers: 4, HeadDim: 32, RopeBase: 1000000, RMSEps: 1e-6, TiedOutput: true,
		SlidingWindow: 16, SWAPattern: 3,
	})
}

// TinyPhi3 is a 2-layer phi3 (fused attn_qkv and gate/up) with LongRoPE
// factors whose original context is 128, with Q8_0 weights.
func TinyPhi3() ModelSpec {
	return tiny(ModelSpec{
		Arch: "phi3", Seed: 6, Context: 1024, RopeBase: 10000, RMSEps: 1e-5,
		LongRope: &LongRope{OrigContext: 128, AttnFactor: 1.19},
	})
}

// TinyQwen3MoE is a 2-layer qwen3moe with 8 experts of width 32, 2 per
// token, and Q8_0 weights (the router F32, as llama.cpp keeps it).
func TinyQwen3MoE() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "qwen3moe", Seed: 7, HeadDim: 32, RopeBase: 1000000, RMSEps: 1e-6,
	})
}

// TinyQwen2MoE is a 2-layer qwen2moe as Qwen1.5-MoE-A2.7B is made:
// qwen2's attention with Q/K/V biases, then in every block 8 experts of
// width 32, 2 a token, their softmax weights not renormalised, beside a
// shared expert of 96 scaled by the sigmoid of its gate
// ffn_gate_inp_shexp; the router's logits spread (RouterGain 4) so that
// the choice of experts is not a near tie; untied output, Q8_0 weights.
func TinyQwen2MoE() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "qwen2moe", Seed: 94, RopeBase: 1000000, RMSEps: 1e-6,
		SharedFFN: 96,
	})
}

// TinyPhiMoE is a 2-layer phimoe as Phi-3.5-MoE's converter writes it:
// RMS norms (epsilon 1e-5) each with a bias, Q, K and V apart with their
// biases, attn_output's bias, NEOX RoPE with LongRoPE's factors whose
// original context is 128 (TinyPhi3's), then in every block 8 experts as
// wide as feed_forward_length (32), 2 a token, renormalised; the output
// untied with its bias; Q8_0 weights.
func TinyPhiMoE() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "phimoe", Seed: 163, FFN: 32, Context: 1024, RopeBase: 10000, RMSEps: 1e-5,
		LongRope: &LongRope{OrigContext: 128, AttnFactor: 1.19},
	})
}

// TinyBert is a 2-layer bert (learned positions, q/k/v and every other
// projection with a bias, GELU feed-forward, LayerNorms after the residual
// sums, attention over the whole text) with a WordPiece vocabulary, mean
// pooling and Q8_0 weights.
func TinyBert() ModelSpec {
	s := tiny(ModelSpec{Arch: "bert", Seed: 8, NormEps: 1e-12, Pooling: 1})
	s.HeadsKV = 0 // as many KV heads as heads (withDefaults)
	return s
}

// TinyNomicBert is a 2-layer nomic-bert (fused attn_qkv without biases,
// NEOX RoPE of base 1000, SwiGLU feed-forward, LayerNorms after the
// residual sums, attention over the whole text) with a WordPiece
// vocabulary, mean pooling and Q8_0 weights.
func TinyNomicBert() ModelSpec {
	s := tiny(ModelSpec{Arch: "nomic-bert", Seed: 9, RopeBase: 1000, NormEps: 1e-12, Pooling: 1})
	s.HeadsKV = 0 // as many KV heads as heads (withDefaults)
	return s
}

// TinyJinaBertV2 is a 2-layer jina-bert-v2 as jina-embeddings-v2-base-code
// is made: bert's q/k/v and output projections with biases but no
// position embeddings (ALiBi in the attention), 6 heads of 16 (not a power
// of 2, so two heads take ggml's odd-power slopes), LayerNorms of the
// whole Q and K rows, a GELU-gated feed-forward (ffn_gate, ffn_up, ffn_down
// with its bias), LayerNorms after the residual sums, attention over the
// whole text; WordPiece vocabulary (the real ones are BPE), mean pooling,
// Q8_0 weights.
func TinyJinaBertV2() ModelSpec {
	s := tiny(ModelSpec{
		Arch: "jina-bert-v2", Seed: 49, Embd: 96, Heads: 6, FFN: 128, NormEps: 1e-12, Pooling: 1,
		Jina: &JinaBertV2{QKNorm: true},
	})
	s.HeadsKV = 0 // as many KV heads as heads (withDefaults)
	return s
}

// JinaBertV2 shapes a jina-bert-v2's blocks.
type JinaBertV2 struct {
	QKNorm bool // attn_q_norm and attn_k_norm, weight and bias (v2-base-code)
	Fused  bool // ffn_up holds the gate rows then the up rows: no ffn_gate
	Norm2  bool // attn_norm_2, weight and bias
}

// TinyNomicBertMoE is a 4-layer nomic-bert-moe as nomic-embed-text-v2-moe
// is made: nomic-bert's attention with every bias, bert's GELU
// feed-forward with biases on layers 0 and 2, and on layers 1 and 3
// (moe_every_n_layers 2) 8 gate-less experts of width FFN, 2 a token;
// WordPiece vocabulary (the real one is XLM-R's Unigram), mean pooling,
// Q8_0 weights.
func TinyNomicBertMoE() ModelSpec {
	s := tiny(ModelSpec{
		Arch: "nomic-bert-moe", Seed: 48, Layers: 4, RopeBase: 1000, NormEps: 1e-5, Pooling: 1, Biases: true,
		Experts: 8, ExpertsUsed: 2, MoEEvery: 2, RouterGain: 4,
	})
	s.HeadsKV = 0 // as many KV heads as heads (withDefaults)
	s.ExpertFFN = s.FFN
	return s
}

// TinyGranite is a 2-layer granite (llama's tensors, Granite 3.3's four
// multipliers) with Q8_0 weights.
func TinyGranite() ModelSpec {
	return tiny(ModelSpec{Arch: "granite", Seed: 10, RopeBase: 10000, RMSEps: 1e-5, TiedOutput: true})
}

// TinyGraniteMoE is a 2-layer granitemoe: Granite's multipliers and 8
// experts of width 32 (feed_forward_length, as llama.cpp sizes
// granitemoe's experts), 2 per token, with Q8_0 weights.
func TinyGraniteMoE() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "granitemoe", Seed: 11, FFN: 32, RopeBase: 10000, RMSEps: 1e-6, TiedOutput: true,
	})
}

// TinyGraniteHybrid is a 4-layer granitehybrid as Granite 4.0-H's
// converter writes it: layers 0, 1 and 3 Mamba-2 (inner size 128 in 8
// heads of 16, 2 groups, state 16, kernel 4), layer 2 attention without
// RoPE, Granite's multipliers (the attention scale 1/4, large enough that
// the attention layer's scores are not nearly flat), a dense SwiGLU,
// expert_count 0; Q8_0 weights, tied output.
func TinyGraniteHybrid() ModelSpec {
	return tiny(ModelSpec{
		Arch: "granitehybrid", Seed: 23, Layers: 4, RMSEps: 1e-5, TiedOutput: true,
		ConvLayers: []int{0, 1, 3}, SSMState: 16, SSMHeads: 8, SSMGroups: 2,
		EmbeddingScale: 12, ResidualScale: 0.22, AttentionScale: 0.25, LogitScale: 8,
	})
}

// TinyGraniteHybridMoE is TinyGraniteHybrid (layers 0, 1 and 3 Mamba-2)
// with every feed-forward 8 experts of width FFN (as llama.cpp sizes
// granitehybrid's), 2 a token, plus a shared expert of width 64.
func TinyGraniteHybridMoE() ModelSpec {
	s := TinyGraniteHybrid()
	s.Seed = 29
	s.Experts, s.ExpertsUsed, s.ExpertFFN, s.SharedFFN = 8, 2, s.FFN, 64
	s.RouterGain, s.Label = 4, "moe"
	return s
}

// TinySmolLM3 is a 4-layer smollm3 (llama's graph; layer 3 has no RoPE)
// with Q8_0 weights.
func TinySmolLM3() ModelSpec {
	return tiny(ModelSpec{
		Arch: "smollm3", Seed: 12, Layers: 4, RopeBase: 5000000, RMSEps: 1e-6, TiedOutput: true,
	})
}

// TinyGemmaEmbedding is a 6-layer gemma-embedding (Gemma 3's layers,
// attention over the whole text, a symmetric window of 8 on layers 0–4,
// layer 5 global; mean pooling; a dense projection through 96) with
// Q8_0 weights.
func TinyGemmaEmbedding() ModelSpec {
	return tiny(ModelSpec{
		Arch: "gemma-embedding", Seed: 14,
		Layers: 6, HeadDim: 32, RopeBase: 1000000, RMSEps: 1e-6, TiedOutput: true,
		SlidingWindow: 8, Pooling: 1, Dense: 96,
	})
}

// TinyMistral3 is a 2-layer mistral3 (Ministral 3: llama's layers, YaRN
// with Mistral's log multiplier, Llama 4's attention temperature past
// position 4) with Q8_0 weights.
func TinyMistral3() ModelSpec {
	return tiny(ModelSpec{
		Arch: "mistral3", Seed: 16, RopeBase: 1000000, RMSEps: 1e-5,
		Yarn: &Yarn{Factor: 16, OrigContext: 4, LogMul: 1, TempScale: 0.1},
	})
}

// TinyOlmo2 is a 2-layer olmo2 (no pre-norms; Q and K norms across all
// heads; norms after attention and the feed-forward) with Q8_0 weights.
func TinyOlmo2() ModelSpec {
	return tiny(ModelSpec{Arch: "olmo2", Seed: 15, RopeBase: 500000, RMSEps: 1e-6})
}

// TinyErnie45 is a 2-layer ernie4_5 (llama's layers with llama.cpp's
// optional Q/K/V biases, here present; heads of 32, so the query is wider
// than the embedding as in ERNIE-4.5-0.3B) with a tied output and Q8_0
// weights.
func TinyErnie45() ModelSpec {
	return tiny(ModelSpec{
		Arch: "ernie4_5", Seed: 34,
		HeadDim: 32, RopeBase: 500000, RMSEps: 1e-5, TiedOutput: true, QKVBias: true,
	})
}

// TinyErnie45MoE is a 3-layer ernie4_5-moe as ERNIE-4.5-21B-A3B is made:
// ernie4_5's attention (no biases, as use_bias is false there), layer 0's
// feed-forward dense and the others' 8 experts of width 32, 2 a token,
// chosen by their softmax plus a selection bias (spread 0.1, against
// probabilities around 1/8) and weighted by the softmax renormalised,
// beside a shared expert of width 64 (two of the experts' width); tied
// output; Q8_0 weights.
func TinyErnie45MoE() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "ernie4_5-moe", Seed: 42, Layers: 3, RopeBase: 500000, RMSEps: 1e-5, TiedOutput: true,
		DenseLead: 1, SharedFFN: 64,
		SelBiasGain: 0.1,
	})
}

// TinySmallThinker is a 4-layer smallthinker as SmallThinker-4B-A0.6B is
// made: no window (every layer global and rotated), NEOX RoPE, 8 ReGLU
// experts of width 32 (feed_forward_length the same, as the converter
// writes it), 2 a token, no shared expert, chosen by the router from the
// layer's input before attention, by their sigmoid renormalised
// (expert_gating_func 2, the converter's choice without
// moe_primary_router_apply_softmax); tied output; Q8_0 weights.
func TinySmallThinker() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "smallthinker", Seed: 61,
		Layers: 4, FFN: 32, RopeBase: 1500000, RMSEps: 1e-6, TiedOutput: true,
		Gating: 2,
	})
}

// TinySmallThinkerSWA is TinySmallThinker with attention.sliding_window
// written (the NoPE-RoPE hybrid: layers 1–3 of each four windowed and
// rotated, layers 0 and 4 global and unrotated), 5 layers, softmax
// routing (expert_gating_func 1) and an output matrix of its own.
func TinySmallThinkerSWA() ModelSpec {
	s := TinySmallThinker()
	s.Layers, s.Seed, s.Gating, s.TiedOutput = 5, 62, 1, false
	s.Windowed, s.SlidingWindow, s.Label = true, 4096, "swa"
	return s
}

// TinyFalconH1 is a 3-layer falcon-h1 as Falcon-H1's converter writes
// it: every layer attention (NEOX RoPE, 4 heads of 16 on 2 KV heads) and
// a Mamba-2 mixer side by side (inner size 96, not twice the width, in 6
// heads of 16, 2 groups, state 16, kernel 4, with its gated norm), a
// SwiGLU feed-forward after ffn_norm (named without .weight); untied;
// Q8_0 weights.
func TinyFalconH1() ModelSpec {
	return tiny(ModelSpec{
		Arch: "falcon-h1", Seed: 71, Layers: 3, RopeBase: 100000000, RMSEps: 1e-5,
		SSMInner: 96, SSMState: 16, SSMHeads: 6, SSMGroups: 2,
	})
}

// TinyMiniCPM is a 2-layer minicpm (llama's tensors, tied output) with
// MiniCPM-2B's multipliers (embedding_scale 12, residual_scale
// 1.4/sqrt(40), logit_scale 2304/256) and Q8_0 weights.
func TinyMiniCPM() ModelSpec {
	return tiny(ModelSpec{
		Arch: "minicpm", Seed: 73, RopeBase: 10000, RMSEps: 1e-5, TiedOutput: true,
		EmbeddingScale: 12, ResidualScale: 0.22135944, LogitScale: 9,
	})
}

// TinyMiniCPM3 is a 2-layer minicpm3 as MiniCPM3-4B is made: latent
// attention of rank 64 in the older form (one attn_kv_b; heads of 32
// unrotated and 16 rotated query dims, values of 32), the query through a
// rank of 32, NEOX RoPE, a dense SwiGLU, tied output; Q8_0 weights.
func TinyMiniCPM3() ModelSpec {
	s := tiny(ModelSpec{
		Arch: "minicpm3", Seed: 79, RopeBase: 10000, RMSEps: 1e-5, TiedOutput: true,
		DeepSeek2: &DeepSeek2{KVLora: 64, QLora: 32, Nope: 32, Rope: 16, VHead: 32, Joined: true},
	})
	s.HeadsKV = 0 // withDefaults derives it from the latent attention
	return s
}

// TinyOLMoE is a 2-layer olmoe as OLMoE-1B-7B is made: as many KV heads
// as heads, Q and K norms across all heads, NEOX RoPE, 8 experts as wide
// as feed_forward_length (32), 2 a token, softmax-routed and not
// renormalised; untied output; Q8_0 weights.
func TinyOLMoE() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "olmoe", Seed: 83, HeadsKV: 4, FFN: 32, RopeBase: 10000, RMSEps: 1e-5,
	})
}

// TinyMiniMaxM2 is a 2-layer minimax-m2 as MiniMax-M2 is made: heads of
// 32 (4 on 2 KV heads, the query wider than the 64-wide embedding, as
// M2's 48 × 128 are than its 3072), Q and K each RMS-normalised across
// all its heads, NEOX RoPE over half of each head (rope.dimension_count
// 16, M2's 64 of 128); in every block 8 experts as wide as
// feed_forward_length (32), 2 a token, chosen by their sigmoid plus a
// selection bias and weighted by the sigmoids renormalised, no shared
// expert; untied output; Q8_0 weights.
func TinyMiniMaxM2() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "minimax-m2", Seed: 172, HeadDim: 32, RopeDim: 16, FFN: 32, RopeBase: 5000000, RMSEps: 1e-6,
	})
}

// TinySeedOSS is a 2-layer seed_oss (NEOX RoPE, the optional Q/K/V
// biases present, post_attention_norm as the norm before the
// feed-forward, heads of 32 as the query is wider than the embedding in
// Seed-OSS-36B) with Q8_0 weights.
func TinySeedOSS() ModelSpec {
	return tiny(ModelSpec{
		Arch: "seed_oss", Seed: 37, HeadDim: 32, RopeBase: 10000000, RMSEps: 1e-6, QKVBias: true,
	})
}

// TinyExaone4 is a 2-layer exaone4 as EXAONE 4.0 1.2B is made (every
// layer attending to the whole context and rotated; no norms before
// attention and the feed-forward, norms after them; per-head Q/K norms;
// NEOX RoPE; tied output), with Q8_0 weights. Its file states a window of
// 4, which llama.cpp ignores below 64 layers.
func TinyExaone4() ModelSpec {
	return tiny(ModelSpec{
		Arch: "exaone4", Seed: 38, RopeBase: 1000000, RMSEps: 1e-5, TiedOutput: true, SlidingWindow: 4,
	})
}

// TinyExaone4SWA is TinyExaone4 at 64 layers, the depth at which llama.cpp
// gives EXAONE 4.0 (32B) its hybrid attention: layers 0–2 of every four
// windowed (4 positions) and rotated, the fourth global and unrotated.
func TinyExaone4SWA() ModelSpec {
	s := TinyExaone4()
	s.Layers, s.Seed, s.Label = 64, 39, "swa"
	return s
}

// TinyGLM4 is a 2-layer glm4 as GLM-4-9B-0414 is made: the optional
// Q/K/V biases present, half of each head rotated (rope.dimension_count
// 8 of 16) in NORM pairs, norms after attention and the feed-forward
// besides the ones before, gate and up fused in ffn_up; GQA (4 heads, 2
// KV heads); Q8_0 weights.
func TinyGLM4() ModelSpec {
	return tiny(ModelSpec{Arch: "glm4", Seed: 40, RopeBase: 10000, RMSEps: 1e-5, QKVBias: true, RopeDim: 8})
}

// TinyGLM4Fused is TinyGLM4 with Q, K and V (and their biases) fused in
// attn_qkv, the other layout llama.cpp's glm4 loader takes.
func TinyGLM4Fused() ModelSpec {
	s := TinyGLM4()
	s.Seed, s.FusedQKV = 41, true
	return s
}

// TinyChatGLM is a 2-layer chatglm as llama.cpp's converter writes
// ChatGLM3-6B and GLM-4-9B-chat: Q, K and V fused in attn_qkv with its
// bias (query_key_value), half of each head rotated (rope.dimension_count
// 8 of 16) in NORM pairs, gate and up fused in ffn_up, no norms after
// attention or the feed-forward, an untied output; GQA (4 heads, 2 KV
// heads, as the files' multi_query_group_num); Q8_0 weights.
func TinyChatGLM() ModelSpec {
	return tiny(ModelSpec{Arch: "chatglm", Seed: 143, RopeBase: 10000, RMSEps: 1e-5, QKVBias: true, FusedQKV: true, RopeDim: 8})
}

// TinyChatGLMApart is TinyChatGLM with separate attn_q, attn_k and attn_v
// and their biases, the other layout llama.cpp's chatglm loader takes.
func TinyChatGLMApart() ModelSpec {
	s := TinyChatGLM()
	s.Seed, s.FusedQKV = 144, false
	return s
}

// TinyGptOss is a 4-layer gpt-oss: biases on every projection, the
// router and each expert; attention sinks; a window of 8 on layers 0 and
// 2; 8 experts of width 64, 2 per token, weighted by the softmax of the
// chosen logits, through the clamped SwiGLU; YaRN (factor 4 over 16
// positions); Q8_0 weights.
func TinyGptOss() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "gpt-oss", Seed: 17, Layers: 4, HeadDim: 32, RopeBase: 150000, RMSEps: 1e-5, SlidingWindow: 8,
		ExpertFFN: 64,
		Yarn:      &Yarn{Factor: 4, OrigContext: 16},
	})
}

// TinyLFM2 is a 4-layer lfm2 (layers 0, 1 and 3 short convolutions of
// kernel 3, layer 2 attention with per-head Q/K norms; the final norm
// named token_embd_norm; tied output) with Q8_0 weights.
func TinyLFM2() ModelSpec {
	return tiny(ModelSpec{
		Arch: "lfm2", Seed: 17, Layers: 4, RopeBase: 1000000, RMSEps: 1e-5, TiedOutput: true,
		ConvLayers: []int{0, 1, 3},
	})
}

// TinyLFM2MoE is TinyLFM2's layers (0, 1 and 3 short convolutions,
// 2 attention) with layer 0's feed-forward dense and the others' 8
// experts of width 32, 2 a token, chosen by their sigmoid plus a
// selection bias and weighted by the sigmoid renormalised; Q8_0 weights.
func TinyLFM2MoE() ModelSpec {
	s := TinyLFM2()
	s.Arch, s.Seed = "lfm2moe", 19
	s.Experts, s.ExpertsUsed, s.ExpertFFN, s.DenseLead = 8, 2, 32, 1
	s.RouterGain = 4
	return s
}

// convLayer reports whether layer l of s is recurrent (a short
// convolution, or a Mamba-2 layer).
func (s ModelSpec) convLayer(l int) bool { return slices.Contains(s.ConvLayers, l) }

// AddConvLayers writes a hybrid's per-layer attention.head_count_kv (0 for
// the short-convolution layers conv marks, headsKV for the others), as
// llama.cpp's converter writes LFM2's, and shortconv.l_cache.
func AddConvLayers(g *gguf.Writer, arch string, headsKV int, conv []bool, kernel int) {
	addRecurrentLayers(g, arch, headsKV, conv)
	g.AddKV(arch+".shortconv.l_cache", uint32(kernel))
}

// addRecurrentLayers writes a hybrid's per-layer attention.head_count_kv:
// 0 for the recurrent layers rec marks, headsKV for the others.
func addRecurrentLayers(g *gguf.Writer, arch string, headsKV int, rec []bool) {
	kvs := make([]int32, len(rec))
	for l, r := range rec {
		if !r {
			kvs[l] = int32(headsKV)
		}
	}
	g.AddKV(arch+".attention.head_count_kv", kvs)
}

// SSM is a granitehybrid's Mamba-2 sizes, as its converter writes them.
type SSM struct {
	Conv, Inner, State, Heads, Groups int
}

// AddSSMLayers writes a granitehybrid's per-layer attention.head_count_kv
// (0 for the Mamba-2 layers rec marks, headsKV for the others), its
// ssm.* sizes, and rope.scaling.finetuned false (Granite 4.0-H has no
// RoPE), as llama.cpp's converter writes Granite 4.0-H's.
func AddSSMLayers(g *gguf.Writer, arch string, headsKV int, rec []bool, m SSM) {
	addRecurrentLayers(g, arch, headsKV, rec)
	m.addTo(g, arch)
	g.AddKV(arch+".rope.scaling.finetuned", false)
}

// AddSSMSizes writes the ssm.* sizes m under arch's key prefix alone, as
// falcon-h1's converter does (every layer has its Mamba-2 mixer: no
// per-layer head counts mark them).
func AddSSMSizes(g *gguf.Writer, arch string, m SSM) { m.addTo(g, arch) }

// addTo writes the ssm.* sizes m under arch's key prefix.
func (m SSM) addTo(g *gguf.Writer, arch string) {
	addSSMKeys(g, arch, m.Conv, m.Inner, m.State, m.Heads)
	g.AddKV(arch+".ssm.group_count", uint32(m.Groups))
}

// addSSMKeys writes the ssm.* sizes Mamba-1 and Mamba-2 share under
// arch's key prefix: the kernel, the inner size, the state size and the
// time step's rank (Mamba-2's heads).
func addSSMKeys(g *gguf.Writer, arch string, conv, inner, state, rank int) {
	a := arch + "."
	g.AddKV(a+"ssm.conv_kernel", uint32(conv))
	g.AddKV(a+"ssm.state_size", uint32(state))
	g.AddKV(a+"ssm.inner_size", uint32(inner))
	g.AddKV(a+"ssm.time_step_rank", uint32(rank))
}

// gemma reports whether s has Gemma's layers (gemma2, gemma3,
// gemma-embedding): post-norms, GeGLU, scaled embeddings.
func (s ModelSpec) gemma() bool {
	return s.Arch == "gemma2" || s.Arch == "gemma3" || s.Arch == "gemma3n" || s.Arch == "gemma4" || s.Arch == "gemma-embedding"
}

// moe reports whether s has experts (qwen3moe, phimoe, granitemoe, gpt-oss,
// lfm2moe, deepseek2; granitehybrid and gemma4 with Experts set).
func (s ModelSpec) moe() bool {
	if s.Arch == "qwen3vlmoe" {
		return true
	}
	return s.Arch == "qwen3moe" || s.Arch == "grovemoe" || s.Arch == "qwen2moe" || s.Arch == "phimoe" || s.Arch == "hunyuan-moe" || s.Arch == "mellum" || s.Arch == "granitemoe" || s.Arch == "olmoe" || s.Arch == "gpt-oss" || s.Arch == "lfm2moe" || s.Arch == "deepseek2" || s.Arch == "mistral4" || s.Arch == "qwen35moe" || s.Arch == "qwen3next" || s.Arch == "ernie4_5-moe" ||
		s.Arch == "kimi-linear" || s.Routing != nil || s.Arch == "mimo2" ||
		s.Arch == "smallthinker" || s.Arch == "minimax-m2" || s.Arch == "llama4" ||
		(s.Arch == "granitehybrid" || s.Arch == "gemma4") && s.Experts > 0
}

// hybrid reports whether s has LFM2's short-convolution layers.
func (s ModelSpec) hybrid() bool { return s.Arch == "lfm2" || s.Arch == "lfm2moe" }

// Encoder reports whether s is an encoder (bert, nomic-bert,
// nomic-bert-moe, jina-bert-v2), which makes embeddings and no logits.
func (s ModelSpec) Encoder() bool {
	return s.Arch == "bert" || s.Arch == "nomic-bert" || s.Arch == "nomic-bert-moe" || s.Arch == "jina-bert-v2" || s.Arch == "jina-bert-v3"
}

// expertLayer reports whether a nomic-bert-moe's layer l has experts.
func (s ModelSpec) expertLayer(l int) bool { return s.MoEEvery > 0 && l%s.MoEEvery == 1 }

// ModelBytes returns the GGUF file of s.
func ModelBytes(s ModelSpec) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteModel(&buf, s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteModelFile writes the GGUF file of s to path; on failure it removes
// the partial file.
func WriteModelFile(path string, s ModelSpec) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("testutil: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("testutil: %w", cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	return WriteModel(f, s)
}

// WriteModel writes the GGUF file of s to w. The spec is validated before
// anything is written.
func WriteModel(w io.Writer, s ModelSpec) error {
	s, err := s.withDefaults()
	if err != nil {
		return err
	}
	var vocab *Vocab
	switch {
	case s.Encoder() && s.Unigram:
		vocab, err = UGMVocab(s.Vocab)
	case s.Encoder():
		vocab, err = WPMVocabOf(s.Vocab)
	default:
		vocab, err = SPMVocab(s.Vocab)
	}
	if err != nil {
		return err
	}
	if err := vocab.SetControl(s.ChatTokens); err != nil {
		return err
	}
	g := gguf.NewWriter()
	s.addKV(g, vocab)
	for _, t := range s.tensors() {
		if err := g.AddTensorFunc(t.name, t.typ, t.dims, s.generator(t)); err != nil {
			return fmt.Errorf("testutil: %w", err)
		}
	}
	if _, err := g.WriteTo(w); err != nil {
		return fmt.Errorf("testutil: %w", err)
	}
	return nil
}

// checkExperts checks an expert model's counts.
func (s ModelSpec) checkExperts() error {
	if s.Experts <= 0 || s.ExpertsUsed <= 0 || s.ExpertsUsed > s.Experts || s.ExpertFFN <= 0 {
		return fmt.Errorf("testutil: %s needs 0 < ExpertsUsed (%d) <= Experts (%d) and ExpertFFN (%d) > 0",
			s.Arch, s.ExpertsUsed, s.Experts, s.ExpertFFN)
	}
	return nil
}

// checkShared checks the counts of a model whose every block has experts
// and a shared expert (gated in qwen2moe, qwen35moe and qwen3next; not in
// hunyuan-moe).
func (s ModelSpec) checkShared() error {
	if err := s.checkExperts(); err != nil {
		return err
	}
	if s.SharedFFN <= 0 {
		return fmt.Errorf("testutil: %s needs SharedFFN above 0 (every block has a shared expert)", s.Arch)
	}
	return nil
}

// recurrentDefaults fills and checks the sizes of the architectures
// whose blocks hold recurrent layers of their own layout.
var recurrentDefaults = map[string]func(ModelSpec) (ModelSpec, error){
	"nemotron_h": ModelSpec.withNemotronHDefaults, "nemotron_h_moe": ModelSpec.withNemotronHDefaults,
	"jamba": ModelSpec.withJambaDefaults, "mamba": ModelSpec.withMambaDefaults, "mamba2": ModelSpec.withMambaDefaults,
	"kimi-linear": ModelSpec.withKimiLinearDefaults,
}

// withDefaults fills zero fields and checks the spec.
func (s ModelSpec) withDefaults() (ModelSpec, error) {
	if s.Arch == "" {
		s.Arch = "llama"
	}
	if fill := recurrentDefaults[s.Arch]; fill != nil {
		var err error
		if s, err = fill(s); err != nil {
			return s, err
		}
	}
	arch := s.Arch
	if s.denseArch() {
		arch = "dense" // one case for the architectures densearchs.go describes
	}
	switch arch {
	case "llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "smollm3", "mistral3", "olmo2", "ernie4_5", "seed_oss", "exaone4", "glm4", "chatglm", "gemma-embedding", "internlm2",
		"maincoder", "eurobert", "neo-bert", "plamo3", "llama-embed", "nanbeige", "talkie", "deci", "openelm":
	case "qwen2vl", "qwen3vl":
	case "qwen3vlmoe":
		if err := s.checkExperts(); err != nil {
			return s, err
		}
	case "gemma3n":
		s = s.withGemma3nDefaults()
	case "dense":
		s = s.withDenseArchDefaults()
	case "modern-bert":
		if err := s.checkModernBert(); err != nil {
			return s, err
		}
	case "nemotron_h", "nemotron_h_moe", "jamba", "mamba", "mamba2", "kimi-linear": // recurrentDefaults
	case "rwkv7", "arwkv7":
		if s.RWKV7 == nil || s.Embd%s.RWKV7.Head != 0 {
			return s, fmt.Errorf("testutil: an rwkv7 needs its sizes, the head dividing the width (%+v, width %d)", s.RWKV7, s.Embd)
		}
	case "rwkv6", "rwkv6qwen2":
		if s.RWKV6 == nil || s.Embd%s.RWKV6.Head != 0 {
			return s, fmt.Errorf("testutil: an rwkv6 needs its sizes, the head dividing the width (%+v, width %d)", s.RWKV6, s.Embd)
		}
	case "gemma4":
		if s.SWALayers == nil {
			s.SWALayers = Gemma3nPattern(s.Layers)
		}
		if s.Experts > 0 {
			if err := s.checkExperts(); err != nil {
				return s, err
			}
		}
	case "lfm2", "lfm2moe":
		if s.ConvKernel == 0 {
			s.ConvKernel = 3
		}
		if s.Arch == "lfm2moe" {
			if s.Gating == 0 {
				s.Gating = 2
			}
			if s.SelBiasGain == 0 {
				s.SelBiasGain = 0.5
			}
			if err := s.checkExperts(); err != nil {
				return s, err
			}
		}
	case "granite":
		s = s.withGraniteScales()
	case "minicpm":
	case "qwen35", "qwen35moe", "qwen3next":
		var err error
		if s, err = s.withQwen35Defaults(); err != nil {
			return s, err
		}
		if s.Arch != "qwen35" {
			if err := s.checkShared(); err != nil {
				return s, err
			}
		}
	case "qwen2moe":
		if err := s.checkShared(); err != nil {
			return s, err
		}
	case "hunyuan-moe":
		if err := s.checkShared(); err != nil {
			return s, err
		}
		if s.ExpertFFN != s.FFN {
			return s, fmt.Errorf("testutil: hunyuan-moe's experts are FFN (%d) wide, not %d", s.FFN, s.ExpertFFN)
		}
	case "granitehybrid":
		s = s.withGraniteScales()
		if s.ConvKernel == 0 {
			s.ConvKernel = 4
		}
		if s.SSMState <= 0 || s.SSMHeads <= 0 || s.SSMGroups <= 0 || 2*s.Embd%s.SSMHeads != 0 || s.SSMHeads%s.SSMGroups != 0 {
			return s, fmt.Errorf("testutil: granitehybrid needs SSMState, SSMHeads dividing 2×Embd and SSMGroups dividing SSMHeads (%d, %d, %d)",
				s.SSMState, s.SSMHeads, s.SSMGroups)
		}
		if s.Experts > 0 {
			if err := s.checkExperts(); err != nil {
				return s, err
			}
		}
	case "bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3":
		if s.Arch == "nomic-bert-moe" && s.MoEEvery > 0 {
			if err := s.checkExperts(); err != nil {
				return s, err
			}
			if s.ExpertFFN != s.FFN {
				return s, fmt.Errorf("testutil: nomic-bert-moe's experts are FFN (%d) wide, not %d", s.FFN, s.ExpertFFN)
			}
		}
		if s.NormEps == 0 {
			s.NormEps = 1e-12
		}
		if s.TokenTypes == 0 {
			s.TokenTypes = 2
		}
	case "deepseek2", "mistral4":
		d := s.DeepSeek2
		if d == nil || d.KVLora <= 0 || d.Nope <= 0 || d.Rope <= 0 || d.Rope%2 != 0 || d.VHead <= 0 || d.Shared <= 0 {
			return s, fmt.Errorf("testutil: deepseek2 needs DeepSeek2 with KVLora, Nope, Rope (even), VHead and Shared above 0")
		}
		if err := s.checkExperts(); err != nil {
			return s, err
		}
		s = s.withLatentHeads()
		s.SharedFFN = d.Shared * s.ExpertFFN
	case "minicpm3":
		d := s.DeepSeek2
		if d == nil || d.KVLora <= 0 || d.QLora <= 0 || d.Nope <= 0 || d.Rope <= 0 || d.Rope%2 != 0 || d.VHead <= 0 || !d.Joined || d.Shared != 0 {
			return s, fmt.Errorf("testutil: minicpm3 needs DeepSeek2 Joined, with KVLora, QLora, Nope, Rope (even) and VHead above 0, no shared experts")
		}
		s = s.withLatentHeads()
	case "glm4moe", "bailingmoe2", "afmoe", "dots1", "exaone-moe", "laguna", "cohere2moe", "bailingmoe":
		if s.Arch == "cohere2moe" && s.LogitScale == 0 {
			s.LogitScale = 0.25
		}
		var err error
		if s, err = s.withRoutingDefaults(); err != nil {
			return s, err
		}
	case "qwen3moe", "grovemoe", "granitemoe", "gpt-oss", "ernie4_5-moe", "olmoe", "phimoe", "mellum", "llama4", "mimo2":
		if err := s.checkExperts(); err != nil {
			return s, err
		}
		if s.Arch == "llama4" {
			s.SharedFFN = s.ExpertFFN // llama.cpp sizes the shared expert so
		}
		if g := s.Grove; s.Arch == "grovemoe" && (g == nil || g.PerGroup <= 0 || s.Experts%g.PerGroup != 0 || g.FFN <= 0) {
			return s, fmt.Errorf("testutil: grovemoe needs Grove with PerGroup dividing Experts (%d) and FFN above 0", s.Experts)
		}
		if s.Arch == "granitemoe" {
			s = s.withGraniteScales()
		}
	case "falcon-h1":
		if s.ConvKernel == 0 {
			s.ConvKernel = 4
		}
	case "smallthinker", "minimax-m2":
		if s.Gating == 0 {
			s.Gating = 2
		}
		if err := s.checkExperts(); err != nil {
			return s, err
		}
	default:
		return s, fmt.Errorf("testutil: unknown architecture %q (ModelSpec writes those model.Supported lists)", s.Arch)
	}
	if s.Vocab <= 0 || s.Embd <= 0 || s.Layers <= 0 || s.Heads <= 0 || s.FFN <= 0 {
		return s, fmt.Errorf("testutil: Vocab %d, Embd %d, Layers %d, Heads %d and FFN %d must all be positive",
			s.Vocab, s.Embd, s.Layers, s.Heads, s.FFN)
	}
	if s.HeadsKV == 0 {
		s.HeadsKV = s.Heads
	}
	if s.HeadsKV < 0 || s.Heads%s.HeadsKV != 0 {
		return s, fmt.Errorf("testutil: %d heads are not a multiple of %d KV heads", s.Heads, s.HeadsKV)
	}
	if s.HeadDim == 0 {
		if s.Embd%s.Heads != 0 {
			return s, fmt.Errorf("testutil: Embd %d is not a multiple of %d heads; set HeadDim", s.Embd, s.Heads)
		}
		s.HeadDim = s.Embd / s.Heads
	}
	if s.HeadDim < 0 || s.HeadDim%2 != 0 {
		return s, fmt.Errorf("testutil: head size %d must be positive and even for RoPE", s.HeadDim)
	}
	if s.Context == 0 {
		s.Context = 2048
	}
	if s.RopeBase == 0 && s.Arch != "bert" && s.Arch != "jina-bert-v2" && !s.learnedPositions() && !s.alibi() {
		s.RopeBase = 10000
	}
	if s.RMSEps == 0 {
		s.RMSEps = 1e-5
		if s.Arch != "llama" {
			s.RMSEps = 1e-6
		}
	}
	if s.OutputType == 0 {
		s.OutputType = s.WeightType
	}
	if s.SlidingWindow == 0 {
		s.SlidingWindow = 4096
	}
	if s.Context < 0 || s.SlidingWindow < 0 || s.SWAPattern < 0 {
		return s, fmt.Errorf("testutil: negative Context %d, SlidingWindow %d or SWAPattern %d", s.Context, s.SlidingWindow, s.SWAPattern)
	}
	for _, t := range s.tensors() {
		if _, err := gguf.TensorBytes(t.typ, t.dims); err != nil {
			return s, fmt.Errorf("testutil: tensor %q: %w", t.name, err)
		}
	}
	return s, nil
}

// fileTypes are llama.cpp's llama_ftype for a model whose 2-D weights
// are of a type (the K-quants' and MXFP4's as their _M and _MOE mixes):
// what general.file_type holds. A type not here reads as 0 (all F32).
var fileTypes = map[quant.Type]uint32{
	quant.F32: 0, quant.F16: 1, quant.Q4_0: 2, quant.Q4_1: 3,
	quant.Q8_0: 7, quant.Q5_0: 8, quant.Q5_1: 9, quant.Q2_K: 10,
	quant.Q3_K: 12, // Q3_K_M
	quant.Q4_K: 15, // Q4_K_M
	quant.Q5_K: 17, // Q5_K_M
	quant.Q6_K: 18, quant.IQ2_XXS: 19, quant.IQ2_XS: 20, quant.IQ3_XXS: 23,
	quant.IQ1_S: 24, quant.IQ4_NL: 25, quant.IQ3_S: 26, quant.IQ2_S: 28,
	quant.IQ4_XS: 30, quant.IQ1_M: 31, quant.BF16: 32, quant.TQ1_0: 36,
	quant.TQ2_0: 37, quant.MXFP4: 38, // MXFP4_MOE
}

// Hparams are the hyperparameters every architecture's loader reads.
// NormEps, when not 0, makes them an encoder's (bert, nomic-bert), as the
// converter writes them: attention.layer_norm_epsilon and
// attention.causal = false instead of head_count_kv and the RMS epsilon.
// RopeBase 0 writes no rope.freq_base (bert).
type Hparams struct {
	Context, Embd, Layers, FFN, Heads, HeadsKV int
	RMSEps, RopeBase, NormEps                  float32
}

// AddHparams writes h under arch's key prefix, so the test models and
// mkmodel's files carry the same keys with the same types and order.
func AddHparams(g *gguf.Writer, arch string, h Hparams) {
	a := arch + "."
	g.AddKV(a+"context_length", uint32(h.Context))
	g.AddKV(a+"embedding_length", uint32(h.Embd))
	g.AddKV(a+"block_count", uint32(h.Layers))
	g.AddKV(a+"feed_forward_length", uint32(h.FFN))
	g.AddKV(a+"attention.head_count", uint32(h.Heads))
	if h.NormEps != 0 {
		g.AddKV(a+"attention.layer_norm_epsilon", h.NormEps)
		g.AddKV(a+"attention.causal", false)
	} else {
		if h.Heads > 0 { // a model without attention (mamba) has none
			g.AddKV(a+"attention.head_count_kv", uint32(h.HeadsKV))
		}
		if h.RMSEps != 0 { // 0: LayerNorms with biases (starcoder2, nemotron) state no RMS epsilon
			g.AddKV(a+"attention.layer_norm_rms_epsilon", h.RMSEps)
		}
	}
	if h.RopeBase != 0 {
		g.AddKV(a+"rope.freq_base", h.RopeBase)
	}
}

func (s ModelSpec) addKV(g *gguf.Writer, vocab *Vocab) {
	a := s.Arch + "."
	g.AddKV("general.architecture", s.Arch)
	g.AddKV("general.name", "synthetic-"+s.Arch)
	h := Hparams{Context: s.Context, Embd: s.Embd, Layers: s.Layers + s.NextN, FFN: s.FFN,
		Heads: s.Heads, HeadsKV: s.HeadsKV, RMSEps: s.RMSEps, RopeBase: s.RopeBase}
	if s.Encoder() || s.modernBert() {
		h.NormEps = s.NormEps
	}
	if s.Arch == "cohere2moe" && s.NormEps != 0 {
		h.RMSEps = 0 // its LayerNorm's epsilon instead, below
	}
	if s.mixersOnly() {
		h.Heads, h.FFN = 0, 0 // the converter's unused 0s
	}
	if s.rwkv() {
		h.Heads = 0 // the converter writes 0; its LayerNorms' epsilon is AddRWKV7KV's or AddRWKV6KV's
	}
	AddHparams(g, s.Arch, h)
	switch d := s.DeepSeek2; {
	case d != nil:
		g.AddKV(a+"rope.dimension_count", uint32(d.Rope))
		d.AddTo(g, s.Arch)
	case s.RopeDim > 0:
		g.AddKV(a+"rope.dimension_count", uint32(s.RopeDim))
	case !s.Encoder() && !s.mixersOnly() && !s.rwkv():
		g.AddKV(a+"rope.dimension_count", uint32(s.HeadDim))
	}
	if s.qwen35() {
		s.addQwen35KV(g)
	}
	if s.Arch == "kimi-linear" {
		s.addKimiLinearKV(g)
	}
	// laguna's converter writes head_dim: without it llama.cpp divides
	// the width by layer 0's heads, which differ from the others'.
	if s.DeepSeek2 == nil && (s.HeadDim*s.Heads != s.Embd || s.gemma() || s.Arch == "gemma" || s.Laguna != nil || s.Arch == "openelm") {
		g.AddKV(a+"attention.key_length", uint32(s.HeadDim))
		g.AddKV(a+"attention.value_length", uint32(s.HeadDim))
	}
	switch s.Arch {
	case "gemma2":
		g.AddKV(a+"attn_logit_softcapping", float32(50))
		g.AddKV(a+"final_logit_softcapping", float32(30))
		g.AddKV(a+"attention.sliding_window", uint32(s.SlidingWindow))
	case "gpt-oss", "exaone4":
		g.AddKV(a+"attention.sliding_window", uint32(s.SlidingWindow))
	case "cohere2moe":
		g.AddKV(a+"attention.sliding_window", uint32(s.SlidingWindow))
		g.AddKV(a+"logit_scale", s.LogitScale)
		if s.NormEps != 0 {
			g.AddKV(a+"attention.layer_norm_epsilon", s.NormEps)
		}
		if s.SWAPattern > 0 {
			g.AddKV(a+"attention.sliding_window_pattern", uint32(s.SWAPattern))
		}
	case "gemma-embedding":
		g.AddKV(a+"attention.sliding_window", uint32(s.SlidingWindow))
		if s.Dense > 0 {
			g.AddKV(a+"dense_2_feat_in", uint32(s.Embd))
			g.AddKV(a+"dense_2_feat_out", uint32(s.Dense))
			g.AddKV(a+"dense_3_feat_in", uint32(s.Dense))
			g.AddKV(a+"dense_3_feat_out", uint32(s.Embd))
		}
	case "eurobert", "neo-bert":
		g.AddKV(a+"attention.causal", false)
	case "llama-embed":
		if s.NonCausal {
			g.AddKV(a+"attention.causal", false)
		}
	case "gemma3", "modern-bert":
		g.AddKV(a+"attention.sliding_window", uint32(s.SlidingWindow))
		if s.SWAPattern > 0 {
			g.AddKV(a+"attention.sliding_window_pattern", uint32(s.SWAPattern))
		}
		if s.RopeBaseSWA > 0 {
			g.AddKV(a+"rope.freq_base_swa", s.RopeBaseSWA)
		}
	case "gemma3n":
		s.addGemma3nKV(g)
	case "gemma4":
		s.addGemma4KV(g)
	case "nemotron_h", "nemotron_h_moe":
		s.addNemotronHKV(g)
	case "jamba":
		s.addJambaKV(g)
	case "rwkv7":
		AddRWKV7KV(g, s.Arch, *s.RWKV7, s.NormEps)
	case "rwkv6":
		AddRWKV6KV(g, s.Arch, *s.RWKV6, s.NormEps)
	case "rwkv6qwen2":
		AddRWKV6Qwen2KV(g, s.Arch, *s.RWKV6)
	case "arwkv7":
		AddARWKV7KV(g, s.Arch, *s.RWKV7)
	case "mamba2":
		AddSSMSizes(g, s.Arch, s.mamba2SSM())
	case "mamba":
		AddMambaKV(g, s.Arch, Mamba1{Conv: s.ConvKernel, Inner: 2 * s.Embd, State: s.SSMState, DtRank: s.SSMDtRank}, s.DtBCNorm)
	}
	if s.denseArch() {
		s.addDenseArchKV(g)
	}
	if s.hybrid() {
		conv := make([]bool, s.Layers)
		for l := range conv {
			conv[l] = s.convLayer(l)
		}
		AddConvLayers(g, s.Arch, s.HeadsKV, conv, s.ConvKernel)
	}
	if s.Arch == "granitehybrid" {
		rec := make([]bool, s.Layers)
		for l := range rec {
			rec[l] = s.convLayer(l)
		}
		AddSSMLayers(g, s.Arch, s.HeadsKV, rec, SSM{Conv: s.ConvKernel, Inner: 2 * s.Embd, State: s.SSMState, Heads: s.SSMHeads, Groups: s.SSMGroups})
		// The converter writes expert_count 0 for the dense models and
		// no expert_feed_forward_length (llama.cpp sizes the experts by
		// feed_forward_length).
		g.AddKV(a+"expert_count", uint32(s.Experts))
		if s.Experts > 0 {
			g.AddKV(a+"expert_used_count", uint32(s.ExpertsUsed))
		}
	} else if s.moe() {
		g.AddKV(a+"expert_count", uint32(s.Experts))
		g.AddKV(a+"expert_used_count", uint32(s.ExpertsUsed))
		g.AddKV(a+"expert_feed_forward_length", uint32(s.ExpertFFN))
	}
	if gr := s.Grove; gr != nil {
		gr.AddKV(g, s.Arch)
	}
	if s.SharedFFN > 0 && s.DeepSeek2 == nil && s.Routing == nil && s.Arch != "llama4" {
		g.AddKV(a+"expert_shared_feed_forward_length", uint32(s.SharedFFN))
	}
	if s.Arch == "nomic-bert-moe" && s.MoEEvery > 0 {
		// As the converter writes them: no expert_feed_forward_length.
		g.AddKV(a+"expert_count", uint32(s.Experts))
		g.AddKV(a+"moe_every_n_layers", uint32(s.MoEEvery))
		g.AddKV(a+"expert_used_count", uint32(s.ExpertsUsed))
	}
	if s.Arch == "lfm2moe" || s.Arch == "deepseek2" || s.Arch == "mistral4" || s.Arch == "ernie4_5-moe" || s.Arch == "kimi-linear" {
		g.AddKV(a+"leading_dense_block_count", uint32(s.DenseLead))
	}
	if r := s.Routing; r != nil {
		g.AddKV(a+"leading_dense_block_count", uint32(s.DenseLead))
		r.AddTo(g, s.Arch)
		if s.NextN > 0 {
			g.AddKV(a+"nextn_predict_layers", uint32(s.NextN))
		}
	}
	if s.Arch == "ernie4_5-moe" {
		g.AddKV(a+"interleave_moe_layer_step", uint32(1)) // experts on every layer after the lead
	}
	if s.Arch == "llama4" {
		g.AddKV(a+"interleave_moe_layer_step", uint32(s.MoEStep))
	}
	if s.Arch == "lfm2moe" || s.Arch == "minimax-m2" {
		g.AddKV(a+"expert_gating_func", s.Gating)
	}
	if s.Arch == "falcon-h1" {
		AddSSMSizes(g, s.Arch, SSM{Conv: s.ConvKernel, Inner: s.ssmInner(), State: s.SSMState, Heads: s.SSMHeads, Groups: s.SSMGroups})
	}
	if (s.Arch == "afmoe" || s.Arch == "exaone-moe" || s.Arch == "laguna") && s.Windowed {
		g.AddKV(a+"attention.sliding_window", uint32(s.SlidingWindow))
	}
	if s.Laguna != nil {
		s.Laguna.AddTo(g, s.Layers, s.Heads, s.Windowed)
	}
	if s.Mimo2 != nil {
		s.addMimo2KV(g)
	}
	if s.PerLayer != nil {
		s.PerLayer.AddTo(g, s.Arch)
	}
	if (s.Arch == "mellum" || s.Arch == "plamo3") && s.Windowed {
		s.addWindowPattern(g)
	}
	if s.Loops > 0 {
		g.AddKV(a+"num_loops", uint32(s.Loops))
	}
	if s.Arch == "talkie" {
		g.AddKV(a+"logit_scale", s.LogitScale)
	}
	if s.SkipLoopNorm {
		g.AddKV(a+"skip_loop_final_norm", true)
	}
	if s.Arch == "smallthinker" {
		g.AddKV(a+"expert_gating_func", s.Gating)
		if s.Windowed {
			g.AddKV(a+"attention.sliding_window", uint32(s.SlidingWindow))
		}
	}
	if s.Arch == "granite" || s.Arch == "granitemoe" || s.Arch == "granitehybrid" {
		AddGraniteScales(g, s.Arch, s.EmbeddingScale, s.ResidualScale, s.AttentionScale, s.LogitScale)
	}
	if s.Arch == "minicpm" && s.LogitScale != 0 {
		AddMiniCPMScales(g, s.Arch, s.EmbeddingScale, s.ResidualScale, s.LogitScale)
	}
	if y := s.Yarn; y != nil {
		y.AddTo(g, s.Arch)
	}
	AddVisionLanguageKV(g, s.Arch, s.RopeSections, s.Deepstack)
	if r := s.LongRope; r != nil {
		g.AddKV(a+"rope.scaling.original_context_length", uint32(r.OrigContext))
		g.AddKV(a+"rope.scaling.attn_factor", r.AttnFactor)
	}
	switch {
	case s.Encoder() && s.Unigram:
		vocab.AddUGMTo(g, s.TokenTypes)
	case s.Encoder():
		vocab.AddWPMTo(g, s.TokenTypes)
	default:
		vocab.AddTo(g)
	}
	if s.AddEOS {
		g.AddKV("tokenizer.ggml.add_eos_token", true)
	}
	if s.Pooling != 0 {
		g.AddKV(a+"pooling_type", s.Pooling)
	}
	if len(s.RankLabels) > 1 {
		g.AddKV(a+"classifier.output_labels", s.RankLabels)
	}
	if s.RerankTemplate != "" {
		g.AddKV("tokenizer.chat_template.rerank", s.RerankTemplate)
	}
	if s.ChatTemplate != "" {
		g.AddKV("tokenizer.chat_template", s.ChatTemplate)
	}
	g.AddKV(a+"vocab_size", uint32(s.Vocab))
	if s.WeightType != quant.F32 && s.WeightType != quant.F16 && s.WeightType != quant.BF16 {
		g.AddKV("general.quantization_version", uint32(2))
	}
	ft := fileTypes[s.WeightType]
	if s.ExpertType == quant.MXFP4 {
		ft = fileTypes[s.ExpertType]
	}
	g.AddKV("general.file_type", ft)
}

// AddGraniteScales writes Granite's four multipliers under arch's key
// prefix, as the test models and mkmodel's files carry them.
func AddGraniteScales(g *gguf.Writer, arch string, embedding, residual, attention, logit float32) {
	AddMiniCPMScales(g, arch, embedding, residual, logit)
	g.AddKV(arch+".attention.scale", attention)
}

// AddMiniCPMScales writes the three multipliers llama.cpp's MiniCPM
// converter writes (Granite's without attention.scale) under arch's key
// prefix.
func AddMiniCPMScales(g *gguf.Writer, arch string, embedding, residual, logit float32) {
	a := arch + "."
	g.AddKV(a+"embedding_scale", embedding)
	g.AddKV(a+"residual_scale", residual)
	g.AddKV(a+"logit_scale", logit)
}

// AddTo writes y under arch's key prefix: rope.scaling.type "yarn", the
// factor and original context, and the log multiplier and temperature
// scale when set.
func (y *Yarn) AddTo(g *gguf.Writer, arch string) {
	a := arch + "."
	g.AddKV(a+"rope.scaling.type", "yarn")
	g.AddKV(a+"rope.scaling.factor", y.Factor)
	g.AddKV(a+"rope.scaling.original_context_length", uint32(y.OrigContext))
	if y.LogMul != 0 {
		g.AddKV(a+"rope.scaling.yarn_log_multiplier", y.LogMul)
	}
	if y.TempScale != 0 {
		g.AddKV(a+"attention.temperature_scale", y.TempScale)
	}
}

// dist is the distribution a tensor's values are drawn from:
// mean + std·N(0,1).
type dist struct{ mean, std float64 }

type tensorSpec struct {
	name string
	typ  quant.Type
	dims []int64
	dist dist
}

// ends lists a decoder's tensors outside its blocks: the embedding, the
// final norm (named outNorm) and, unless tied, the output matrix.
func (s ModelSpec) ends(outNorm string) []tensorSpec {
	e, v := int64(s.Embd), int64(s.Vocab)
	embType := s.WeightType
	if s.TiedOutput {
		embType = s.OutputType
	}
	ts := []tensorSpec{
		{"token_embd.weight", embType, []int64{e, v}, dist{0, 1}},
		{outNorm, quant.F32, []int64{e}, dist{1, 0.1}},
	}
	if !s.TiedOutput {
		ts = append(ts, tensorSpec{"output.weight", s.OutputType, []int64{e, v}, dist{0, 4 / math.Sqrt(float64(e))}})
	}
	return ts
}

// tensors lists the tensors of s in file order, with llama.cpp's names and
// ggml dims ([in, out]: dims[0] is the row length).
func (s ModelSpec) tensors() []tensorSpec {
	if s.FuseQKV {
		return fuseQKV(s.drawnTensors())
	}
	return s.drawnTensors()
}

// fuseQKV replaces each block's attn_q, attn_k and attn_v weights (and
// biases) in ts by one attn_qkv of their rows in that order, where the
// block has all three of one type and row length.
func fuseQKV(ts []tensorSpec) []tensorSpec {
	for i := 0; i < len(ts); i++ {
		parts := qkvParts(ts, ts[i].name)
		if parts == nil {
			continue
		}
		last := len(parts[0].dims) - 1
		fused := tensorSpec{name: strings.Replace(ts[i].name, "attn_q.", "attn_qkv.", 1), typ: parts[0].typ, dims: slices.Clone(parts[0].dims)}
		fused.dims[last] += parts[1].dims[last] + parts[2].dims[last]
		ts[i] = fused
		ts = slices.DeleteFunc(ts, func(t tensorSpec) bool { return t.name == parts[1].name || t.name == parts[2].name })
	}
	return ts
}

// qkvParts returns the attn_q, attn_k and attn_v weights (or biases) of
// ts that FuseQKV writes as the one named name (its attn_q or attn_qkv
// name), or nil when ts lacks one or they differ in type or row length.
func qkvParts(ts []tensorSpec, name string) []tensorSpec {
	p, suffix, ok := strings.Cut(name, "attn_q.")
	if !ok {
		p, suffix, ok = strings.Cut(name, "attn_qkv.")
	}
	if !ok || suffix != "weight" && suffix != "bias" {
		return nil
	}
	var parts []tensorSpec
	for _, proj := range []string{"attn_q.", "attn_k.", "attn_v."} {
		j := slices.IndexFunc(ts, func(t tensorSpec) bool { return t.name == p+proj+suffix })
		if j < 0 {
			return nil
		}
		if t, q := ts[j], parts; q != nil && (t.typ != q[0].typ || !slices.Equal(t.dims[:len(t.dims)-1], q[0].dims[:len(q[0].dims)-1])) {
			return nil
		}
		parts = append(parts, ts[j])
	}
	return parts
}

// fusedParts returns the tensors whose rows FuseQKV writes in the one
// named name, or nil when it writes none there.
func (s ModelSpec) fusedParts(name string) []tensorSpec {
	if !s.FuseQKV || !strings.Contains(name, "attn_qkv.") {
		return nil
	}
	return qkvParts(s.drawnTensors(), name)
}

// drawnTensors is tensors before FuseQKV.
func (s ModelSpec) drawnTensors() []tensorSpec {
	e, f := int64(s.Embd), int64(s.FFN)
	kv := int64(s.HeadsKV * s.HeadDim)
	norm := dist{1, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	if s.Encoder() {
		return append(s.encoderTensors(), s.rankTensors()...)
	}
	if s.Arch == "gemma4" {
		return s.gemma4Tensors()
	}
	if s.PerLayer != nil {
		return s.perLayerTensors()
	}
	if s.modernBert() {
		return s.modernBertTensors()
	}
	if s.Arch == "nemotron_h" || s.Arch == "nemotron_h_moe" {
		return s.nemotronHTensors()
	}
	if s.mixersOnly() {
		return s.mambaTensors1()
	}
	if s.rwkv() {
		return s.rwkvTensors()
	}
	if s.Arch == "olmo" {
		return s.unitNormTensors()
	}
	if s.Arch == "talkie" {
		return s.talkieTensors()
	}
	outNorm := "output_norm.weight"
	if s.hybrid() {
		outNorm = "token_embd_norm.weight" // llama.cpp's LLM_TENSOR_OUTPUT_NORM_LFM2
	}
	if s.OutputNorm != "" {
		outNorm = s.OutputNorm
	}
	ts := append(s.ends(outNorm), s.denseArchGlobals()...)
	if s.LongRope != nil {
		// LongRoPE divides each pair's frequency: about 1 for the short
		// factors, growing towards the long wavelengths for the long ones.
		r := int64(s.HeadDim / 2)
		ts = append(ts,
			tensorSpec{"rope_factors_long.weight", quant.F32, []int64{r}, dist{4, 1}},
			tensorSpec{"rope_factors_short.weight", quant.F32, []int64{r}, dist{1, 0.05}})
	}
	w := s.WeightType
	gemma := s.gemma()
	exaone := s.Arch == "exaone4" // olmo2's norms, but per-head Q/K norms
	qkNorm := s.Arch == "qwen3" || s.Arch == "qwen3moe" || s.Arch == "grovemoe" || s.Arch == "mellum" || s.Arch == "maincoder" || s.Arch == "plamo3" || s.Arch == "gemma3" || s.Arch == "gemma3n" || s.Arch == "gemma-embedding" || s.hybrid() || exaone
	qkNorm = qkNorm || s.Arch == "qwen3vl" || s.Arch == "qwen3vlmoe" || s.Arch == "bailingmoe2" || s.Routing != nil && s.Routing.QKNorm
	olmo := s.Arch == "olmo2" // no pre-norms, Q/K norms across heads, post-norms
	noPreNorm := olmo || exaone
	oss := s.Arch == "gpt-oss" // biases everywhere, sinks, post_attention_norm before the experts
	// attnPost: post_attention_norm is the norm before the feed-forward,
	// in ffn_norm's place (gpt-oss, seed_oss).
	attnPost := oss || s.Arch == "seed_oss" || s.Arch == "glm4moe"
	// glm4 and plamo3: phi3's fused gate/up, gemma's norms after
	// attention and the feed-forward.
	glm := s.Arch == "glm4" || s.Arch == "plamo3"
	fusedGateUp := s.Arch == "phi3" || glm || s.Arch == "chatglm" || s.Arch == "neo-bert"
	qkvBias := s.Arch == "qwen2" || s.Arch == "qwen2moe" || oss || s.QKVBias
	qkvBias = qkvBias || s.Arch == "qwen2vl"
	qkNorm = qkNorm || s.denseQKNorm() || s.Arch == "afmoe" || s.Arch == "laguna"
	// postNorms: post_attention_norm and post_ffw_norm after attention and
	// the feed-forward, beside attn_norm and ffn_norm before them.
	postNorms := gemma || noPreNorm || glm || s.Arch == "afmoe"
	parallel := s.cohere() || s.Arch == "phi2" || s.Arch == "falcon" || s.NoFFNNorm // one norm before attention and the feed-forward (Falcon-40B's two)
	bias := func(name string, n int64) tensorSpec { return tensorSpec{name, quant.F32, []int64{n}, dist{0, 0.1}} }
	if s.Arch == "gemma3n" {
		ts = append(ts, s.gemma3nGlobals()...)
	}
	ts = append(ts, s.rankTensors()...)
	if s.Dense > 0 {
		d := int64(s.Dense)
		ts = append(ts,
			tensorSpec{"dense_2.weight", quant.F32, []int64{e, d}, proj(e)},
			tensorSpec{"dense_3.weight", quant.F32, []int64{d, e}, proj(d)})
	}
	// ffn is layer l's feed-forward: phi3's fused gate and up, experts
	// (after an lfm2moe's leading dense layers), or gate, up and down.
	ffn := func(p string, l int) []tensorSpec {
		switch {
		case fusedGateUp:
			return []tensorSpec{
				{p + "ffn_up.weight", w, []int64{e, 2 * f}, proj(e)},
				{p + "ffn_down.weight", w, []int64{f, e}, proj(f)}}
		case s.moe() && l >= s.DenseLead && !s.denseNextN(l) && (s.MoEStep == 0 || (l+1)%s.MoEStep == 0) || s.jambaExpertLayer(l):
			x, fe := int64(s.Experts), int64(s.ExpertFFN)
			xw := s.ExpertType
			if xw == quant.F32 {
				xw = w
			}
			gain := s.RouterGain
			if gain == 0 {
				gain = 1
			}
			ts := []tensorSpec{
				{p + "ffn_gate_inp.weight", quant.F32, []int64{e, x}, dist{0, gain / math.Sqrt(float64(e))}},
				{p + "ffn_gate_exps.weight", xw, []int64{e, fe, x}, proj(e)},
				{p + "ffn_up_exps.weight", xw, []int64{e, fe, x}, proj(e)},
				{p + "ffn_down_exps.weight", xw, []int64{fe, e, x}, proj(fe)}}
			if s.FusedExps {
				ts = append(ts[:1], tensorSpec{p + "ffn_gate_up_exps.weight", xw, []int64{e, 2 * fe, x}, proj(e)}, ts[3])
			}
			if oss {
				ts = append(ts, bias(p+"ffn_gate_inp.bias", x),
					tensorSpec{p + "ffn_gate_exps.bias", quant.F32, []int64{fe, x}, dist{0, 0.1}},
					tensorSpec{p + "ffn_up_exps.bias", quant.F32, []int64{fe, x}, dist{0, 0.1}},
					tensorSpec{p + "ffn_down_exps.bias", quant.F32, []int64{e, x}, dist{0, 0.1}})
			}
			if s.Arch == "lfm2moe" || s.Arch == "ernie4_5-moe" || s.Arch == "minimax-m2" || s.Arch == "mimo2" || s.DeepSeek2 != nil && s.DeepSeek2.SelBias || s.Routing != nil && s.Arch != "cohere2moe" && s.Arch != "bailingmoe" {
				gain := s.SelBiasGain
				if gain == 0 {
					gain = 0.5
				}
				ts = append(ts, tensorSpec{p + "exp_probs_b.bias", quant.F32, []int64{x}, dist{0, gain}})
			}
			if g := s.Grove; g != nil {
				ts = append(ts, g.tensors(p, xw, e, x, proj)...)
			}
			if sf := int64(s.SharedFFN); sf > 0 {
				ts = append(ts,
					tensorSpec{p + "ffn_gate_shexp.weight", w, []int64{e, sf}, proj(e)},
					tensorSpec{p + "ffn_up_shexp.weight", w, []int64{e, sf}, proj(e)},
					tensorSpec{p + "ffn_down_shexp.weight", w, []int64{sf, e}, proj(sf)})
				if s.Arch == "qwen35moe" || s.Arch == "qwen3next" || s.Arch == "qwen2moe" {
					// One row, as the converter writes Linear(Embd, 1).
					ts = append(ts, tensorSpec{p + "ffn_gate_inp_shexp.weight", quant.F32, []int64{e}, proj(e)})
				}
			}
			return ts
		case s.gateless():
			ts := []tensorSpec{
				{p + "ffn_up.weight", w, []int64{e, f}, proj(e)},
				{p + "ffn_down.weight", w, []int64{f, e}, proj(f)}}
			if s.layerBiases(l) {
				ts = append(ts, bias(p+"ffn_up.bias", f), bias(p+"ffn_down.bias", e))
			}
			return ts
		}
		return []tensorSpec{
			{p + "ffn_gate.weight", w, []int64{e, f}, proj(e)},
			{p + "ffn_up.weight", w, []int64{e, f}, proj(e)},
			{p + "ffn_down.weight", w, []int64{f, e}, proj(f)}}
	}
	for l := range s.Layers + s.NextN {
		p := fmt.Sprintf("blk.%d.", l)
		if !noPreNorm {
			ts = append(ts, tensorSpec{p + "attn_norm.weight", quant.F32, []int64{e}, norm})
		}
		if s.normBias() {
			ts = append(ts, bias(p+"attn_norm.bias", e))
		}
		if s.AttnNorm2 {
			ts = append(ts, tensorSpec{p + "attn_norm_2.weight", quant.F32, []int64{e}, norm}, bias(p+"attn_norm_2.bias", e))
		}
		qkvBias := qkvBias || s.layerBiases(l)
		q := int64(s.layerHeads(l) * s.HeadDim)
		if s.qwen35() {
			ts = append(ts, s.qwen35Block(p, l, ffn(p, l))...)
			continue
		}
		if s.Mimo2 != nil {
			ts = append(ts, s.mimo2Block(p, l, ffn(p, l))...)
			continue
		}
		if s.convLayer(l) && s.Arch == "jamba" {
			m := Mamba1{Conv: s.ConvKernel, Inner: 2 * s.Embd, State: s.SSMState, DtRank: s.SSMDtRank}
			ts = append(append(ts, mamba1Tensors(p, w, e, m, true)...), tensorSpec{p + "ffn_norm.weight", quant.F32, []int64{e}, norm})
			ts = append(ts, ffn(p, l)...)
			continue
		}
		if s.convLayer(l) && s.Arch == "kimi-linear" {
			ts = append(append(ts, s.kdaTensors(p)...), tensorSpec{p + "ffn_norm.weight", quant.F32, []int64{e}, norm})
			ts = append(ts, ffn(p, l)...)
			continue
		}
		if s.convLayer(l) && s.Arch == "granitehybrid" {
			ts = append(append(ts, s.mambaTensors(p)...), tensorSpec{p + "ffn_norm.weight", quant.F32, []int64{e}, norm})
			ts = append(ts, ffn(p, l)...)
			continue
		}
		if s.convLayer(l) {
			k := int64(s.ConvKernel)
			ts = append(ts,
				tensorSpec{p + "shortconv.in_proj.weight", w, []int64{e, 3 * e}, proj(e)},
				tensorSpec{p + "shortconv.conv.weight", quant.F32, []int64{k, e}, dist{0, 1 / math.Sqrt(float64(k))}},
				tensorSpec{p + "shortconv.out_proj.weight", w, []int64{e, e}, proj(e)},
				tensorSpec{p + "ffn_norm.weight", quant.F32, []int64{e}, norm})
			ts = append(ts, ffn(p, l)...)
			continue
		}
		if d := s.DeepSeek2; d != nil {
			ts = append(ts, d.tensors(p, w, e, int64(s.Heads))...)
			ts = append(ts, tensorSpec{p + "ffn_norm.weight", quant.F32, []int64{e}, norm})
			ts = append(ts, ffn(p, l)...)
			continue
		}
		if s.Arch == "phi3" || s.Arch == "plamo3" || s.FusedQKV || s.classicFused() || s.Arch == "mpt" {
			ts = append(ts, tensorSpec{p + "attn_qkv.weight", w, []int64{e, q + 2*kv}, proj(e)})
			if qkvBias {
				ts = append(ts, bias(p+"attn_qkv.bias", q+2*kv))
			}
		} else {
			ts = append(ts, tensorSpec{p + "attn_q.weight", w, []int64{e, q}, proj(e)})
			if qkvBias {
				ts = append(ts, bias(p+"attn_q.bias", q))
			}
			ts = append(ts, tensorSpec{p + "attn_k.weight", w, []int64{e, kv}, proj(e)})
			if qkvBias {
				ts = append(ts, bias(p+"attn_k.bias", kv))
			}
			ts = append(ts, tensorSpec{p + "attn_v.weight", w, []int64{e, kv}, proj(e)})
			if qkvBias {
				ts = append(ts, bias(p+"attn_v.bias", kv))
			}
		}
		switch {
		case qkNorm:
			ts = append(ts,
				tensorSpec{p + "attn_q_norm.weight", quant.F32, []int64{int64(s.HeadDim)}, norm},
				tensorSpec{p + "attn_k_norm.weight", quant.F32, []int64{int64(s.HeadDim)}, norm})
		case olmo || s.Arch == "olmoe" || s.Arch == "minimax-m2":
			ts = append(ts,
				tensorSpec{p + "attn_q_norm.weight", quant.F32, []int64{q}, norm},
				tensorSpec{p + "attn_k_norm.weight", quant.F32, []int64{kv}, norm})
		case s.headRowNormed():
			ts = append(ts, s.headRowNorms(p)...)
		}
		if g := s.outGateRows(l); g > 0 {
			ts = append(ts, tensorSpec{p + "attn_gate.weight", w, []int64{e, g}, proj(e)})
		}
		ts = append(ts, tensorSpec{p + "attn_output.weight", w, []int64{q, e}, proj(q)})
		if s.layerBiases(l) {
			ts = append(ts, bias(p+"attn_output.bias", e))
		}
		if oss {
			// Sinks around the scores' size, so that they matter.
			ts = append(ts, bias(p+"attn_output.bias", e),
				tensorSpec{p + "attn_sinks.weight", quant.F32, []int64{int64(s.Heads)}, dist{0, 1}})
		}
		if postNorms || attnPost {
			ts = append(ts, tensorSpec{p + "post_attention_norm" + s.postNormSuffix(), quant.F32, []int64{e}, norm})
		}
		if s.Arch == "falcon-h1" {
			// Named without .weight, as llama.cpp's falcon-h1 loader asks
			// for it; the Mamba-2 mixer beside the attention.
			ts = append(append(ts, s.mambaTensors(p)...), tensorSpec{p + "ffn_norm", quant.F32, []int64{e}, norm})
		} else if !noPreNorm && !attnPost && !parallel {
			ts = append(ts, tensorSpec{p + "ffn_norm.weight", quant.F32, []int64{e}, norm})
			if s.normBias() {
				ts = append(ts, bias(p+"ffn_norm.bias", e))
			}
		}
		ts = append(ts, ffn(p, l)...)
		if postNorms {
			ts = append(ts, tensorSpec{p + "post_ffw_norm" + s.postNormSuffix(), quant.F32, []int64{e}, norm})
		}
		if s.Arch == "gemma3n" {
			ts = append(ts, s.gemma3nBlock(p)...)
		}
		if s.Arch == "bitnet" {
			ts = append(ts, s.subNorms(p)...)
		}
		if s.Routing != nil && l >= s.Layers {
			ts = append(ts, s.nextNTensors(p)...)
		}
	}
	return ts
}

// tensors lists a deepseek2 block's attention tensors after its attn_norm
// (prefix p, width e, h heads), with the names and dims of llama.cpp's
// converter: attn_q, or attn_q_a, its norm and attn_q_b; attn_kv_a_mqa
// (the latent, then the rotated key) and the latent's norm; attn_k_b and
// attn_v_b, one matrix a head; attn_output.
func (d *DeepSeek2) tensors(p string, w quant.Type, e, h int64) []tensorSpec {
	norm := dist{1, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	r, nope, rope, v := int64(d.KVLora), int64(d.Nope), int64(d.Rope), int64(d.VHead)
	q := h * (nope + rope)
	var ts []tensorSpec
	if ql := int64(d.QLora); ql > 0 {
		ts = append(ts,
			tensorSpec{p + "attn_q_a.weight", w, []int64{e, ql}, proj(e)},
			tensorSpec{p + "attn_q_a_norm.weight", quant.F32, []int64{ql}, norm},
			tensorSpec{p + "attn_q_b.weight", w, []int64{ql, q}, proj(ql)})
	} else {
		ts = append(ts, tensorSpec{p + "attn_q.weight", w, []int64{e, q}, proj(e)})
	}
	ts = append(ts,
		tensorSpec{p + "attn_kv_a_mqa.weight", w, []int64{e, r + rope}, proj(e)},
		tensorSpec{p + "attn_kv_a_norm.weight", quant.F32, []int64{r}, norm})
	if d.Joined {
		ts = append(ts, tensorSpec{p + "attn_kv_b.weight", w, []int64{r, h * (nope + v)}, proj(r)})
	} else {
		ts = append(ts,
			tensorSpec{p + "attn_k_b.weight", w, []int64{nope, r, h}, proj(nope)},
			tensorSpec{p + "attn_v_b.weight", w, []int64{r, v, h}, proj(r)})
	}
	return append(ts, tensorSpec{p + "attn_output.weight", w, []int64{h * v, e}, proj(h * v)})
}

// mambaTensors lists a granitehybrid Mamba-2 block's tensors after its
// attn_norm, with the names, dims and types (the kernel, its bias, A, D,
// the time steps' bias and the norm in F32) of llama.cpp's converter: A
// negative (the converter writes -exp(A_log)), the time steps' bias about
// -1 so that softplus spreads them around 0.3.
func (s ModelSpec) mambaTensors(p string) []tensorSpec {
	e, w := int64(s.Embd), s.WeightType
	inner, st, h, g, k := int64(s.ssmInner()), int64(s.SSMState), int64(s.SSMHeads), int64(s.SSMGroups), int64(s.ConvKernel)
	cw := inner + 2*g*st
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	return []tensorSpec{
		{p + "ssm_in.weight", w, []int64{e, 2*inner + 2*g*st + h}, proj(e)},
		{p + "ssm_conv1d.weight", quant.F32, []int64{k, cw}, dist{0, 1 / math.Sqrt(float64(k))}},
		{p + "ssm_conv1d.bias", quant.F32, []int64{cw}, dist{0, 0.1}},
		{p + "ssm_dt.bias", quant.F32, []int64{h}, dist{-1, 0.5}},
		{p + "ssm_a", quant.F32, []int64{1, h}, dist{-1.5, 0.3}},
		{p + "ssm_d", quant.F32, []int64{1, h}, dist{1, 0.2}},
		{p + "ssm_norm.weight", quant.F32, []int64{inner / g, g}, dist{1, 0.1}},
		{p + "ssm_out.weight", w, []int64{inner, e}, proj(inner)},
	}
}

// encoderTensors lists the tensors of a bert, nomic-bert or nomic-bert-moe s, with the
// names, dims and types (token_types and position_embd in F32) of
// llama.cpp's converter.
// rankTensors is a reranker's head (RankLabels): an encoder's cls.weight
// and cls.bias, then cls.output.weight and .bias, F32; a jina-bert-v2's
// cls.weight of one row and its bias alone.
func (s ModelSpec) rankTensors() []tensorSpec {
	n := int64(len(s.RankLabels))
	if n == 0 {
		return nil
	}
	e := int64(s.Embd)
	proj := dist{0, 1 / math.Sqrt(float64(e))}
	var ts []tensorSpec
	if s.Arch == "jina-bert-v2" {
		// Jina's v1 rerankers: one row and its bias, no cls.output.
		return []tensorSpec{{"cls.weight", quant.F32, []int64{e, 1}, proj}, {"cls.bias", quant.F32, []int64{1}, dist{0, 0.1}}}
	}
	if s.Encoder() {
		ts = append(ts, tensorSpec{"cls.weight", quant.F32, []int64{e, e}, proj}, tensorSpec{"cls.bias", quant.F32, []int64{e}, dist{0, 0.1}})
	}
	return append(ts, tensorSpec{"cls.output.weight", quant.F32, []int64{e, n}, proj}, tensorSpec{"cls.output.bias", quant.F32, []int64{n}, dist{0, 0.1}})
}

func (s ModelSpec) encoderTensors() []tensorSpec {
	e, v, f := int64(s.Embd), int64(s.Vocab), int64(s.FFN)
	q, kv := int64(s.Heads*s.HeadDim), int64(s.HeadsKV*s.HeadDim)
	norm, bias := dist{1, 0.1}, dist{0, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	w := s.WeightType
	ts := []tensorSpec{
		{"token_embd.weight", w, []int64{e, v}, dist{0, 1}},
		{"token_types.weight", quant.F32, []int64{e, int64(s.TokenTypes)}, dist{0, 0.5}},
	}
	bert := s.Arch == "bert"
	if bert {
		ts = append(ts, tensorSpec{"position_embd.weight", quant.F32, []int64{e, int64(s.Context)}, dist{0, 0.5}})
	}
	ts = append(ts,
		tensorSpec{"token_embd_norm.weight", quant.F32, []int64{e}, norm},
		tensorSpec{"token_embd_norm.bias", quant.F32, []int64{e}, bias})
	jina := s.Arch == "jina-bert-v2"
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		if jina {
			ts = append(ts, s.jinaTensors(p)...)
			continue
		}
		if bert {
			ts = append(ts,
				tensorSpec{p + "attn_q.weight", w, []int64{e, q}, proj(e)},
				tensorSpec{p + "attn_q.bias", quant.F32, []int64{q}, bias},
				tensorSpec{p + "attn_k.weight", w, []int64{e, kv}, proj(e)},
				tensorSpec{p + "attn_k.bias", quant.F32, []int64{kv}, bias},
				tensorSpec{p + "attn_v.weight", w, []int64{e, kv}, proj(e)},
				tensorSpec{p + "attn_v.bias", quant.F32, []int64{kv}, bias})
		} else {
			ts = append(ts, tensorSpec{p + "attn_qkv.weight", w, []int64{e, q + 2*kv}, proj(e)})
			if s.Biases {
				ts = append(ts, tensorSpec{p + "attn_qkv.bias", quant.F32, []int64{q + 2*kv}, bias})
			}
		}
		ts = append(ts, tensorSpec{p + "attn_output.weight", w, []int64{q, e}, proj(q)})
		if bert || s.Biases {
			ts = append(ts, tensorSpec{p + "attn_output.bias", quant.F32, []int64{e}, bias})
		}
		ts = append(ts,
			tensorSpec{p + "attn_output_norm.weight", quant.F32, []int64{e}, norm},
			tensorSpec{p + "attn_output_norm.bias", quant.F32, []int64{e}, bias})
		switch {
		case s.expertLayer(l):
			x := int64(s.Experts)
			gain := s.RouterGain
			if gain == 0 {
				gain = 1
			}
			ts = append(ts,
				tensorSpec{p + "ffn_up_exps.weight", w, []int64{e, f, x}, proj(e)},
				tensorSpec{p + "ffn_down_exps.weight", w, []int64{f, e, x}, proj(f)},
				tensorSpec{p + "ffn_gate_inp.weight", quant.F32, []int64{e, x}, dist{0, gain / math.Sqrt(float64(e))}})
		case bert || s.Arch == "nomic-bert-moe" || s.Arch == "jina-bert-v3":
			ts = append(ts,
				tensorSpec{p + "ffn_up.weight", w, []int64{e, f}, proj(e)},
				tensorSpec{p + "ffn_up.bias", quant.F32, []int64{f}, bias},
				tensorSpec{p + "ffn_down.weight", w, []int64{f, e}, proj(f)},
				tensorSpec{p + "ffn_down.bias", quant.F32, []int64{e}, bias})
		default:
			ts = append(ts,
				tensorSpec{p + "ffn_up.weight", w, []int64{e, f}, proj(e)},
				tensorSpec{p + "ffn_gate.weight", w, []int64{e, f}, proj(e)},
				tensorSpec{p + "ffn_down.weight", w, []int64{f, e}, proj(f)})
		}
		ts = append(ts,
			tensorSpec{p + "layer_output_norm.weight", quant.F32, []int64{e}, norm},
			tensorSpec{p + "layer_output_norm.bias", quant.F32, []int64{e}, bias})
	}
	return ts
}

// jinaTensors lists a jina-bert-v2 block's tensors (prefix p), as
// llama.cpp's converter writes them.
func (s ModelSpec) jinaTensors(p string) []tensorSpec {
	e, f := int64(s.Embd), int64(s.FFN)
	q := int64(s.Heads * s.HeadDim)
	norm, bias := dist{1, 0.1}, dist{0, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	w := s.WeightType
	j := s.Jina
	if j == nil {
		j = &JinaBertV2{}
	}
	vec := func(name string, n int64, d dist) tensorSpec { return tensorSpec{p + name, quant.F32, []int64{n}, d} }
	ts := []tensorSpec{
		{p + "attn_q.weight", w, []int64{e, q}, proj(e)}, vec("attn_q.bias", q, bias),
		{p + "attn_k.weight", w, []int64{e, q}, proj(e)}, vec("attn_k.bias", q, bias),
		{p + "attn_v.weight", w, []int64{e, q}, proj(e)}, vec("attn_v.bias", q, bias),
	}
	if j.QKNorm {
		ts = append(ts, vec("attn_q_norm.weight", q, norm), vec("attn_q_norm.bias", q, bias),
			vec("attn_k_norm.weight", q, norm), vec("attn_k_norm.bias", q, bias))
	}
	ts = append(ts, tensorSpec{p + "attn_output.weight", w, []int64{q, e}, proj(q)}, vec("attn_output.bias", e, bias),
		vec("attn_output_norm.weight", e, norm), vec("attn_output_norm.bias", e, bias))
	if j.Norm2 {
		ts = append(ts, vec("attn_norm_2.weight", e, norm), vec("attn_norm_2.bias", e, bias))
	}
	if j.Fused {
		ts = append(ts, tensorSpec{p + "ffn_up.weight", w, []int64{e, 2 * f}, proj(e)})
	} else {
		ts = append(ts, tensorSpec{p + "ffn_up.weight", w, []int64{e, f}, proj(e)}, tensorSpec{p + "ffn_gate.weight", w, []int64{e, f}, proj(e)})
	}
	return append(ts, tensorSpec{p + "ffn_down.weight", w, []int64{f, e}, proj(f)}, vec("ffn_down.bias", e, bias),
		vec("layer_output_norm.weight", e, norm), vec("layer_output_norm.bias", e, bias))
}

// generator returns the function that writes tensor t row by row. Its
// random stream is seeded by the spec's seed and the tensor's name only.
func (s ModelSpec) generator(t tensorSpec) func(io.Writer) error {
	if parts := s.fusedParts(t.name); parts != nil {
		return func(w io.Writer) error {
			for _, part := range parts {
				if err := s.generator(part)(w); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return func(w io.Writer) error {
		rng := rand.New(rand.NewPCG(s.Seed, NameHash(t.name)))
		n := t.dims[0]
		rows := int64(1)
		for _, d := range t.dims[1:] {
			rows *= d
		}
		rowBytes, err := t.typ.RowBytes(n)
		if err != nil {
			return err
		}
		vals := make([]float32, n)
		out := make([]byte, rowBytes)
		encodable := quant.QuantizeRow(t.typ, nil, nil) == nil
		for range rows {
			if encodable {
				for i := range vals {
					vals[i] = float32(t.dist.mean + t.dist.std*rng.NormFloat64())
				}
				if err := quant.QuantizeRow(t.typ, out, vals); err != nil {
					return err
				}
			} else {
				for i := 0; i < len(out); i += 8 {
					var b [8]byte
					binary.LittleEndian.PutUint64(b[:], rng.Uint64())
					copy(out[i:], b[:])
				}
				setScales(t.typ, out, t.dist.std)
			}
			if _, err := w.Write(out); err != nil {
				return err
			}
		}
		return nil
	}
}

// setScales overwrites the super-block scale of each block of a row of
// random bytes of a type quant decodes but cannot encode, so that the
// weights' spread is about std instead of whatever a random fp16 says
// (possibly Inf or NaN). Other types keep their random bytes.
func setScales(t quant.Type, row []byte, std float64) {
	// The typical |element| a unit scale gives: the grid magnitudes times
	// the mean sub-block scale factor.
	unit := map[quant.Type]float64{
		quant.IQ2_XXS: 25 * 8 / 4, quant.IQ2_XS: 25 * 8 / 4, quant.IQ2_S: 25 * 8 / 4,
		quant.IQ3_XXS: 30 * 8 / 2, quant.IQ1_S: 0.6 * 8, quant.IQ1_M: 0.6 * 8,
	}[t]
	if unit == 0 {
		return
	}
	d := quant.FP32ToFP16(float32(std / unit))
	bb := t.BlockBytes()
	for b := 0; b+bb <= len(row); b += bb {
		PutLatticeScale(t, row[b:b+bb], d)
	}
}

// PutLatticeScale writes the fp16 super-block scale d into blk, one block
// of a lattice type (IQ3_XXS, IQ2_S, IQ2_XS, IQ2_XXS, IQ1_S, IQ1_M): at
// offset 0, or, for IQ1_M, which has no scale field of its own, into the
// top nibbles of its four scale words (bytes 48..55), low nibble first.
func PutLatticeScale(t quant.Type, blk []byte, d uint16) {
	if t == quant.IQ1_M {
		for i := 0; i < 4; i++ {
			blk[49+2*i] = blk[49+2*i]&0x0f | byte(d>>(4*i))<<4
		}
		return
	}
	binary.LittleEndian.PutUint16(blk, d)
}

// NameHash is the FNV-1a hash of a tensor's name, which keys the tensor's
// random stream in the synthetic models (here and in internal/cmd/mkmodel),
// so that its values do not depend on the order tensors are made in.
func NameHash(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// NeedX8 skips t where this CPU or build has no X8 (eight rows
// interleaved) kernels, which a repacked model needs.
func NeedX8(t testing.TB) {
	t.Helper()
	if _, ok := quant.X8(quant.Q4_0, 256); !ok {
		t.Skip("no X8 kernels on this CPU or build")
	}
}

// withLatentHeads sizes a latent-attention spec's heads as its file
// states them: one KV head of the rotated and unrotated key, or in the
// older form (Joined) as many KV heads as query heads.
func (s ModelSpec) withLatentHeads() ModelSpec {
	d := s.DeepSeek2
	s.HeadsKV, s.HeadDim = 1, d.Nope+d.Rope
	if d.Joined {
		s.HeadsKV = s.Heads
	}
	return s
}

// withGraniteScales gives a Granite spec without multipliers Granite
// 3.3's.
func (s ModelSpec) withGraniteScales() ModelSpec {
	if s.EmbeddingScale == 0 && s.ResidualScale == 0 && s.AttentionScale == 0 && s.LogitScale == 0 {
		s.EmbeddingScale, s.ResidualScale, s.AttentionScale, s.LogitScale = 12, 0.22, 1.0/128, 8
	}
	return s
}
