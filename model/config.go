package model

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
)

// ErrUnsupportedArch is returned for a GGUF file whose general.architecture
// this package cannot run. llm.ErrUnsupportedArch is the same value.
var ErrUnsupportedArch = errors.New("unsupported architecture")

// ErrBadModel is returned for a file that is not a valid model: a malformed
// GGUF file, a missing tensor, a shape that disagrees with the metadata.
// It is the same value as gguf.ErrBadFile and llm.ErrBadModel.
var ErrBadModel = gguf.ErrBadFile

// Config is everything the forward pass needs to know about a model,
// read from GGUF metadata by ConfigFromGGUF: the common keys, then the
// architecture's own (see Arch). Nothing is hard-coded per model file.
type Config struct {
	Arch     string // general.architecture, one of Supported()
	Name     string // general.name, if present
	FileType uint32 // general.file_type (llama_ftype), if present

	Vocab    int // rows of token_embd
	Embd     int // embedding_length
	Layers   int // block_count less NextN: the blocks a pass runs
	Heads    int // attention.head_count
	HeadsKV  int // attention.head_count_kv
	HeadDimK int // attention.key_length, default Embd/Heads
	HeadDimV int // attention.value_length, default Embd/Heads
	FFN      int // feed_forward_length (0 in an expert model without it)
	Context  int // context_length the model was trained with

	RMSEps    float32
	RopeDim   int
	RopeBase  float32
	RopeNeox  bool    // rotate (i, i+d/2) pairs rather than (2i, 2i+1)
	RopeScale float32 // linear rope scaling factor (1 = none)
	// RopeBaseSWA and RopeScaleSWA are the windowed layers' RoPE base and
	// linear factor: the model's own unless the architecture says
	// otherwise (gemma3: base rope.freq_base_swa, default 10000, unscaled).
	RopeBaseSWA  float32
	RopeScaleSWA float32
	// RopeAttnFactor multiplies the RoPE cosines and sines
	// (rope.scaling.attn_factor, LongRoPE's attention factor; 1 = none).
	RopeAttnFactor float32
	// RopeOrigContext is rope.scaling.original_context_length (default
	// Context): a session whose context exceeds it rotates with LongRoPE's
	// long factors, others with the short ones, as llama.cpp chooses; YaRN
	// places its correction dims by it.
	RopeOrigContext int
	// YaRN (rope.scaling.type "yarn"): the extrapolation mix
	// (rope.scaling.yarn_ext_factor, default 1; 0 for other scalings), the
	// correction dims' bounds (yarn_beta_fast 32, yarn_beta_slow 1) and
	// yarn_log_multiplier (the mscale_all_dim of the attention factor; 0
	// none).
	YarnExt, YarnBetaFast, YarnBetaSlow, YarnLogMul float32
	// RopeSections, when not all 0, are multimodal RoPE's pair counts
	// (rope.dimension_sections: temporal, height, width, extra; qwen2vl,
	// qwen3vl, qwen3vlmoe, qwen35, qwen35moe), interleaved for Qwen3-VL
	// and Qwen 3.5 (RopeInterleaved):
	// for a text the extra section's pairs do not turn (ops.Rope).
	RopeSections    [4]int
	RopeInterleaved bool
	// AttnTempScale, when not 0, multiplies each query after RoPE by
	// log(floor((pos+AttnTempOffset)/AttnTempFloor) + 1)·AttnTempScale + 1
	// (Llama 4's attention temperature; mistral3's
	// attention.temperature_scale, offset 0 and AttnTempFloor 0: the
	// floor's divisor RopeOrigContext). AttnTempNoPE: only the unrotated
	// layers' queries are scaled (llama4), not every layer's.
	AttnTempScale  float32
	AttnTempOffset float32
	AttnTempFloor  int
	AttnTempNoPE   bool
	// QKUnitNorm: the rotated layers RMS-normalise each head of Q and K
	// after RoPE, without a weight (llama4's use_kq_norm).
	QKUnitNorm bool

	AttnSoftcap  float32 // gemma2: cap·tanh(kq/cap) before softmax; 0 = none
	FinalSoftcap float32 // applied to the logits (gemma2; gemma3 without a window); 0 = none
	// Window is the sliding window of the windowed layers, 0 for none.
	// Which layers are windowed: SWALayers when it is not nil, else all
	// but every FullEvery-th (il%FullEvery == FullEvery-1); FullEvery 0
	// means 2, Gemma-2's alternation of local and global layers.
	Window    int
	FullEvery int
	SWALayers []bool
	// Chunked: the windowed layers attend within chunks of Window
	// positions, not a sliding window: a query at pos sees its text's
	// positions from pos - pos mod Window on (llama4's chunked attention,
	// kv.Config.Chunked).
	Chunked    bool
	EmbedScale float32 // multiply embeddings by this (gemma: sqrt(Embd); granite: embedding_scale); 0 = none
	// ResidualScale multiplies each block's attention and feed-forward
	// outputs before they join the residual stream (granite); 0 = none.
	ResidualScale float32
	// LogitScale divides the logits (granite: logit_scale); 0 = none.
	LogitScale float32
	// LogitMul multiplies the logits (cohere2, command-r: logit_scale); 0
	// = none.
	LogitMul float32
	// LayerNorm: the block and final norms are LayerNorms of weight
	// without bias, epsilon NormEps (cohere2, command-r), not RMSNorms.
	LayerNorm bool
	// Parallel: attention and the feed-forward read the same normalised
	// input and both outputs join the stream (Arch.Parallel: cohere2,
	// command-r).
	Parallel bool
	// OptionalFFNNorm: a block without ffn_norm runs its feed-forward on
	// attn_norm's output beside the attention, one with it after
	// (Arch.OptionalFFNNorm: stablelm).
	OptionalFFNNorm bool
	// ParallelNorms: the feed-forward reads ffn_norm of the block's
	// input, not of the attention's sum, and both outputs join the stream
	// (gptneox's use_parallel_residual: two norms, where Parallel has one;
	// a Parallel block with an FFNNorm, Falcon-40B's, runs so too:
	// Arch.AttnNorm2).
	ParallelNorms bool
	// QKLayerNorm: the Q and K norms are LayerNorms without bias of each
	// head, with a weight row of their own a head (attn_q_norm
	// [HeadDimK, Heads], attn_k_norm [HeadDimK, HeadsKV]), epsilon NormEps
	// (stablelm: StableLM 2 12B; command-r: Command R+).
	QKLayerNorm bool
	// ClampKQV, when above 0, limits each query, key and value to
	// [-ClampKQV, ClampKQV] after their projections (olmo's
	// attention.clamp_kqv: OLMo 1.7's 8).
	ClampKQV float32
	// QKNormAfterRope: the per-head Q and K norms come after RoPE, not
	// before (hunyuan-dense).
	QKNormAfterRope bool
	// XIELU is each layer's xIELU activation of a gate-less feed-forward
	// (apertus), nil in other models.
	XIELU []ops.XIELU
	// NoRopeEvery, when positive, leaves every NoRopeEvery-th layer
	// unrotated (il+1 a multiple of it: smollm3's NoPE layers; 1 is
	// granite without RoPE).
	NoRopeEvery int
	QueryScale  float32 // scale Q after RoPE, before K·Q (gemma, phi3); 0 = none
	KQScale     float32 // scale of K·Q inside the softmax
	PostNorms   bool    // post_attention_norm and post_ffw_norm (gemma)
	GELU        bool    // GeGLU (gemma) instead of SwiGLU
	QKVBias     bool    // qwen2: q/k/v projections have biases
	// QKNorm: the blocks have attn_q_norm and attn_k_norm (qwen3, gemma3:
	// per-head RMSNorms of Q and K before RoPE) — every block of an
	// Arch.QKNorm model, each block that has them of an
	// Arch.OptionalQKNorm one, and every block of a model as deep as its
	// Arch.QKNormDepth (command-r: 64 blocks).
	QKNorm bool
	// QKNormFull: the Q and K norms span all heads at once (olmo2), not
	// each head.
	QKNormFull bool
	// NoPreNorm: blocks have no attn_norm or ffn_norm; attention and the
	// feed-forward read the residual stream itself (olmo2).
	NoPreNorm bool
	// NextN is nextn_predict_layers: the file's last NextN blocks are
	// multi-token prediction blocks (glm4moe, bailingmoe2, qwen35), after
	// the Layers blocks, which llama.cpp does not run in its main pass
	// and neither does this package: their tensors are never read.
	NextN int
	// NoRopeLead: the unrotated layers are the first of each NoRopeEvery
	// (il a multiple of it: smallthinker's layers 0, 4, 8 …), not the last.
	NoRopeLead bool
	// NoRopeGlobal: the global (unwindowed) layers from DenseLead on are
	// unrotated, the windowed and the leading dense ones rotated
	// (cohere2moe, whose graph rotates only those).
	NoRopeGlobal bool
	// Loops is how many times a pass runs the stack of blocks, one run
	// after another on the same weights (nanbeige's num_loops), each run's
	// attention keeping keys and values of its own: the KV cache holds
	// Loops × the attending blocks (KVLayers), run r's block il at
	// KVLayer(il) + r × the attending blocks, as llama.cpp gives every
	// logical layer its own cells. 0 or 1: once.
	Loops int
	// EmbedSkip: the token embeddings are RMS-normalised without a weight
	// before the first block, and every block adds them, times its
	// layer_output_scale (Layer.SkipScale), to its output (talkie's
	// embedding skip).
	EmbedSkip bool
	// QHeadGain: each query head, RMS-normalised without a weight after
	// RoPE (QKUnitNorm), is multiplied by a gain of its own, attn_q_norm
	// of one float a head (Layer.QGain); the keys get none (talkie).
	QHeadGain bool
	// LoopNorm: between two runs of the stack the residual stream is
	// replaced by its output_norm (nanbeige without
	// skip_loop_final_norm); the last run's output is normalised as
	// every model's is.
	LoopNorm bool

	// Mixture of experts (qwen3moe); Experts is 0 for a dense model.
	Experts     int  // expert_count
	ExpertsUsed int  // expert_used_count: experts per token
	ExpertFFN   int  // expert_feed_forward_length: width of one expert
	ExpertNorm  bool // renormalise the chosen experts' weights to sum to 1
	// ExpertGating is how the router's logits become the probabilities
	// that choose and weight the experts (llama.cpp's
	// expert_gating_func); the zero value is GatingSoftmax.
	ExpertGating Gating
	// ExpertSelBias: the router's selection bias exp_probs_b.bias is added
	// to the probabilities to choose the experts, not to weight them
	// (lfm2moe, as DeepSeek V3).
	ExpertSelBias bool
	// DenseLead is the number of leading layers whose feed-forward is
	// dense (gate, up, down of width FFN) in a model whose other layers
	// have experts (lfm2moe: leading_dense_block_count).
	DenseLead int
	// ExpertBiases: the router and each expert's gate, up and down have
	// biases (gpt-oss).
	ExpertBiases bool
	// SwiGLUOAI: the feed-forward activation is gpt-oss's clamped SwiGLU
	// (ops.SwiGLUOAIMul), not SwiGLU or GeGLU.
	SwiGLUOAI bool
	// ReGLU: the feed-forward activation is ReLU(gate)·up (ops.ReGLUMul,
	// smallthinker's experts; bitnet's relu), not SwiGLU.
	ReGLU bool
	// GatedReLU2: the gated feed-forward's activation is ReLU(gate)²·up
	// (ops.ReLU2Mul: bitnet's relu2), not SwiGLU.
	GatedReLU2 bool
	// ExpertInputWeighted: each chosen expert reads the token multiplied
	// by its routing weight, and its output joins the sum unweighted
	// (llama4: llama.cpp's weight_before_ffn).
	ExpertInputWeighted bool
	// RouterPreAttn: the router reads the layer's input, the residual
	// stream before attention and its norm (smallthinker's pre-attention
	// router), not the experts' input.
	RouterPreAttn bool
	// Sinks: each attention head has a learned sink logit (attn_sinks).
	Sinks bool
	// AttnOutScale multiplies the attention's output (mimo2's
	// attention.value_scale); 0: none.
	AttnOutScale float32

	// Pooling is the file's pooling_type: how an embedding model makes one
	// vector of a text (PoolingNone for a generative model).
	Pooling Pooling

	// Encoder: a BERT-style encoder (Arch.Encoder): embeddings only, no
	// logits.
	Encoder bool
	// NonCausal: every token attends to every token of its text, the ones
	// after it too, so a text is one forward pass from position 0. With a
	// Window, the windowed layers' tokens see those of their text within
	// Window/2 positions on either side (gemma-embedding), and the KV
	// cache keeps whole layers (the pass stores the text before any token
	// attends).
	NonCausal bool
	// NoHead: a decoder-style stack without an output matrix (Arch.NoHead):
	// embeddings only.
	NoHead bool
	// AbsPositions: learned position embeddings, Context rows of them, and
	// no RoPE (bert).
	AbsPositions bool
	// ALiBi holds, when not nil, each query head's ALiBi slope
	// (jina-bert-v2, bloom, mpt): no RoPE, but a score lowered by slope ×
	// the distance between query and key positions. An encoder's
	// (jina-bert-v2) attends over its pass's own rows (rowsAttention); a
	// decoder's over its KV cache, whose renumbering by a context shift
	// keeps every distance llama.cpp's shifted cells give.
	ALiBi []float32
	// NormEps is an encoder's LayerNorm epsilon.
	NormEps float32

	// ConvLayers marks the recurrent layers (those whose
	// attention.head_count_kv is 0): lfm2's gated short convolutions or
	// granitehybrid's Mamba-2 layers, which have no attention and keep no
	// keys or values but a state carried from pass to pass; nil when every
	// layer attends.
	ConvLayers []bool
	// ConvKernel is lfm2's kernel length (shortconv.l_cache): each conv
	// layer carries its last ConvKernel-1 positions' inputs from one pass
	// to the next (the conv state).
	ConvKernel int

	// Gemma 3n (gemma3n.go): AltUp keeps AltUp streams of the residual
	// (altup.num_inputs), of which AltUpActive (altup.active_idx) runs the
	// block; PerLayerEmbd is the width of each layer's slice of the
	// per-layer embeddings (embedding_length_per_layer_input); LaurelRank
	// the inner width of LAuReL's two matrices (from laurel_l's shape).
	// AltUp is 0 in every other architecture.
	AltUp, AltUpActive, PerLayerEmbd, LaurelRank int
	// KVFrom, when positive, is the first layer that keeps no keys or
	// values: layers from it on attend over those of an earlier layer of
	// the same kind (KVSource); 0 means every layer keeps its own.
	KVFrom int
	// SparseLayers is how many leading layers cut their feed-forward gate
	// at its mean plus SparseStd standard deviations (Gemma 3n's
	// activation sparsity); 0 for none.
	SparseLayers int
	SparseStd    float32
	// VNorm: the values are RMS-normalised per head, without a weight.
	VNorm bool
	// Gemma 4 (gemma4_config.go): the windowed layers' head size
	// (attention.key_length_swa) and rotated dimensions
	// (rope.dimension_count_swa), the global layers' head size
	// (attention.key_length), and each layer's KV heads and feed-forward
	// width when they differ between layers (nil: HeadsKV, FFN). HeadDimK,
	// HeadDimV and HeadsKV are then the largest, the KV cache's geometry:
	// a layer's heads are stored padded with zeros and replicated to it
	// (gemma4_forward.go). HeadDimSWA is 0 in every other architecture.
	// nemotron_h's LayerFFN is each layer's feed-forward width, 0 for its
	// Mamba-2 and attention layers (FFNLayer).
	// laguna reads RopeDimSWA too: its windowed layers' rotated
	// dimensions; mimo2 LayerKVHeads: its global layers' fewer KV heads,
	// each layer's kept in its own cache layer, in the common pass.
	HeadDimSWA, RopeDimSWA, HeadDimFull int
	LayerKVHeads, LayerFFN              []int
	// LayerQHeads is each layer's query heads when they differ between
	// layers (laguna's attention.head_count array: Laguna-XS.2's 48 on its
	// global layers, 64 on its windowed ones; deci's and openelm's, with
	// their KV heads and feed-forward widths in LayerKVHeads and
	// LayerFFN: layerSizes), nil otherwise; Heads is then the largest,
	// which sizes the pass's rows (LayerHeads). In the shared block a
	// layer of 0 query heads has no attention, one of query heads but 0
	// KV heads attn_output alone (outputOnly), and one of feed-forward
	// width 0 no feed-forward; neither of the first two keeps keys and
	// values.
	LayerQHeads []int
	// DropFFNFree: a layer of feed-forward width 0 leaves the stream as
	// it was (deci: llama.cpp's graph moves on without taking the
	// layer's output) and keeps no keys and values.
	DropFFNFree bool
	// A Mamba-2 layer's sizes (granitehybrid; 0 in other models): the
	// causal convolution's taps (ssm.conv_kernel), the inner width
	// d_inner (ssm.inner_size, SSMHeads heads of SSMInner/SSMHeads
	// channels), the state per channel (ssm.state_size), the heads, each
	// with its own time step, decay A and skip D (ssm.time_step_rank), and
	// the groups of heads that share B and C, which are also the gated
	// norm's groups (ssm.group_count).
	SSMConv, SSMInner, SSMState, SSMHeads, SSMGroups int
	// Mamba1: the recurrent layers are Mamba-1 layers (jamba): SSMInner
	// channels, each its own head with SSMState decays, B and C of
	// SSMState floats shared by every channel, the time step made by
	// ssm_x at the rank SSMDtRank (ssm.time_step_rank) and widened by
	// ssm_dt; SSMHeads and SSMGroups are 0. SSMDtBCNorm: the time step's
	// rank, B and C are RMS-normalised without weights (Falcon-Mamba's
	// ssm.dt_b_c_rms).
	Mamba1      bool
	SSMDtRank   int
	SSMDtBCNorm bool
	// MoELayers marks the layers whose feed-forward is a mixture of
	// experts when the file says so layer by layer (jamba: the blocks
	// with a router, ffn_gate_inp), or when the blocks past it are dense
	// (exaone-moe's NextN blocks); nil: every layer from DenseLead on,
	// in an expert model.
	MoELayers []bool
	// ParallelSSM: every layer runs attention and a Mamba-2 mixer side by
	// side on the same normalised input, both outputs joining the stream
	// (falcon-h1): ConvLayers marks every layer, each of which keeps
	// keys and values as well as its recurrent state.
	ParallelSSM bool
	// DeltaNet: the recurrent layers are gated delta-net layers (qwen35),
	// sized by the SSM fields as llama.cpp reads them: SSMHeads value
	// heads and SSMGroups key heads, each of SSMState floats (SSMInner =
	// SSMHeads × SSMState), a state of SSMState² floats a value head.
	// AttnGate: attn_q makes each head's query and then its output gate
	// (sigmoid), which multiplies the head's attention output.
	DeltaNet, AttnGate bool
	// AttnOutGate: each layer's attn_gate makes a gate of the attention's
	// input, Heads×HeadDimV wide, whose sigmoid multiplies the attention's
	// output before attn_output (afmoe, Arch.AttnOutGate).
	AttnOutGate bool
	// GateSoftplus: the output gate is the softplus of attn_gate's
	// product, not its sigmoid, and a layer's attn_gate may have one row a
	// head, each scaling its head's whole output (laguna: Laguna-XS.2's
	// per-head gate; Laguna-M.1's has a row an element, as afmoe's).
	GateSoftplus bool
	// DeltaBlocks: value head h of a delta-net layer reads key head
	// h / (SSMHeads/SSMGroups), the key heads repeated in blocks as
	// llama.cpp's qwen3next repeats them, not h mod SSMGroups (qwen35);
	// a layer's ssm_ba, and its ssm_in when it has one, hold their
	// outputs grouped by key head (deltaUngroup).
	DeltaBlocks bool
	// KDA: the delta-net layers are Kimi Delta Attention's (kimi-linear):
	// as many key heads as value heads (SSMGroups = SSMHeads), q, k and v
	// each from its own projection and kernel, a decay per key element
	// (softplus(ssm_f_b·ssm_f_a·x + ssm_dt.bias)·ssm_a, ssm.DeltaHeadDiag)
	// rather than one a head, and the normalised output times the sigmoid
	// of ssm_g_b·ssm_g_a·x rather than SiLU of z.
	KDA bool
	// SingleOp: each block is one operator between its norm
	// (attn_norm) and its residual sum, no feed-forward after it
	// (nemotron_h): a Mamba-2 layer (ConvLayers), a feed-forward alone
	// (FFNLayer: LayerFFN above 0), or else attention alone.
	SingleOp bool
	// RWKV7: every block is RWKV-7's time mix and channel mix
	// (rwkv7.go), each head of WKVHead a WKVHead² state; the time mix's
	// low-rank pairs have ranks LoRADecay (w), LoRAICLR (a), LoRAValue
	// (the value's mix with the first layer's) and LoRAGate (g).
	RWKV7                                    bool
	WKVHead                                  int
	LoRADecay, LoRAICLR, LoRAValue, LoRAGate int
	// RWKV6: every block is RWKV-6's time mix and channel mix (rwkv6.go),
	// its heads' states as RWKV7's; LoRAMix is time_mix_extra_dim (the
	// data-dependent token shift's width), LoRADecay time_decay_extra_dim.
	// RescaleEvery is rescale_every_n_layers: the residual stream halves
	// after every RescaleEvery-th block (0: never).
	RWKV6                 bool
	LoRAMix, RescaleEvery int
	// QRWKV: an RWKV time mix in a Qwen2 body: RMSNorms (RMSEps), one
	// token shift (the time mix's), no embeddings' norm, and a SwiGLU
	// feed-forward for the channel mix. With RWKV6 (rwkv6qwen2): keys and
	// values of WKVHeadsKV heads repeated over the WKVHead-sized heads in
	// blocks, optional receptance/key/value biases, a sigmoid gate,
	// k·(1-w) and ggml's gated linear attention instead of wkv6 (no
	// time_mix_first, no group norm). With RWKV7 (arwkv7): RWKV-7's time
	// mix, its gate (LoRAGate 0: none in any block) and group norm each
	// in a block only when the block has their tensors.
	QRWKV      bool
	WKVHeadsKV int
	// ReLU2: the feed-forward (and each expert) has no gate:
	// down(ReLU(up·x)²), with ffn_up's and ffn_down's biases when the file
	// has them (nemotron_h).
	ReLU2 bool
	// MoEEvery is nomic-bert-moe's moe_every_n_layers: layer il's
	// feed-forward is experts when il mod MoEEvery is 1 (the odd layers
	// for 2), as llama.cpp picks them; 0 in other models.
	MoEEvery int
	// GELUExperts: each expert has no gate, down(GELU(up·x))
	// (nomic-bert-moe).
	GELUExperts bool
	// SharedFFN is the width of the shared expert every token of an expert
	// layer also runs (expert_shared_feed_forward_length: granitemoe,
	// granitehybrid; deepseek2's expert_shared_count experts of
	// ExpertFFN, run as one); 0 for none.
	SharedFFN int
	// SharedSumScale, when not 0, multiplies the routed experts' output
	// once the shared expert has joined it (cohere2moe: 0.5, the two
	// averaged); 0 = none.
	SharedSumScale float32
	// SharedGate: the shared expert's output is scaled by the sigmoid of
	// its own gate's product with the token (ffn_gate_inp_shexp: qwen2moe,
	// qwen35moe) before it joins the routed experts' sum.
	SharedGate bool
	// ExpertScale multiplies the chosen experts' weights after any
	// renormalisation (deepseek2's expert_weights_scale); 0 = none.
	ExpertScale float32
	// ExpertGroups and ExpertGroupsUsed limit the routing to groups
	// (DeepSeek V3's n_group and topk_group: expert_group_count and
	// expert_group_used_count): the experts are ExpertGroups groups of
	// consecutive ids, each scored by the sum of its two best selection
	// probabilities, and a token's experts come from its ExpertGroupsUsed
	// best groups only. ExpertGroups ≤ 1: no groups.
	ExpertGroups, ExpertGroupsUsed int
	// GroveMoE's adjugate experts (grovemoe; 0 in other models): beside
	// the Experts, Experts/GroupExperts more of width ChunkFFN
	// (ffn_{gate,up,down}_chexps), one for each group of GroupExperts
	// consecutive experts. They run on the routed experts' output, each
	// chosen expert's group's one weighted by the probability of the
	// expert whose id is the group's, the weights renormalised, and their
	// sum, times GroupScale, joins that output (adjugateExperts).
	ChunkFFN, GroupExperts int
	GroupScale             float32

	// Multi-head latent attention (deepseek2; 0 in other models). The
	// keys and values of a token come from one compressed latent of
	// KVLoraRank floats (attn_kv_a_mqa, then attn_kv_a_norm) and one
	// rotated key of RopeDim shared by every head; the query is
	// attn_q's (or attn_q_a, its norm and attn_q_b when QLoraRank > 0)
	// HeadDimKMLA floats a head, its last RopeDim rotated. The cache holds
	// the latent as one KV head (MQA): HeadsKV 1, HeadDimK the rotated key
	// then the latent (RopeDim + KVLoraRank), HeadDimV the latent; each
	// head's unrotated query part is multiplied by its attn_k_b into the
	// latent's space, and each head's attention output (a mix of latents)
	// by its attn_v_b into HeadDimVMLA floats before attn_output.
	KVLoraRank, QLoraRank    int
	HeadDimKMLA, HeadDimVMLA int
	// MLAJoined: the file is of the older form, one attn_kv_b holding each
	// head's unrotated key rows then its value rows (llama.cpp
	// decompresses it); attn_v_b's heads are bands of its rows, and
	// attn_k_b is made at load, transposed (Layer.WkBMade).
	MLAJoined bool
	// YarnMScaleAll: YaRN's attention factor takes yarn_log_multiplier as
	// both mscale and mscale_all_dim (llama.cpp's rule for deepseek2),
	// which cancels it out of the RoPE magnitude; the attention scale
	// (KQScale) carries it instead.
	YarnMScaleAll bool
}

