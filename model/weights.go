package model

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/tensor"
)

// Layer holds one transformer block's weights. Matrices are views into the
// mapped file; norm weights and biases are small and copied to float32.
// Fields an architecture does not have are nil.
type Layer struct {
	AttnNorm     []float32
	Wq, Wk, Wv   *ops.Matrix // separate projections; nil when Wqkv is set
	Wqkv         *ops.Matrix // fused projection (phi3): query rows, key rows, value rows
	Wo           *ops.Matrix
	Bq, Bk, Bv   []float32 // qwen2
	QNorm, KNorm []float32 // per-head RMSNorm weights, HeadDimK each (qwen3, gemma3)
	// QNormB and KNormB make QNorm and KNorm LayerNorms over the whole
	// query and key rows, with these biases (jina-bert-v2).
	QNormB, KNormB []float32
	PostAttnNorm   []float32 // gemma
	FFNNorm        []float32
	Gate, Up       *ops.Matrix // separate gate and up; nil when GateUp is set
	GateUp         *ops.Matrix // fused (phi3): FFN gate rows, then FFN up rows
	Down           *ops.Matrix
	PostFFNNorm    []float32 // gemma

	// A short-convolution layer's (lfm2; Config.ConvLayer): in_proj (Embd
	// → B, C and x, Embd each), the depthwise kernel (ConvKernel taps per
	// channel, channel after channel, oldest tap first) and out_proj.
	// A Mamba-2 layer's (granitehybrid) are ssm_in (Embd → z, x, B, C, dt)
	// in ConvIn, ssm_out (SSMInner → Embd) in ConvOut and the kernel
	// ssm_conv1d (SSMConv taps per channel of x, B and C) in ConvW, with
	// the kernel's bias (nil when the file has none), the time steps'
	// bias, A and D (one per head) and the gated norm's weight (SSMInner).
	ConvIn, ConvOut *ops.Matrix
	ConvW           []float32
	ConvB           []float32
	SSMDtB          []float32
	SSMA, SSMD      []float32
	SSMNorm         []float32
	// A Mamba-1 layer's (jamba; Config.Mamba1) are ssm_in (Embd → x, z)
	// in ConvIn, ssm_out in ConvOut, the kernel of x's channels and its
	// bias in ConvW and ConvB, and ssm_x (SSMInner → the time step's rank,
	// B and C) and ssm_dt (the rank → SSMInner) here; SSMDtB and SSMD
	// have one value a channel, SSMA SSMState a channel. Jamba's norms of
	// the time step's rank, B and C are SSMDtNorm, SSMBNorm and SSMCNorm
	// (nil without them).
	SSMX, SSMDt                   *ops.Matrix
	SSMDtNorm, SSMBNorm, SSMCNorm []float32
	// A gated delta-net layer's (qwen35) are attn_qkv in ConvIn, ssm_out
	// in ConvOut, ssm_conv1d in ConvW, ssm_dt.bias, ssm_a and ssm_norm
	// (SSMState, shared by the heads) as Mamba-2's, and attn_gate (Embd →
	// z), ssm_beta and ssm_alpha (Embd → one a value head) here.
	WZ, WBeta, WAlpha *ops.Matrix
	// A Kimi Delta Attention layer's (Config.KDA; its q, k and v are Wq,
	// Wk and Wv, ssm_beta WBeta, attn_output ConvOut, the three kernels
	// ConvW): the decay's low-rank pair ssm_f_a and ssm_f_b and the output
	// gate's, ssm_g_a and ssm_g_b.
	KDAFA, KDAFB, KDAGA, KDAGB *ops.Matrix
	// WOutGate is an afmoe layer's attn_gate (Embd → Heads×HeadDimV), the
	// gate of the attention's output (Config.AttnOutGate).
	WOutGate *ops.Matrix
	// An RWKV-7 block's (rwkv7.go; its receptance, key, value and output
	// are Wq, Wk, Wv and Wo, its channel mix's key and value Up and
	// Down, its norms' weights AttnNorm and FFNNorm): the norms' biases;
	// the low-rank pairs of the decay, the in-context learning rate, the
	// value's mix and the gate, with the first three's biases; the six
	// fused mixes (r, w, k, v, a, g: Embd each), k_k, k_a and r_k; the
	// group norm's weight and bias; the channel mix's lerp.
	AttnNormB, FFNNormB                            []float32
	TMW1, TMW2, TMA1, TMA2, TMV1, TMV2, TMG1, TMG2 *ops.Matrix
	TMW0, TMA0, TMV0                               []float32
	TMLerp, TMKK, TMKA, TMRK                       []float32
	TMLn, TMLnB, CMLerpK                           []float32
	// An RWKV-6 block's besides those it shares with RWKV-7 above (its
	// decay pair time_mix_decay_w1/w2 in TMW1 and TMW2, time_mix_decay in
	// TMW0, the five fused mixes w, k, v, r, g in TMLerp): the
	// data-dependent mix's pair time_mix_w1 (Embd → 5 rows of LoRAMix)
	// and time_mix_w2 (five LoRAMix → Embd matrices, one over the other),
	// its lerp_x, the bonus time_mix_first, the gate, and the channel
	// mix's receptance and its lerp.
	TMMix1, TMMix2, TMGate, CMR *ops.Matrix
	TMLerpX, TMFirst, CMLerpR   []float32

	// An encoder's (bert, nomic-bert): the fused projection's bias, the
	// output projection's and the feed-forward's biases (each nil when the
	// file has none), and the LayerNorms after the attention's residual sum
	// (attn_output_norm) and after the feed-forward's (layer_output_norm),
	// weight and bias.
	Bqkv                        []float32
	Bo, BUp, BDown              []float32
	AttnOutNorm, AttnOutNormB   []float32
	LayerOutNorm, LayerOutNormB []float32
	// AttnNorm2 and its bias, when a jina-bert-v2 block has attn_norm_2:
	// the block's input is added again after attn_output_norm and the sum
	// normalised by it.
	AttnNorm2, AttnNorm2B []float32
	// The biases of a decoder's LayerNorms (Arch.NormBias: starcoder2,
	// nemotron; rwkv7's, declared with its fields above), nil in other
	// models.

	// Router (ffn_gate_inp: Embd → Experts) and the experts of a
	// mixture-of-experts block; Gate, Up, GateUp and Down are nil then.
	Router  *ops.Matrix
	Experts []Expert
	// expertStacks are the block's whole 3-D expert tensors (gate, up,
	// down; Gemma 4's fused gate and up in the gate's place, the up's
	// nil), each viewed as one matrix of every expert's rows in turn:
	// what a resident model repacks into the X8 layout (Model.Repack then
	// gives each expert its slice of the buffer). Products use Experts.
	expertStacks [3]*ops.Matrix
	// The shared expert every token of the block also runs (granitemoe,
	// granitehybrid: Config.SharedFFN), resident like the router.
	ShGate, ShUp, ShDown *ops.Matrix
	// GroveMoE's adjugate experts (Config.ChunkFFN): the 3-D
	// ffn_{gate,up,down}_chexps, each viewed as one matrix of every
	// adjugate expert's rows in turn, resident like the router.
	ChGate, ChUp, ChDown *ops.Matrix
	// ShGateInp is the shared expert's own gate (ffn_gate_inp_shexp, Embd
	// floats; Config.SharedGate): its output is scaled by the sigmoid of
	// this row's product with the token (qwen35moe).
	ShGateInp []float32
	// gpt-oss's (Config.ExpertBiases): the router's bias (Experts floats)
	// and the experts' gate, up and down biases, one row per expert
	// (ExpertFFN, ExpertFFN and Embd floats): kept with the layer, not the
	// expert, so an expert read from disk needs only its matrices.
	BRouter, BGateExps, BUpExps, BDownExps []float32
	// Gemma 4's mixture-of-experts block (gemma4_moe.go), beside its dense
	// feed-forward: the router's input scale (ffn_gate_inp.scale, Embd),
	// the per-expert output scale (ffn_down_exps.scale, one per expert;
	// nil when the file has none), the norm before the experts
	// (pre_ffw_norm_2) and the norms after the dense feed-forward and
	// after the experts (post_ffw_norm_1, post_ffw_norm_2).
	RouterScale, ExpOutScale               []float32
	PreExpNorm, PostDenseNorm, PostExpNorm []float32
	// ExpProbsB is the router's selection bias, one per expert, added to
	// the probabilities that choose the experts but not to their weights
	// (lfm2moe's exp_probs_b; Config.ExpertSelBias).
	ExpProbsB []float32
	// Sinks are the attention sinks, one logit per query head (gpt-oss).
	Sinks []float32
	// XIELU is the layer's activation of a gate-less feed-forward
	// (apertus: Config.XIELU's), or nil.
	XIELU *ops.XIELU

	// Gemma 3n's (gemma3n_config.go): the per-layer input's gate (Embd →
	// PerLayerEmbd), projection back and norm; LAuReL's low-rank pair and
	// norm; AltUp's router (AltUp rows of Embd) and its norm, prediction
	// coefficients (AltUp² rows of AltUp), correction coefficients (AltUp
	// rows of AltUp) and correction scale (Embd).
	InpGate, PLProj, LaurelL, LaurelR    *ops.Matrix
	PLNorm, LaurelNorm                   []float32
	AltRouter, AltRouterNorm, AltPredict []float32
	AltCorrect, AltCorrectScale          []float32
	// OutScale is Gemma 4's layer_output_scale (one float multiplying the
	// block's output), or nil.
	OutScale []float32
	// SkipScale is talkie's layer_output_scale (one float multiplying the
	// normalised embeddings each block adds to its output:
	// Config.EmbedSkip), QGain its attn_q_norm (one float a query head:
	// Config.QHeadGain); nil in other models.
	SkipScale, QGain []float32
	// Multi-head latent attention's (deepseek2; Config.KVLoraRank): the
	// query's low-rank first half and its norm (attn_q_a,
	// attn_q_a_norm; nil when Wq is the whole query projection, and Wq
	// then attn_q_b), the compressed key and value (attn_kv_a_mqa: the
	// latent, then the rotated key) and the latent's norm, and attn_k_b
	// and attn_v_b, each head's matrix one band of rows of a matrix of
	// them all (KVLoraRank rows a head of the unrotated query part;
	// HeadDimVMLA rows a head of the latent).
	WqA, WkvA, WkB, WvB *ops.Matrix
	QANorm, KVANorm     []float32
	// WkBMade is attn_k_b made at load from an older file's attn_kv_b
	// (Config.MLAJoined; WvB is then attn_kv_b itself): each head's key
	// rows transposed, in F16 or Q8_0 (loader.keyHeads), on the heap — not
	// a view of the file, so not among matrices().
	WkBMade *ops.Matrix

	// BitNet's (Arch.SubNorms): the RMSNorm weights of the attention's
	// output before attn_output (Embd) and of the gated activation before
	// ffn_down (FFN), and each projection's one-element .scale, which
	// multiplies its product (nil when the file has none).
	AttnSubNorm, FFNSubNorm                                       []float32
	ScaleQ, ScaleK, ScaleV, ScaleO, ScaleGate, ScaleUp, ScaleDown []float32

	// Start and End bound the layer's tensor bytes in the file, for
	// residency advice and streaming.
	Start, End int64
}

