package model

import (
	"cmp"
	"fmt"
	"math"
)

// An Arch describes one architecture as data: the choices the shared
// forward pass makes (RoPE pairing, which norms, activation, how Q/K/V and
// the feed-forward weights are laid out) and a hook for the metadata keys
// only this architecture reads. It runs nothing itself: ConfigFromGGUF
// turns it and the file's metadata into a Config, the loader turns the
// Config into the tensors each block must have, and Forward reads only
// the Config and the Layers.
//
// Facts come from llama.cpp (src/models/<arch>.cpp, llama-model.cpp,
// llama-arch.cpp), the authority on order of operations.
type Arch struct {
	Name string // general.architecture

	Neox    bool      // RoPE rotates (i, i+d/2) pairs, llama.cpp's LLAMA_ROPE_TYPE_NEOX
	QKV     QKVLayout // fused attn_qkv or separate attn_q/k/v (the zero value), or one of them only
	QKVBias bool      // attn_q/k/v.bias (qwen2), or attn_qkv.bias beside a fused attn_qkv
	// OptionalQKVBias: each of attn_q/k/v.bias (or attn_qkv.bias beside
	// a fused attn_qkv) is loaded when the block has it and left out when
	// it has not, as llama.cpp takes them for ernie4_5, seed_oss, glm4,
	// chatglm, qwen2moe, hunyuan-moe and dots1.
	OptionalQKVBias bool
	QKNorm          bool // per-head RMSNorm of Q and K before RoPE (attn_q_norm, attn_k_norm)
	PostNorms       bool // post_attention_norm and post_ffw_norm (gemma2, gemma3, glm4)
	FFN             FFNLayout
	GELU            bool // GeGLU (tanh GELU) instead of SwiGLU
	// EmbedScale multiplies the token embeddings by sqrt(embedding_length)
	// (gemma).
	EmbedScale bool
	// RopeFactors loads LongRoPE's rope_factors_long/short (phi3).
	RopeFactors bool
	// Encoder marks a BERT-style encoder (bert, nomic-bert), which makes
	// embeddings, not text: no output head; LayerNorms with bias
	// (token_embd_norm on the embeddings, then attn_output_norm and
	// layer_output_norm after each block's two residual sums: post-norm);
	// optional biases on the attention projections; and attention over
	// the whole text unless the file says attention.causal. Forward
	// refuses it; Hidden runs it (encode).
	Encoder bool
	// AbsPositions adds a learned row of position_embd per position to the
	// token embeddings (bert, gpt2, starcoder) instead of rotating Q and K;
	// position_embd's rows, context_length of them, bound the positions.
	AbsPositions bool
	// NoPreNorm: no attn_norm or ffn_norm before attention and the
	// feed-forward (olmo2, which normalises their outputs instead).
	NoPreNorm bool
	// NoHead marks a decoder-style stack that makes embeddings only
	// (gemma-embedding): its final norm is loaded, no output matrix, so
	// Forward refuses it as it refuses an encoder.
	NoHead bool
	// Sinks loads attn_sinks: a learned logit per query head that joins
	// each softmax as a position without a value (gpt-oss).
	Sinks bool
	// OptionalSinks: attn_sinks is loaded when a block has it (mimo2:
	// MiMo-V2-Flash's windowed layers have sinks, its global ones none).
	OptionalSinks bool
	// OutBias loads attn_output.bias, added to the attention's output
	// projection (gpt-oss).
	OutBias bool
	// FFNNorm names the norm before the feed-forward when it is not
	// ffn_norm.weight (gpt-oss calls it post_attention_norm.weight).
	FFNNorm string
	// ExpertBiases loads the router's bias (ffn_gate_inp.bias) and each
	// expert's gate, up and down biases (ffn_{gate,up,down}_exps.bias, one
	// row per expert) of a mixture-of-experts block (gpt-oss).
	ExpertBiases bool
	// ExpertSelBias loads the router's selection bias (exp_probs_b.bias,
	// one per expert) of a mixture-of-experts block (lfm2moe).
	ExpertSelBias bool
	// OptionalSelBias: the selection bias is loaded when a block has it
	// (deepseek2: V3's files do, V2's do not).
	OptionalSelBias bool
	// ShortConv: a hybrid whose layers with attention.head_count_kv 0 are
	// gated short convolutions instead of attention (lfm2; Config.ConvLayers).
	ShortConv bool
	// Mamba2: a hybrid whose layers with attention.head_count_kv 0 are
	// Mamba-2 selective state-space layers (granitehybrid, nemotron_h;
	// Config.SSM*).
	Mamba2 bool
	// Mamba1: a hybrid whose layers with attention.head_count_kv 0 are
	// Mamba-1 selective state-space layers (jamba; Config.Mamba1).
	Mamba1 bool
	// KDA: a hybrid whose layers with attention.head_count_kv 0 are Kimi
	// Delta Attention layers (kimi-linear; Config.KDA).
	KDA bool
	// NoAttention: no layer attends, and the file's attention.head_count
	// and feed_forward_length are the converter's unused 0s (mamba,
	// mamba2); the hook sets the layers up.
	NoAttention bool
	// OptionalExperts: the feed-forwards are experts when expert_count is
	// above 0 and dense otherwise (granitehybrid, whose dense files carry
	// expert_count 0).
	OptionalExperts bool
	// OutputNorm names the final norm's tensor when it is not
	// output_norm.weight (llama.cpp's converter writes lfm2's as
	// token_embd_norm.weight, LLM_TENSOR_OUTPUT_NORM_LFM2; a file with
	// output_norm.weight instead, as Ollama's converter writes, is taken
	// too). A NoHead architecture's is taken alone (neo-bert's
	// enc.output_norm.weight, llama.cpp's LLM_TENSOR_ENC_OUTPUT_NORM).
	OutputNorm string
	// FusedGateUpExps: an expert block may hold its experts' gate and up
	// matrices in one ffn_gate_up_exps ([Embd, 2·ExpertFFN, Experts]: each
	// expert's gate rows, then its up rows) instead of ffn_gate_exps and
	// ffn_up_exps, as llama.cpp's create_tensor_gate_up_exps takes it
	// (qwen35moe, deepseek2).
	FusedGateUpExps bool
	// PerLayerSizes: attention.head_count_kv and feed_forward_length may
	// hold values that differ between layers; the common keys then read
	// the largest and the hook the arrays (gemma4, nemotron_h, deci,
	// openelm).
	PerLayerSizes bool
	// NextN names the tensors a NextN (multi-token prediction) block
	// holds besides an ordinary block's: llama.cpp requires them (and
	// the ordinary ones) in the last nextn_predict_layers blocks, which
	// it never runs or reads (TENSOR_SKIP). Config.NextN counts those
	// blocks; nil: the architecture's NextN blocks are not checked.
	NextN []string
	// NextNOptional: the NextN blocks' tensors are required only when the
	// first NextN block has nextn.eh_proj, as llama.cpp's cohere2moe
	// loader takes a trunk-only file (its NextN blocks declared by
	// nextn_predict_layers, their tensors in another file).
	NextNOptional bool
	// OptionalQKNorm: attn_q_norm and attn_k_norm are loaded when the
	// block has them, as llama.cpp takes them for glm4moe (GLM-4.5's
	// files have them, GLM-4.5-Air's not).
	OptionalQKNorm bool
	// UntiedOutput: output.weight is required, never the embedding in
	// its place (bailingmoe2, whose llama.cpp loader requires it).
	UntiedOutput bool
	// Parallel: attention and the feed-forward both read the block's one
	// norm (attn_norm; no ffn_norm) and their outputs join the residual
	// stream together (cohere2, command-r).
	Parallel bool
	// TiedHead: the output matrix is token_embd, always: llama.cpp loads
	// no output.weight for the architecture, and refuses a file that has
	// one (a tensor it does not use) (cohere2, command-r).
	TiedHead bool
	// NoRopeFreqs: llama.cpp's loader creates no rope_freqs for the
	// architecture, so a file holding one is refused as a tensor it
	// never reads (laguna), not rotated with its factors.
	NoRopeFreqs bool
	// AttnOutGate loads attn_gate (Embd → Heads×HeadDimV): the sigmoid of
	// its product with the attention's input multiplies the attention's
	// output before attn_output (afmoe).
	AttnOutGate bool
	// NormBias: every norm has a bias (attn_norm.bias, ffn_norm.bias and
	// output_norm.bias, required; ffn_norm.bias optional with
	// OptionalFFNNorm): a LayerNorm of epsilon
	// attention.layer_norm_epsilon (starcoder2, nemotron, stablelm, phi2;
	// Config.LayerNorm), or an RMSNorm whose bias follows its weight
	// (phimoe).
	NormBias bool
	// FFNBias loads ffn_up.bias and ffn_down.bias of a gate-less
	// feed-forward, required (starcoder2).
	FFNBias bool
	// OptionalBiases: attn_output.bias, ffn_up.bias and ffn_down.bias are
	// each loaded when the block has it, as llama.cpp takes them for
	// nemotron (with OptionalQKVBias for the others).
	OptionalBiases bool
	// OptionalFFNNorm: ffn_norm.weight and its bias are each loaded when
	// the block has them, as llama.cpp takes them for stablelm; a block
	// without ffn_norm runs its feed-forward on attn_norm's output beside
	// the attention (Config.OptionalFFNNorm: StableLM 2 12B).
	OptionalFFNNorm bool
	// HeadBias loads output.bias (one a vocabulary entry), required, and
	// adds it to the output matrix's product (phi2).
	HeadBias bool
	// OptionalHeadBias: output.bias is loaded and added when the file has
	// it, as llama.cpp's qwen2 and qwen2vl loaders and graphs take it.
	OptionalHeadBias bool
	// EmbedNorm: token_embd_norm (a LayerNorm weight without bias)
	// normalises the token embeddings before the first block, and block 0
	// has no attn_norm (modern-bert).
	EmbedNorm bool
	// SubNorms: attn_sub_norm RMS-normalises the attention's output
	// before attn_output, ffn_sub_norm the gated activation (FFN wide)
	// before ffn_down, and each projection may have a one-element .scale
	// multiplying its product (bitnet: BitNet b1.58).
	SubNorms bool
	// UnitNorms: every norm (attn_norm, ffn_norm, output_norm) is a
	// LayerNorm without weight or bias, so the file has none of them; the
	// loader gives each one shared row of ones (olmo: OLMo 1).
	UnitNorms bool
	// QKNormDepth, when above 0: a model of this many blocks or more has
	// attn_q_norm and attn_k_norm in every block (required), a shallower
	// one none (refused: a file with them is of another model), as
	// llama.cpp's command-r loader takes them only from 64 blocks on
	// (Command R+).
	QKNormDepth int
	// AttnNorm2: a block with attn_norm_2 (Falcon-40B's ln_attn; its bias
	// optional) runs attention on it and the feed-forward on attn_norm
	// (ln_mlp, loaded as the block's FFNNorm), each of the block's input,
	// as llama.cpp takes it block by block; a block without it runs both
	// on attn_norm (falcon).
	AttnNorm2 bool
	// EmbedLayerNorm: token_embd_norm, a LayerNorm of weight and bias
	// (both required), normalises the token embeddings before the first
	// block, whose attn_norm stays (bloom; rwkv7 loads its own).
	EmbedLayerNorm bool
	// OptionalNormBias: with NormBias, attn_norm.bias, ffn_norm.bias and
	// output_norm.bias are each loaded when the file has it, a norm
	// without one a LayerNorm of its weight alone, as llama.cpp takes them
	// for mpt (MPT-7B's no_bias files have none).
	OptionalNormBias bool
	// BarePostNorms: with PostNorms, the two norms are named without
	// .weight (blk.N.post_attention_norm, blk.N.post_ffw_norm), as
	// llama.cpp d32676d77's plamo3 loader asks for them; a file naming
	// them .weight is refused as llama.cpp refuses it.
	BarePostNorms bool

	// hparams reads the keys only this architecture has, after the common
	// ones are in c; nil for none.
	hparams func(c *Config, m *meta)
}