// attnOutCols is the width of layer il's attn_output's input: its heads'
// values (with multi-head latent attention, after attn_v_b).
func (c *Config) attnOutCols(il int) int {
	if c.mla() {
		return c.Heads * c.HeadDimVMLA
	}
	return c.LayerHeads(il) * c.HeadDimV
}

// LayerHeads is layer il's query heads.
func (c *Config) LayerHeads(il int) int {
	if c.LayerQHeads != nil {
		return c.LayerQHeads[il]
	}
	return c.Heads
}

// ropeStride is the floats of one token's RoPE angles: the widest
// rotation's (a laguna's windowed layers may rotate more dimensions than
// its global ones).
func (c *Config) ropeStride() int { return max(c.RopeDim, c.RopeDimSWA) }

// angles is token t's RoPE angles in a pass's table cs.
func (c *Config) angles(cs []float32, t int) []float32 {
	return cs[t*c.ropeStride() : (t+1)*c.ropeStride()]
}

// mla reports whether the model's attention is multi-head latent
// attention (deepseek2).
func (c *Config) mla() bool { return c.KVLoraRank > 0 }

// mamba reports whether the recurrent layers keep a state sized by the
// SSM fields: Mamba-2 layers, or gated delta-net layers (DeltaNet), whose
// state and output are of the same sizes (recurrentFloats, attnOutWidth).
func (c *Config) mamba() bool { return c.SSMInner > 0 }