// Expert is one expert of a mixture-of-experts block: the slices of the
// block's 3-D ffn_gate_exps, ffn_up_exps and ffn_down_exps tensors that
// belong to it. Each slice is contiguous in the file, so an expert is three
// byte ranges that can be mapped, advised or read on their own.
type Expert struct {
	// Gate is nil for an expert without one (nemotron_h_moe: ReLU2),
	// whose gate range is empty.
	Gate, Up *ops.Matrix // ExpertFFN × Embd
	Down     *ops.Matrix // Embd × ExpertFFN
	// Ranges are where Gate, Up and Down lie in the file.
	Ranges [3]Range
}

// Range is a byte range of the model file: [Off, Off+Len).
type Range struct{ Off, Len int64 }

// Model is an architecture's configuration plus its weights, shared by
// any number of States.
//
// Config, Blocks, Embed, Output and the norm vectors do not change after
// New, and Forward calls of different States may run at the same time.
// Source and ExpertSource are not fixed: their owner may replace them
// while the model is in use (the root package switches to streaming under
// memory pressure), but only while no Forward is running — Forward reads
// each once per pass and uses what it read for the whole pass, so the
// owner must exclude passes (a lock around Forward) while it swaps them.
type Model struct {
	Config
	Embed     *tensor.Tensor // token_embd, rows are tokens
	OutNorm   []float32
	OutNormB  []float32   // output_norm.bias (rwkv7, Arch.NormBias), or nil
	Output    *ops.Matrix // output, or token_embd when tied
	OutB      []float32   // output.bias, added to the logits (Arch.HeadBias: phi2; Arch.OptionalHeadBias: qwen2), or nil
	RopeFreqs []float32   // Llama 3.1 rope_freqs, or nil
	// RopeLong and RopeShort are LongRoPE's per-pair frequency divisors
	// (phi3 rope_factors_long/short), or nil; see Config.RopeOrigContext.
	RopeLong, RopeShort []float32
	Blocks              []Layer // one per transformer block
	Tied                bool

	// An encoder's embeddings (Config.Encoder): token_embd_norm's weight
	// and bias, row 0 of token_types (nil when the file has none: every
	// token is of type 0, "sentence A", as in llama.cpp); OutNorm and
	// Output are nil. PosEmbed is position_embd, a row per trained
	// position, of any model of learned positions (Arch.AbsPositions:
	// bert, gpt2, starcoder).
	EmbedNorm, EmbedNormB []float32
	TypeEmbed             []float32
	PosEmbed              *tensor.Tensor

	// Gemma 3n's (Config.AltUp): per_layer_token_embd (a row of
	// Layers×PerLayerEmbd a token, read in place like Embed), its
	// projection from the scaled token embedding and that projection's
	// norm; AltUp's projections into and out of streams 1 … AltUp-1.
	PerLayerEmbed          *tensor.Tensor
	PerLayerProj           *ops.Matrix
	PerLayerProjNorm       []float32
	AltUpProj, AltUpUnembd []*ops.Matrix

	// Dense2 and Dense3, when not nil, project an embedding model's pooled
	// vector (Project): Embd to an inner size, then back to Embd.
	Dense2, Dense3 *tensor.Tensor

	// Rank is a reranker's classification head (pooling_type rank); nil
	// for other models.
	Rank *RankHead

	// Source, when set, supplies each block's weights during a forward pass
	// (streaming weights from disk); nil uses Blocks, read in place from the
	// mapped file.
	Source LayerSource
	// ExpertSource, when set, supplies the experts of mixture-of-experts
	// blocks during a forward pass (an expert cache reading cold experts
	// from disk); nil uses the Experts of the Layer the pass is running.
	ExpertSource ExpertSource

	maxX int // widest quantized activation row (see maxXRowBytes)

	// EmbedLoRA lists the adapters' corrections of token_embd's rows
	// (AttachAdapter), nil without any; LoRARank is the widest rank of
	// the adapters' corrections, the floats per token a State keeps for
	// them; loraXRow and loraURow the widest activation rows their
	// factors take (ops.NewLoRAScratch).
	EmbedLoRA          *ops.LoRA
	LoRARank           int
	loraXRow, loraURow int
	// Adapters counts the adapters attached (each one's ops.LoRA.ID is
	// its index), adapterScales their scales.
	Adapters      int
	adapterScales []*ops.LoRAScale
}

// LayerSource supplies layer weights to forward passes, for weights that
// are not all resident. A Model calls Begin before the first layer of a
// pass, Layer(il) for each block in order (it may block until the weights
// are readable), Done(il) when the block is finished, and End after the
// last; passes of different sessions never interleave between Begin and End.
type LayerSource interface {
	Begin()
	Layer(il int) *Layer
	Done(il int)
	End()
}

type loader struct {
	ctx  context.Context // checked before each tensor: Load can be abandoned
	f    *gguf.File
	data []byte
	// dry checks every tensor's presence, shape and type without making
	// views: tensor, matrix and vector return nil values. It counts the
	// floats vector would copy in floats.
	dry    bool
	floats int
	// made counts the bytes of the matrices made at load (keyHeads).
	made int64
	slab []float32 // where vector copies go (sized by a dry run)
	// used names the tensors the dry run looked up, so that it can refuse
	// a file holding others (see unused).
	used map[string]bool
}

func (l *loader) tensor(name string, shape ...int) (*tensor.Tensor, error) {
	if err := l.ctx.Err(); err != nil {
		return nil, fmt.Errorf("model: building tensor %q: %w", name, err)
	}
	ti, ok := l.f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("model: tensor %q missing: %w", name, ErrBadModel)
	}
	l.use(name)
	if !sameDims(ti.Dims, shape) {
		return nil, fmt.Errorf("model: tensor %q has shape %v, want %v: %w", name, ti.Dims, shape, ErrBadModel)
	}
	if !ti.Type.Supported() {
		return nil, fmt.Errorf("model: tensor %q has type %v, which this library cannot compute with: %w", name, ti.Type, quant.ErrUnsupportedType)
	}
	if l.dry {
		return nil, nil
	}
	if ti.Offset < 0 || ti.Size < 0 || ti.Offset+ti.Size > int64(len(l.data)) {
		return nil, fmt.Errorf("model: tensor %q: data [%d, %d) past end of file (%d bytes): %w", name, ti.Offset, ti.Offset+ti.Size, len(l.data), ErrBadModel)
	}
	t, err := tensor.View(name, ti.Type, shape, l.data[ti.Offset:ti.Offset+ti.Size:ti.Offset+ti.Size])
	if err != nil {
		return nil, fmt.Errorf("model: %w: %w", err, ErrBadModel)
	}
	return t, nil
}

// sameDims reports whether a tensor's dims are shape, or shape without
// some of its trailing dims of 1, as ggml (whose tensors always have
// four, padded with 1s) writes them: llama-quantize writes Granite
// 4.0-H's one-group ssm_norm, [d_inner, 1] to the converter, as
// [d_inner]. A file's extra dims are refused, even of 1.
func sameDims(dims []int64, shape []int) bool {
	if len(dims) > len(shape) {
		return false
	}
	for i, s := range shape {
		d := int64(1)
		if i < len(dims) {
			d = dims[i]
		}
		if d != int64(s) {
			return false
		}
	}
	return true
}

func (l *loader) matrix(name string, cols, rows int) (*ops.Matrix, error) {
	t, err := l.tensor(name, cols, rows)
	if err != nil || l.dry {
		if err == nil {
			err = l.checkMatrixType(name)
		}
		return nil, err
	}
	return ops.NewMatrix(t)
}

// stacked views the 3-D tensor name ([cols, rows, n]: n matrices of rows
// × cols one after another) as one matrix of n·rows rows, whose bands of
// rows products take one at a time (ops.Part's Row0 and Rows).
func (l *loader) stacked(name string, cols, rows, n int) (*ops.Matrix, error) {
	t, err := l.tensor(name, cols, rows, n)
	if err != nil || l.dry {
		if err == nil {
			err = l.checkMatrixType(name)
		}
		return nil, err
	}
	v, err := tensor.View(name, t.Type, []int{cols, rows * n}, t.Data)
	if err != nil {
		return nil, fmt.Errorf("model: %w: %w", err, ErrBadModel)
	}
	return ops.NewMatrix(v)
}

// checkMatrixType is the type check ops.NewMatrix makes, for a dry run:
// the type must have a dot product and a tile kernel on this CPU.
func (l *loader) checkMatrixType(name string) error {
	ti, _ := l.f.Tensor(name)
	if _, err := quant.Dot(ti.Type); err != nil {
		return fmt.Errorf("model: tensor %q: %w", name, err)
	}
	if tile, _, _ := quant.Tile(ti.Type); tile == nil {
		return fmt.Errorf("model: tensor %q: no matrix kernel for %v: %w", name, ti.Type, quant.ErrUnsupportedType)
	}
	return nil
}

// vector reads a 1-D tensor of n elements as float32, copied into the
// model's slab of vectors.
func (l *loader) vector(name string, n int) ([]float32, error) {
	t, err := l.tensor(name, n)
	if err != nil {
		return nil, err
	}
	return l.copyRows(name, t, n, 1)
}

// rows reads a 2-D tensor of rows rows of cols elements as float32, row
// after row, copied into the model's slab of vectors.
func (l *loader) rows(name string, cols, rows int) ([]float32, error) {
	t, err := l.tensor(name, cols, rows)
	if err != nil {
		return nil, err
	}
	return l.copyRows(name, t, cols, rows)
}