// QKVLayout says how a block's query, key and value projections are stored.
type QKVLayout uint8

const (
	// QKVFusedOrSeparate: attn_qkv (query rows, then key rows, then value
	// rows; attn_qkv.bias beside it in the same order) when the block has
	// it, else attn_q, attn_k and attn_v, as llama.cpp's create_tensor_qkv
	// takes them for most architectures, and as convert_hf_to_gguf.py's
	// --fuse-qkv writes them.
	QKVFusedOrSeparate QKVLayout = iota
	// QKVSeparate: attn_q, attn_k and attn_v, and a file with attn_qkv in
	// their place refused by name (refuseVariants), for the architectures
	// whose llama.cpp d32676d77 loader refuses it (bitnet, gemma4) or
	// whose graph crashes on it (olmo2, olmoe, jina-bert-v2, and qwen35,
	// qwen35moe, qwen3next, whose query holds each head's gate); gemma3n
	// too, unproven, as llama.cpp d32676d77 loads no test file of it.
	QKVSeparate
	// QKVFused: attn_qkv alone (bailingmoe2).
	QKVFused
)

// FFNLayout says how a block's feed-forward weights are stored.
type FFNLayout uint8

const (
	// FFNGated: ffn_gate, ffn_up, ffn_down; down(act(gate·x) ⊙ up·x).
	FFNGated FFNLayout = iota
	// FFNFusedGateUp: ffn_up holds the gate rows then the up rows (phi3,
	// glm4), ffn_down as usual.
	FFNFusedGateUp
	// FFNExperts: a router (ffn_gate_inp) picks expert_used_count of
	// expert_count experts per token, whose gate, up and down matrices are
	// the slices of the 3-D ffn_gate_exps, ffn_up_exps and ffn_down_exps.
	FFNExperts
	// FFNSequential: down(GELU(up·x + b_up)) + b_down, no gate (bert); the
	// biases ffn_up.bias and ffn_down.bias are applied when present.
	FFNSequential
)