// ssmConvWidth is the channels of a Mamba-2 layer's convolution: x, B
// and C.
func (c *Config) ssmConvWidth() int { return c.SSMInner + 2*c.SSMGroups*c.SSMState }

// ssmInProj is the width of a Mamba-2 layer's ssm_in product: z, x, B, C
// and dt.
func (c *Config) ssmInProj() int {
	if c.Mamba1 {
		return mamba1Row(c)
	}
	return 2*c.SSMInner + 2*c.SSMGroups*c.SSMState + c.SSMHeads
}

// deltaInProj is the width of a gated delta-net layer's input products:
// the convolution's q, k and v channels, then z (SSMInner), β and α
// (SSMHeads each; KDA: α SSMInner).
func (c *Config) deltaInProj() int {
	if c.KDA {
		return c.ssmConvWidth() + 2*c.SSMInner + c.SSMHeads // α is a decay a key element
	}
	return c.ssmConvWidth() + c.SSMInner + 2*c.SSMHeads
}

// Gating is the function that turns a router's logits into expert
// probabilities, numbered as llama.cpp's llama_expert_gating_func_type.
type Gating uint8

const (
	// GatingSoftmax: the softmax over all experts; the k most probable
	// are chosen and weighted by their probability.
	GatingSoftmax Gating = 1
	// GatingSigmoid: each expert's sigmoid, independently of the others
	// (lfm2moe).
	GatingSigmoid Gating = 2
	// GatingSoftmaxWeight: the logits choose as they are, and the chosen
	// ones' weights are the softmax of their logits alone (gpt-oss), not
	// their share of a softmax over all experts.
	GatingSoftmaxWeight Gating = 3
)