// flat reads a tensor of shape dims (more than 2) as float32, its
// elements in order, copied into the model's slab of vectors: rows of
// dims[0] (rwkv7's fused mixes, [Embd, 1, 1, 6]).
func (l *loader) flat(name string, dims []int) ([]float32, error) {
	t, err := l.tensor(name, dims...)
	if err != nil {
		return nil, err
	}
	rows := 1
	for _, d := range dims[1:] {
		rows *= d
	}
	if !l.dry {
		if t, err = tensor.View(name, t.Type, []int{dims[0], rows}, t.Data); err != nil {
			return nil, fmt.Errorf("model: %w: %w", err, ErrBadModel)
		}
	}
	return l.copyRows(name, t, dims[0], rows)
}

// stackParts copies the tensors parts (prefix added), each of dims, one after
// another into the model's slab of vectors as float32: every one of them
// is required.
func (l *loader) stackParts(prefix string, parts []string, dims []int) ([]float32, error) {
	n := 1
	for _, d := range dims {
		n *= d
	}
	out, err := l.take(prefix+parts[0], n*len(parts))
	if err != nil {
		return nil, err
	}
	for i, part := range parts {
		t, err := l.tensor(prefix+part, dims...)
		switch {
		case err != nil:
			return nil, err
		case out == nil:
			continue // a dry run: checked, nothing to copy
		}
		if err := quant.Dequantize(t.Type, out[i*n:(i+1)*n], t.Data); err != nil {
			return nil, fmt.Errorf("model: tensor %q: %w", prefix+part, err)
		}
	}
	return out, nil
}

// copyRows copies the first rows rows of t (cols elements each; all of a
// vector is one row) into the model's slab of vectors as float32.
func (l *loader) copyRows(name string, t *tensor.Tensor, cols, rows int) ([]float32, error) {
	out, err := l.take(name, cols*rows)
	if out == nil {
		return nil, err
	}
	for r := range rows {
		if err := quant.Dequantize(t.Type, out[r*cols:(r+1)*cols], t.Row(r)); err != nil {
			return nil, fmt.Errorf("model: tensor %q: %w", name, err)
		}
	}
	return out, nil
}

// experts views the 3-D expert tensor name ([cols, rows, count]) as
// count matrices a part, the slice of each expert split into len(ks)
// equal bands of rows: band j is matrix ks[j] (0 gate, 1 up, 2 down) of
// L.Experts[e]. A separate ffn_gate_exps is one band (ks {0}); a
// fused ffn_gate_up_exps (qwen35moe, Gemma 4) two, each expert's gate rows then its up rows
// (ks {0, 1}), as llama.cpp's build_moe_ffn splits it. It records each
// band's file range in L.Experts[e].Ranges, and the whole tensor in
// L.expertStacks[ks[0]].
func (l *loader) experts(name string, cols, rows, count int, L *Layer, ks ...int) error {
	es := L.Experts
	t, err := l.tensor(name, cols, rows, count)
	if err != nil {
		return err
	}
	if l.dry {
		return l.checkMatrixType(name)
	}
	ti, _ := l.f.Tensor(name)
	per := ti.Size / int64(count)
	band := per / int64(len(ks))
	base, err := tensor.View(name, t.Type, []int{cols, rows / len(ks)}, t.Data[:band:band])
	if err != nil {
		return fmt.Errorf("model: %w: %w", err, ErrBadModel)
	}
	mat, err := ops.NewMatrix(base)
	if err != nil {
		return err
	}
	whole, err := tensor.View(name, t.Type, []int{cols, rows * count}, t.Data)
	if err != nil {
		return fmt.Errorf("model: %w: %w", err, ErrBadModel)
	}
	if L.expertStacks[ks[0]], err = ops.NewMatrix(whole); err != nil {
		return err
	}
	// One allocation each for the headers of all experts' bands.
	tens := make([]tensor.Tensor, count*len(ks))
	mats := make([]ops.Matrix, count*len(ks))
	for e := range count {
		for j, k := range ks {
			i := e*len(ks) + j
			off := int64(e)*per + int64(j)*band
			tens[i] = *base
			tens[i].Data = t.Data[off : off+band : off+band]
			mats[i] = *mat
			mats[i].T = &tens[i]
			es[e].Ranges[k] = Range{Off: ti.Offset + off, Len: band}
			*[3]**ops.Matrix{&es[e].Gate, &es[e].Up, &es[e].Down}[k] = &mats[i]
		}
	}
	return nil
}

// use records that the model reads tensor name (or knowingly passes
// over it).
func (l *loader) use(name string) {
	if l.used != nil {
		l.used[name] = true
	}
}

func (l *loader) has(name string) bool {
	_, ok := l.f.Tensor(name)
	return ok
}

// New builds a Model from a parsed GGUF file and the bytes of the whole
// file (usually a read-only mapping). Weight matrices are views into data;
// nothing large is copied.
func New(f *gguf.File, data []byte) (*Model, error) {
	return NewContext(context.Background(), f, data)
}

// NewContext is New giving up, with an error wrapping ctx.Err(), once ctx
// is done: copying the vectors reads pages of the file scattered through
// it, which a slow disk makes take a while.
func NewContext(ctx context.Context, f *gguf.File, data []byte) (*Model, error) {
	// A dry run first: it checks everything New checks and counts the
	// floats of the copied vectors, which then go in one allocation.
	probe, err := build(ctx, f, nil, true, nil)
	if err != nil {
		return nil, err
	}
	b, err := build(ctx, f, data, false, make([]float32, probe.floats))
	if err != nil {
		return nil, err
	}
	return b.m, nil
}

// Check makes every check New makes — configuration, and the presence,
// shape and type of every tensor — from the file's header alone, without
// tensor data. A memory plan calls it so that a model New would refuse is
// refused before anything is sized from its metadata.
func Check(f *gguf.File) (Config, error) {
	p, err := build(context.Background(), f, nil, true, nil)
	if err != nil {
		return Config{}, err
	}
	return p.m.Config, nil
}

// HeapBytes is the Go heap a Model of the file holds besides its Layer
// headers: every vector New copies to float32 (norms, q/k norms, biases,
// RoPE factors) — in one allocation of exactly 4 bytes an element —, the
// matrix headers of every expert and of Gemma 3n's AltUp projections, and
// the data of the matrices made at load (an older deepseek2 file's
// attn_k_b). A memory plan adds it to the model's
// heap.
func HeapBytes(f *gguf.File) (int64, error) {
	p, err := build(context.Background(), f, nil, true, nil)
	if err != nil {
		return 0, err
	}
	c := &p.m.Config
	n := 4*int64(p.floats) + p.made
	if c.Experts > 0 {
		perExpert := int64(unsafe.Sizeof(Expert{})) + int64(c.expertMats())*int64(unsafe.Sizeof(ops.Matrix{})+unsafe.Sizeof(tensor.Tensor{}))
		n += int64(c.expertLayers()) * int64(c.Experts) * perExpert
	}
	if c.AltUp > 0 {
		// AltUp's projections in and out (Model.AltUpProj, AltUpUnembd).
		n += 2 * int64(c.AltUp-1) * int64(unsafe.Sizeof(ops.Matrix{})+unsafe.Sizeof(tensor.Tensor{})+unsafe.Sizeof(&ops.Matrix{}))
	}
	return n, nil
}

// built is what build makes: the model, and how many floats its vectors
// hold.
type built struct {
	m      *Model
	floats int
	made   int64 // bytes of the matrices made at load
}

