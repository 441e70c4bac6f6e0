package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/lowmem/llm/quant"
)

// fileType is a -type value: llama.cpp's llama_ftype and the default type
// of the 2-D weights, which the per-tensor rules start from.
type fileType struct {
	Name  string
	Ftype uint32 // general.file_type (llama_ftype)
	Base  quant.Type
}

var fileTypes = []fileType{
	{"f16", 1, quant.F16},
	{"q8_0", 7, quant.Q8_0},
	{"q4_0", 2, quant.Q4_0},
	{"q4_k_m", 15, quant.Q4_K},
	{"q3_k_m", 12, quant.Q3_K},
	{"q2_k", 10, quant.Q2_K},
	{"iq4_xs", 30, quant.IQ4_XS},
	{"iq4_nl", 25, quant.IQ4_NL},
	{"iq3_s", 26, quant.IQ3_S},
	// gpt-oss's mix: the expert tensors MXFP4, every other matrix Q8_0.
	{"mxfp4_moe", 38, quant.Q8_0},
	// The lattice types, which llama-quantize makes only with an
	// importance matrix (IQ3_XXS can do without one but is made with one;
	// its mix here is the one with): see latticeType.
	{"iq3_xxs", 23, quant.IQ3_XXS},
	{"iq2_m", 29, quant.IQ2_S},
	{"iq2_s", 28, quant.IQ2_XS},
	{"iq2_xs", 20, quant.IQ2_XS},
	{"iq2_xxs", 19, quant.IQ2_XXS},
	{"iq1_m", 31, quant.IQ1_M},
	{"iq1_s", 24, quant.IQ1_S},
	// The ternary types of BitNet b1.58 models: every matrix but
	// token_embd (Q4_K) and output (Q6_K).
	{"tq1_0", ftypeTQ1_0, quant.TQ1_0},
	{"tq2_0", ftypeTQ2_0, quant.TQ2_0},
}

// The llama_ftype values whose tensor mixes differ from their base type.
const (
	ftypeQ2_K   = 10
	ftypeQ3_K_M = 12
	ftypeQ4_K_M = 15
	ftypeIQ4_NL = 25
	ftypeIQ3_S  = 26
	ftypeIQ4_XS = 30
	ftypeMXFP4  = 38 // MXFP4_MOE
	// The lattice file types.
	ftypeIQ2_XXS = 19
	ftypeIQ2_XS  = 20
	ftypeIQ3_XXS = 23
	ftypeIQ1_S   = 24
	ftypeIQ2_S   = 28
	ftypeIQ2_M   = 29
	ftypeIQ1_M   = 31
	// The ternary file types.
	ftypeTQ1_0 = 36
	ftypeTQ2_0 = 37
)

// lattice reports whether ft is one of the file types built on the IQ
// lattice types (IQ3_XXS and below).
func (ft fileType) lattice() bool {
	switch ft.Ftype {
	case ftypeIQ2_XXS, ftypeIQ2_XS, ftypeIQ3_XXS, ftypeIQ1_S, ftypeIQ2_S, ftypeIQ2_M, ftypeIQ1_M:
		return true
	}
	return false
}

// tensorKind says how a tensor's values are drawn.
type tensorKind int

const (
	kindWeight    tensorKind = iota // 2-D, N(0, 1/fan-in)
	kindNorm                        // 1-D, about 1
	kindBias                        // 1-D, about 0
	kindRopeFreqs                   // 1-D, computed
	kindRopeLong                    // 1-D, LongRoPE long factors
	kindRopeShort                   // 1-D, LongRoPE short factors
	kindRouter                      // 2-D expert router, F32 in every file type
	kindF32                         // 2-D, F32 in every file type: BERT's position and token-type embeddings
	kindKeep                        // 2-D, left as the converter wrote it (F16): Gemma 3n's AltUp, LAuReL and per-layer projection
	kindF32Norm                     // 2-D, F32, about 1: Mamba-2's grouped norm, D
	kindSSMA                        // 2-D, F32, negative: Mamba-2's A (the converter writes -exp(A_log))
)

// f32 reports whether tensors of kind k stay F32 in every file type.
func (k tensorKind) f32() bool {
	return k == kindRouter || k == kindF32 || k == kindF32Norm || k == kindSSMA
}

// tensorPlan is one tensor of the file: its name, type and ggml dims
// (dims[0] is the row length, the fan-in of a projection).
type tensorPlan struct {
	Name string
	Type quant.Type
	Dims []int64
	Kind tensorKind
}

// plan lists the tensors of a model of shape s in file order, each with
// the type llama.cpp's quantizer would give it for file type ft. No data
// is made.
func plan(s shape, ft fileType) ([]tensorPlan, error) {
	var ts []tensorPlan
	add := func(name string, kind tensorKind, dims ...int64) {
		ts = append(ts, tensorPlan{Name: name, Dims: dims, Kind: kind})
	}
	if s.encoder() {
		encoderPlan(s, add)
	} else {
		decoderPlan(s, add)
	}
	if s.FuseQKV {
		n := len(ts)
		if ts = fuseQKV(ts); len(ts) == n {
			return nil, fmt.Errorf("-fuse-qkv: no %s block of this shape holds attn_q, attn_k and attn_v apart: its attention is fused already, latent, or absent", s.Arch)
		}
	}
	if err := assignTypes(ts, ft, s); err != nil {
		return nil, err
	}
	return ts, nil
}