// ExpertLayer reports whether layer il's feed-forward is a mixture of
// experts: in an expert model, every layer after the DenseLead dense ones
// (with SingleOp, every feed-forward layer; with MoEEvery, every
// MoEEvery-th from layer 1).
func (c *Config) ExpertLayer(il int) bool {
	if c.SingleOp {
		return c.Experts > 0 && c.FFNLayer(il) // nemotron_h_moe: its feed-forwards
	}
	if c.MoELayers != nil {
		return il < len(c.MoELayers) && c.MoELayers[il]
	}
	if c.MoEEvery > 0 {
		return c.Experts > 0 && il%c.MoEEvery == 1
	}
	return c.Experts > 0 && il >= c.DenseLead
}

// expertMats is how many matrices an expert has: gate, up and down, or
// up and down without a gate (ReLU2, GELUExperts).
func (c *Config) expertMats() int {
	if c.ReLU2 || c.GELUExperts {
		return 2
	}
	return 3
}

// denseLayers reports whether some layer has a dense feed-forward (Gemma
// 4's expert layers each have one beside their experts; jamba's layers
// without a router; nomic-bert-moe's between its expert layers).
func (c *Config) denseLayers() bool {
	return c.Experts == 0 || c.DenseLead > 0 || c.HeadDimSWA > 0 || c.MoEEvery > 0 || slices.Contains(c.MoELayers, false)
}

