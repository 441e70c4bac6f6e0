package testutil

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// TinyJamba is a 4-layer jamba as Jamba 1.x's converter writes it:
// Mamba-1 layers 0, 1 and 3 (inner size 128, twice the width; state 16,
// kernel 4, time step rank 32; norms of the rank, B and C), layer 2
// attention without RoPE (4 query and 2 KV heads); the odd layers' (1
// and 3) feed-forwards 4 experts of width FFN, 2 a token, the even
// layers' dense; Q8_0 weights, an output matrix of its own.
func TinyJamba() ModelSpec {
	s := tiny(ModelSpec{
		Arch: "jamba", Seed: 53, Layers: 4, RMSEps: 1e-6,
		ConvLayers: []int{0, 1, 3}, SSMState: 16, SSMDtRank: 32,
		Experts: 4, ExpertsUsed: 2, RouterGain: 4,
	})
	s.ExpertFFN = s.FFN
	return s
}

// withJambaDefaults fills a jamba spec's kernel (4) and checks its sizes.
func (s ModelSpec) withJambaDefaults() (ModelSpec, error) {
	if s.ConvKernel == 0 {
		s.ConvKernel = 4
	}
	if s.SSMState <= 0 || s.SSMDtRank <= 0 || s.SSMDtRank > 2*s.Embd {
		return s, fmt.Errorf("testutil: jamba needs SSMState and SSMDtRank (at most 2×Embd) above 0 (%d, %d)", s.SSMState, s.SSMDtRank)
	}
	if s.Experts > 0 {
		if err := s.checkExperts(); err != nil {
			return s, err
		}
		if s.ExpertFFN != s.FFN {
			return s, fmt.Errorf("testutil: jamba's experts are FFN wide (ExpertFFN %d, FFN %d)", s.ExpertFFN, s.FFN)
		}
	}
	return s, nil
}

// jambaExpertLayer reports whether a jamba spec's layer l has experts:
// Jamba 1.x's odd layers (expert_layer_offset 1, period 2).
func (s ModelSpec) jambaExpertLayer(l int) bool { return s.Experts > 0 && l%2 == 1 }

// Mamba1 is a Mamba-1 model's sizes, as llama.cpp's converters write
// them (ssm.*; no group count).
type Mamba1 struct {
	Conv, Inner, State, DtRank int
}

// AddJambaKV writes a jamba's per-layer attention.head_count_kv (0 for
// the Mamba layers rec marks, headsKV for the others), its ssm.* sizes
// m and its expert counts (none at experts 0), as llama.cpp's
// converter writes them.
func AddJambaKV(g *gguf.Writer, arch string, headsKV int, rec []bool, m Mamba1, experts, used int) {
	addRecurrentLayers(g, arch, headsKV, rec)
	m.addTo(g, arch)
	if experts > 0 {
		g.AddKV(arch+".expert_count", uint32(experts))
		g.AddKV(arch+".expert_used_count", uint32(used))
	}
}

// addTo writes the ssm.* sizes m under arch's key prefix.
func (m Mamba1) addTo(g *gguf.Writer, arch string) {
	addSSMKeys(g, arch, m.Conv, m.Inner, m.State, m.DtRank)
}

// addJambaKV writes a jamba spec's own keys.
func (s ModelSpec) addJambaKV(g *gguf.Writer) {
	rec := make([]bool, s.Layers)
	for l := range rec {
		rec[l] = s.convLayer(l)
	}
	AddJambaKV(g, s.Arch, s.HeadsKV, rec, Mamba1{Conv: s.ConvKernel, Inner: 2 * s.Embd, State: s.SSMState, DtRank: s.SSMDtRank}, s.Experts, s.ExpertsUsed)
}