// registry lists the architectures this package runs, in the order
// Supported reports them.
var registry = []*Arch{
	{Name: "llama"},
	{Name: "qwen2", Neox: true, QKVBias: true, OptionalHeadBias: true},
	{Name: "qwen3", Neox: true, QKNorm: true},
	{Name: "qwen3moe", Neox: true, QKNorm: true, FFN: FFNExperts, hparams: qwen3moeHparams},
	{Name: "gemma2", Neox: true, PostNorms: true, GELU: true, EmbedScale: true, hparams: gemma2Hparams},
	{Name: "gemma3", Neox: true, QKNorm: true, PostNorms: true, GELU: true, EmbedScale: true, hparams: gemma3Hparams},
	{Name: "phi3", Neox: true, FFN: FFNFusedGateUp, RopeFactors: true, hparams: phi3Hparams},
	{Name: "granite", hparams: graniteHparams},
	{Name: "granitemoe", FFN: FFNExperts, hparams: granitemoeHparams},
	{Name: "granitehybrid", Mamba2: true, OptionalExperts: true, hparams: graniteHybridHparams},
	{Name: "smollm3", hparams: smollm3Hparams},
	{Name: "mistral3", hparams: mistral3Hparams},
	{Name: "olmo2", QKV: QKVSeparate, Neox: true, QKNorm: true, PostNorms: true, NoPreNorm: true, hparams: olmo2Hparams},
	{Name: "ernie4_5", OptionalQKVBias: true},
	{Name: "ernie4_5-moe", OptionalQKVBias: true, FFN: FFNExperts, ExpertSelBias: true, OptionalSelBias: true, hparams: ernie45moeHparams},
	{Name: "seed_oss", Neox: true, OptionalQKVBias: true, FFNNorm: "post_attention_norm.weight"},
	{Name: "exaone4", Neox: true, QKNorm: true, PostNorms: true, NoPreNorm: true, hparams: exaone4Hparams},
	{Name: "glm4", OptionalQKVBias: true, PostNorms: true, FFN: FFNFusedGateUp, hparams: glm4Hparams},
	{Name: "gpt-oss", Neox: true, QKVBias: true, FFN: FFNExperts, Sinks: true, OutBias: true, FFNNorm: "post_attention_norm.weight", ExpertBiases: true, hparams: gptossHparams},
	{Name: "lfm2", Neox: true, QKNorm: true, ShortConv: true, OutputNorm: "token_embd_norm.weight"},
	{Name: "lfm2moe", Neox: true, QKNorm: true, ShortConv: true, OutputNorm: "token_embd_norm.weight", FFN: FFNExperts, ExpertSelBias: true, hparams: lfm2moeHparams},
	{Name: "gemma3n", QKV: QKVSeparate, Neox: true, QKNorm: true, PostNorms: true, GELU: true, EmbedScale: true, hparams: gemma3nHparams},
	{Name: "gemma4", QKV: QKVSeparate, Neox: true, QKNorm: true, PostNorms: true, GELU: true, EmbedScale: true, PerLayerSizes: true, OptionalExperts: true, hparams: gemma4Hparams},
	{Name: "deepseek2", FFN: FFNExperts, ExpertSelBias: true, OptionalSelBias: true, FusedGateUpExps: true, hparams: deepseek2Hparams},
	{Name: "gemma-embedding", Neox: true, QKNorm: true, PostNorms: true, GELU: true, EmbedScale: true, NoHead: true, hparams: gemmaEmbeddingHparams},
	{Name: "bert", Encoder: true, AbsPositions: true, FFN: FFNSequential, GELU: true, hparams: encoderHparams},
	{Name: "nomic-bert", Encoder: true, Neox: true, hparams: nomicBertHparams},
	{Name: "modern-bert", Neox: true, QKV: QKVFused, FFN: FFNFusedGateUp, GELU: true, NoHead: true, EmbedNorm: true, hparams: modernBertHparams},
	{Name: "nomic-bert-moe", Encoder: true, Neox: true, FFN: FFNSequential, GELU: true, OptionalExperts: true, hparams: nomicBertMoEHparams},
	{Name: "jina-bert-v2", QKV: QKVSeparate, Encoder: true, FFN: FFNGated, GELU: true, hparams: jinaBertV2Hparams},
	{Name: "jina-bert-v3", Encoder: true, Neox: true, FFN: FFNSequential, GELU: true, hparams: encoderHparams},
	{Name: "eurobert", Neox: true, NoHead: true, hparams: bidirectionalHparams},
	{Name: "neo-bert", QKV: QKVFused, FFN: FFNFusedGateUp, NoHead: true, OutputNorm: "enc.output_norm.weight", hparams: bidirectionalHparams},
	{Name: "qwen35", QKV: QKVSeparate, Neox: true, QKNorm: true, FFNNorm: "post_attention_norm.weight", hparams: qwen35Hparams},
	{Name: "qwen35moe", QKV: QKVSeparate, Neox: true, QKNorm: true, FFNNorm: "post_attention_norm.weight", FFN: FFNExperts, FusedGateUpExps: true, hparams: qwen35moeHparams},
	{Name: "qwen3next", QKV: QKVSeparate, Neox: true, QKNorm: true, FFNNorm: "post_attention_norm.weight", FFN: FFNExperts, FusedGateUpExps: true, hparams: qwen3nextHparams},
	{Name: "nemotron_h", Mamba2: true, PerLayerSizes: true, hparams: nemotronHHparams},
	{Name: "nemotron_h_moe", Mamba2: true, PerLayerSizes: true, FFN: FFNExperts, ExpertSelBias: true, hparams: nemotronHMoEHparams},
	{Name: "qwen2vl", Neox: true, OptionalQKVBias: true, OptionalHeadBias: true, hparams: qwen2vlHparams},
	{Name: "qwen3vl", Neox: true, QKNorm: true, hparams: qwen3vlHparams},
	{Name: "qwen3vlmoe", Neox: true, QKNorm: true, FFN: FFNExperts, hparams: qwen3vlmoeHparams},
	{Name: "glm4moe", Neox: true, QKVBias: true, OptionalQKNorm: true, FFNNorm: "post_attention_norm.weight", FFN: FFNExperts, ExpertSelBias: true,
		NextN: nextNTensors, hparams: glm4moeHparams},
	{Name: "bailingmoe2", Neox: true, QKV: QKVFused, QKNorm: true, FFN: FFNExperts, ExpertSelBias: true, OptionalSelBias: true, UntiedOutput: true,
		NextN: append([]string{"layer_output_norm.weight"}, nextNTensors...), hparams: bailingmoe2Hparams},
	{Name: "cohere2", Parallel: true, TiedHead: true, hparams: cohere2Hparams},
	{Name: "arcee", FFN: FFNSequential, hparams: arceeHparams},
	{Name: "apertus", Neox: true, QKNorm: true, FFN: FFNSequential, hparams: apertusHparams},
	{Name: "hunyuan-dense", Neox: true, OptionalQKVBias: true, QKNorm: true, hparams: hunyuanDenseHparams},
	{Name: "smallthinker", Neox: true, FFN: FFNExperts, hparams: smallthinkerHparams},
	{Name: "falcon-h1", Neox: true, FFNNorm: "ffn_norm", hparams: falconH1Hparams},
	{Name: "minicpm", RopeFactors: true, hparams: minicpmHparams},
	{Name: "minicpm3", Neox: true, RopeFactors: true, hparams: minicpm3Hparams},
	{Name: "olmoe", QKV: QKVSeparate, Neox: true, QKNorm: true, FFN: FFNExperts, UntiedOutput: true, hparams: olmoeHparams},
	{Name: "afmoe", Neox: true, QKNorm: true, PostNorms: true, EmbedScale: true, AttnOutGate: true, FFN: FFNExperts, ExpertSelBias: true,
		hparams: afmoeHparams},
	{Name: "jamba", Mamba1: true, OptionalExperts: true, hparams: jambaHparams},
	{Name: "mamba", NoAttention: true, hparams: mambaHparams},
	{Name: "mamba2", NoAttention: true, hparams: mamba2Hparams},
	{Name: "rwkv7", NoAttention: true, UntiedOutput: true, hparams: rwkv7Hparams},
	{Name: "exaone", Neox: true, hparams: exaoneHparams},
	{Name: "starcoder2", Neox: true, QKVBias: true, OutBias: true, NormBias: true, FFN: FFNSequential, FFNBias: true, hparams: layerNormHparams},
	{Name: "gemma", Neox: true, GELU: true, EmbedScale: true, TiedHead: true, hparams: gemmaHparams},
	{Name: "nemotron", Neox: true, OptionalQKVBias: true, OptionalBiases: true, NormBias: true, FFN: FFNSequential, UntiedOutput: true,
		hparams: nemotronHparams},
	{Name: "stablelm", Neox: true, OptionalQKVBias: true, OptionalQKNorm: true, NormBias: true, OptionalFFNNorm: true,
		UntiedOutput: true, hparams: stablelmHparams},
	{Name: "phi2", Neox: true, QKVBias: true, OutBias: true, NormBias: true, Parallel: true, FFN: FFNSequential, FFNBias: true,
		UntiedOutput: true, HeadBias: true, hparams: phi2Hparams},
	// GPT-2 and StarCoder 1 (SantaCoder's layout: one KV head) as llama.cpp's
	// gpt2 and starcoder graphs run them: learned positions, pre-LayerNorm
	// blocks of weight and bias, a fused attn_qkv with its bias, biases on
	// every projection, a gate-less GELU feed-forward, no RoPE; the output
	// tied to token_embd when the file has no output.weight.
	{Name: "gpt2", AbsPositions: true, QKV: QKVFused, QKVBias: true, OutBias: true, NormBias: true, FFN: FFNSequential, FFNBias: true,
		hparams: layerNormHparams},
	{Name: "starcoder", AbsPositions: true, QKV: QKVFused, QKVBias: true, OutBias: true, NormBias: true, FFN: FFNSequential, FFNBias: true,
		hparams: layerNormHparams},
	{Name: "gptneox", Neox: true, QKV: QKVFused, QKVBias: true, OutBias: true, NormBias: true, FFN: FFNSequential, FFNBias: true,
		UntiedOutput: true, hparams: gptneoxHparams},
	{Name: "bitnet", QKV: QKVSeparate, Neox: true, TiedHead: true, SubNorms: true, hparams: bitnetHparams},
	// ChatGLM3-6B and GLM-4-9B-chat (the 2024 files the converter names
	// chatglm) as llama.cpp's chatglm graph runs them: glm4's block
	// without the norms after attention and the feed-forward; the output
	// tied to token_embd when the file has no output.weight, as
	// llama.cpp d32676d77 loads it.
	{Name: "chatglm", OptionalQKVBias: true, FFN: FFNFusedGateUp, hparams: chatglmHparams},
	{Name: "internlm2", UntiedOutput: true, hparams: internlm2Hparams},
	{Name: "olmo", UnitNorms: true, hparams: olmoHparams},
	{Name: "command-r", Parallel: true, TiedHead: true, QKNormDepth: 64, hparams: commandRHparams},
	{Name: "falcon", Neox: true, QKV: QKVFused, NormBias: true, Parallel: true, FFN: FFNSequential, AttnNorm2: true, hparams: falconHparams},
	// BLOOM and MPT as llama.cpp's bloom and mpt graphs run them: gpt2's
	// pre-LayerNorm blocks with a fused attn_qkv and a gate-less GELU
	// feed-forward, no RoPE and no learned positions but ALiBi biasing
	// every score by the query's distance to the key (Config.ALiBi);
	// bloom's embeddings LayerNormed and every bias required, mpt's biases
	// each optional; the output tied when the file has no output.weight.
	{Name: "bloom", QKV: QKVFused, QKVBias: true, OutBias: true, NormBias: true, FFN: FFNSequential, FFNBias: true, EmbedLayerNorm: true,
		hparams: bloomHparams},
	{Name: "mpt", QKV: QKVFused, OptionalQKVBias: true, OptionalBiases: true, NormBias: true, OptionalNormBias: true, FFN: FFNSequential,
		hparams: mptHparams},
	{Name: "qwen2moe", Neox: true, OptionalQKVBias: true, FFN: FFNExperts, UntiedOutput: true, hparams: qwen2moeHparams},
	{Name: "rwkv6", NoAttention: true, UntiedOutput: true, hparams: rwkv6Hparams},
	{Name: "rwkv6qwen2", NoAttention: true, UntiedOutput: true, hparams: rwkv6Qwen2Hparams},
	{Name: "phimoe", Neox: true, QKV: QKVFusedOrSeparate, OptionalQKVBias: true, OutBias: true, NormBias: true, FFN: FFNExperts, RopeFactors: true,
		UntiedOutput: true, HeadBias: true, hparams: phimoeHparams},
	{Name: "arwkv7", NoAttention: true, UntiedOutput: true, hparams: arwkv7Hparams},
	{Name: "hunyuan-moe", Neox: true, OptionalQKVBias: true, QKNorm: true, FFN: FFNExperts, hparams: hunyuanMoEHparams},
	{Name: "dots1", Neox: true, OptionalQKVBias: true, QKNorm: true, FFN: FFNExperts, ExpertSelBias: true, OptionalSelBias: true,
		UntiedOutput: true, hparams: dots1Hparams},
	{Name: "mellum", Neox: true, OptionalQKVBias: true, QKNorm: true, FFN: FFNExperts, UntiedOutput: true, hparams: mellumHparams},
	{Name: "maincoder", OptionalQKVBias: true, QKNorm: true, hparams: maincoderHparams},
	{Name: "minimax-m2", Neox: true, QKNorm: true, FFN: FFNExperts, ExpertSelBias: true, UntiedOutput: true, hparams: minimaxM2Hparams},
	{Name: "exaone-moe", Neox: true, OptionalQKVBias: true, QKNorm: true, FFN: FFNExperts, ExpertSelBias: true, OptionalSelBias: true,
		UntiedOutput: true, NextN: nextNTensors, hparams: exaoneMoEHparams},
	{Name: "llama4", OptionalQKVBias: true, FFN: FFNExperts, hparams: llama4Hparams},
	{Name: "laguna", QKV: QKVSeparate, Neox: true, QKNorm: true, AttnOutGate: true, NoRopeFreqs: true, FFN: FFNExperts, ExpertSelBias: true, PerLayerSizes: true, hparams: lagunaHparams},
	{Name: "mimo2", Neox: true, QKV: QKVFusedOrSeparate, Sinks: true, OptionalSinks: true, NoRopeFreqs: true, FFN: FFNExperts, ExpertSelBias: true,
		OptionalSelBias: true, UntiedOutput: true, PerLayerSizes: true, hparams: mimo2Hparams},
	{Name: "grovemoe", Neox: true, OptionalQKVBias: true, QKNorm: true, FFN: FFNExperts, hparams: grovemoeHparams},
	{Name: "kimi-linear", QKV: QKVSeparate, KDA: true, FFN: FFNExperts, ExpertSelBias: true, FusedGateUpExps: true, hparams: kimiLinearHparams},
	{Name: "plamo3", Neox: true, QKV: QKVFused, QKNorm: true, PostNorms: true, BarePostNorms: true, FFN: FFNFusedGateUp, NoRopeFreqs: true,
		hparams: plamo3Hparams},
	{Name: "jais2", QKV: QKVSeparate, Neox: true, QKVBias: true, OutBias: true, NormBias: true, FFN: FFNSequential, FFNBias: true,
		NoRopeFreqs: true, hparams: jais2Hparams},
	// The older dense architectures (model/olddense.go): Q, K and V fused
	// or apart, each bias optional, as llama.cpp d32676d77's
	// create_tensor_qkv loads them (probed: a fused attn_qkv and an
	// attn_q.bias load) and build_qkv applies them; no rope_freqs.
	{Name: "xverse", OptionalQKVBias: true, UntiedOutput: true, NoRopeFreqs: true, hparams: xverseHparams},
	{Name: "orion", Neox: true, OptionalQKVBias: true, NormBias: true, UntiedOutput: true, NoRopeFreqs: true, hparams: orionHparams},
	{Name: "refact", OptionalQKVBias: true, NoRopeFreqs: true, hparams: refactHparams},
	{Name: "baichuan", OptionalQKVBias: true, UntiedOutput: true, NoRopeFreqs: true, hparams: baichuanHparams},
	{Name: "codeshell", Neox: true, OptionalQKVBias: true, OutBias: true, NormBias: true, FFN: FFNSequential, FFNBias: true, UntiedOutput: true,
		NoRopeFreqs: true, hparams: codeshellHparams},
	{Name: "bailingmoe", OptionalQKVBias: true, FFN: FFNExperts, UntiedOutput: true, hparams: bailingmoeHparams},
	{Name: "cohere2moe", Parallel: true, OptionalQKVBias: true, FFN: FFNExperts, FusedGateUpExps: true, NextN: nextNTensors, NextNOptional: true,
		hparams: cohere2moeHparams},
	{Name: "mistral4", FFN: FFNExperts, ExpertSelBias: true, OptionalSelBias: true, FusedGateUpExps: true, hparams: mistral4Hparams},
	{Name: "llama-embed", NoHead: true, hparams: bidirectionalHparams},
	{Name: "nanbeige", OptionalQKVBias: true, hparams: nanbeigeHparams},
	{Name: "talkie", Neox: true, OptionalQKVBias: true, UnitNorms: true, UntiedOutput: true, NoRopeFreqs: true, hparams: talkieHparams},
	{Name: "deci", OptionalQKVBias: true, OptionalBiases: true, PerLayerSizes: true, hparams: deciHparams},
	{Name: "openelm", Neox: true, QKV: QKVFused, QKNorm: true, TiedHead: true, PerLayerSizes: true, hparams: openELMHparams},
}