// expertLayers is the number of layers with experts.
func (c *Config) expertLayers() int {
	n := 0
	for il := range c.Layers {
		if c.ExpertLayer(il) {
			n++
		}
	}
	return n
}

// ConvLayer reports whether layer il is a short-convolution layer.
func (c *Config) ConvLayer(il int) bool { return il < len(c.ConvLayers) && c.ConvLayers[il] }

// FFNLayer reports whether layer il is a feed-forward alone (SingleOp:
// its feed_forward_length is above 0).
func (c *Config) FFNLayer(il int) bool { return c.SingleOp && c.layerFFN(il) > 0 }

// mixerOnly reports whether recurrent layer il replaces attention
// (every hybrid but falcon-h1, whose Mamba-2 mixers run beside it).
func (c *Config) mixerOnly(il int) bool { return c.ConvLayer(il) && !c.ParallelSSM }

// noKV reports whether layer il keeps no keys and values of its own
// kind: a recurrent layer that does not attend, a feed-forward alone, a
// layer without query or KV heads (Config.LayerQHeads), or one dropped
// (Config.DropFFNFree).
func (c *Config) noKV(il int) bool {
	return c.mixerOnly(il) || c.FFNLayer(il) || !c.attends(il) || c.droppedLayer(il)
}

// KVLayer is layer il's index in the KV cache, which holds the attention
// layers that keep keys and values only: il itself unless some layers are
// convolutions (or feed-forwards alone), or the index of the layer whose
// cache il shares.
func (c *Config) KVLayer(il int) int {
	if !c.OwnsKV(il) {
		il = c.KVSource(il)
	}
	n := 0
	for i := range il {
		if c.noKV(i) {
			n++
		}
	}
	return il - n
}

// recurrentIndex is recurrent layer il's index among the recurrent
// layers: where its state lies in the recurrent state.
func (c *Config) recurrentIndex(il int) int {
	n := 0
	for i := range min(il, len(c.ConvLayers)) {
		if c.ConvLayers[i] {
			n++
		}
	}
	return n
}

// KVLayers is how many layers the KV cache holds: those that attend,
// once for each run of a looped stack (Loops).
func (c *Config) KVLayers() int { return c.runKVLayers() * c.loops() }

// runKVLayers is how many cache layers one run of the stack fills.
func (c *Config) runKVLayers() int {
	if c.KVFrom > 0 {
		return c.KVFrom
	}
	n := 0
	for il := range c.Layers {
		if !c.noKV(il) {
			n++
		}
	}
	return n
}

// loops is how many times a pass runs the stack of blocks (Loops).
func (c *Config) loops() int { return max(c.Loops, 1) }

// OwnsKV reports whether layer il stores its own keys and values.
func (c *Config) OwnsKV(il int) bool { return c.KVFrom <= 0 || il < c.KVFrom }

// KVSource is the layer whose keys and values a layer from KVFrom on
// attends over: the last one before KVFrom of its kind, which llama.cpp
// places at KVFrom-1 for a global layer and KVFrom-2 for a windowed one
// (the config checks that those layers are of that kind).
func (c *Config) KVSource(il int) int {
	if c.WindowedLayer(il) {
		return c.KVFrom - 2
	}
	return c.KVFrom - 1
}

// modelLayer is the layer whose KV cache index is kl (KVLayer's inverse),
// whichever run of a looped stack filled it.
func (c *Config) modelLayer(kl int) int {
	if c.Loops > 1 {
		kl %= max(c.runKVLayers(), 1)
	}
	for il := range c.Layers {
		if !c.noKV(il) {
			if kl == 0 {
				return il
			}
			kl--
		}
	}
	return -1
}

// convCount is the number of short-convolution layers.
func (c *Config) convCount() int {
	n := 0
	for _, conv := range c.ConvLayers {
		if conv {
			n++
		}
	}
	return n
}

// WindowedLayer reports whether layer il uses the sliding window. It needs
// only Window, FullEvery and SWALayers, so a Config literal with just the
// KV shape and Window answers as Gemma-2 does.
func (c *Config) WindowedLayer(il int) bool {
	switch {
	case c.Window <= 0:
		return false
	case c.SWALayers != nil:
		return il < len(c.SWALayers) && c.SWALayers[il]
	}
	p := c.FullEvery
	if p == 0 {
		p = 2
	}
	return il%p < p-1
}

// anyWindowed reports whether some layer uses the sliding window.
func (c *Config) anyWindowed() bool {
	for il := range c.Layers {
		if c.WindowedLayer(il) {
			return true
		}
	}
	return false
}

// EmbeddingOnly reports whether the model makes embeddings and no logits:
// an encoder, or a decoder-style stack without an output matrix.
func (c *Config) EmbeddingOnly() bool { return c.Encoder || c.NoHead }

// rowsAttention reports whether the attention runs over the pass's own
// float32 keys and values and stores nothing in the cache: an ALiBi
// encoder's (jina-bert-v2), as llama.cpp's encoder runs without a cache.
func (c *Config) rowsAttention() bool { return c.ALiBi != nil && c.Encoder }