// fuseQKV replaces each block's attn_q, attn_k and attn_v weights (and
// biases) in ts by one attn_qkv of their rows, in that order, where the
// block has all three.
func fuseQKV(ts []tensorPlan) []tensorPlan {
	index := func(name string) int { return slices.IndexFunc(ts, func(t tensorPlan) bool { return t.Name == name }) }
	for i := 0; i < len(ts); i++ {
		p, suffix, ok := strings.Cut(ts[i].Name, "attn_q.")
		k, v := index(p+"attn_k."+suffix), index(p+"attn_v."+suffix)
		if !ok || k < 0 || v < 0 {
			continue
		}
		last := len(ts[i].Dims) - 1
		fused := tensorPlan{Name: p + "attn_qkv." + suffix, Dims: slices.Clone(ts[i].Dims), Kind: ts[i].Kind}
		fused.Dims[last] += ts[k].Dims[last] + ts[v].Dims[last]
		ts[i] = fused
		ts = slices.Delete(ts, max(k, v), max(k, v)+1)
		ts = slices.Delete(ts, min(k, v), min(k, v)+1)
	}
	return ts
}

// encoderPlan lists a bert, nomic-bert, nomic-bert-moe, jina-bert-v2 or jina-bert-v3's tensors in the
// order llama.cpp's converter writes them (Hugging Face's): the embeddings
// and their norm, then per block the attention (bert: q, k, v and their
// biases; nomic-bert: the fused qkv, with its bias and the output's for
// nomic-bert-moe and jina-bert-v3), its output projection and norm, the feed-forward
// (nomic-bert-moe's expert layers: the router and the gate-less experts)
// and the block's output norm.
func encoderPlan(s shape, add func(name string, kind tensorKind, dims ...int64)) {
	e, v, f := int64(s.Embd), int64(s.Vocab), int64(s.FFN)
	q, kv := int64(s.Heads*s.headDim()), int64(s.HeadsKV*s.headDim())
	bert := s.Arch == "bert"
	moe := s.Arch == "nomic-bert-moe"
	biased := moe || s.Arch == "jina-bert-v3" // bert's biases and feed-forward, nomic-bert's fused qkv
	if s.Arch == "jina-bert-v2" {
		jinaPlan(s, add)
		return
	}
	add("token_embd.weight", kindWeight, e, v)
	if bert {
		add("position_embd.weight", kindF32, e, int64(s.Context))
	}
	add("token_types.weight", kindF32, e, 2)
	add("token_embd_norm.weight", kindNorm, e)
	add("token_embd_norm.bias", kindBias, e)
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		if bert {
			for _, x := range []struct {
				n    string
				rows int64
			}{{"attn_q", q}, {"attn_k", kv}, {"attn_v", kv}} {
				add(p+x.n+".weight", kindWeight, e, x.rows)
				add(p+x.n+".bias", kindBias, x.rows)
			}
		} else {
			add(p+"attn_qkv.weight", kindWeight, e, q+2*kv)
			if biased {
				add(p+"attn_qkv.bias", kindBias, q+2*kv)
			}
		}
		add(p+"attn_output.weight", kindWeight, q, e)
		if bert || biased {
			add(p+"attn_output.bias", kindBias, e)
		}
		add(p+"attn_output_norm.weight", kindNorm, e)
		add(p+"attn_output_norm.bias", kindBias, e)
		if moe && l%s.MoEEvery == 1 {
			x := int64(s.Experts)
			add(p+"ffn_gate_inp.weight", kindRouter, e, x)
			add(p+"ffn_up_exps.weight", kindWeight, e, f, x)
			add(p+"ffn_down_exps.weight", kindWeight, f, e, x)
			add(p+"layer_output_norm.weight", kindNorm, e)
			add(p+"layer_output_norm.bias", kindBias, e)
			continue
		}
		add(p+"ffn_up.weight", kindWeight, e, f)
		if bert || biased {
			add(p+"ffn_up.bias", kindBias, f)
		} else {
			add(p+"ffn_gate.weight", kindWeight, e, f)
		}
		add(p+"ffn_down.weight", kindWeight, f, e)
		if bert || biased {
			add(p+"ffn_down.bias", kindBias, e)
		}
		add(p+"layer_output_norm.weight", kindNorm, e)
		add(p+"layer_output_norm.bias", kindBias, e)
	}
}

// jinaPlan lists a jina-bert-v2's tensors in the converter's order: the
// embeddings (no positions: ALiBi) and their norm, then per block q, k, v
// and their biases, the output projection, its bias and norm, the
// GELU-gated feed-forward as the converter splits Hugging Face's
// gated_layers (ffn_gate the first half, ffn_up the second), ffn_down and
// its bias, and the block's output norm.
func jinaPlan(s shape, add func(name string, kind tensorKind, dims ...int64)) {
	e, v, f := int64(s.Embd), int64(s.Vocab), int64(s.FFN)
	q := int64(s.Heads * s.headDim())
	add("token_embd.weight", kindWeight, e, v)
	add("token_types.weight", kindF32, e, 2)
	add("token_embd_norm.weight", kindNorm, e)
	add("token_embd_norm.bias", kindBias, e)
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		for _, n := range []string{"attn_q", "attn_k", "attn_v"} {
			add(p+n+".weight", kindWeight, e, q)
			add(p+n+".bias", kindBias, q)
		}
		add(p+"attn_output.weight", kindWeight, q, e)
		add(p+"attn_output.bias", kindBias, e)
		add(p+"attn_output_norm.weight", kindNorm, e)
		add(p+"attn_output_norm.bias", kindBias, e)
		gatedFFN(add, p, "", e, f)
		add(p+"ffn_down.bias", kindBias, e)
		add(p+"layer_output_norm.weight", kindNorm, e)
		add(p+"layer_output_norm.bias", kindBias, e)
	}
}

// gatedFFN adds a gated feed-forward's three matrices of width f on a
// width of e, in the converter's order: ffn_gate, ffn_up and ffn_down,
// each name followed by suffix ("" or a shared expert's "_shexp").
func gatedFFN(add func(name string, kind tensorKind, dims ...int64), p, suffix string, e, f int64) {
	add(p+"ffn_gate"+suffix+".weight", kindWeight, e, f)
	add(p+"ffn_up"+suffix+".weight", kindWeight, e, f)
	add(p+"ffn_down"+suffix+".weight", kindWeight, f, e)
}