func build(ctx context.Context, f *gguf.File, data []byte, dry bool, slab []float32) (*built, error) {
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	arch := LookupArch(cfg.Arch)
	l := &loader{ctx: ctx, f: f, data: data, dry: dry, slab: slab}
	if dry {
		l.used = make(map[string]bool, len(f.Tensors))
	}
	m := &Model{Config: cfg}

	embd, ok := f.Tensor("token_embd.weight")
	if !ok {
		return nil, fmt.Errorf("model: tensor %q missing: %w", "token_embd.weight", ErrBadModel)
	}
	if len(embd.Dims) != 2 || embd.Dims[1] <= 0 || embd.Dims[1] > 1<<24 {
		return nil, fmt.Errorf("model: token_embd.weight has shape %v, want [%d vocabulary]: %w", embd.Dims, cfg.Embd, ErrBadModel)
	}
	m.Vocab = int(embd.Dims[1])
	if err := checkVocab(f, &cfg, m.Vocab); err != nil {
		return nil, err
	}
	if m.Embed, err = l.tensor("token_embd.weight", cfg.Embd, m.Vocab); err != nil {
		return nil, err
	}
	switch {
	case arch.Encoder:
		err = l.encoderEmbeddings(m)
	case arch.NoHead:
		norm := "output_norm.weight"
		if arch.OutputNorm != "" {
			norm = arch.OutputNorm // neo-bert's enc.output_norm, alone as llama.cpp takes it
		}
		m.OutNorm, err = l.vector(norm, m.Embd)
		if err == nil && arch.EmbedNorm {
			m.EmbedNorm, err = l.vector("token_embd_norm.weight", m.Embd)
		}
		if err == nil {
			err = l.dense(m)
		}
	default:
		err = l.output(m, dry)
	}
	if err == nil && arch.EmbedLayerNorm {
		err = l.embedLayerNorm(m)
	}
	if err == nil && arch.AbsPositions {
		// A row per trained position (llama.cpp sizes it by n_ctx_train).
		m.PosEmbed, err = l.tensor("position_embd.weight", cfg.Embd, cfg.Context)
	}
	if err == nil && cfg.rwkv() {
		err = l.rwkvEnds(m)
	}
	if err == nil && cfg.Pooling == PoolingRank {
		m.Rank, err = l.rankHead(&cfg)
	}
	if err == nil && cfg.AltUp > 0 {
		if err = l.laurelRank(&cfg); err == nil {
			m.LaurelRank = cfg.LaurelRank
			err = l.gemma3nGlobals(m)
		}
	}
	if err == nil && cfg.HeadDimSWA > 0 {
		err = l.gemma4Globals(m)
	}
	if err != nil {
		return nil, err
	}
	ropeVec := func(name string) ([]float32, error) {
		if !l.has(name) {
			return nil, nil
		}
		return l.vector(name, cfg.RopeDim/2)
	}
	// Ollama's converter writes a Phi-3 without RoPE scaling with both
	// LongRoPE factor tensors empty (a dimension of 0). They say what an
	// absent tensor says — no factors — so they are read as absent, as if
	// the file were llama.cpp's, which leaves them out (llama.cpp's own
	// loader would refuse their shape).
	factorVec := func(name string) ([]float32, error) {
		if ti, ok := l.f.Tensor(name); ok && slices.Contains(ti.Dims, 0) {
			l.use(name)
			return nil, nil
		}
		return ropeVec(name)
	}
	if arch.NoRopeFreqs {
		// Left unread, so that unused refuses it by name.
	} else if m.RopeFreqs, err = ropeVec("rope_freqs.weight"); err != nil {
		return nil, err
	}
	if cfg.ParallelSSM {
		m.RopeFreqs = nil // llama.cpp's falcon-h1 graph loads it and rotates without it
	}
	if arch.RopeFactors {
		if m.RopeLong, err = factorVec("rope_factors_long.weight"); err != nil {
			return nil, err
		}
		if m.RopeShort, err = factorVec("rope_factors_short.weight"); err != nil {
			return nil, err
		}
	}

	// Every block has several tensors, so a block count above the number
	// of tensors is a lie; refusing it here keeps Blocks from being sized
	// by it.
	if cfg.Layers > len(f.Tensors) {
		return nil, fmt.Errorf("model: %s.block_count = %d, but the file has only %d tensors: %w", cfg.Arch, cfg.Layers, len(f.Tensors), ErrBadModel)
	}
	present := make([]bool, cfg.Layers)
	for i := range f.Tensors {
		if il, ok := blockIndex(f.Tensors[i].Name); ok && il < cfg.Layers {
			present[il] = true
		}
	}
	m.Blocks = make([]Layer, cfg.Layers)
	var ranges [][2]int64
	if !dry {
		ranges = layerRanges(f, cfg.Layers)
	}
	for i := range m.Blocks {
		p := fmt.Sprintf("blk.%d.", i)
		if !present[i] {
			return nil, fmt.Errorf("model: %s.block_count = %d, but the file has no tensors for layer %d (%s*): %w", cfg.Arch, cfg.Layers, i, p, ErrBadModel)
		}
		if !cfg.ExpertLayer(i) && l.has(p+"ffn_gate_inp.weight") {
			if arch.FFN == FFNExperts || arch.OptionalExperts {
				which := fmt.Sprintf("leading_dense_block_count = %d", cfg.DenseLead)
				switch {
				case arch.Encoder:
					which = fmt.Sprintf("moe_every_n_layers = %d", cfg.MoEEvery)
				case cfg.Arch == "llama4":
					which = "interleave_moe_layer_step"
				}
				return nil, fmt.Errorf("model: tensor %q: layer %d has a router, but %s.expert_count = %d and %s make it dense: %w",
					p+"ffn_gate_inp.weight", i, cfg.Arch, cfg.Experts, which, ErrBadModel)
			}
			return nil, fmt.Errorf("model: tensor %q: layer %d of this %s model is mixture-of-experts, which is not supported for %s: %w",
				p+"ffn_gate_inp.weight", i, cfg.Arch, cfg.Arch, ErrUnsupportedArch)
		}
		L := &m.Blocks[i]
		if err := l.refuseRWKV(&cfg, p); err != nil {
			return nil, err
		}
		var bts []blockTensor
		switch {
		case cfg.RWKV7 && cfg.QRWKV:
			bts = arwkv7Tensors(&cfg, i, func(name string) []int64 {
				if ti, ok := l.f.Tensor(p + name); ok {
					return ti.Dims
				}
				return nil
			})
		case cfg.RWKV7:
			bts = rwkv7Tensors(&cfg, i)
		case cfg.QRWKV:
			bts = rwkv6Qwen2Tensors(&cfg, func(name string) bool { return l.has(p + name) })
		case cfg.RWKV6:
			bts = rwkv6Tensors(&cfg)
		case cfg.SingleOp:
			bts = singleOpTensors(&cfg, i, func(name string) bool { return l.has(p + name) })
		case cfg.ConvLayer(i) && cfg.KDA:
			bts = kdaTensors(arch, &cfg, i, func(name string) bool { return l.has(p + name) })
		case cfg.ConvLayer(i) && cfg.DeltaNet:
			bts = deltaNetTensors(arch, &cfg, i, func(name string) bool { return l.has(p + name) })
		case cfg.ParallelSSM:
			has := func(name string) bool { return l.has(p + name) }
			bts = append(blockTensors(arch, &cfg, i, has), ssmMixerTensors(&cfg, has)...)
		case cfg.ConvLayer(i) && cfg.Mamba1:
			bts = mamba1Tensors(arch, &cfg, i, func(name string) bool { return l.has(p + name) })
		case cfg.ConvLayer(i) && cfg.mamba():
			bts = mambaTensors(arch, &cfg, i, func(name string) bool { return l.has(p + name) })
		case cfg.ConvLayer(i):
			bts = convTensors(arch, &cfg, i)
		default:
			bts = blockTensors(arch, &cfg, i, func(name string) bool { return l.has(p + name) })
		}
		if err := refuseVariants(l, p, arch, bts); err != nil {
			return nil, err
		}
		for _, bt := range bts {
			if err := bt.load(l, p, L); err != nil {
				return nil, err
			}
		}
		if err := l.passOverBlock(arch, &cfg, i, p); err != nil {
			return nil, err
		}
		if arch.UnitNorms {
			if L.AttnNorm, err = l.unitNorm(p+"attn_norm.weight", cfg.Embd); err == nil {
				L.FFNNorm, err = l.unitNorm(p+"ffn_norm.weight", cfg.Embd)
			}
			if err != nil {
				return nil, err
			}
		}
		if !dry {
			L.Start, L.End = ranges[i][0], ranges[i][1]
		}
		if cfg.XIELU != nil {
			L.XIELU = &cfg.XIELU[i]
		}
		if cfg.MLAJoined && !cfg.ConvLayer(i) {
			if L.WkBMade, err = l.keyHeads(p+"attn_kv_b.weight", &cfg, L.WvB); err != nil {
				return nil, err
			}
		}
	}
	if err := l.nextNBlocks(arch, &cfg); err != nil {
		return nil, err
	}
	if err := l.unused(&cfg); err != nil {
		return nil, err
	}
	// Check builds without data, and so without matrices.
	for i := range m.Blocks {
		L := &m.Blocks[i]
		L.eachMatrix(func(w *ops.Matrix, _ int) { m.maxX = max(m.maxX, w.XRowBytes) })
		if L.WkBMade != nil {
			m.maxX = max(m.maxX, L.WkBMade.XRowBytes)
		}
	}
	for _, w := range append(append([]*ops.Matrix{m.Output, m.PerLayerProj}, m.AltUpProj...), m.AltUpUnembd...) {
		if w != nil {
			m.maxX = max(m.maxX, w.XRowBytes)
		}
	}
	return &built{m: m, floats: l.floats, made: l.made}, nil
}

// nextNBlocks checks that each NextN block after the cfg.Layers that run
// has the tensors llama.cpp requires there (an ordinary block's and
// arch.NextN's), by name alone: llama.cpp skips them unread
// (TENSOR_SKIP), shapes unchecked, and so does this package.
func (l *loader) nextNBlocks(arch *Arch, cfg *Config) error {
	if arch.NextN == nil || arch.NextNOptional && cfg.NextN > 0 && !l.has(fmt.Sprintf("blk.%d.nextn.eh_proj.weight", cfg.Layers)) {
		return nil
	}
	for il := cfg.Layers; il < cfg.Layers+cfg.NextN; il++ {
		p := fmt.Sprintf("blk.%d.", il)
		names := slices.Clone(arch.NextN)
		for _, bt := range blockTensors(arch, cfg, il, func(name string) bool { return l.has(p + name) }) {
			names = append(names, bt.name)
		}
		for _, name := range names {
			if !l.has(p + name) {
				return fmt.Errorf("model: tensor %q missing: NextN block %d (%s.nextn_predict_layers = %d) needs it, as llama.cpp requires it though neither runs it: %w",
					p+name, il, cfg.Arch, cfg.NextN, ErrBadModel)
			}
		}
	}
	return nil
}

// unused fails, in a dry run, on the first tensor of the file that the
// model does not read: a file with a tensor its architecture has no place
// for is a variant this package does not know (a bias, a norm, a scale it
// would silently run without) or a damaged one, and llama.cpp refuses it
// too ("wrong number of tensors"). The NextN blocks, a vision or audio
// tower (TowerTensor) and what PassedOver names are passed over on
// purpose, as SkippedRanges says.
func (l *loader) unused(cfg *Config) error {
	if l.used == nil {
		return nil
	}
	for i := range l.f.Tensors {
		name := l.f.Tensors[i].Name
		if l.used[name] || TowerTensor(name) || PassedOver(name, cfg) {
			continue
		}
		il, ok := blockIndex(name)
		switch {
		case ok && il >= cfg.Layers && il < cfg.Layers+cfg.NextN:
			continue
		case ok && il >= cfg.Layers || !ok && strings.HasPrefix(name, "blk."):
			return fmt.Errorf("model: tensor %q is not in any of the file's blocks (%s.block_count = %d): %w",
				name, cfg.Arch, cfg.Layers+cfg.NextN, ErrBadModel)
		}
		return fmt.Errorf("model: tensor %q: %s models have no use for it (a variant this library does not run, or a damaged file; llama.cpp refuses it too): %w",
			name, cfg.Arch, ErrUnsupportedArch)
	}
	return nil
}

