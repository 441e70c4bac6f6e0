package testutil

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/quant"
)

// TinyModernBert is a 6-layer modern-bert as ModernBERT's converter writes
// it: LayerNorms without bias (token_embd_norm on the embeddings, none
// before layer 0's attention), fused attn_qkv and fused GeGLU ffn_up
// without biases, attention over the whole text, a window of 8 (4 either
// side) on the layers il mod 3 ≠ 0 rotating at base 10000, the global
// ones at 160000; 4 heads of 16 (ModernBERT's heads share nothing), mean
// pooling, Q8_0 weights.
func TinyModernBert() ModelSpec {
	return tiny(ModelSpec{
		Arch: "modern-bert", Seed: 53,
		Layers: 6, HeadsKV: 4, RopeBase: 160000, RopeBaseSWA: 10000, NormEps: 1e-5,
		SlidingWindow: 8, SWAPattern: 3, Pooling: 1,
	})
}

// modernBert reports whether s is a modern-bert.
func (s ModelSpec) modernBert() bool { return s.Arch == "modern-bert" }

// checkModernBert checks a modern-bert's sizes: its heads share no keys
// (no head_count_kv is written).
func (s ModelSpec) checkModernBert() error {
	if s.HeadsKV != s.Heads || s.NormEps == 0 {
		return fmt.Errorf("testutil: modern-bert needs HeadsKV (%d) = Heads (%d) and NormEps (%v) set", s.HeadsKV, s.Heads, s.NormEps)
	}
	return nil
}

// modernBertTensors lists a modern-bert's tensors as the converter writes
// them: the embedding and its norm, per block attn_norm (not in block 0),
// attn_qkv, attn_output, ffn_norm, ffn_up (the gate's rows, then the
// up's) and ffn_down, then output_norm.
func (s ModelSpec) modernBertTensors() []tensorSpec {
	e, v, f := int64(s.Embd), int64(s.Vocab), int64(s.FFN)
	q := int64(s.Heads * s.HeadDim)
	norm := dist{1, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	w := s.WeightType
	ts := []tensorSpec{
		{"token_embd.weight", w, []int64{e, v}, dist{0, 1}},
		{"token_embd_norm.weight", quant.F32, []int64{e}, norm},
	}
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		if l > 0 {
			ts = append(ts, tensorSpec{p + "attn_norm.weight", quant.F32, []int64{e}, norm})
		}
		ts = append(ts,
			tensorSpec{p + "attn_qkv.weight", w, []int64{e, 3 * q}, proj(e)},
			tensorSpec{p + "attn_output.weight", w, []int64{q, e}, proj(q)},
			tensorSpec{p + "ffn_norm.weight", quant.F32, []int64{e}, norm},
			tensorSpec{p + "ffn_up.weight", w, []int64{e, 2 * f}, proj(e)},
			tensorSpec{p + "ffn_down.weight", w, []int64{f, e}, proj(f)})
	}
	return append(ts, tensorSpec{"output_norm.weight", quant.F32, []int64{e}, norm})
}