// RopeLayer reports whether layer il rotates its queries and keys: not
// with learned positions (AbsPositions), nor in the NoRopeEvery-th layers
// (with NoRopeLead, the first of every NoRopeEvery), nor, with
// NoRopeGlobal, in the global layers past the leading dense ones.
func (c *Config) RopeLayer(il int) bool {
	switch {
	case c.AbsPositions, c.ALiBi != nil:
		return false
	case c.NoRopeGlobal && il >= c.DenseLead && !c.WindowedLayer(il):
		return false
	case c.NoRopeEvery <= 0:
		return true
	case c.NoRopeLead:
		return il%c.NoRopeEvery != 0
	}
	return (il+1)%c.NoRopeEvery != 0
}

// PositionLimit is the most positions one sequence may take: the trained
// context of a model of learned positions (AbsPositions: position_embd has
// no row past it), else 0, no limit.
func (c *Config) PositionLimit() int {
	if c.AbsPositions {
		return c.Context
	}
	return 0
}

// Bounds on metadata values. They are far above any released model; what
// they guard against is a file whose sizes overflow the products computed
// from them (KV cache, scratch) or ask for absurd allocations.
const (
	maxCount      = 1 << 24 // any count or length: layers, heads, widths, context
	maxHeadDim    = 1 << 16 // attention.key_length, attention.value_length
	maxAttnWidth  = 1 << 20 // head_count × head size
	maxKVPerToken = 1 << 32 // KV elements one token adds over all layers
	maxExperts    = 1 << 12 // expert_count (llama.cpp's limit is 512)
)

// meta reads one architecture's metadata keys ("<arch>.<key>"). The first
// error sticks: later reads return zero values, so a hook reads all its
// keys and the caller checks err once.
type meta struct {
	f      *gguf.File
	arch   string
	layers int
	err    error
	// varied: per-layer arrays may differ between layers, and num reads
	// their largest value (Arch.PerLayerSizes; the hook reads the arrays).
	varied bool
}

func (m *meta) key(k string) string { return m.arch + "." + k }

func (m *meta) has(k string) bool { _, ok := m.f.Get(m.key(k)); return ok }

// fail records a bad-model error (the first one).
func (m *meta) fail(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf("model: "+format+": %w", append(args, ErrBadModel)...)
	}
}

// num reads a positive integer of at most limit; def < 0 makes the key
// required. llama.cpp lets some keys hold one value per layer: such an
// array is accepted when every layer has the same value.
func (m *meta) num(k string, limit, def int, perLayer bool) int {
	if m.err != nil {
		return 0
	}
	name := m.key(k)
	raw, present := m.f.Get(name)
	if !present {
		if def < 0 {
			m.fail("%s missing", name)
		}
		return max(def, 0)
	}
	var v uint64
	if u, ok := m.f.Uint(name); ok {
		v = u
	} else if xs, ok := m.f.Int32s(name); ok && perLayer && len(xs) > 0 {
		if len(xs) != m.layers {
			m.fail("%s has %d per-layer values for %d layers (block_count)", name, len(xs), m.layers)
			return 0
		}
		if m.varied {
			xs = []int32{slices.Max(xs)}
		}
		for _, x := range xs {
			if x != xs[0] {
				m.err = fmt.Errorf("model: %s differs between layers (%d and %d): models with per-layer sizes are not supported: %w",
					name, xs[0], x, ErrUnsupportedArch)
				return 0
			}
		}
		if xs[0] < 0 {
			m.fail("%s = %d out of range [1, %d]", name, xs[0], limit)
			return 0
		}
		v = uint64(xs[0])
	} else {
		m.fail("%s is %s, want a non-negative integer", name, describe(raw))
		return 0
	}
	if v == 0 || v > uint64(limit) {
		m.fail("%s = %d out of range [1, %d]", name, v, limit)
		return 0
	}
	return int(v)
}

// real reads a float; present values must be numbers.
func (m *meta) real(k string, def float32) float32 {
	return float32(metaValue(m, k, float64(def), m.f.Float, "a number"))
}

// flag reads a bool; present values must be bools.
func (m *meta) flag(k string, def bool) bool {
	return metaValue(m, k, def, m.f.Bool, "a bool")
}

// metaValue reads key k with get: def when the file lacks it; a value get
// cannot read fails the model (want names what it should be) and gives the
// zero value, as does a reader that has already failed.
func metaValue[T any](m *meta, k string, def T, get func(key string) (T, bool), want string) T {
	var zero T
	if m.err != nil {
		return zero
	}
	raw, present := m.f.Get(m.key(k))
	if !present {
		return def
	}
	v, ok := get(m.key(k))
	if !ok {
		m.fail("%s is %s, want %s", m.key(k), describe(raw), want)
		return zero
	}
	return v
}

// yarn reads YaRN's keys into c, with llama.cpp's defaults: the
// extrapolation mix (yarn_ext_factor; unset, 1), the correction dims'
// bounds (yarn_beta_fast 32, yarn_beta_slow 1) and yarn_log_multiplier,
// which Mistral's converter writes as mscale_all_dim itself (DeepSeek's
// writes a tenth of it, which deepseek2Hparams undoes, as llama.cpp does
// for deepseek2 alone).
func (m *meta) yarn(c *Config) error {
	c.YarnLogMul = m.finite("rope.scaling.yarn_log_multiplier", 0)
	c.YarnExt = m.real("rope.scaling.yarn_ext_factor", -1)
	if c.YarnExt < 0 {
		c.YarnExt = 1
	}
	c.YarnBetaFast = m.positive("rope.scaling.yarn_beta_fast", 32)
	c.YarnBetaSlow = m.positive("rope.scaling.yarn_beta_slow", 1)
	if m.err == nil && !(c.YarnExt <= 1) {
		m.fail("%s = %v, want a number from 0 to 1", m.key("rope.scaling.yarn_ext_factor"), c.YarnExt)
	}
	return m.err
}

// RopeMScale is what multiplies the RoPE cosines and sines of the full
// layers, as llama.cpp's context computes its attn_factor: LongRoPE's
// attention factor (rope.scaling.attn_factor); with YaRN also
// get_mscale(factor) = 1 + 0.1·ln(factor), divided by the 1 + 0.1·ln(factor)
// ggml's rope multiplies by again (llama.cpp's cancellation), in float32
// in llama.cpp's order.
func (c *Config) RopeMScale() float32 {
	ms := float32(1)
	if c.YarnExt != 0 {
		factor := 1 / (1 / c.RopeScale) // llama.cpp: 1/freq_scale, freq_scale = 1/factor
		mscale := func(m float32) float32 {
			if factor <= 1 {
				return 1
			}
			return 0.1*m*float32(math.Log(float64(factor))) + 1
		}
		ms = mscale(1)
		if c.YarnLogMul != 0 {
			m := float32(1)
			if c.YarnMScaleAll && c.YarnLogMul != 1 {
				m = c.YarnLogMul
			}
			ms = mscale(m) / mscale(c.YarnLogMul)
		}
		ms *= 1 / (1 + 0.1*float32(math.Log(float64(factor))))
	}
	return ms * c.RopeAttnFactor
}

// AttnTemp is the factor AttnTempScale multiplies a query at position pos
// by, as llama.cpp computes it (in float64, then float32).
func (c *Config) AttnTemp(pos int) float32 {
	floor := c.AttnTempFloor
	if floor == 0 {
		floor = c.RopeOrigContext
	}
	return float32(math.Log(math.Floor((float64(pos)+float64(c.AttnTempOffset))/float64(floor))+1)*float64(c.AttnTempScale) + 1)
}