// passOverBlock marks what block il (prefix p) holds that llama.cpp
// loads and its graph never reads, checking its shape: a Gemma 4 layer
// sharing another's KV cache computes no keys, yet llama.cpp takes its
// attn_k_norm when the file has one; Falcon-40B's attn_norm_2.bias
// without attn_norm_2 itself, which llama.cpp takes apart from it and
// then uses neither; an rwkv6 block's separate lerps beside the fused
// ones, which llama.cpp loads and then runs the fused ones.
func (l *loader) passOverBlock(arch *Arch, c *Config, il int, p string) (err error) {
	switch {
	case c.RWKV6 && !c.QRWKV && l.has(p+"time_mix_lerp_fused.weight"):
		for _, part := range rwkv6LerpParts {
			if err == nil && l.has(p+part) {
				_, err = l.tensor(p+part, c.Embd, 1, 1)
			}
		}
	case c.HeadDimSWA > 0 && !c.OwnsKV(il) && l.has(p+"attn_k_norm.weight"):
		_, err = l.tensor(p+"attn_k_norm.weight", c.LayerHeadDim(il))
	case arch.AttnNorm2 && !l.has(p+"attn_norm_2.weight") && l.has(p+"attn_norm_2.bias"):
		_, err = l.tensor(p+"attn_norm_2.bias", c.Embd)
	}
	return err
}

// clsHeads names, by architecture, the classification head's tensors
// llama.cpp loads when the file has them; its graph reads them only to
// pool by rank (build_pooling).
var clsHeads = map[string][]string{
	"bert":         {"cls.weight", "cls.bias", "cls.output.weight", "cls.output.bias"},
	"jina-bert-v2": {"cls.weight", "cls.bias"},
	"modern-bert":  {"cls.weight", "cls.output.weight", "cls.output.bias", "cls.norm.weight"},
	"neo-bert":     {"cls.weight", "cls.bias", "cls.output.weight", "cls.output.bias"},
	"qwen3":        {"cls.output.weight"},
	"qwen3vl":      {"cls.output.weight"},
}

// PassedOver reports whether the tensor named name, outside the blocks,
// is one llama.cpp loads for a model of configuration c and then never
// reads, and which this package therefore takes without reading:
// gemma-embedding's and llama-embed's output.weight (their graphs end at
// the final norm) and the classification head (cls.*) of a model not
// pooling by rank. No pass reads its bytes (SkippedRanges).
func PassedOver(name string, c *Config) bool {
	if c.Arch == "gemma-embedding" || c.Arch == "llama-embed" {
		return name == "output.weight"
	}
	return c.Pooling != PoolingRank && slices.Contains(clsHeads[c.Arch], name)
}

// SkippedRanges is where the tensors of the blocks after the c.Layers
// that run lie in the file (the NextN blocks), those of a vision or
// audio tower (TowerTensor) and those passed over (PassedOver): bytes no
// pass reads, which a memory plan does not count and residency does not
// read ahead.
func SkippedRanges(f *gguf.File, c *Config) []Range {
	var rs []Range
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if il, ok := blockIndex(t.Name); (ok && il >= c.Layers || TowerTensor(t.Name) || PassedOver(t.Name, c)) && t.Size > 0 {
			rs = append(rs, Range{Off: t.Offset, Len: t.Size})
		}
	}
	return rs
}

// blockVariants are tensors llama.cpp takes in a block when present
// that a block here may have no place for: it must then refuse the file,
// naming the tensor, before it looks up the block's own tensors (a bias
// would be run without; a fused attn_qkv would be reported as a missing
// attn_q). what says what the file has; decoderOnly ones do not apply to
// encoders, which load every bias they have; qkDepth ones only to an
// Arch.QKNormDepth architecture, shallower than that depth (command-r
// below Command R+'s). A variant with fuses is taken in place of those
// tensors: it applies only to a block loading the first of them, and,
// when the block loads them all, only when it has their shape stacked
// (one of another shape is damage, which the loader reports as the
// tensors missing).
var blockVariants = []struct {
	name, what           string
	decoderOnly, qkDepth bool
	fuses                []string
}{
	// llama.cpp's create_tensor_qkv takes it for every architecture
	// whose layers it loads attn_q, attn_k and attn_v for; the loader
	// here takes it in their place (QKVFusedOrSeparate) but for those
	// whose llama.cpp loader or graph cannot (QKVSeparate). First: a
	// fused attn_qkv refused is why its bias has no place either (jais2).
	{name: "attn_qkv.weight", what: "the query, key and value projections fused in one attn_qkv",
		fuses: []string{"attn_q.weight", "attn_k.weight", "attn_v.weight"}},
	{name: "attn_q.bias", what: "biases on that projection", decoderOnly: true},
	{name: "attn_k.bias", what: "biases on that projection", decoderOnly: true},
	{name: "attn_v.bias", what: "biases on that projection", decoderOnly: true},
	// Some loaders take a fused projection's bias, others (falcon's)
	// refuse it.
	{name: "attn_qkv.bias", what: "biases on that projection", decoderOnly: true},
	{name: "attn_output.bias", what: "biases on that projection", decoderOnly: true},
	{name: "ffn_gate.bias", what: "biases on that projection", decoderOnly: true},
	{name: "ffn_up.bias", what: "biases on that projection", decoderOnly: true},
	{name: "ffn_down.bias", what: "biases on that projection", decoderOnly: true},
	{name: "attn_q_norm.weight", what: "Q/K norms and fewer blocks than its depth for them", decoderOnly: true, qkDepth: true},
	{name: "attn_k_norm.weight", what: "Q/K norms and fewer blocks than its depth for them", decoderOnly: true, qkDepth: true},
}

// refuseVariants fails when block p holds a tensor of blockVariants that
// bts, the tensors it loads, do not include.
func refuseVariants(l *loader, p string, arch *Arch, bts []blockTensor) error {
	for _, v := range blockVariants {
		ti, ok := l.f.Tensor(p + v.name)
		if !ok || v.decoderOnly && arch.Encoder || v.qkDepth && arch.QKNormDepth == 0 || slices.ContainsFunc(bts, func(bt blockTensor) bool { return bt.name == v.name }) {
			continue
		}
		if v.fuses != nil {
			// A block without one of them (gemma4's optional attn_v) has
			// no stacked shape to check the variant against.
			dims, all := stackedDims(bts, v.fuses)
			if all && !sameDims(ti.Dims, dims) || !slices.ContainsFunc(bts, func(bt blockTensor) bool { return bt.name == v.fuses[0] }) {
				continue
			}
		}
		return fmt.Errorf("model: tensor %q: %s models with %s are not supported: %w", p+v.name, arch.Name, v.what, ErrUnsupportedArch)
	}
	return nil
}

// stackedDims is the dims of the 2-D tensors names of bts in one, their rows
// one after another; false when bts lacks one or their rows differ in
// length.
func stackedDims(bts []blockTensor, names []string) ([]int, bool) {
	dims := []int{0, 0}
	for _, name := range names {
		i := slices.IndexFunc(bts, func(bt blockTensor) bool { return bt.name == name })
		if i < 0 || len(bts[i].dims) != 2 || dims[1] > 0 && bts[i].dims[0] != dims[0] {
			return nil, false
		}
		dims[0], dims[1] = bts[i].dims[0], dims[1]+bts[i].dims[1]
	}
	return dims, true
}

// dense loads the projection an embedding model may apply to its pooled
// vector (sentence-transformers' Dense modules, which llama.cpp's
// converter writes as dense_2 and dense_3): both or neither, dense_2 from
// the width to some size, dense_3 back to the width.
func (l *loader) dense(m *Model) error {
	has2, has3 := l.has("dense_2.weight"), l.has("dense_3.weight")
	if !has2 && !has3 {
		return nil
	}
	if has2 != has3 {
		return fmt.Errorf("model: dense_2.weight and dense_3.weight come together (the file has only one): %w", ErrBadModel)
	}
	ti, _ := l.f.Tensor("dense_2.weight")
	if len(ti.Dims) != 2 || ti.Dims[1] < 1 || ti.Dims[1] > maxCount {
		return fmt.Errorf("model: tensor %q has shape %v, want [%d, n]: %w", "dense_2.weight", ti.Dims, m.Embd, ErrBadModel)
	}
	mid := int(ti.Dims[1])
	// The converter states the sizes too (llama.cpp sizes the tensors by
	// them): when it does, they must agree.
	for _, k := range []struct {
		key  string
		want int
	}{{"dense_2_feat_in", m.Embd}, {"dense_2_feat_out", mid}, {"dense_3_feat_in", mid}, {"dense_3_feat_out", m.Embd}} {
		name := m.Arch + "." + k.key
		if v, ok := l.f.Get(name); ok {
			if n, ok := l.f.Uint(name); !ok || n != uint64(k.want) {
				return fmt.Errorf("model: %s = %v, but dense_2.weight is %v: %w", name, v, ti.Dims, ErrBadModel)
			}
		}
	}
	var err error
	if m.Dense2, err = l.tensor("dense_2.weight", m.Embd, mid); err != nil {
		return err
	}
	m.Dense3, err = l.tensor("dense_3.weight", mid, m.Embd)
	return err
}

// output loads a decoder's final norm and output matrix: output.weight,
// or the embedding when the file has none (tied).
func (l *loader) output(m *Model, dry bool) (err error) {
	norm := "output_norm.weight"
	if a := LookupArch(m.Arch); a.OutputNorm != "" && (l.has(a.OutputNorm) || !l.has(norm)) {
		// llama.cpp's converter writes lfm2's final norm as
		// token_embd_norm, Ollama's as output_norm: either is taken.
		norm = a.OutputNorm
	}
	if LookupArch(m.Arch).UnitNorms {
		m.OutNorm, err = l.unitNorm("output_norm.weight", m.Embd)
	} else {
		m.OutNorm, err = l.vector(norm, m.Embd)
	}
	if err != nil {
		return err
	}
	if a := LookupArch(m.Arch); a.NormBias && (!a.OptionalNormBias || l.has("output_norm.bias")) {
		if m.OutNormB, err = l.vector("output_norm.bias", m.Embd); err != nil {
			return err
		}
	}
	switch {
	case LookupArch(m.Arch).TiedHead && l.has("output.weight"):
		err = fmt.Errorf("model: tensor %q: %s's output is token_embd.weight, and llama.cpp refuses a file with an output matrix: %w", "output.weight", m.Arch, ErrBadModel)
	case l.has("output.weight"):
		m.Output, err = l.matrix("output.weight", m.Embd, m.Vocab)
	case LookupArch(m.Arch).UntiedOutput:
		err = fmt.Errorf("model: tensor %q missing (%s ties no output to token_embd.weight): %w", "output.weight", m.Arch, ErrBadModel)
	case dry:
		m.Tied = true
		err = l.checkMatrixType("token_embd.weight")
	default:
		m.Tied = true
		m.Output, err = ops.NewMatrix(m.Embed)
	}
	if a := LookupArch(m.Arch); err == nil && (a.HeadBias || a.OptionalHeadBias && l.has("output.bias")) {
		m.OutB, err = l.vector("output.bias", m.Vocab)
	}
	return err
}