// mamba1Tensors lists a Mamba-1 block's tensors after its attn_norm, with
// the names, dims and types (the kernel, its bias, A, D, the time steps'
// bias and the norms in F32) of llama.cpp's converter: A negative (the
// converter writes -exp(A_log)), one decay per channel and state
// element; the time steps' bias about -1 so that softplus spreads them
// around 0.3; with norms of the rank, B and C (jamba's) when norms.
func mamba1Tensors(p string, w quant.Type, e int64, m Mamba1, norms bool) []tensorSpec {
	inner, st, r, k := int64(m.Inner), int64(m.State), int64(m.DtRank), int64(m.Conv)
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	ts := []tensorSpec{
		{p + "ssm_in.weight", w, []int64{e, 2 * inner}, proj(e)},
		{p + "ssm_conv1d.weight", quant.F32, []int64{k, inner}, dist{0, 1 / math.Sqrt(float64(k))}},
		{p + "ssm_conv1d.bias", quant.F32, []int64{inner}, dist{0, 0.1}},
		{p + "ssm_x.weight", w, []int64{inner, r + 2*st}, proj(inner)},
		{p + "ssm_dt.weight", w, []int64{r, inner}, proj(r)},
		{p + "ssm_dt.bias", quant.F32, []int64{inner}, dist{-1, 0.5}},
		{p + "ssm_a", quant.F32, []int64{st, inner}, dist{-1.5, 0.5}},
		{p + "ssm_d", quant.F32, []int64{inner}, dist{1, 0.2}},
		{p + "ssm_out.weight", w, []int64{inner, e}, proj(inner)},
	}
	if norms {
		ts = append(ts,
			tensorSpec{p + "ssm_dt_norm.weight", quant.F32, []int64{r}, dist{1, 0.1}},
			tensorSpec{p + "ssm_b_norm.weight", quant.F32, []int64{st}, dist{1, 0.1}},
			tensorSpec{p + "ssm_c_norm.weight", quant.F32, []int64{st}, dist{1, 0.1}})
	}
	return ts
}

// TinyMamba is a 3-layer mamba as Falcon-Mamba's converter writes it:
// every block a Mamba-1 layer (inner size 128, twice the width; state
// 16, kernel 4, time step rank 32) whose rank, B and C are
// RMS-normalised without weights (ssm.dt_b_c_rms); attention.head_count
// and feed_forward_length 0, no head_count_kv; Q8_0 weights, an output
// matrix of its own.
func TinyMamba() ModelSpec {
	return tiny(ModelSpec{
		Arch: "mamba", Seed: 59, Layers: 3, RMSEps: 1e-5,
		ConvLayers: []int{0, 1, 2}, SSMState: 16, SSMDtRank: 32, DtBCNorm: true,
	})
}

// withMambaDefaults fills a mamba or mamba2 spec's kernel (4) and checks
// its sizes and that every layer is recurrent.
func (s ModelSpec) withMambaDefaults() (ModelSpec, error) {
	if len(s.ConvLayers) != s.Layers {
		return s, fmt.Errorf("testutil: every layer of a %s is recurrent (ConvLayers %v of %d)", s.Arch, s.ConvLayers, s.Layers)
	}
	if s.Arch == "mamba2" {
		return s.withMamba2Defaults()
	}
	return s.withJambaDefaults()
}

// AddMambaKV writes a mamba's ssm.* sizes m and ssm.dt_b_c_rms, as
// llama.cpp's converter writes them (its attention.head_count and
// feed_forward_length of 0 are AddHparams' with Heads and FFN 0).
func AddMambaKV(g *gguf.Writer, arch string, m Mamba1, dtBCNorm bool) {
	m.addTo(g, arch)
	g.AddKV(arch+".ssm.dt_b_c_rms", dtBCNorm)
}

// mambaTensors1 lists a mamba or mamba2 spec's tensors: the ends, then
// each block's attn_norm and its Mamba-1 layer (mamba2: Mamba-2,
// mambaTensors').
func (s ModelSpec) mambaTensors1() []tensorSpec {
	ts := s.ends("output_norm.weight")
	e := int64(s.Embd)
	mixer := s.mambaTensors
	if s.Arch == "mamba" {
		m := Mamba1{Conv: s.ConvKernel, Inner: 2 * s.Embd, State: s.SSMState, DtRank: s.SSMDtRank}
		mixer = func(p string) []tensorSpec { return mamba1Tensors(p, s.WeightType, e, m, false) }
	}
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts, tensorSpec{p + "attn_norm.weight", quant.F32, []int64{e}, dist{1, 0.1}})
		ts = append(ts, mixer(p)...)
	}
	return ts
}