// decoderPlan lists a decoder's tensors in file order.
func decoderPlan(s shape, add func(name string, kind tensorKind, dims ...int64)) {
	if s.Gemma4 != nil {
		gemma4Plan(s, add)
		return
	}
	if s.Pattern != "" {
		nemotronHPlan(s, add)
		return
	}
	if s.rwkv() {
		rwkvPlan(s, add)
		return
	}
	if s.ModernBert != nil {
		modernBertPlan(s, add)
		return
	}
	e, v, f := int64(s.Embd), int64(s.Vocab), int64(s.FFN)
	kv := int64(s.HeadsKV * s.headDim())
	if s.Llama3Rope != nil {
		add("rope_freqs.weight", kindRopeFreqs, int64(s.headDim()/2))
	}
	if s.LongRope != nil {
		add("rope_factors_long.weight", kindRopeLong, int64(s.ropeDim()/2))
		add("rope_factors_short.weight", kindRopeShort, int64(s.ropeDim()/2))
	}
	add("token_embd.weight", kindWeight, e, v)
	if s.Arch == "bloom" {
		// BLOOM's word_embeddings_layernorm.
		add("token_embd_norm.weight", kindNorm, e)
		add("token_embd_norm.bias", kindBias, e)
	}
	if s.learnedPositions() {
		add("position_embd.weight", kindF32, e, int64(s.Context)) // F32, as the converter writes it and llama-quantize leaves it
	}
	if g := s.Gemma3n; g != nil {
		pl := int64(s.Layers * g.PerLayer)
		add("per_layer_token_embd.weight", kindWeight, pl, v)
		add("per_layer_model_proj.weight", kindKeep, e, pl)
		add("per_layer_proj_norm.weight", kindNorm, int64(g.PerLayer))
		add("altup_proj.weight", kindKeep, e, e, int64(g.AltUp-1))
		add("altup_unembd_proj.weight", kindKeep, e, e, int64(g.AltUp-1))
	}
	if s.Dense > 0 {
		add("dense_2.weight", kindF32, e, int64(s.Dense))
		add("dense_3.weight", kindF32, int64(s.Dense), e)
	}
	hd := int64(s.headDim())
	gemma := s.Arch == "gemma2" || s.Arch == "gemma3" || s.Arch == "gemma3n" || s.Arch == "gemma-embedding"
	olmo := s.Arch == "olmo2"                // no pre-norms, Q/K norms across heads, post-norms
	noPreNorm := olmo || s.Arch == "exaone4" // exaone4: olmo2's norms, Q/K norms per head
	oss := s.Arch == "gpt-oss"               // biases everywhere, sinks, post_attention_norm before the experts
	// attnPost: post_attention_norm is the norm before the feed-forward,
	// in ffn_norm's place (gpt-oss, seed_oss).
	attnPost := oss || s.Arch == "seed_oss" || s.Arch == "glm4moe"
	// glm4 and plamo3: phi3's fused gate and up, gemma's norms after
	// attention and the feed-forward (plamo3's named without .weight, as
	// llama.cpp's plamo3 loader asks).
	glm := s.Arch == "glm4" || s.Arch == "plamo3"
	chatglm := s.Arch == "chatglm" // glm4's block without its post norms, Q, K and V fused with their bias
	postSuffix := ".weight"
	if s.Arch == "plamo3" {
		postSuffix = ""
	}
	// postNorms: post_attention_norm and post_ffw_norm after attention and
	// the feed-forward, beside attn_norm and ffn_norm before them.
	postNorms := gemma || noPreNorm || glm || s.Arch == "afmoe"
	// ffn adds layer l's feed-forward: phi3's, glm4's, chatglm's and neo-bert's fused gate and up, experts
	// (after lfm2moe's leading dense layers), or gate, up and down.
	ffn := func(p string, l int) {
		switch {
		case s.Arch == "phi3" || glm || chatglm || s.Arch == "neo-bert":
			add(p+"ffn_up.weight", kindWeight, e, 2*f)
			add(p+"ffn_down.weight", kindWeight, f, e)
		case s.Experts > 0 && l >= s.DenseLead && (s.Arch != "jamba" || s.jambaExpertLayer(l)) && !s.denseNextN(l) && (s.MoEStep == 0 || (l+1)%s.MoEStep == 0):
			x, fe := int64(s.Experts), int64(cmp.Or(s.ExpertFFN, s.FFN))
			add(p+"ffn_gate_inp.weight", kindRouter, e, x)
			if oss {
				add(p+"ffn_gate_inp.bias", kindBias, x)
			}
			if s.FusedExps {
				add(p+"ffn_gate_up_exps.weight", kindWeight, e, 2*fe, x)
				add(p+"ffn_down_exps.weight", kindWeight, fe, e, x)
			} else {
				add(p+"ffn_gate_exps.weight", kindWeight, e, fe, x)
				add(p+"ffn_down_exps.weight", kindWeight, fe, e, x)
				add(p+"ffn_up_exps.weight", kindWeight, e, fe, x)
			}
			if oss { // one bias row per expert, F32 as the converter writes them
				add(p+"ffn_gate_exps.bias", kindF32, fe, x)
				add(p+"ffn_down_exps.bias", kindF32, e, x)
				add(p+"ffn_up_exps.bias", kindF32, fe, x)
			}
			if s.selBias() {
				add(p+"exp_probs_b.bias", kindBias, x)
			}
			if gr := s.Grove; gr != nil {
				cf, cn := int64(gr.FFN), x/int64(gr.PerGroup)
				add(p+"ffn_gate_chexps.weight", kindWeight, e, cf, cn)
				add(p+"ffn_down_chexps.weight", kindWeight, cf, e, cn)
				add(p+"ffn_up_chexps.weight", kindWeight, e, cf, cn)
			}
			if sf := int64(s.sharedFFN()); sf > 0 {
				gatedFFN(add, p, "_shexp", e, sf)
				if s.Arch == "qwen35moe" || s.Arch == "qwen3next" || s.Arch == "qwen2moe" {
					// Linear(Embd, 1), F32 as the converter writes it.
					add(p+"ffn_gate_inp_shexp.weight", kindRouter, e, 1)
				}
			}
		case s.gateless():
			add(p+"ffn_up.weight", kindWeight, e, f)
			add(p+"ffn_down.weight", kindWeight, f, e)
			if s.allBiases() {
				add(p+"ffn_up.bias", kindBias, f)
				add(p+"ffn_down.bias", kindBias, e)
			}
		default:
			gatedFFN(add, p, "", e, f)
		}
	}
	// nextN adds a NextN block's own tensors (l past the Layers that
	// run): the converter's eh_proj, enorm, hnorm and shared_head_norm,
	// and bailingmoe2's layer_output_norm.
	nextN := func(p string, l int) {
		if l < s.Layers {
			return
		}
		add(p+"nextn.eh_proj.weight", kindWeight, 2*e, e)
		add(p+"nextn.enorm.weight", kindNorm, e)
		add(p+"nextn.hnorm.weight", kindNorm, e)
		add(p+"nextn.shared_head_norm.weight", kindNorm, e)
		if s.Arch == "bailingmoe2" {
			add(p+"layer_output_norm.weight", kindNorm, e)
		}
	}
	for l := range s.Layers + s.NextN {
		p := fmt.Sprintf("blk.%d.", l)
		if s.PerLayer != nil {
			perLayerPlan(s, p, l, add)
			continue
		}
		q := int64(s.layerHeads(l) * s.headDim())
		if !noPreNorm && !s.unitNorms() {
			add(p+"attn_norm.weight", kindNorm, e)
		}
		if s.normBiases() {
			add(p+"attn_norm.bias", kindBias, e)
		}
		if s.qwen35() {
			qwen35Plan(s, p, l, add)
			add(p+"post_attention_norm.weight", kindNorm, e)
			ffn(p, l)
			nextN(p, l)
			continue
		}
		if s.convLayer(l) && s.KDA != nil {
			kdaPlan(s, p, add)
			add(p+"ffn_norm.weight", kindNorm, e)
			ffn(p, l)
			continue
		}
		if s.convLayer(l) && s.Mamba1 != nil {
			mamba1Plan(s, p, add)
			if s.Arch == "jamba" {
				add(p+"ffn_norm.weight", kindNorm, e)
				ffn(p, l)
			}
			continue
		}
		if s.convLayer(l) && s.SSM != nil {
			mambaPlan(s, p, add)
			if !s.mixersOnly() {
				add(p+"ffn_norm.weight", kindNorm, e)
				ffn(p, l)
			}
			continue
		}
		if s.convLayer(l) {
			// lfm2's short convolution: the kernel stays F32 (llama-quantize
			// leaves shortconv.conv alone; ggml_ssm_conv takes F32).
			add(p+"shortconv.in_proj.weight", kindWeight, e, 3*e)
			add(p+"shortconv.conv.weight", kindF32, int64(s.ConvKernel), e)
			add(p+"shortconv.out_proj.weight", kindWeight, e, e)
			add(p+"ffn_norm.weight", kindNorm, e)
			ffn(p, l)
			continue
		}
		if s.Mimo2 != nil {
			mimo2Plan(s, p, l, add)
			add(p+"ffn_norm.weight", kindNorm, e)
			ffn(p, l)
			continue
		}
		if s.DeepSeek2 != nil {
			mlaPlan(s, p, add)
			add(p+"ffn_norm.weight", kindNorm, e)
			ffn(p, l)
			continue
		}
		if s.fusedQKV() {
			add(p+"attn_qkv.weight", kindWeight, e, q+2*kv)
			if s.classicFused() || chatglm && s.QKVBias {
				add(p+"attn_qkv.bias", kindBias, q+2*kv)
			}
		} else {
			add(p+"attn_q.weight", kindWeight, e, q)
			if s.QKVBias {
				add(p+"attn_q.bias", kindBias, q)
			}
			add(p+"attn_k.weight", kindWeight, e, kv)
			if s.QKVBias {
				add(p+"attn_k.bias", kindBias, kv)
			}
			add(p+"attn_v.weight", kindWeight, e, kv)
			if s.QKVBias {
				add(p+"attn_v.bias", kindBias, kv)
			}
		}
		if s.fullQKNorm() {
			add(p+"attn_q_norm.weight", kindNorm, q)
			add(p+"attn_k_norm.weight", kindNorm, kv)
		}
		if s.QKNorm {
			add(p+"attn_q_norm.weight", kindNorm, hd)
			add(p+"attn_k_norm.weight", kindNorm, hd)
		}
		if s.Arch == "talkie" {
			// One gain a query head, and the block's embedding-skip scale.
			add(p+"attn_q_norm.weight", kindF32Norm, 1, int64(s.Heads)) // F32, as ggml_mul takes it
			add(p+"layer_output_scale.weight", kindNorm, 1)
		}
		if s.Arch == "afmoe" || s.Arch == "laguna" {
			add(p+"attn_gate.weight", kindWeight, e, int64(s.Laguna.GateRows(s.layerHeads(l), s.headDim()))) // the output gate
		}
		add(p+"attn_output.weight", kindWeight, q, e)
		if s.Arch == "bitnet" {
			add(p+"attn_sub_norm.weight", kindNorm, e)
		}
		if s.allBiases() || s.Arch == "phimoe" { // phimoe: its experts have none
			add(p+"attn_output.bias", kindBias, e)
		}
		if oss {
			add(p+"attn_output.bias", kindBias, e)
			add(p+"attn_sinks.weight", kindBias, int64(s.Heads))
		}
		if postNorms || attnPost {
			add(p+"post_attention_norm"+postSuffix, kindNorm, e)
		}
		if s.Arch == "falcon-h1" {
			// The Mamba-2 mixer beside the attention, and ffn_norm named
			// without .weight, as llama.cpp's falcon-h1 loader asks.
			mambaPlan(s, p, add)
			add(p+"ffn_norm", kindNorm, e)
		} else if !noPreNorm && !attnPost && !s.parallel() && !s.unitNorms() {
			add(p+"ffn_norm.weight", kindNorm, e)
			if s.normBiases() {
				add(p+"ffn_norm.bias", kindBias, e)
			}
		}
		ffn(p, l)
		if s.Arch == "bitnet" {
			add(p+"ffn_sub_norm.weight", kindNorm, f)
		}
		if postNorms {
			add(p+"post_ffw_norm"+postSuffix, kindNorm, e)
		}
		nextN(p, l)
		if g := s.Gemma3n; g != nil {
			k, a, r := int64(g.AltUp), int64(g.PerLayer), int64(g.LaurelRank)
			add(p+"inp_gate.weight", kindWeight, e, a)
			add(p+"proj.weight", kindWeight, a, e)
			add(p+"post_norm.weight", kindNorm, e)
			add(p+"altup_correct_coef.weight", kindF32, k, k)
			add(p+"altup_correct_scale.weight", kindNorm, e)
			add(p+"altup_predict_coef.weight", kindF32, k, k*k)
			add(p+"altup_router.weight", kindF32, e, k)
			add(p+"altup_router_norm.weight", kindNorm, e)
			add(p+"laurel_l.weight", kindKeep, e, r)
			add(p+"laurel_r.weight", kindKeep, r, e)
			add(p+"laurel_post_norm.weight", kindNorm, e)
		}
	}
	if s.ConvLayers != nil && s.SSM == nil && s.Mamba1 == nil && s.KDA == nil {
		// llama.cpp's LLM_TENSOR_OUTPUT_NORM_LFM2 (lfm2moe's too: llama-bench
		// d32676d77 asks for token_embd_norm.weight in either).
		add("token_embd_norm.weight", kindNorm, e)
	} else if s.Arch == "neo-bert" {
		add("enc.output_norm.weight", kindNorm, e) // llama.cpp's LLM_TENSOR_ENC_OUTPUT_NORM
	} else if !s.unitNorms() {
		add("output_norm.weight", kindNorm, e)
	}
	if s.normBiases() {
		add("output_norm.bias", kindBias, e)
	}
	if !s.TiedOutput {
		add("output.weight", kindWeight, e, v)
	}
	if s.headBias() {
		add("output.bias", kindBias, v) // the LM head's bias
	}
}