// Supported lists the architectures this package can run.
func Supported() []string {
	names := make([]string, len(registry))
	for i, a := range registry {
		names[i] = a.Name
	}
	return names
}

// LookupArch returns the description of architecture name, or nil when
// this package does not run it.
func LookupArch(name string) *Arch {
	for _, a := range registry {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// gemma2Hparams: logit soft-capping, a sliding window on every other layer
// (even layers local), and a query scale that llama.cpp picks by model
// size: the 27B model (46 layers) scales by n_embd/n_head, the others by
// the head dimension; the attention itself is then unscaled.
func gemma2Hparams(c *Config, m *meta) {
	c.AttnSoftcap = m.softcap("attn_logit_softcapping", 0)
	c.FinalSoftcap = m.softcap("final_logit_softcapping", 0)
	c.Window = m.num("attention.sliding_window", maxCount, 0, false)
	c.FullEvery = 2
	gemmaQueryScale(c, 46)
}

// gemmaQueryScale scales the query as llama.cpp does for Gemma 2 and 3:
// the 27B model (layers27B layers) by n_embd/n_head, the others by the
// head dimension; the attention itself is then unscaled.
func gemmaQueryScale(c *Config, layers27B int) {
	if c.Layers == layers27B {
		c.QueryScale = invSqrt(max(c.Embd/c.Heads, 1))
	} else {
		c.QueryScale = invSqrt(c.HeadDimK)
	}
	c.KQScale = 1
}

// gemma3Hparams: with a sliding window (every real Gemma 3), the layers
// follow a pattern of period attention.sliding_window_pattern (default 6:
// five local layers, then one global); local layers use RoPE base
// rope.freq_base_swa (default 10000) without scaling, global ones the
// model's base and scaling. Without a window every layer is global and the
// logits are soft-capped (final_logit_softcapping, default 30), as
// llama.cpp's non-iSWA Gemma 3 graph does. The query is scaled like
// Gemma 2's, the 27B model (62 layers) by n_embd/n_head.
func gemma3Hparams(c *Config, m *meta) {
	c.Window = m.num("attention.sliding_window", maxCount, 0, false)
	if c.Window > 0 {
		c.FullEvery = 6
		m.swaPattern(c)
		c.RopeBaseSWA = m.positive("rope.freq_base_swa", 10000)
		c.RopeScaleSWA = 1
	} else {
		c.FinalSoftcap = m.softcap("final_logit_softcapping", 30)
	}
	gemmaQueryScale(c, 62)
}

// phi3Hparams: the query is scaled by 1/sqrt(head size) before the
// product and the attention is unscaled. A phi3 file's sliding window is
// ignored: llama.cpp disables Phi's SWA (every layer attends to the whole
// context). LongRoPE factors are chosen per session from
// rope.scaling.original_context_length (see Config.RopeOrigContext).
func phi3Hparams(c *Config, m *meta) {
	c.QueryScale = invSqrt(c.HeadDimV)
	c.KQScale = 1
}

// qwen3moeHparams: expert_count experts, expert_used_count of them per
// token, each expert_feed_forward_length wide (default
// feed_forward_length / expert_used_count, as llama.cpp); the routing
// weights of the chosen experts are renormalised to sum to 1.
func qwen3moeHparams(c *Config, m *meta) {
	m.experts(c, true)
	c.ExpertNorm = true
}

// experts reads the counts every mixture-of-experts architecture has:
// expert_count and expert_used_count (required; no more used than there
// are) and expert_feed_forward_length — required, unless widthDefault
// gives it llama.cpp's qwen3moe default, feed_forward_length /
// expert_used_count, when absent or 0.
func (m *meta) experts(c *Config, widthDefault bool) {
	if !m.expertCounts(c) {
		return
	}
	if widthDefault && c.FFN > 0 {
		// Absent or 0 alike: llama.cpp sizes these experts
		// n_ff_exp ? n_ff_exp : n_ff / n_expert_used (llama-bench
		// d32676d77 expects that width of a qwen3moe, qwen35moe,
		// qwen3next or qwen3vlmoe file whose key is 0).
		c.ExpertFFN = cmp.Or(m.count("expert_feed_forward_length", maxCount), c.defaultExpertFFN())
		return
	}
	c.ExpertFFN = m.num("expert_feed_forward_length", maxCount, -1, false)
}

// expertCounts reads expert_count and expert_used_count (required; no
// more used than there are), reporting whether both are good.
func (m *meta) expertCounts(c *Config) bool {
	c.Experts = m.num("expert_count", maxExperts, -1, false)
	c.ExpertsUsed = m.num("expert_used_count", maxExperts, -1, false)
	if m.err == nil && c.ExpertsUsed > c.Experts {
		m.fail("%s = %d is more than %s = %d", m.key("expert_used_count"), c.ExpertsUsed, m.key("expert_count"), c.Experts)
	}
	return m.err == nil
}

// defaultExpertFFN is llama.cpp's width of an expert whose file states
// none: feed_forward_length / expert_used_count, at least 1.
func (c *Config) defaultExpertFFN() int { return max(c.FFN/c.ExpertsUsed, 1) }

// sharedExperts reads expert_shared_count (required, at least 1 unless
// none allows 0: no shared expert) into c.SharedFFN: that many shared
// experts of width each, run as one expert of their summed width, as
// llama.cpp sizes ffn_*_shexp (deepseek2, glm4moe, bailingmoe2; afmoe
// with none).
func (m *meta) sharedExperts(c *Config, width int, none bool) {
	var n int
	if none {
		m.require(true, "expert_shared_count")
		n = m.count("expert_shared_count", maxExperts)
	} else {
		n = m.num("expert_shared_count", maxExperts, -1, false)
	}
	if m.err == nil && int64(n)*int64(width) > maxCount {
		m.fail("%s = %d × a width of %d is wider than %d", m.key("expert_shared_count"), n, width, maxCount)
	}
	if m.err == nil {
		c.SharedFFN = n * width
	}
}

// expertWeights reads what becomes of the chosen experts' weights:
// renormalised to sum to 1 when expert_weights_norm says so (default
// false), then scaled by expert_weights_scale (0 or absent: not scaled),
// which required makes required, as llama.cpp's glm4moe and bailingmoe2
// loaders make it.
func (m *meta) expertWeights(c *Config, required bool) {
	m.require(required, "expert_weights_scale")
	c.ExpertNorm = m.flag("expert_weights_norm", false)
	c.ExpertScale = m.finite("expert_weights_scale", 0)
	if m.err == nil && c.ExpertScale < 0 {
		m.fail("%s = %v, want 0 (none) or more", m.key("expert_weights_scale"), c.ExpertScale)
	}
}

// get is key k's value (the whole key, prefix and all), failing when the
// file lacks it; ok is false then, or when m failed before.
func (m *meta) get(k string) (raw any, ok bool) {
	if m.err != nil {
		return nil, false
	}
	raw, ok = m.f.Get(k)
	if !ok {
		m.fail("%s missing", k)
	}
	return raw, ok
}

// lookup is get of the architecture's key name (m.key(name)), which it
// returns too, for the messages about its value.
func (m *meta) lookup(name string) (k string, raw any, ok bool) {
	k = m.key(name)
	raw, ok = m.get(k)
	return k, raw, ok
}

// require fails, when when is true, for the first of keys the file
// lacks.
func (m *meta) require(when bool, keys ...string) {
	for _, k := range keys {
		if when && m.err == nil && !m.has(k) {
			m.fail("%s missing", m.key(k))
		}
	}
}

// graniteHparams: Granite 3's four multipliers, all required as llama.cpp
// requires them — embedding_scale multiplies the token embeddings,
// residual_scale each block's attention and feed-forward outputs before
// they join the residual stream, attention.scale replaces 1/sqrt(head
// size) in the softmax (0 keeps it), and logit_scale divides the logits —
// and rope.scaling.finetuned, which Granite uses as a switch: false turns
// RoPE off in every layer (default true).
func graniteHparams(c *Config, m *meta) {
	for _, k := range []string{"embedding_scale", "residual_scale", "attention.scale", "logit_scale"} {
		if !m.has(k) {
			m.fail("%s missing (Granite's multipliers are required)", m.key(k))
			return
		}
	}
	c.EmbedScale = m.finite("embedding_scale", 0)
	c.ResidualScale = m.finite("residual_scale", 0)
	if s := m.finite("attention.scale", 0); s != 0 {
		c.KQScale = s
	}
	c.LogitScale = m.logitScale(0)
	if !m.flag("rope.scaling.finetuned", true) {
		c.NoRopeEvery = 1
	}
}

// granitemoeHparams: Granite's multipliers and qwen3moe's experts (a
// softmax router, the chosen weights renormalised, as llama.cpp's granite
// graph asks of build_moe_ffn), each of width feed_forward_length
// (required: llama.cpp sizes granitemoe's experts by n_ff, whatever
// expert_feed_forward_length says, and the converter writes none), and
// GraniteMoeShared's shared expert of width
// expert_shared_feed_forward_length when it is set.
func granitemoeHparams(c *Config, m *meta) {
	graniteHparams(c, m)
	m.ffnWideExperts(c)
	c.ExpertNorm = true
	c.SharedFFN = m.num("expert_shared_feed_forward_length", maxCount, 0, false)
}

// smollm3Hparams: llama's graph with every fourth layer unrotated (NoPE:
// layers 3, 7, 11 …), a step llama.cpp fixes at 4 for SmolLM3 rather
// than reading it from the file.
func smollm3Hparams(c *Config, m *meta) {
	c.NoRopeEvery = 4
}

// mistral3Hparams: Ministral 3, llama's layers with YaRN and, when
// attention.temperature_scale is set, Llama 4's attention temperature
// (each query scaled by log(floor(pos/n)+1)·scale + 1, n the original
// context YaRN was stretched from).
func mistral3Hparams(c *Config, m *meta) {
	c.AttnTempScale = m.finite("attention.temperature_scale", 0)
}

// olmo2Hparams: OLMo 2's Q and K norms span every head at once; with
// attention.sliding_window (OLMo 3), three layers of four are windowed
// and rotate unscaled.
func olmo2Hparams(c *Config, m *meta) {
	c.QKNormFull = true
	c.Window = m.num("attention.sliding_window", maxCount, 0, false)
	if c.Window > 0 {
		c.FullEvery = 4
		c.RopeScaleSWA = 1
	}
}

// exaone4Hparams: EXAONE 4.0 as llama.cpp loads it, which gives the hybrid
// attention to the 64-layer model (32B) alone: three layers of four
// windowed (attention.sliding_window, default 4096) and rotated, the
// fourth global and unrotated (NoPE). Any other depth (the 1.2B's 30
// layers) attends to the whole context and rotates every layer, whatever
// window the file states.
func exaone4Hparams(c *Config, m *meta) {
	if c.Layers != 64 {
		return
	}
	c.Window = m.num("attention.sliding_window", maxCount, 4096, false)
	c.FullEvery, c.NoRopeEvery = 4, 4
}

// gptossHparams: gpt-oss as llama.cpp's openai-moe graph runs it — a
// sliding window (attention.sliding_window, required) on the even layers,
// every layer rotated alike (YaRN when the file says so, as the released
// files do); expert_count experts, expert_used_count a token, chosen by
// the router's logits and weighted by the softmax of the chosen ones
// alone; the experts' activation the clamped SwiGLU (SwiGLUOAI).
func gptossHparams(c *Config, m *meta) {
	c.Window = m.num("attention.sliding_window", maxCount, -1, false)
	c.FullEvery = 2
	m.experts(c, false)
	c.ExpertGating = GatingSoftmaxWeight
	c.SwiGLUOAI = true
}

// lfm2moeHparams: LFM2's layers whose feed-forwards, after the first
// leading_dense_block_count (dense, of width feed_forward_length), are
// expert_count experts of width expert_feed_forward_length,
// expert_used_count a token, all required as llama.cpp requires them;
// the experts chosen by the gating function expert_gating_func (sigmoid
// in LFM2-8B-A1B) plus the selection bias exp_probs_b, weighted by the
// unbiased probabilities renormalised to sum to 1.
func lfm2moeHparams(c *Config, m *meta) {
	m.experts(c, false)
	m.denseLead(c, true)
	m.gating(c)
	c.ExpertNorm = true
}

// gating reads expert_gating_func (required) into c.ExpertGating:
// llama.cpp's numbering, 1 softmax, 2 sigmoid, 3 softmax of the chosen.
func (m *meta) gating(c *Config) {
	k, raw, present := m.lookup("expert_gating_func")
	if !present {
		return
	}
	v, ok := m.f.Uint(k)
	switch {
	case !ok:
		m.fail("%s is %s, want 1 (softmax), 2 (sigmoid) or 3 (softmax of the chosen)", k, describe(raw))
	case v < uint64(GatingSoftmax) || v > uint64(GatingSoftmaxWeight):
		m.err = fmt.Errorf("model: %s = %d is not a gating function this package runs (1 softmax, 2 sigmoid, 3 softmax of the chosen): %w", k, v, ErrUnsupportedArch)
	default:
		c.ExpertGating = Gating(v)
	}
}

// gemmaEmbeddingHparams: EmbeddingGemma, Gemma 3's layers made an
// embedder as llama.cpp's gemma-embedding graph runs them: attention over
// the whole text (NonCausal), the windowed layers (every layer but each
// sixth) seeing the tokens within half the window on either side
// (llama.cpp's symmetric window), their RoPE base 10000 unscaled; the
// query scaled by 1/sqrt(head size) before an unscaled softmax; pooling
// required, as llama.cpp requires it. attention.sliding_window is
// required too.
func gemmaEmbeddingHparams(c *Config, m *meta) {
	c.Window = m.num("attention.sliding_window", maxCount, -1, false)
	c.FullEvery = 6
	c.RopeBaseSWA, c.RopeScaleSWA = 10000, 1
	c.NonCausal, c.NoHead = true, true
	c.QueryScale, c.KQScale = invSqrt(c.HeadDimK), 1
	if m.err == nil && !m.has("pooling_type") {
		m.fail("%s missing (gemma-embedding files name their pooling)", m.key("pooling_type"))
	}
}

// encoderHparams: the LayerNorm epsilon (attention.layer_norm_epsilon,
// required, as llama.cpp requires it) and whether attention is causal
// (attention.causal; the converter writes false: every token sees the
// whole text; absent, causal, as llama.cpp d32676d77 takes it —
// llama-bench prints "causal attn = 1" for bert, nomic-bert,
// nomic-bert-moe, jina-bert-v2 and jina-bert-v3 files without the key).
func encoderHparams(c *Config, m *meta) {
	m.layerNormEps(c)
	c.NonCausal = !m.flag("attention.causal", true)
}

// bidirectionalHparams: a decoder's blocks made an embedder, as llama.cpp's
// eurobert and neo-bert graphs run them: attention over the whole text
// unless attention.causal (the converters write false; absent, causal, as
// llama.cpp d32676d77 takes it) says otherwise, and no output matrix, the final norm's states the embeddings. The RMS
// epsilon is required, as llama.cpp requires it (llama-bench d32676d77
// refuses a eurobert file without it). llama-embed (llama's loader and
// graph without the logits: llama-embed-nemotron) is read the same way:
// its converter writes no attention.causal, so llama.cpp d32676d77 runs
// such a file causally (llama-bench prints causal attn = 1), and so does
// this package; its output.weight, which llama's loader takes and the
// embedding graph never reads, is passed over (PassedOver).
func bidirectionalHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	c.NonCausal, c.NoHead = !m.flag("attention.causal", true), true // absent: causal, as llama.cpp (checked with llama-bench)
}

// layerNormEps reads the LayerNorm epsilon attention.layer_norm_epsilon
// (required, as llama.cpp requires it) into c.NormEps.
func (m *meta) layerNormEps(c *Config) {
	k := "attention.layer_norm_epsilon"
	if !m.has(k) {
		m.fail("%s missing", m.key(k))
		return
	}
	c.NormEps = m.real(k, 0)
	if m.err == nil && !(c.NormEps >= 0 && c.NormEps < 1) {
		m.fail("%s = %v, want a number in [0, 1)", m.key(k), c.NormEps)
	}
}

// nomicBertHparams: an encoder whose file must name its pooling, as
// llama.cpp requires for nomic-bert; its Q and K are rotated (NEOX RoPE)
// where bert adds learned positions.
func nomicBertHparams(c *Config, m *meta) {
	encoderHparams(c, m)
	if m.err == nil && !m.has("pooling_type") {
		m.fail("%s missing (nomic-bert files name their pooling)", m.key("pooling_type"))
	}
}

// nomicBertMoEHparams: nomic-embed-text-v2-moe, nomic-bert whose dense
// feed-forwards are bert's (GELU, no gate, optional biases) and whose
// layers il with il mod moe_every_n_layers = 1 (absent or 0: none) are
// experts instead, as llama.cpp's bert graph runs them: expert_count
// experts of feed_forward_length (llama.cpp sizes them so; the file has
// no expert_feed_forward_length), expert_used_count of them a token,
// chosen by the softmax of ffn_gate_inp's logits and weighted by their
// probabilities unnormalised, each down(GELU(up·x)) without a gate or
// biases (the converter drops the model's one expert bias).
func nomicBertMoEHparams(c *Config, m *meta) {
	nomicBertHparams(c, m)
	c.MoEEvery = m.num("moe_every_n_layers", maxCount, 0, false)
	if m.err != nil || c.MoEEvery < 2 || c.Layers < 2 {
		c.MoEEvery = 0 // no layer il has il mod MoEEvery = 1
		return
	}
	c.Experts = m.num("expert_count", maxExperts, -1, false)
	c.ExpertsUsed = m.num("expert_used_count", maxExperts, -1, false)
	switch {
	case m.err != nil:
	case c.Experts == 0 || c.ExpertsUsed == 0 || c.ExpertsUsed > c.Experts:
		m.fail("%s = %d and %s = %d, want 1 ≤ experts used ≤ experts", m.key("expert_used_count"), c.ExpertsUsed, m.key("expert_count"), c.Experts)
	default:
		c.ExpertFFN, c.GELUExperts, c.ExpertGating = c.FFN, true, GatingSoftmax
	}
}

// modernBertHparams: ModernBERT (granite-embedding-english-r2,
// nomic-modernbert-embed) as llama.cpp's modern-bert graph runs it: a
// pre-norm stack of LayerNorms without bias (attention.layer_norm_epsilon,
// required), attention over the whole text unless attention.causal (required:
// the converter writes false) says otherwise; with attention.sliding_window
// the layers il with il mod attention.sliding_window_pattern (default 3)
// other than 0 are windowed — layer 0 is global, llama.cpp's dense-first
// pattern — seeing the tokens within half the window on either side and
// rotating with rope.freq_base_swa (default rope.freq_base), the global
// layers with rope.freq_base. The query is scaled by 1/sqrt(head size)
// inside the softmax.
func modernBertHparams(c *Config, m *meta) {
	m.layerNormEps(c)
	c.LayerNorm, c.NoHead = true, true
	m.require(true, "attention.causal")
	c.NonCausal = !m.flag("attention.causal", false)
	c.Window = m.num("attention.sliding_window", maxCount, 0, false)
	if m.err != nil || c.Window == 0 {
		return
	}
	m.denseFirst(c, 3)
	c.RopeBaseSWA, c.RopeScaleSWA = m.positive("rope.freq_base_swa", c.RopeBase), 1
}

// denseFirst reads attention.sliding_window_pattern (default period) as
// llama.cpp's set_swa_pattern(p, dense_first) takes it: a period p makes
// the layers il mod p = 0 global and the others windowed (0: every layer
// windowed), or one flag a layer says which are.
func (m *meta) denseFirst(c *Config, period int) {
	c.FullEvery = period
	m.swaPattern(c)
	if c.SWALayers == nil {
		c.SWALayers = make([]bool, c.Layers)
		for il := range c.SWALayers {
			c.SWALayers[il] = c.FullEvery > 1 && il%c.FullEvery != 0
		}
	}
}

// invSqrt is 1/sqrt(n) in float32.
func invSqrt(n int) float32 { return 1 / float32(math.Sqrt(float64(n))) }

// expertArchs lists the mixture-of-experts architectures this package runs.
func expertArchs() []string {
	var names []string
	for _, a := range registry {
		if a.FFN == FFNExperts {
			names = append(names, a.Name)
		}
	}
	return names
}

// maxSSMLayerFloats bounds one Mamba-2 layer's state (d_inner × state
// size): far above any released model (Granite 4.0-H-Small's is 2^20),
// low enough that the products sized from it cannot overflow.
const maxSSMLayerFloats = 1 << 28

// ssmSizes reads the recurrent layers' sizes Mamba-2 and the gated
// delta net share, all required: ssm.conv_kernel (at least 2),
// ssm.inner_size, ssm.state_size, ssm.time_step_rank (the heads) and
// ssm.group_count (which must divide the heads), the state within
// maxSSMLayerFloats; inner checks what the architecture asks of the inner
// size, after the kernel and before the heads.
func (m *meta) ssmSizes(c *Config, inner func(k func(string) string)) {
	c.SSMConv = m.num("ssm.conv_kernel", maxConvKernel, -1, false)
	c.SSMInner = m.num("ssm.inner_size", maxCount, -1, false)
	c.SSMState = m.num("ssm.state_size", maxCount, -1, false)
	c.SSMHeads = m.num("ssm.time_step_rank", maxCount, -1, false)
	c.SSMGroups = m.num("ssm.group_count", maxCount, -1, false)
	k := m.key
	if m.err == nil && c.SSMConv < 2 {
		m.fail("%s = %d, want at least 2", k("ssm.conv_kernel"), c.SSMConv)
	}
	if m.err == nil {
		inner(k)
	}
	if m.err != nil {
		return
	}
	switch {
	case c.SSMHeads%c.SSMGroups != 0:
		m.fail("%s = %d does not divide %s = %d (the heads)", k("ssm.group_count"), c.SSMGroups, k("ssm.time_step_rank"), c.SSMHeads)
	case int64(c.SSMInner)*int64(c.SSMState) > maxSSMLayerFloats:
		m.fail("%s = %d × %s = %d is a state of more than %d floats a layer", k("ssm.inner_size"), c.SSMInner, k("ssm.state_size"), c.SSMState, maxSSMLayerFloats)
	}
}

// mamba2Sizes reads a Mamba-2 layer's sizes (ssmSizes): with expand2 the
// inner size must be 2 × embedding_length, the only expansion llama.cpp's
// granite-hybrid graph runs; the heads must divide it.
func (m *meta) mamba2Sizes(c *Config, expand2 bool) {
	m.ssmSizes(c, func(k func(string) string) {
		switch {
		case expand2 && c.SSMInner != 2*c.Embd:
			m.fail("%s = %d, want 2 × %s = %d (llama.cpp runs an expansion of 2 only)", k("ssm.inner_size"), c.SSMInner, k("embedding_length"), 2*c.Embd)
		case c.SSMInner%c.SSMHeads != 0:
			m.fail("%s = %d (the heads) does not divide %s = %d", k("ssm.time_step_rank"), c.SSMHeads, k("ssm.inner_size"), c.SSMInner)
		}
	})
}

// graniteHybridHparams: Granite 4.0-H as llama.cpp's granite-hybrid graph
// runs it. Granite's multipliers are optional here (absent or 0: not
// applied, as llama.cpp reads them); rope.scaling.finetuned false (as the
// converter writes for Granite 4.0-H) leaves the attention layers
// unrotated. The Mamba-2 layers' sizes are mamba2Sizes', the inner size
// 2 × embedding_length. With expert_count above 0 the feed-forwards are experts of
// width feed_forward_length (not expert_feed_forward_length: llama.cpp
// sizes them by n_ff), expert_used_count a token, softmax-routed and
// renormalised, plus the shared expert of expert_shared_feed_forward_length
// when it is set; expert_count 0 (the dense models' files) is a dense
// SwiGLU.
func graniteHybridHparams(c *Config, m *meta) {
	c.EmbedScale = m.finite("embedding_scale", 0)
	c.ResidualScale = m.finite("residual_scale", 0)
	if s := m.finite("attention.scale", 0); s != 0 {
		c.KQScale = s
	}
	c.LogitScale = m.finite("logit_scale", 0)
	if !m.flag("rope.scaling.finetuned", true) {
		c.NoRopeEvery = 1
	}
	m.mamba2Sizes(c, true)
	k := "expert_count"
	raw, present := m.f.Get(m.key(k))
	n, ok := m.f.Uint(m.key(k))
	switch {
	case m.err != nil || !present:
	case !ok:
		m.fail("%s is %s, want a count of experts (0 for a dense model)", m.key(k), describe(raw))
	case n > 0:
		m.experts(c, true)
		c.ExpertFFN = c.FFN
		c.ExpertNorm = true
		c.SharedFFN = m.num("expert_shared_feed_forward_length", maxCount, 0, false)
	case m.has("expert_used_count"):
		// llama.cpp asserts that a model without experts uses none.
		if u, ok := m.f.Uint(m.key("expert_used_count")); !ok || u != 0 {
			m.fail("%s is set, but %s is 0", m.key("expert_used_count"), m.key(k))
		}
	}
}