// AttnTempLayer reports whether layer il's queries take the attention
// temperature (AttnTemp).
func (c *Config) AttnTempLayer(il int) bool {
	return c.AttnTempScale != 0 && !(c.AttnTempNoPE && c.RopeLayer(il))
}

// finite reads a float that must be finite.
func (m *meta) finite(k string, def float32) float32 {
	v := m.real(k, def)
	if m.err == nil && (math.IsNaN(float64(v)) || math.IsInf(float64(v), 0)) {
		m.fail("%s = %v, want a finite number", m.key(k), v)
	}
	return v
}

// positive reads a float that must be finite and above 0.
func (m *meta) positive(k string, def float32) float32 {
	v := m.real(k, def)
	if m.err == nil && !positive(v) {
		m.fail("%s = %v, want a finite number above 0", m.key(k), v)
	}
	return v
}

// softcap reads a soft-capping value: 0 (none) or finite and above 0.
func (m *meta) softcap(k string, def float32) float32 {
	v := m.real(k, def)
	if m.err == nil && v != 0 && !positive(v) {
		m.fail("%s = %v, want 0 (none) or a finite number above 0", m.key(k), v)
	}
	return v
}

// swaPattern reads attention.sliding_window_pattern, when present, into
// c: a period p (every p-th layer global; 0 makes every layer windowed, 1
// none), or one flag per layer (non-zero: windowed), as llama.cpp's
// get_key_or_arr reads it.
func (m *meta) swaPattern(c *Config) {
	k := "attention.sliding_window_pattern"
	raw, present := m.f.Get(m.key(k))
	if !present || m.err != nil {
		return
	}
	if p, ok := m.f.Uint(m.key(k)); ok {
		if p > uint64(maxCount) {
			m.fail("%s = %d out of range [0, %d]", m.key(k), p, maxCount)
			return
		}
		if p == 0 {
			c.SWALayers = make([]bool, c.Layers)
			for i := range c.SWALayers {
				c.SWALayers[i] = true
			}
			return
		}
		c.FullEvery = int(p)
		return
	}
	if flags, ok := m.blockFlags(c, k, raw, "a period or one flag per layer"); ok {
		c.SWALayers = append([]bool(nil), flags...)
	}
}

// blockFlags is layerFlags of one flag for each of c's layers, a list of
// another length refused.
func (m *meta) blockFlags(c *Config, k string, raw any, want string) ([]bool, bool) {
	flags, ok := m.layerFlags(k, raw, want)
	if ok && len(flags) != c.Layers {
		m.fail("%s has %d per-layer values for %d layers (block_count)", m.key(k), len(flags), c.Layers)
		return nil, false
	}
	return flags, ok
}

// layerFlags reads key k's value raw as one flag a layer: bools, or
// integers (non-zero: set); want names what the key should be, for the
// error.
func (m *meta) layerFlags(k string, raw any, want string) ([]bool, bool) {
	if xs, ok := raw.([]bool); ok {
		return xs, true
	}
	ns, ok := m.f.Int32s(m.key(k))
	if !ok {
		m.fail("%s is %s, want %s", m.key(k), describe(raw), want)
		return nil, false
	}
	flags := make([]bool, len(ns))
	for i, n := range ns {
		flags[i] = n != 0
	}
	return flags, true
}