// checkVocab checks that the vocabulary the metadata declares has exactly
// the embedding's rows, as llama.cpp requires (it sizes token_embd and
// output by the vocabulary): a token without a row would fail every
// evaluation, and a row without a token could be sampled and have no
// text. The token list's own problems (missing, of another type) are the
// tokenizer's to report.
func checkVocab(f *gguf.File, c *Config, rows int) error {
	if toks, ok := f.Strings("tokenizer.ggml.tokens"); ok && len(toks) != rows {
		return fmt.Errorf("model: tokenizer.ggml.tokens has %d tokens, but token_embd.weight has %d rows: %w", len(toks), rows, ErrBadModel)
	}
	key := c.Arch + ".vocab_size"
	if v, ok := f.Get(key); ok {
		if n, ok := f.Uint(key); !ok || n != uint64(rows) {
			return fmt.Errorf("model: %s = %v, but token_embd.weight has %d rows: %w", key, v, rows, ErrBadModel)
		}
	}
	return nil
}

// eachMatrix calls fn for every matrix of the layer that is set, experts
// included; k is the expert's matrix index (0 gate, 1 up, 2 down) for
// expert matrices and -1 for the others.
func (L *Layer) eachMatrix(fn func(w *ops.Matrix, k int)) {
	for _, p := range L.matrices() {
		if *p != nil {
			fn(*p, -1)
		}
	}
	for e := range L.Experts {
		for k, w := range []*ops.Matrix{L.Experts[e].Gate, L.Experts[e].Up, L.Experts[e].Down} {
			if w != nil {
				fn(w, k)
			}
		}
	}
}

// matrices lists the fields of the layer's matrices (experts aside), set
// or not.
func (L *Layer) matrices() [48]**ops.Matrix {
	return [48]**ops.Matrix{&L.Wq, &L.Wk, &L.Wv, &L.Wqkv, &L.Wo, &L.Gate, &L.Up, &L.GateUp, &L.Down, &L.Router, &L.ConvIn, &L.ConvOut,
		&L.InpGate, &L.PLProj, &L.LaurelL, &L.LaurelR, &L.ShGate, &L.ShUp, &L.ShDown, &L.ChGate, &L.ChUp, &L.ChDown, &L.WqA, &L.WkvA, &L.WkB, &L.WvB,
		&L.WZ, &L.WBeta, &L.WAlpha, &L.WOutGate, &L.SSMX, &L.SSMDt,
		&L.TMW1, &L.TMW2, &L.TMA1, &L.TMA2, &L.TMV1, &L.TMV2, &L.TMG1, &L.TMG2, &L.TMMix1, &L.TMMix2, &L.TMGate, &L.CMR,
		&L.KDAFA, &L.KDAFB, &L.KDAGA, &L.KDAGB}
}

// blockTensor is one tensor of a block: its name after "blk.<i>.", its
// ggml dims (dims[0] is the row length), and the Layer field it fills.
type blockTensor struct {
	name string
	dims []int
	vec  func(L *Layer) *[]float32   // 1-D, or 2-D rows one after another; copied
	mat  func(L *Layer) **ops.Matrix // 2-D, a view (3-D: a stack of matrices, loader.stacked)
	exp  int                         // 3-D experts: 1 gate, 2 up, 3 down, expGateUp both
	// parts name the tensors of dims[:len(dims)-1] each that an older
	// file holds in place of a vec one, stacked along its last dim
	// (rwkv6's five lerps before time_mix_lerp_fused): read into the
	// same layout when the file lacks name and has any of them, or always
	// when name is "" (kimi-linear's three kernels, ConvW's channels).
	parts []string
	// altRows, when not 0, is a second row count a matrix may have,
	// taken when the file's tensor has it (laguna's attn_gate: a row a
	// head, or a row an element), as llama.cpp reads the width from the
	// tensor.
	altRows int
}

func (bt blockTensor) load(l *loader, prefix string, L *Layer) (err error) {
	name := prefix + bt.name
	switch {
	case bt.parts != nil && (bt.name == "" || !l.has(name) && slices.ContainsFunc(bt.parts, func(part string) bool { return l.has(prefix + part) })):
		*bt.vec(L), err = l.stackParts(prefix, bt.parts, bt.dims[:len(bt.dims)-1])
	case bt.vec != nil && len(bt.dims) > 2:
		*bt.vec(L), err = l.flat(name, bt.dims)
	case bt.vec != nil && len(bt.dims) == 2:
		*bt.vec(L), err = l.rows(name, bt.dims[0], bt.dims[1])
	case bt.vec != nil:
		*bt.vec(L), err = l.vector(name, bt.dims[0])
	case bt.mat != nil && len(bt.dims) == 3:
		*bt.mat(L), err = l.stacked(name, bt.dims[0], bt.dims[1], bt.dims[2])
	case bt.mat != nil:
		rows := bt.dims[1]
		if ti, ok := l.f.Tensor(name); ok && bt.altRows != 0 && len(ti.Dims) == 2 && ti.Dims[1] == int64(bt.altRows) {
			rows = bt.altRows
		}
		*bt.mat(L), err = l.matrix(name, bt.dims[0], rows)
	default:
		if L.Experts == nil {
			L.Experts = make([]Expert, bt.dims[2])
		}
		ks := []int{bt.exp - 1}
		if bt.exp == expGateUp {
			ks = []int{0, 1}
		}
		err = l.experts(name, bt.dims[0], bt.dims[1], bt.dims[2], L, ks...)
	}
	return err
}

// expGateUp is blockTensor.exp of a fused ffn_gate_up_exps: each
// expert's gate rows, then its up rows.
const expGateUp = 4

// vecTensor and matTensor describe a block's 1-D and 2-D tensors.
func vecTensor(name string, n int, f func(L *Layer) *[]float32) blockTensor {
	return blockTensor{name: name, dims: []int{n}, vec: f}
}

// rowsTensor describes a block's 2-D tensor copied whole to float32, rows
// rows of cols (the experts' biases, a conv kernel).
func rowsTensor(name string, cols, rows int, f func(L *Layer) *[]float32) blockTensor {
	return blockTensor{name: name, dims: []int{cols, rows}, vec: f}
}

func matTensor(name string, cols, rows int, f func(L *Layer) **ops.Matrix) blockTensor {
	return blockTensor{name: name, dims: []int{cols, rows}, mat: f}
}

// blockTensors lists the tensors every block of architecture a must have,
// in the order they are checked; has says whether the block has a tensor
// (to choose between a fused and a separate layout, and to take an
// encoder's optional biases).
func blockTensors(a *Arch, c *Config, il int, has func(name string) bool) []blockTensor {
	if a.Encoder {
		return encoderTensors(a, c, il, has)
	}
	if c.HeadDimSWA > 0 {
		return gemma4Tensors(c, il, has)
	}
	e, heads := c.Embd, c.LayerHeads(il)
	q, kv, vv := heads*c.HeadDimK, c.LayerHeadsKV(il)*c.HeadDimK, c.LayerHeadsKV(il)*c.HeadDimV
	var ts []blockTensor
	switch {
	case c.attnFree(il):
		// No attention, nor its norm (deci's attention-free layers).
		return append(ts, ffnNormTensors(a, c, il, has)...)
	case a.AttnNorm2 && has("attn_norm_2.weight"):
		// Falcon-40B: attn_norm_2 (its bias optional, as llama.cpp takes
		// it) is the attention's norm, attn_norm the feed-forward's.
		ts = append(ts, vecTensor("attn_norm_2.weight", e, func(L *Layer) *[]float32 { return &L.AttnNorm }),
			vecTensor("attn_norm.weight", e, func(L *Layer) *[]float32 { return &L.FFNNorm }),
			vecTensor("attn_norm.bias", e, func(L *Layer) *[]float32 { return &L.FFNNormB }))
		if has("attn_norm_2.bias") {
			ts = append(ts, vecTensor("attn_norm_2.bias", e, func(L *Layer) *[]float32 { return &L.AttnNormB }))
		}
	default:
		if !a.NoPreNorm && !a.UnitNorms && !(a.EmbedNorm && il == 0) {
			ts = append(ts, vecTensor("attn_norm.weight", e, func(L *Layer) *[]float32 { return &L.AttnNorm }))
		}
		if a.NormBias && (!a.OptionalNormBias || has("attn_norm.bias")) {
			ts = append(ts, vecTensor("attn_norm.bias", e, func(L *Layer) *[]float32 { return &L.AttnNormB }))
		}
	}
	switch {
	case c.outputOnly(il):
		// deci's "linear attention": attn_output alone, Embd wide both
		// ways whatever the heads; llama.cpp loads the optional bias and
		// never adds it.
		ts = append(ts, matTensor("attn_output.weight", e, e, func(L *Layer) **ops.Matrix { return &L.Wo }))
		if a.OptionalBiases && has("attn_output.bias") {
			ts = append(ts, vecTensor("attn_output.bias", e, func(L *Layer) *[]float32 { return &L.Bo }))
		}
		return append(ts, ffnNormTensors(a, c, il, has)...)
	case c.mla():
		ts = append(ts, mlaTensors(c)...)
	default:
		ts = append(ts, qkvTensors(a, c, il, has)...)
	}
	if a.AttnOutGate {
		gate := matTensor("attn_gate.weight", e, heads*c.HeadDimV, func(L *Layer) **ops.Matrix { return &L.WOutGate })
		if c.GateSoftplus {
			gate.altRows = heads // Laguna-XS.2's gate: one a head
		}
		ts = append(ts, gate)
	}
	ts = append(ts, matTensor("attn_output.weight", c.attnOutCols(il), e, func(L *Layer) **ops.Matrix { return &L.Wo }))
	if a.OutBias || a.OptionalBiases && has("attn_output.bias") {
		ts = append(ts, vecTensor("attn_output.bias", e, func(L *Layer) *[]float32 { return &L.Bo }))
	}
	if a.Sinks && (!a.OptionalSinks || has("attn_sinks.weight")) {
		ts = append(ts, vecTensor("attn_sinks.weight", heads, func(L *Layer) *[]float32 { return &L.Sinks }))
	}
	if fusedQKV(a, has) {
		if a.QKVBias || a.OptionalQKVBias && has("attn_qkv.bias") {
			ts = append(ts, vecTensor("attn_qkv.bias", q+kv+vv, func(L *Layer) *[]float32 { return &L.Bqkv }))
		}
	} else if a.QKVBias || a.OptionalQKVBias {
		for _, bt := range []blockTensor{
			vecTensor("attn_q.bias", q, func(L *Layer) *[]float32 { return &L.Bq }),
			vecTensor("attn_k.bias", kv, func(L *Layer) *[]float32 { return &L.Bk }),
			vecTensor("attn_v.bias", vv, func(L *Layer) *[]float32 { return &L.Bv }),
		} {
			if a.QKVBias || has(bt.name) {
				ts = append(ts, bt)
			}
		}
	}
	// Optional norms come in pairs: a block with one must have the other
	// (llama.cpp would run one alone; no released file has one alone).
	if c.QKNorm && (!a.OptionalQKNorm || has("attn_q_norm.weight") || has("attn_k_norm.weight")) {
		qn, kn := vecTensor("attn_q_norm.weight", c.HeadDimK, func(L *Layer) *[]float32 { return &L.QNorm }),
			vecTensor("attn_k_norm.weight", c.HeadDimK, func(L *Layer) *[]float32 { return &L.KNorm })
		switch {
		case c.QKNormFull:
			qn.dims, kn.dims = []int{q}, []int{kv}
		case c.QKLayerNorm:
			// A weight row a head, as llama.cpp's stablelm and command-r
			// loaders shape them.
			qn.dims, kn.dims = []int{c.HeadDimK, c.Heads}, []int{c.HeadDimK, c.HeadsKV}
		}
		ts = append(ts, qn, kn)
	}
	if c.QHeadGain {
		g := rowsTensor("attn_q_norm.weight", 1, heads, func(L *Layer) *[]float32 { return &L.QGain })
		ts = append(ts, g)
	}
	if c.EmbedSkip {
		ts = append(ts, vecTensor("layer_output_scale.weight", 1, func(L *Layer) *[]float32 { return &L.SkipScale }))
	}
	postSuffix := ".weight"
	if a.BarePostNorms {
		postSuffix = ""
	}
	if a.PostNorms {
		ts = append(ts, vecTensor("post_attention_norm"+postSuffix, e, func(L *Layer) *[]float32 { return &L.PostAttnNorm }))
	}
	ts = append(ts, ffnNormTensors(a, c, il, has)...)
	if a.PostNorms {
		ts = append(ts, vecTensor("post_ffw_norm"+postSuffix, e, func(L *Layer) *[]float32 { return &L.PostFFNNorm }))
	}
	if c.AltUp > 0 {
		ts = append(ts, gemma3nTensors(c)...)
	}
	if a.SubNorms {
		ts = append(ts, subNormTensors(c, has)...)
	}
	return ts
}