// mlaPlan adds a deepseek2 block's attention tensors after its attn_norm
// (block prefix p), as llama.cpp's converter writes them: attn_q (or
// attn_q_a, its norm and attn_q_b), attn_kv_a_mqa and its norm, attn_k_b
// and attn_v_b (kv_b_proj split, one matrix a head, k_b transposed), or
// in the older form (Joined: minicpm3) kv_b_proj whole as attn_kv_b, and
// attn_output.
func mlaPlan(s shape, p string, add func(name string, kind tensorKind, dims ...int64)) {
	d := s.DeepSeek2
	e, h := int64(s.Embd), int64(s.Heads)
	r, nope, rope, v := int64(d.KVLora), int64(d.Nope), int64(d.Rope), int64(d.VHead)
	if ql := int64(d.QLora); ql > 0 {
		add(p+"attn_q_a.weight", kindWeight, e, ql)
		add(p+"attn_q_a_norm.weight", kindNorm, ql)
		add(p+"attn_q_b.weight", kindWeight, ql, h*(nope+rope))
	} else {
		add(p+"attn_q.weight", kindWeight, e, h*(nope+rope))
	}
	add(p+"attn_kv_a_mqa.weight", kindWeight, e, r+rope)
	add(p+"attn_kv_a_norm.weight", kindNorm, r)
	if d.Joined {
		add(p+"attn_kv_b.weight", kindWeight, r, h*(nope+v))
	} else {
		add(p+"attn_k_b.weight", kindWeight, nope, r, h)
		add(p+"attn_v_b.weight", kindWeight, r, v, h)
	}
	add(p+"attn_output.weight", kindWeight, h*v, e)
}

