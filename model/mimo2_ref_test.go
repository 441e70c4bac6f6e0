package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// MiMo-V2-Flash (TinyMimo2: split Q, K and V, the output scaled;
// TinyMimo2Fused: attn_qkv, no scale) against the float64 reference
// written from llama.cpp's mimo2 graph — global layers 0 and 3 with one KV
// head, windowed layers 1 and 2 with two, their own RoPE base and
// attention sinks; values narrower than keys; the attention's output
// scaled after attn_output; a dense layer 0, sigmoid routing chosen with
// the selection bias and renormalised — in one pass, in chunks of 4 and
// token by token, within 1e-3. Each ingredient left out (the sinks, the
// window, the value scale, the selection bias, the renormalisation) or
// changed (the window flags for the default alternation, one RoPE base,
// NORM pairs, every dimension rotated, softmax gating) moves the
// reference by more than 1e-2. Measured: 2.4e-6 and 2.7e-6 (AVX-512),
// 3.6e-6 and 3.2e-6 (pure Go), 3.2e-6 and 2.8e-6 (AVX2).
func TestMimo2MatchesReference(t *testing.T) {
	specsMatchReference(t, []refCase{
		{spec: testutil.TinyMimo2(), perturb: []string{"no value scale"}},
		{spec: testutil.TinyMimo2Fused()},
	}, func(m *Model, spec testutil.ModelSpec) bool {
		c := &m.Config
		return c.RopeNeox && c.Sinks && c.HeadsKV == 2 && c.LayerHeadsKV(0) == 1 && c.LayerHeadsKV(1) == 2 && c.LayerHeadsKV(3) == 1 &&
			c.HeadDimK == 16 && c.HeadDimV == 8 && c.RopeDim == 8 && c.Window == 4 && !c.WindowedLayer(0) && c.WindowedLayer(1) &&
			c.WindowedLayer(2) && !c.WindowedLayer(3) && c.RopeBaseSWA == 10000 && (c.AttnOutScale == 0.707) == !spec.Mimo2.Fused &&
			c.ExpertGating == GatingSigmoid && c.ExpertNorm && c.ExpertSelBias && !c.ExpertLayer(0) && c.ExpertLayer(1) &&
			m.Blocks[0].Sinks == nil && m.Blocks[1].Sinks != nil && (m.Blocks[0].Wqkv != nil) == spec.Mimo2.Fused
	}, "no sinks", "no window", "global layers last", "one RoPE base", "NORM pairs", "every dim rotated",
		"no selection bias", "no renormalisation", "softmax gating")
}