// ConfigFromGGUF reads the model configuration from GGUF metadata and
// checks it for consistency. It does not look at tensors; Check does.
// Errors wrap ErrBadModel and name the key at fault, or ErrUnsupportedArch
// for a valid configuration this package does not run (an architecture
// not in Supported(), rope scaling other than linear, per-layer sizes,
// experts in a dense architecture). A file in Ollama's dialect of a model
// llama.cpp names otherwise (its gptoss for gpt-oss) is first rewritten in
// place into llama.cpp's names (see dialect.go).
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	var c Config
	if err := translate(f); err != nil {
		return c, err
	}
	archV, ok := f.Get("general.architecture")
	if !ok {
		return c, fmt.Errorf("model: general.architecture missing: %w", ErrBadModel)
	}
	arch, ok := archV.(string)
	if !ok {
		return c, fmt.Errorf("model: general.architecture is %s, want a string: %w", describe(archV), ErrBadModel)
	}
	c.Arch = arch
	a := LookupArch(arch)
	if a == nil {
		return c, fmt.Errorf("model: architecture %q (supported: %s): %w", arch, strings.Join(Supported(), ", "), ErrUnsupportedArch)
	}
	c.RopeNeox = a.Neox
	c.QKVBias, c.QKNorm, c.PostNorms, c.GELU = a.QKVBias, a.QKNorm || a.OptionalQKNorm, a.PostNorms, a.GELU
	c.Encoder, c.AbsPositions = a.Encoder, a.AbsPositions
	c.NoPreNorm = a.NoPreNorm
	c.Parallel, c.AttnOutGate = a.Parallel, a.AttnOutGate
	c.OptionalFFNNorm = a.OptionalFFNNorm
	c.Sinks, c.ExpertBiases, c.ExpertSelBias = a.Sinks, a.ExpertBiases, a.ExpertSelBias
	c.Name, _ = f.String("general.name")
	if ft, ok := f.Uint("general.file_type"); ok {
		c.FileType = uint32(ft)
	}
	m := &meta{f: f, arch: arch, varied: a.PerLayerSizes}
	key := m.key

	c.Layers = m.num("block_count", maxCount, -1, false)
	m.layers = c.Layers
	if a.QKNormDepth > 0 {
		c.QKNorm = c.Layers >= a.QKNormDepth
	}
	c.Embd = m.num("embedding_length", maxCount, -1, false)
	ffnDef := -1
	if a.FFN == FFNExperts {
		ffnDef = 0 // expert_feed_forward_length is what matters
	}
	if a.NoAttention {
		// The KV cache's placeholder geometry (mambaHparams).
		c.Heads, c.HeadsKV = 1, 1
	} else {
		c.FFN = m.num("feed_forward_length", maxCount, ffnDef, true)
		c.Heads = m.num("attention.head_count", maxCount, -1, true)
	}
	c.Context = m.num("context_length", maxCount, 2048, false)
	switch {
	case a.NoAttention:
	case a.ShortConv:
		m.recurrentLayers(&c, "convolution")
		c.ConvKernel = m.num("shortconv.l_cache", maxConvKernel, -1, false)
		if m.err == nil && c.ConvKernel < 2 {
			m.fail("%s = %d, want at least 2", m.key("shortconv.l_cache"), c.ConvKernel)
		}
	case a.Mamba2:
		m.recurrentLayers(&c, "Mamba-2")
	case a.Mamba1:
		m.recurrentLayers(&c, "Mamba")
	case a.KDA:
		m.recurrentLayers(&c, "Kimi Delta Attention")
	default:
		c.HeadsKV = m.num("attention.head_count_kv", maxCount, c.Heads, true)
	}
	if m.err != nil {
		return c, m.err
	}
	if n, ok := f.Uint(key("expert_count")); ok && n > 0 && a.FFN != FFNExperts && !a.OptionalExperts {
		return c, fmt.Errorf("model: %s = %d: mixture-of-experts %s models are not supported (%s are): %w", key("expert_count"), n, arch, strings.Join(expertArchs(), ", "), ErrUnsupportedArch)
	}
	if c.Heads%c.HeadsKV != 0 {
		return c, fmt.Errorf("model: %s = %d does not divide %s = %d: %w",
			key("attention.head_count_kv"), c.HeadsKV, key("attention.head_count"), c.Heads, ErrBadModel)
	}
	if (!m.has("attention.key_length") || !m.has("attention.value_length")) && c.Embd%c.Heads != 0 {
		return c, fmt.Errorf("model: %s = %d is not a multiple of %s = %d, and %s or %s is not set: %w",
			key("embedding_length"), c.Embd, key("attention.head_count"), c.Heads,
			key("attention.key_length"), key("attention.value_length"), ErrBadModel)
	}
	c.HeadDimK = m.num("attention.key_length", maxHeadDim, c.Embd/c.Heads, false)
	c.HeadDimV = m.num("attention.value_length", maxHeadDim, c.Embd/c.Heads, false)
	if m.err != nil {
		return c, m.err
	}
	for _, d := range []struct {
		k string
		n int
	}{{"attention.key_length", c.HeadDimK}, {"attention.value_length", c.HeadDimV}} {
		if w := int64(c.Heads) * int64(d.n); w > maxAttnWidth {
			return c, fmt.Errorf("model: %s = %d × %s = %d is %d, more than %d: %w",
				key("attention.head_count"), c.Heads, key(d.k), d.n, w, maxAttnWidth, ErrBadModel)
		}
	}
	if n := int64(c.Layers) * int64(c.HeadsKV) * int64(c.HeadDimK+c.HeadDimV); n > maxKVPerToken {
		return c, fmt.Errorf("model: %s = %d × %s = %d × (key + value length %d) is %d KV elements per token, more than %d: %w",
			key("block_count"), c.Layers, key("attention.head_count_kv"), c.HeadsKV, c.HeadDimK+c.HeadDimV, n, int64(maxKVPerToken), ErrBadModel)
	}
	c.RopeDim = m.num("rope.dimension_count", maxHeadDim, c.HeadDimK, false)
	if m.err != nil {
		return c, m.err
	}
	if c.RopeDim > c.HeadDimK || c.RopeDim%2 != 0 {
		return c, fmt.Errorf("model: %s = %d must be even and at most the head size %d: %w",
			key("rope.dimension_count"), c.RopeDim, c.HeadDimK, ErrBadModel)
	}

	c.RMSEps = m.positive("attention.layer_norm_rms_epsilon", 1e-5)
	c.RopeBase = m.positive("rope.freq_base", 10000)
	c.RopeAttnFactor = m.positive("rope.scaling.attn_factor", 1)
	c.RopeOrigContext = m.num("rope.scaling.original_context_length", maxCount, c.Context, false)
	c.Pooling = m.poolingType()
	if m.err != nil {
		return c, m.err
	}
	// As in llama.cpp, scaling is linear unless the type says otherwise,
	// and a factor of 0 (or none) means no scaling. LongRoPE ("longrope")
	// is factors and an attention factor, read above and with the tensors.
	c.RopeScale = 1
	scaling := "linear"
	if v, ok := f.Get(key("rope.scaling.type")); ok {
		if scaling, ok = v.(string); !ok {
			return c, fmt.Errorf("model: %s is %s, want a string: %w", key("rope.scaling.type"), describe(v), ErrBadModel)
		}
	}
	switch scaling {
	case "none", "":
	case "linear", "longrope", "yarn":
		factorKey := "rope.scaling.factor"
		if !m.has(factorKey) {
			factorKey = "rope.scale_linear"
		}
		factor := m.real(factorKey, 0)
		if m.err != nil {
			return c, m.err
		}
		if factor != 0 {
			if !positive(factor) {
				return c, fmt.Errorf("model: %s = %v, want a finite number above 0: %w", key(factorKey), factor, ErrBadModel)
			}
			c.RopeScale = factor
		}
		if scaling == "yarn" {
			if err := m.yarn(&c); err != nil {
				return c, err
			}
		}
	default:
		return c, fmt.Errorf("model: %s %q is not supported (linear, longrope and yarn only): %w", key("rope.scaling.type"), scaling, ErrUnsupportedArch)
	}
	c.RopeBaseSWA, c.RopeScaleSWA = c.RopeBase, c.RopeScale
	c.KQScale = invSqrt(c.HeadDimK)
	if a.EmbedScale {
		c.EmbedScale = float32(math.Sqrt(float64(c.Embd)))
	}
	if a.hparams != nil {
		a.hparams(&c, m)
		if m.err != nil {
			return c, m.err
		}
	}
	return c, nil
}

// nextN reads nextn_predict_layers (optional, 0 when absent) and takes
// those blocks off c.Layers into c.NextN; at least one block must be
// left to run.
func (m *meta) nextN(c *Config) {
	n := m.count("nextn_predict_layers", maxCount)
	if m.err == nil && n >= c.Layers {
		m.fail("%s = %d leaves no layer of %s = %d", m.key("nextn_predict_layers"), n, m.key("block_count"), c.Layers)
	}
	if m.err == nil {
		c.NextN, c.Layers = n, c.Layers-n
	}
}

// maxConvKernel bounds shortconv.l_cache: the forward pass keeps a
// channel's window on the stack (LFM2's is 3).
const maxConvKernel = 16

// recurrentLayers reads a hybrid model's attention.head_count_kv, one
// value per layer as llama.cpp's converters write it for LFM2 and Granite
// 4.0-H: 0 marks a recurrent layer (kind names it), and the attention
// layers must agree on one count (c.HeadsKV).
func (m *meta) recurrentLayers(c *Config, kind string) {
	name := m.key("attention.head_count_kv")
	xs, ok := m.f.Int32s(name)
	if !ok || len(xs) != c.Layers {
		raw, _ := m.f.Get(name)
		m.fail("%s is %s, want one count per layer (0 for a %s layer) for %d layers", name, describe(raw), kind, c.Layers)
		return
	}
	c.ConvLayers = make([]bool, c.Layers)
	for il, x := range xs {
		switch {
		case x < 0 || x > maxCount:
			m.fail("%s[%d] = %d out of range [0, %d]", name, il, x, maxCount)
			return
		case x == 0:
			c.ConvLayers[il] = true
		case c.HeadsKV != 0 && int(x) != c.HeadsKV:
			m.err = fmt.Errorf("model: %s differs between attention layers (%d and %d): %w", name, c.HeadsKV, x, ErrUnsupportedArch)
			return
		default:
			c.HeadsKV = int(x)
		}
	}
	if c.HeadsKV == 0 {
		m.fail("%s is 0 in every layer: no layer attends", name)
	}
}

// positive reports whether x is finite and above 0.
func positive(x float32) bool { return x > 0 && !math.IsInf(float64(x), 1) }

// describe names a metadata value's type for an error, without printing a
// possibly huge array.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("the string %q", x)
	case bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32, float64:
		return fmt.Sprintf("%T %v", v, v)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		return fmt.Sprintf("an array of %d (%T)", rv.Len(), v)
	}
	return fmt.Sprintf("%T", v)
}