// mambaPlan adds a Mamba-2 block's tensors after its attn_norm (block
// prefix p), as llama.cpp's converter writes Granite 4.0-H's: ssm_in,
// the kernel ssm_conv1d and its bias, the time steps' bias, A, D, the
// grouped norm and ssm_out; the kernel, A, D and the norm stay F32
// (llama-quantize leaves ssm_conv1d alone, and the others are vectors to
// it).
func mambaPlan(s shape, p string, add func(name string, kind tensorKind, dims ...int64)) {
	m := s.SSM
	e := int64(s.Embd)
	inner, st, h, g := int64(m.Inner), int64(m.State), int64(m.Heads), int64(m.Groups)
	cw := inner + 2*g*st
	add(p+"ssm_in.weight", kindWeight, e, 2*inner+2*g*st+h)
	add(p+"ssm_conv1d.weight", kindF32, int64(m.Conv), cw)
	add(p+"ssm_conv1d.bias", kindBias, cw)
	add(p+"ssm_dt.bias", kindBias, h)
	add(p+"ssm_a", kindSSMA, 1, h)
	add(p+"ssm_d", kindF32Norm, 1, h)
	add(p+"ssm_norm.weight", kindF32Norm, inner/g, g)
	add(p+"ssm_out.weight", kindWeight, inner, e)
}

