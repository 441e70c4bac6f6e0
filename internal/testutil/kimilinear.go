package testutil

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// TinyKimiLinear is a 4-layer kimi-linear as llama.cpp's converter writes
// Kimi-Linear-48B-A3B: layers 0, 1 and 3 Kimi Delta Attention (4 heads of
// 16, kernel 4; head_count_kv 0), layer 2 latent attention without RoPE
// (rank 32, heads of 16 unrotated and 8 "rope" query/key floats, values
// of 16; head_count_kv 1, attn_q without a rank of its own); layer 0's
// feed-forward dense, the others 8 experts of 32, 2 a token, chosen by
// sigmoid with a selection bias, renormalised and scaled by 2.446 beside
// one shared expert.
func TinyKimiLinear() ModelSpec {
	s := tinyMoE(ModelSpec{
		Arch: "kimi-linear", Seed: 47, Layers: 4, RopeBase: 10000, RMSEps: 1e-5,
		DenseLead:  1,
		ConvLayers: []int{0, 1, 3}, SSMState: 32,
		DeepSeek2: &DeepSeek2{KVLora: 64, Nope: 32, Rope: 16, VHead: 32, Shared: 1, Scale: 2.446, Gating: 2, SelBias: true},
	})
	s.HeadsKV = 0 // withDefaults derives it from the latent attention
	return s
}

// withKimiLinearDefaults fills a kimi-linear spec's kernel (4) and checks
// its sizes; the latent heads are deepseek2's.
func (s ModelSpec) withKimiLinearDefaults() (ModelSpec, error) {
	if s.ConvKernel == 0 {
		s.ConvKernel = 4
	}
	d := s.DeepSeek2
	if d == nil || d.KVLora <= 0 || d.Nope <= 0 || d.Rope <= 0 || d.VHead <= 0 || d.Shared <= 0 || d.QLora != 0 || s.SSMState <= 0 {
		return s, fmt.Errorf("testutil: kimi-linear needs DeepSeek2 with KVLora, Nope, Rope, VHead and Shared above 0, no QLora, and SSMState")
	}
	if err := s.checkExperts(); err != nil {
		return s, err
	}
	s = s.withLatentHeads()
	s.SharedFFN = d.Shared * s.ExpertFFN
	return s, nil
}

// addKimiLinearKV writes a kimi-linear's own keys: head_count_kv a layer
// (0 for the KDA layers, 1 for the latent attention's), ssm.conv_kernel
// and kda.head_dim.
func (s ModelSpec) addKimiLinearKV(g *gguf.Writer) {
	rec := make([]bool, s.Layers)
	for l := range rec {
		rec[l] = s.convLayer(l)
	}
	AddKimiLinearKV(g, s.Arch, s.HeadsKV, rec, s.ConvKernel, s.SSMState)
}

// AddKimiLinearKV writes what llama.cpp's converter writes of Kimi Delta
// Attention beside the common and latent-attention keys: head_count_kv a
// layer (0 for the layers rec marks), ssm.conv_kernel and kda.head_dim.
func AddKimiLinearKV(g *gguf.Writer, arch string, headsKV int, rec []bool, kernel, headDim int) {
	addRecurrentLayers(g, arch, headsKV, rec)
	g.AddKV(arch+".ssm.conv_kernel", uint32(kernel))
	g.AddKV(arch+".kda.head_dim", uint32(headDim))
}

// kdaTensors lists a Kimi Delta Attention block's tensors after its
// attn_norm (prefix p), with the converter's names, dims and types: the
// kernels [kernel, 1, inner, 1] and ssm_a [1, heads, 1, 1] in F32, ssm_a
// negative (-exp(A_log)), the decay's bias about -1.
func (s ModelSpec) kdaTensors(p string) []tensorSpec {
	e, w := int64(s.Embd), s.WeightType
	n, h, k := int64(s.SSMState), int64(s.Heads), int64(s.ConvKernel)
	in := h * n
	norm := dist{1, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	conv := dist{0, 1 / math.Sqrt(float64(k))}
	return []tensorSpec{
		{p + "attn_q.weight", w, []int64{e, in}, proj(e)},
		{p + "attn_k.weight", w, []int64{e, in}, proj(e)},
		{p + "attn_v.weight", w, []int64{e, in}, proj(e)},
		{p + "ssm_conv1d_q.weight", quant.F32, []int64{k, 1, in, 1}, conv},
		{p + "ssm_conv1d_k.weight", quant.F32, []int64{k, 1, in, 1}, conv},
		{p + "ssm_conv1d_v.weight", quant.F32, []int64{k, 1, in, 1}, conv},
		{p + "ssm_f_a.weight", w, []int64{e, n}, proj(e)},
		{p + "ssm_f_b.weight", w, []int64{n, in}, proj(n)},
		{p + "ssm_beta.weight", w, []int64{e, h}, proj(e)},
		{p + "ssm_a", quant.F32, []int64{1, h, 1, 1}, dist{-1.5, 0.3}},
		{p + "ssm_dt.bias", quant.F32, []int64{in}, dist{-1, 0.5}},
		{p + "ssm_g_a.weight", w, []int64{e, n}, proj(e)},
		{p + "ssm_g_b.weight", w, []int64{n, in}, proj(n)},
		{p + "ssm_norm.weight", quant.F32, []int64{n}, norm},
		{p + "attn_output.weight", w, []int64{in, e}, proj(in)},
	}
}