// ffnNormTensors lists a block's feed-forward with the norm before it
// and its biases; none for a layer without one (Config.LayerFFN's 0).
func ffnNormTensors(a *Arch, c *Config, il int, has func(name string) bool) []blockTensor {
	if c.ffnFree(il) {
		return nil
	}
	var ts []blockTensor
	e := c.Embd
	if !a.NoPreNorm && !a.UnitNorms && !a.Parallel && (!a.OptionalFFNNorm || has("ffn_norm.weight")) {
		name := "ffn_norm.weight"
		if a.FFNNorm != "" {
			name = a.FFNNorm
		}
		ts = append(ts, vecTensor(name, e, func(L *Layer) *[]float32 { return &L.FFNNorm }))
		if a.NormBias && (!a.OptionalFFNNorm && !a.OptionalNormBias || has("ffn_norm.bias")) {
			ts = append(ts, vecTensor("ffn_norm.bias", e, func(L *Layer) *[]float32 { return &L.FFNNormB }))
		}
	}
	ts = append(ts, ffnTensors(a, c, il, has)...)
	for _, bt := range []blockTensor{
		vecTensor("ffn_up.bias", c.layerFFN(il), func(L *Layer) *[]float32 { return &L.BUp }),
		vecTensor("ffn_down.bias", e, func(L *Layer) *[]float32 { return &L.BDown }),
	} {
		if a.FFNBias || a.OptionalBiases && has(bt.name) {
			ts = append(ts, bt)
		}
	}
	return ts
}

// subNormTensors lists a bitnet block's sub norms, required, and the
// projections' scales it has (one element each), as llama.cpp's bitnet
// loader takes them.
func subNormTensors(c *Config, has func(name string) bool) []blockTensor {
	ts := []blockTensor{
		vecTensor("attn_sub_norm.weight", c.Embd, func(L *Layer) *[]float32 { return &L.AttnSubNorm }),
		vecTensor("ffn_sub_norm.weight", c.FFN, func(L *Layer) *[]float32 { return &L.FFNSubNorm }),
	}
	for _, bt := range []blockTensor{
		vecTensor("attn_q.scale", 1, func(L *Layer) *[]float32 { return &L.ScaleQ }),
		vecTensor("attn_k.scale", 1, func(L *Layer) *[]float32 { return &L.ScaleK }),
		vecTensor("attn_v.scale", 1, func(L *Layer) *[]float32 { return &L.ScaleV }),
		vecTensor("attn_output.scale", 1, func(L *Layer) *[]float32 { return &L.ScaleO }),
		vecTensor("ffn_gate.scale", 1, func(L *Layer) *[]float32 { return &L.ScaleGate }),
		vecTensor("ffn_up.scale", 1, func(L *Layer) *[]float32 { return &L.ScaleUp }),
		vecTensor("ffn_down.scale", 1, func(L *Layer) *[]float32 { return &L.ScaleDown }),
	} {
		if has(bt.name) {
			ts = append(ts, bt)
		}
	}
	return ts
}

// convTensors lists the tensors of a short-convolution block (lfm2), as
// llama.cpp's loader takes them: the operator norm, shortconv.in_proj,
// the kernel shortconv.conv ([ConvKernel, Embd]) and out_proj, then the
// feed-forward (dense, or layer il's experts in lfm2moe).
func convTensors(a *Arch, c *Config, il int) []blockTensor {
	e := c.Embd
	return append([]blockTensor{
		vecTensor("attn_norm.weight", e, func(L *Layer) *[]float32 { return &L.AttnNorm }),
		matTensor("shortconv.in_proj.weight", e, 3*e, func(L *Layer) **ops.Matrix { return &L.ConvIn }),
		rowsTensor("shortconv.conv.weight", c.ConvKernel, e, func(L *Layer) *[]float32 { return &L.ConvW }),
		matTensor("shortconv.out_proj.weight", e, e, func(L *Layer) **ops.Matrix { return &L.ConvOut }),
		vecTensor("ffn_norm.weight", e, func(L *Layer) *[]float32 { return &L.FFNNorm }),
	}, ffnTensors(a, c, il, nil)...)
}

// mambaTensors lists the tensors of a Mamba-2 block (granitehybrid), as
// llama.cpp's loader takes them: the operator norm, ssm_in, the kernel
// ssm_conv1d ([SSMConv, x+B+C channels]) and its bias when the file has
// one, the time steps' bias, A and D ([1, heads] each: no ".weight"
// suffix), the gated norm ([SSMInner/groups, groups]) and ssm_out; then
// the feed-forward (dense, or layer il's experts).
func mambaTensors(a *Arch, c *Config, il int, has func(name string) bool) []blockTensor {
	return append(append(ssmTensors(c, has),
		vecTensor("ffn_norm.weight", c.Embd, func(L *Layer) *[]float32 { return &L.FFNNorm }),
	), ffnTensors(a, c, il, has)...)
}

// ssmTensors lists a Mamba-2 block's tensors up to ssm_out: mambaTensors
// without the feed-forward.
func ssmTensors(c *Config, has func(name string) bool) []blockTensor {
	return append([]blockTensor{vecTensor("attn_norm.weight", c.Embd, func(L *Layer) *[]float32 { return &L.AttnNorm })},
		ssmMixerTensors(c, has)...)
}

// ssmMixerTensors lists the Mamba-2 mixer's tensors, ssm_in to ssm_out:
// ssmTensors without the norm before it. falcon-h1's gated norm is
// optional (its mamba_rms_norm), as llama.cpp loads it; granitehybrid's
// and nemotron_h's is required.
func ssmMixerTensors(c *Config, has func(name string) bool) []blockTensor {
	e, cw, h := c.Embd, c.ssmConvWidth(), c.SSMHeads
	ts := []blockTensor{
		matTensor("ssm_in.weight", e, c.ssmInProj(), func(L *Layer) **ops.Matrix { return &L.ConvIn }),
		rowsTensor("ssm_conv1d.weight", c.SSMConv, cw, func(L *Layer) *[]float32 { return &L.ConvW }),
	}
	if has("ssm_conv1d.bias") {
		ts = append(ts, vecTensor("ssm_conv1d.bias", cw, func(L *Layer) *[]float32 { return &L.ConvB }))
	}
	ts = append(ts,
		vecTensor("ssm_dt.bias", h, func(L *Layer) *[]float32 { return &L.SSMDtB }),
		rowsTensor("ssm_a", 1, h, func(L *Layer) *[]float32 { return &L.SSMA }),
		rowsTensor("ssm_d", 1, h, func(L *Layer) *[]float32 { return &L.SSMD }))
	if !c.ParallelSSM || has("ssm_norm.weight") {
		ts = append(ts, rowsTensor("ssm_norm.weight", c.SSMInner/c.SSMGroups, c.SSMGroups, func(L *Layer) *[]float32 { return &L.SSMNorm }))
	}
	return append(ts, matTensor("ssm_out.weight", c.SSMInner, e, func(L *Layer) **ops.Matrix { return &L.ConvOut }))
}