// mamba1Plan adds a Mamba-1 block's tensors after its attn_norm (block
// prefix p), as llama.cpp's converter writes Jamba's and Falcon-Mamba's:
// ssm_in, the kernel ssm_conv1d and its bias, ssm_x, ssm_dt and its
// bias, A ([state, inner], negative), D, ssm_out, and jamba's norms of
// the time step's rank, B and C. The kernel and A stay F32
// (llama-quantize leaves ssm_conv1d alone, and ssm_a has no .weight
// suffix).
func mamba1Plan(s shape, p string, add func(name string, kind tensorKind, dims ...int64)) {
	m := s.Mamba1
	e := int64(s.Embd)
	inner, st, r := int64(m.Inner), int64(m.State), int64(m.DtRank)
	add(p+"ssm_in.weight", kindWeight, e, 2*inner)
	add(p+"ssm_conv1d.weight", kindF32, int64(m.Conv), inner)
	add(p+"ssm_conv1d.bias", kindBias, inner)
	add(p+"ssm_x.weight", kindWeight, inner, r+2*st)
	add(p+"ssm_dt.weight", kindWeight, r, inner)
	add(p+"ssm_dt.bias", kindBias, inner)
	add(p+"ssm_a", kindSSMA, st, inner)
	add(p+"ssm_d", kindNorm, inner)
	add(p+"ssm_out.weight", kindWeight, inner, e)
	if s.Arch == "jamba" {
		add(p+"ssm_dt_norm.weight", kindNorm, r)
		add(p+"ssm_b_norm.weight", kindNorm, st)
		add(p+"ssm_c_norm.weight", kindNorm, st)
	}
}

// kdaPlan adds a Kimi Delta Attention block's tensors after its attn_norm
// (block prefix p), in the converter's order: attn_q, attn_k, attn_v, their
// kernels ssm_conv1d_q, _k and _v ([kernel, 1, inner, 1], F32:
// llama-quantize leaves them alone), the decay's low-rank pair ssm_f_a and
// ssm_f_b, ssm_beta, ssm_a ([1, heads, 1, 1], negative), ssm_dt.bias, the
// output gate's pair ssm_g_a and ssm_g_b, ssm_norm and attn_output.
func kdaPlan(s shape, p string, add func(name string, kind tensorKind, dims ...int64)) {
	e, h, n := int64(s.Embd), int64(s.Heads), int64(s.KDA.HeadDim)
	in := h * n
	for _, x := range []string{"q", "k", "v"} {
		add(p+"attn_"+x+".weight", kindWeight, e, in)
	}
	for _, x := range []string{"q", "k", "v"} {
		add(p+"ssm_conv1d_"+x+".weight", kindF32, int64(s.KDA.Conv), 1, in, 1)
	}
	add(p+"ssm_f_a.weight", kindWeight, e, n)
	add(p+"ssm_f_b.weight", kindWeight, n, in)
	add(p+"ssm_beta.weight", kindWeight, e, h)
	add(p+"ssm_a", kindSSMA, 1, h, 1, 1)
	add(p+"ssm_dt.bias", kindBias, in)
	add(p+"ssm_g_a.weight", kindWeight, e, n)
	add(p+"ssm_g_b.weight", kindWeight, n, in)
	add(p+"ssm_norm.weight", kindNorm, n)
	add(p+"attn_output.weight", kindWeight, in, e)
}

// qwen35Plan adds a qwen35 block's operator tensors after its attn_norm
// (block prefix p): a gated delta-net layer's attn_qkv, attn_gate, the
// kernel ssm_conv1d (F32: llama-quantize leaves it alone), the time
// steps' bias, ssm_a (negative), ssm_beta, ssm_alpha, the head norm and
// ssm_out; or a gated attention layer's attn_q (each head's query, then
// its gate), attn_k, attn_v, the Q/K norms and attn_output. NextN blocks
// (l ≥ Layers) attend.
func qwen35Plan(s shape, p string, l int, add func(name string, kind tensorKind, dims ...int64)) {
	e := int64(s.Embd)
	if l < s.Layers && s.convLayer(l) {
		m := s.SSM
		inner, st, h, g := int64(m.Inner), int64(m.State), int64(m.Heads), int64(m.Groups)
		cw := inner + 2*g*st
		add(p+"attn_qkv.weight", kindWeight, e, cw)
		add(p+"attn_gate.weight", kindWeight, e, inner)
		add(p+"ssm_conv1d.weight", kindF32, int64(m.Conv), cw)
		add(p+"ssm_dt.bias", kindBias, h)
		add(p+"ssm_a", kindSSMA, h)
		if s.Arch == "qwen3next" {
			add(p+"ssm_ba.weight", kindWeight, e, 2*h) // β and α, grouped by key head
		} else {
			add(p+"ssm_beta.weight", kindWeight, e, h)
			add(p+"ssm_alpha.weight", kindWeight, e, h)
		}
		add(p+"ssm_norm.weight", kindNorm, st)
		add(p+"ssm_out.weight", kindWeight, inner, e)
		return
	}
	hd := int64(s.headDim())
	q, kv := int64(s.Heads)*hd, int64(s.HeadsKV)*hd
	add(p+"attn_q.weight", kindWeight, e, 2*q)
	add(p+"attn_k.weight", kindWeight, e, kv)
	add(p+"attn_v.weight", kindWeight, e, kv)
	add(p+"attn_q_norm.weight", kindNorm, hd)
	add(p+"attn_k_norm.weight", kindNorm, hd)
	add(p+"attn_output.weight", kindWeight, q, e)
}

// assignTypes sets the type of each tensor as llama.cpp's
// llama_tensor_get_type does without an importance matrix or overrides,
// for a model of shape s: 1-D tensors stay F32; with a float file type
// every 2-D weight has that type; with a quantized one the output (and the
// token embedding when it doubles as the output) gets Q6_K unless the type
// is Q8_0, and the attn_v, ffn_down and attn_output tensors get the types
// the mix gives them (see attnVType and ffnDownType). The attn_v and
// ffn_down layer counters advance in file order, as llama.cpp's do; as
// llama.cpp's, the ffn_down tensors are counted out of block_count, and
// with experts each one's layer is its block's (a block may hold the
// experts', the shared expert's and a dense ffn_down). A row length the
// type's block does not divide falls back as llama.cpp does.
func assignTypes(ts []tensorPlan, ft fileType, s shape) error {
	hasOutput := slices.ContainsFunc(ts, func(t tensorPlan) bool { return t.Name == "output.weight" })
	nAttnV, nFFNDown := 0, s.Layers+s.NextN
	for _, t := range ts {
		if len(t.Dims) >= 2 && isAttnV(t.Name) {
			nAttnV++
		}
	}
	var iAttnV, iFFNDown int
	for i := range ts {
		t := &ts[i]
		if s.Experts > 1 && strings.Contains(t.Name, "ffn_down") {
			// An expert model's ffn_down is of its block's layer: a block
			// may hold the experts', the shared expert's and a dense one.
			if _, err := fmt.Sscanf(t.Name, "blk.%d.", &iFFNDown); err != nil {
				return fmt.Errorf("tensor %q: no block number: %w", t.Name, err)
			}
		}
		if len(t.Dims) < 2 || t.Kind.f32() {
			t.Type = quant.F32 // llama-quantize leaves vectors, routers and BERT's position and type embeddings in F32
			continue
		}
		if ft.Base == quant.F16 || ft.Base == quant.F32 || ft.Base == quant.BF16 {
			t.Type = ft.Base
			continue
		}
		if t.Kind == kindKeep {
			t.Type = quant.F16 // llama-quantize leaves "altup", "laurel" and per_layer_model_proj as they are
			continue
		}
		typ := ft.Base
		switch {
		case t.Name == "output.weight" || (!hasOutput && t.Name == "token_embd.weight"):
			switch {
			case t.Dims[0]%int64(typ.BlockElems()) != 0:
				typ = quant.Q8_0
			case ft.lattice():
				typ = quant.Q5_K
			case typ != quant.Q8_0:
				typ = quant.Q6_K
			}
		case ft.Ftype == ftypeMXFP4:
			// llama-quantize's rule is by shape: a tensor of more than
			// one matrix (ne[2] > 1, the experts) is MXFP4.
			if len(t.Dims) > 2 && t.Dims[2] > 1 {
				typ = quant.MXFP4
			}
		case ft.lattice():
			typ = latticeType(ft, t.Name, s, &iAttnV, &iFFNDown, nFFNDown)
		case t.Name == "token_embd.weight" || t.Name == "per_layer_token_embd.weight":
			// Every -type keeps the default type but the ternary ones.
			if ft.Ftype == ftypeTQ1_0 || ft.Ftype == ftypeTQ2_0 {
				typ = quant.Q4_K
			}
		case isAttnV(t.Name):
			typ = attnVType(ft, typ, iAttnV, nAttnV, s)
			iAttnV++
		case strings.Contains(t.Name, "ffn_down"):
			typ = ffnDownType(ft, typ, iFFNDown, nFFNDown)
			iFFNDown++
		case s.Experts == 8 && strings.Contains(t.Name, "attn_k.weight"):
			typ = quant.Q8_0 // llama.cpp's bump for 8-expert models
		case strings.Contains(t.Name, "attn_output.weight"):
			switch {
			case s.Experts == 8:
				// llama.cpp's bump for 8-expert models, for these types.
				switch ft.Ftype {
				case ftypeQ2_K, ftypeQ3_K_M, ftypeIQ4_NL, ftypeQ4_K_M, ftypeIQ3_S, ftypeIQ4_XS:
					typ = quant.Q5_K
				}
			case ft.Ftype == ftypeQ2_K:
				typ = quant.Q3_K
			case ft.Ftype == ftypeQ3_K_M:
				typ = quant.Q4_K
			}
		}
		fb, err := fallback(typ, t.Dims[0])
		if err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		t.Type = fb
	}
	return nil
}

// latticeType is the type llama.cpp's llama_tensor_get_type gives a
// tensor (not the output) of a lattice file type, with an importance
// matrix. The token embedding takes Q2_K, or IQ3_S for IQ2_S, IQ2_M and
// IQ3_XXS. For the IQ2 and IQ1 types: attn_v Q4_K with 4 or more query
// heads per KV head or 4 or more experts, else Q2_K (IQ3_S for IQ2_S and
// IQ2_M); attn_k Q4_K with exactly 8 experts; the first eighth of the
// ffn_down tensors Q2_K (IQ3_S for IQ2_S and IQ2_M); attn_output Q5_K
// with 8 experts, else IQ2_XXS for IQ1_S and IQ1_M, IQ3_S for IQ2_S and
// IQ2_M. For IQ3_XXS: attn_v Q4_K with 4 or more query heads per KV head
// (Q8_0 with 8 experts), else IQ3_XXS; attn_q and attn_k IQ2_S (attn_k
// Q8_0 with 8 experts); attn_output IQ3_S (Q5_K with 8 experts); and a
// 70B's attn_v Q5_K where the rule says Q4_K. iAttnV and iFFNDown are
// the layer counters, advanced here in file order.
func latticeType(ft fileType, name string, s shape, iAttnV, iFFNDown *int, nFFNDown int) quant.Type {
	gqa := 1
	if s.HeadsKV > 0 {
		gqa = s.Heads / s.HeadsKV
	}
	typ := ft.Base
	wide := ft.Ftype == ftypeIQ2_S || ft.Ftype == ftypeIQ2_M // IQ3_S where the others take Q2_K
	if name == "token_embd.weight" || name == "per_layer_token_embd.weight" {
		if wide || ft.Ftype == ftypeIQ3_XXS {
			return quant.IQ3_S
		}
		return quant.Q2_K
	}
	if ft.Ftype == ftypeIQ3_XXS {
		switch {
		case isAttnV(name):
			*iAttnV++
			typ = quant.IQ3_XXS
			if gqa >= 4 {
				typ = quant.Q4_K
			}
			if s.Arch == "llama" && s.Layers == 80 && s.Heads != s.HeadsKV && typ == quant.Q4_K {
				typ = quant.Q5_K
			}
			if s.Experts == 8 {
				typ = quant.Q8_0
			}
		case strings.Contains(name, "attn_k.weight"):
			typ = quant.IQ2_S
			if s.Experts == 8 {
				typ = quant.Q8_0
			}
		case strings.Contains(name, "attn_q.weight"):
			typ = quant.IQ2_S
		case strings.Contains(name, "ffn_down"):
			*iFFNDown++
		case strings.Contains(name, "attn_output.weight"):
			typ = quant.IQ3_S
			if s.Experts == 8 {
				typ = quant.Q5_K
			}
		}
		return typ
	}
	low := quant.Q2_K
	if wide {
		low = quant.IQ3_S
	}
	switch {
	case isAttnV(name):
		*iAttnV++
		typ = low
		if gqa >= 4 || s.Experts >= 4 {
			typ = quant.Q4_K
		}
	case s.Experts == 8 && strings.Contains(name, "attn_k.weight"):
		typ = quant.Q4_K
	case strings.Contains(name, "ffn_down"):
		if *iFFNDown < nFFNDown/8 {
			typ = low
		}
		*iFFNDown++
	case strings.Contains(name, "attn_output.weight"):
		switch {
		case s.Experts == 8:
			typ = quant.Q5_K
		case ft.Ftype == ftypeIQ1_S || ft.Ftype == ftypeIQ1_M:
			typ = quant.IQ2_XXS
		case wide:
			typ = quant.IQ3_S
		}
	}
	return typ
}