// mlaTensors lists multi-head latent attention's projections and norms
// (Config.KVLoraRank), as llama.cpp's deepseek2 loader takes them: attn_q,
// or attn_q_a, attn_q_a_norm and attn_q_b when QLoraRank is set;
// attn_kv_a_mqa and attn_kv_a_norm; attn_k_b and attn_v_b, one matrix a
// head, or the older form's attn_kv_b (Config.MLAJoined).
func mlaTensors(c *Config) []blockTensor {
	e, h, r := c.Embd, c.Heads, c.KVLoraRank
	q := h * c.HeadDimKMLA
	var ts []blockTensor
	if c.QLoraRank > 0 {
		ts = append(ts,
			matTensor("attn_q_a.weight", e, c.QLoraRank, func(L *Layer) **ops.Matrix { return &L.WqA }),
			vecTensor("attn_q_a_norm.weight", c.QLoraRank, func(L *Layer) *[]float32 { return &L.QANorm }),
			matTensor("attn_q_b.weight", c.QLoraRank, q, func(L *Layer) **ops.Matrix { return &L.Wq }))
	} else {
		ts = append(ts, matTensor("attn_q.weight", e, q, func(L *Layer) **ops.Matrix { return &L.Wq }))
	}
	ts = append(ts,
		matTensor("attn_kv_a_mqa.weight", e, r+c.RopeDim, func(L *Layer) **ops.Matrix { return &L.WkvA }),
		vecTensor("attn_kv_a_norm.weight", r, func(L *Layer) *[]float32 { return &L.KVANorm }))
	if c.MLAJoined {
		return append(ts, matTensor("attn_kv_b.weight", r, h*(c.HeadDimKMLA-c.RopeDim+c.HeadDimVMLA), func(L *Layer) **ops.Matrix { return &L.WvB }))
	}
	return append(ts,
		blockTensor{name: "attn_k_b.weight", dims: []int{c.HeadDimKMLA - c.RopeDim, r, h}, mat: func(L *Layer) **ops.Matrix { return &L.WkB }},
		blockTensor{name: "attn_v_b.weight", dims: []int{r, c.HeadDimVMLA, h}, mat: func(L *Layer) **ops.Matrix { return &L.WvB }})
}

// qkvTensors lists the query, key and value projections: the fused
// attn_qkv when the layout allows it and the block has it, else the three.
func qkvTensors(a *Arch, c *Config, il int, has func(name string) bool) []blockTensor {
	e := c.Embd
	q, kv, vv := c.LayerHeads(il)*c.HeadDimK, c.LayerHeadsKV(il)*c.HeadDimK, c.LayerHeadsKV(il)*c.HeadDimV
	if fusedQKV(a, has) {
		return []blockTensor{matTensor("attn_qkv.weight", e, q+kv+vv, func(L *Layer) **ops.Matrix { return &L.Wqkv })}
	}
	if c.AttnGate {
		q *= 2 // each head's query, then its gate
	}
	return []blockTensor{
		matTensor("attn_q.weight", e, q, func(L *Layer) **ops.Matrix { return &L.Wq }),
		matTensor("attn_k.weight", e, kv, func(L *Layer) **ops.Matrix { return &L.Wk }),
		matTensor("attn_v.weight", e, vv, func(L *Layer) **ops.Matrix { return &L.Wv })}
}

// fusedQKV reports whether a block of layout a holds its query, key and
// value projections (and their biases) fused in attn_qkv.
func fusedQKV(a *Arch, has func(name string) bool) bool {
	return a.QKV == QKVFused || a.QKV == QKVFusedOrSeparate && has("attn_qkv.weight")
}

// ffnTensors lists the feed-forward weights of layer il in layout a.FFN:
// an expert architecture's leading dense layers (Config.DenseLead) have
// the gated layout. has says whether the block has a tensor (for the
// optional selection bias; nil for an architecture without one).
func ffnTensors(a *Arch, c *Config, il int, has func(name string) bool) []blockTensor {
	e, w := c.Embd, c.layerFFN(il)
	layout := a.FFN
	switch {
	case c.ExpertLayer(il):
		layout = FFNExperts
	case layout == FFNExperts:
		layout = FFNGated
	}
	switch layout {
	case FFNFusedGateUp:
		return []blockTensor{
			matTensor("ffn_up.weight", e, 2*w, func(L *Layer) **ops.Matrix { return &L.GateUp }),
			matTensor("ffn_down.weight", w, e, func(L *Layer) **ops.Matrix { return &L.Down })}
	case FFNExperts:
		f, n := c.ExpertFFN, c.Experts
		ts := []blockTensor{
			matTensor("ffn_gate_inp.weight", e, n, func(L *Layer) **ops.Matrix { return &L.Router }),
			{name: "ffn_gate_exps.weight", dims: []int{e, f, n}, exp: 1},
			{name: "ffn_up_exps.weight", dims: []int{e, f, n}, exp: 2},
			{name: "ffn_down_exps.weight", dims: []int{f, e, n}, exp: 3}}
		if c.GELUExperts {
			return append(ts[:1], ts[2:]...) // no gate
		}
		if a.FusedGateUpExps && has != nil && has("ffn_gate_up_exps.weight") {
			// llama.cpp's create_tensor_gate_up_exps: each expert's gate
			// rows, then its up rows, in one tensor.
			ts[1], ts[2] = blockTensor{name: "ffn_gate_up_exps.weight", dims: []int{e, 2 * f, n}, exp: expGateUp}, ts[3]
			ts = ts[:3]
		}
		if a.ExpertBiases {
			ts = append(ts,
				vecTensor("ffn_gate_inp.bias", n, func(L *Layer) *[]float32 { return &L.BRouter }),
				rowsTensor("ffn_gate_exps.bias", f, n, func(L *Layer) *[]float32 { return &L.BGateExps }),
				rowsTensor("ffn_up_exps.bias", f, n, func(L *Layer) *[]float32 { return &L.BUpExps }),
				rowsTensor("ffn_down_exps.bias", e, n, func(L *Layer) *[]float32 { return &L.BDownExps }))
		}
		if a.ExpertSelBias && (!a.OptionalSelBias || has("exp_probs_b.bias")) {
			ts = append(ts, vecTensor("exp_probs_b.bias", n, func(L *Layer) *[]float32 { return &L.ExpProbsB }))
		}
		if cf, cn := c.ChunkFFN, c.Experts/max(c.GroupExperts, 1); cf > 0 {
			ts = append(ts,
				blockTensor{name: "ffn_gate_chexps.weight", dims: []int{e, cf, cn}, mat: func(L *Layer) **ops.Matrix { return &L.ChGate }},
				blockTensor{name: "ffn_up_chexps.weight", dims: []int{e, cf, cn}, mat: func(L *Layer) **ops.Matrix { return &L.ChUp }},
				blockTensor{name: "ffn_down_chexps.weight", dims: []int{cf, e, cn}, mat: func(L *Layer) **ops.Matrix { return &L.ChDown }})
		}
		if sf := c.SharedFFN; sf > 0 {
			ts = append(ts,
				matTensor("ffn_gate_shexp.weight", e, sf, func(L *Layer) **ops.Matrix { return &L.ShGate }),
				matTensor("ffn_up_shexp.weight", e, sf, func(L *Layer) **ops.Matrix { return &L.ShUp }),
				matTensor("ffn_down_shexp.weight", sf, e, func(L *Layer) **ops.Matrix { return &L.ShDown }))
			if c.SharedGate {
				// One row: the converter may write it [Embd] or [Embd, 1].
				ts = append(ts, rowsTensor("ffn_gate_inp_shexp.weight", e, 1, func(L *Layer) *[]float32 { return &L.ShGateInp }))
			}
		}
		return ts
	case FFNSequential:
		return []blockTensor{
			matTensor("ffn_up.weight", e, w, func(L *Layer) **ops.Matrix { return &L.Up }),
			matTensor("ffn_down.weight", w, e, func(L *Layer) **ops.Matrix { return &L.Down })}
	}
	return []blockTensor{
		matTensor("ffn_gate.weight", e, w, func(L *Layer) **ops.Matrix { return &L.Gate }),
		matTensor("ffn_up.weight", e, w, func(L *Layer) **ops.Matrix { return &L.Up }),
		matTensor("ffn_down.weight", w, e, func(L *Layer) **ops.Matrix { return &L.Down })}
}

// layerRanges returns, for each of n blocks, the smallest byte range
// covering every tensor named "blk.<i>.*", in one pass over the tensors
// (a file may hold very many).
func layerRanges(f *gguf.File, n int) [][2]int64 {
	r := make([][2]int64, n)
	for i := range r {
		r[i][0] = -1
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		il, ok := blockIndex(t.Name)
		if !ok || il >= n || t.Size == 0 { // an empty tensor's offset is no byte of the block
			continue
		}
		if r[il][0] < 0 || t.Offset < r[il][0] {
			r[il][0] = t.Offset
		}
		r[il][1] = max(r[il][1], t.Offset+t.Size)
	}
	for i := range r {
		r[i][0] = max(r[i][0], 0)
	}
	return r
}

// blockIndex parses the block number of a tensor named "blk.<i>.<rest>".
func blockIndex(name string) (int, bool) {
	const prefix = "blk."
	if len(name) <= len(prefix) || name[:len(prefix)] != prefix {
		return 0, false
	}
	il := 0
	for k := len(prefix); k < len(name); k++ {
		c := name[k]
		switch {
		case c == '.' && k > len(prefix):
			return il, true
		case c < '0' || c > '9' || il > maxCount:
			return 0, false
		}
		il = il*10 + int(c-'0')
	}
	return 0, false
}

// WeightBytes is the total size of every tensor in the file.
func WeightBytes(f *gguf.File) int64 {
	var n int64
	for _, t := range f.Tensors {
		n += t.Size
	}
	return n
}

// unitNorm is the weight of a LayerNorm without one (Arch.UnitNorms): n
// ones in the model's slab of vectors, which leave each normalised value
// as ggml_norm leaves it. Each norm has its own, as each norm read from a
// file has, so that a model's vectors are its slab alone.
func (l *loader) unitNorm(name string, n int) ([]float32, error) {
	out, err := l.take(name, n)
	for i := range out {
		out[i] = 1
	}
	return out, err
}

// take counts n floats of the model's slab of vectors for the vector
// name and, unless the build is dry (which only counts), takes them from
// the slab: nil when dry or on error.
func (l *loader) take(name string, n int) ([]float32, error) {
	l.floats += n
	if l.dry {
		return nil, nil
	}
	if len(l.slab) < n {
		return nil, fmt.Errorf("model: tensor %q: vector slab exhausted (loader bug): %w", name, ErrBadModel)
	}
	out := l.slab[:n:n]
	l.slab = l.slab[n:]
	return out, nil
}