// isAttnV reports whether llama.cpp's quantizer treats the tensor as an
// attn_v: the value projection, or a fused QKV projection holding it.
func isAttnV(name string) bool {
	return strings.Contains(name, "attn_v.weight") || strings.Contains(name, "attn_qkv.weight")
}

// attnVType is the type of the i-th of n attn_v tensors: Q2_K raises it to
// Q3_K (Q4_K with 4 or more query heads per KV head), Q3_K_M to Q5_K for
// the first two and Q4_K after, IQ4_XS and IQ4_NL to Q5_K with 4 or more
// query heads per KV head, IQ3_S to Q4_K with 4 or more query heads per KV
// head, Q4_K_M to Q6_K in the layers useMoreBits picks;
// a Llama-2/3 70B (80 layers with grouped KV heads) takes Q5_K where the
// mix says Q3_K or Q4_K; a model of exactly 8 experts Q8_0 whatever the
// mix (as its attn_k, and its attn_output Q5_K in most k-quant mixes).
func attnVType(ft fileType, typ quant.Type, i, n int, s shape) quant.Type {
	gqa := 1
	if s.HeadsKV > 0 {
		gqa = s.Heads / s.HeadsKV
	}
	switch ft.Ftype {
	case ftypeQ2_K:
		typ = quant.Q3_K
		if gqa >= 4 {
			typ = quant.Q4_K
		}
	case ftypeQ3_K_M:
		typ = quant.Q4_K
		if i < 2 {
			typ = quant.Q5_K
		}
	case ftypeIQ4_NL, ftypeIQ4_XS:
		if gqa >= 4 {
			typ = quant.Q5_K
		}
	case ftypeIQ3_S:
		if gqa >= 4 {
			typ = quant.Q4_K
		}
	case ftypeQ4_K_M:
		if useMoreBits(i, n) {
			typ = quant.Q6_K
		}
	}
	if s.Arch == "llama" && s.Layers == 80 && s.Heads != s.HeadsKV && (typ == quant.Q3_K || typ == quant.Q4_K) {
		typ = quant.Q5_K
	}
	if s.Experts == 8 {
		typ = quant.Q8_0 // llama.cpp's bump for 8-expert models
	}
	return typ
}

// ffnDownType is the type of the i-th of n ffn_down tensors: Q2_K raises
// it to Q3_K, Q3_K_M to Q5_K in the first sixteenth of the layers and Q4_K
// after, IQ4_XS and IQ4_NL to Q5_K in the first eighth, Q4_K_M to Q6_K in
// the layers useMoreBits picks.
func ffnDownType(ft fileType, typ quant.Type, i, n int) quant.Type {
	switch ft.Ftype {
	case ftypeQ2_K:
		return quant.Q3_K
	case ftypeQ3_K_M:
		if i < n/16 {
			return quant.Q5_K
		}
		return quant.Q4_K
	case ftypeIQ4_NL, ftypeIQ4_XS:
		if i < n/8 {
			return quant.Q5_K
		}
	case ftypeQ4_K_M:
		if useMoreBits(i, n) {
			return quant.Q6_K
		}
	}
	return typ
}

// useMoreBits is llama.cpp's choice of layers that get more bits in the
// _M mixes: the first and last eighth, and every third layer in between.
func useMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// fallback replaces a type whose block does not divide the row length n by
// the 32-wide type llama.cpp falls back to, or F16 if even that does not
// fit.
func fallback(t quant.Type, n int64) (quant.Type, error) {
	if n%int64(t.BlockElems()) == 0 {
		return t, nil
	}
	var fb quant.Type
	switch t {
	case quant.Q2_K, quant.Q3_K, quant.TQ1_0, quant.TQ2_0:
		fb = quant.Q4_0
	case quant.Q4_K:
		fb = quant.Q5_0
	case quant.Q5_K:
		fb = quant.Q5_1
	case quant.Q6_K:
		fb = quant.Q8_0
	case quant.IQ4_XS, quant.IQ3_S, quant.IQ3_XXS, quant.IQ2_S, quant.IQ2_XS, quant.IQ2_XXS, quant.IQ1_M, quant.IQ1_S:
		fb = quant.IQ4_NL
	default:
		return 0, fmt.Errorf("row length %d is not a multiple of the %s block of %d and llama.cpp has no fallback for it", n, t, t.BlockElems())
	}
	if n%int64(fb.BlockElems()) != 0 {
		return quant.F16, nil
	}
	return fb, nil
}

func (t fileType) name() string { return t.Name }
