package model

import (
	"math"
	"slices"
	"testing"
)

// graniteHybridMeta is a granitehybrid header's keys: 4 layers, layer 2
// attending, Mamba-2 layers of inner size 512 (2 × 256) in 8 heads of 2
// groups, state 64, kernel 4; dense (expert_count 0), no RoPE.
func graniteHybridMeta(edit func(m map[string]any)) map[string]any {
	const a = "granitehybrid."
	m := base("granitehybrid")
	m[a+"block_count"] = uint32(4)
	m[a+"attention.head_count_kv"] = []int32{0, 0, 2, 0}
	ssmMeta(m, a, 4, 512, 64, 8, 2)
	m[a+"rope.scaling.finetuned"] = false
	m[a+"expert_count"] = uint32(0)
	m[a+"embedding_scale"] = float32(12)
	m[a+"residual_scale"] = float32(0.22)
	m[a+"attention.scale"] = float32(0.0078125)
	m[a+"logit_scale"] = float32(8)
	edit(m)
	return m
}

// ssmMeta sets a Mamba-2 header's ssm.* sizes under key prefix a.
func ssmMeta(m map[string]any, a string, conv, inner, state, heads, groups uint32) {
	m[a+"ssm.conv_kernel"] = conv
	m[a+"ssm.inner_size"] = inner
	m[a+"ssm.state_size"] = state
	m[a+"ssm.time_step_rank"] = heads
	m[a+"ssm.group_count"] = groups
}

// A granitehybrid header: the per-layer head_count_kv marks the Mamba-2
// layers, the ssm sizes are read and checked, Granite's multipliers are
// optional, expert_count 0 is dense and above 0 experts (of width
// feed_forward_length) with a shared expert; each key it can get wrong is
// refused, naming it.
func TestConfigGraniteHybrid(t *testing.T) {
	c := mustConfig(t, graniteHybridMeta(func(map[string]any) {}))
	if !slices.Equal(c.ConvLayers, []bool{true, true, false, true}) || c.HeadsKV != 2 || c.KVLayers() != 1 || c.KVLayer(2) != 0 ||
		c.SSMConv != 4 || c.SSMInner != 512 || c.SSMState != 64 || c.SSMHeads != 8 || c.SSMGroups != 2 || !c.mamba() ||
		c.ssmConvWidth() != 512+2*2*64 || c.ssmInProj() != 2*512+2*2*64+8 || c.ConvKernel != 0 ||
		c.RopeLayer(2) || c.RopeNeox || c.Experts != 0 || c.EmbedScale != 12 || c.ResidualScale != 0.22 || c.KQScale != 0.0078125 || c.LogitScale != 8 {
		t.Fatalf("config %+v", c)
	}
	if got, want := ConvStateFloats(&c), 3*(3*(512+256)+512*64); got != want {
		t.Errorf("state of %d floats, want %d", got, want)
	}
	moe, err := ConfigFromGGUF(parse(t, graniteHybridMeta(func(m map[string]any) {
		m["granitehybrid.expert_count"] = uint32(8)
		m["granitehybrid.expert_used_count"] = uint32(2)
		m["granitehybrid.expert_shared_feed_forward_length"] = uint32(1024)
	})))
	if err != nil {
		t.Fatal(err)
	}
	if moe.Experts != 8 || moe.ExpertsUsed != 2 || moe.ExpertFFN != 768 || moe.SharedFFN != 1024 || !moe.ExpertNorm || moe.ExpertGating != 0 || !moe.ExpertLayer(0) {
		t.Fatalf("expert config %+v", moe)
	}
	// Without the multipliers (llama.cpp reads them as optional) nothing
	// is scaled, and the softmax scale is 1/sqrt(head size).
	plain, err := ConfigFromGGUF(parse(t, graniteHybridMeta(func(m map[string]any) {
		for _, k := range []string{"embedding_scale", "residual_scale", "attention.scale", "logit_scale", "rope.scaling.finetuned", "expert_count"} {
			delete(m, "granitehybrid."+k)
		}
	})))
	if err != nil {
		t.Fatal(err)
	}
	if plain.EmbedScale != 0 || plain.ResidualScale != 0 || plain.LogitScale != 0 || plain.KQScale != invSqrt(64) || !plain.RopeLayer(2) {
		t.Fatalf("config without multipliers %+v", plain)
	}
	set := func(k string, v any) func(m map[string]any) {
		return func(m map[string]any) { m["granitehybrid."+k] = v }
	}
	del := func(k string) func(m map[string]any) { return func(m map[string]any) { delete(m, "granitehybrid."+k) } }
	refuseHeaders(t, []headerCase{
		{"one count", set("attention.head_count_kv", uint32(2)), ErrBadModel, "head_count_kv"},
		{"no attention", set("attention.head_count_kv", []int32{0, 0, 0, 0}), ErrBadModel, "no layer attends"},
		{"no conv kernel", del("ssm.conv_kernel"), ErrBadModel, "ssm.conv_kernel missing"},
		{"conv kernel 1", set("ssm.conv_kernel", uint32(1)), ErrBadModel, "ssm.conv_kernel = 1"},
		{"conv kernel 0", set("ssm.conv_kernel", uint32(0)), ErrBadModel, "ssm.conv_kernel"},
		{"conv kernel huge", set("ssm.conv_kernel", uint32(1<<20)), ErrBadModel, "ssm.conv_kernel"},
		{"no inner size", del("ssm.inner_size"), ErrBadModel, "ssm.inner_size missing"},
		{"inner size not 2×embedding", set("ssm.inner_size", uint32(768)), ErrBadModel, "ssm.inner_size = 768"},
		{"no state size", del("ssm.state_size"), ErrBadModel, "ssm.state_size missing"},
		{"state size 0", set("ssm.state_size", uint32(0)), ErrBadModel, "ssm.state_size"},
		{"state huge", set("ssm.state_size", uint32(1<<24)), ErrBadModel, "ssm.state_size"},
		{"no heads", del("ssm.time_step_rank"), ErrBadModel, "ssm.time_step_rank missing"},
		{"heads not dividing the inner size", set("ssm.time_step_rank", uint32(7)), ErrBadModel, "ssm.time_step_rank = 7"},
		{"no groups", del("ssm.group_count"), ErrBadModel, "ssm.group_count missing"},
		{"groups not dividing the heads", set("ssm.group_count", uint32(3)), ErrBadModel, "ssm.group_count = 3"},
		{"groups a string", set("ssm.group_count", "2"), ErrBadModel, "ssm.group_count"},
		{"expert count a string", set("expert_count", "8"), ErrBadModel, "expert_count"},
		{"experts used without experts", set("expert_used_count", uint32(2)), ErrBadModel, "expert_used_count"},
		{"logit scale NaN", set("logit_scale", float32(math.NaN())), ErrBadModel, "logit_scale"},
		{"finetuned a string", set("rope.scaling.finetuned", "no"), ErrBadModel, "rope.scaling.finetuned"},
	}, graniteHybridMeta)
	refuseHeaders(t, []headerCase{
		{"experts without a count used", del("expert_used_count"), ErrBadModel, "expert_used_count missing"},
		{"more used than experts", set("expert_used_count", uint32(9)), ErrBadModel, "expert_used_count"},
	}, func(edit func(m map[string]any)) map[string]any {
		return graniteHybridMeta(func(m map[string]any) {
			m["granitehybrid.expert_count"] = uint32(8)
			m["granitehybrid.expert_used_count"] = uint32(2)
			edit(m)
		})
	})
}

// A Mamba-2 state keeps as many checkpoints as its budget holds, at
// least two: Granite 4.0-H-Micro's (36 Mamba-2 layers of 77 MB in all)
// two, LFM2's and the tiny test models' sixteen; and the plan counts what
// they hold.
func TestCheckpointsBoundedByMemory(t *testing.T) {
	micro := Config{Embd: 2048, Layers: 40, ConvLayers: make([]bool, 40), SSMConv: 4, SSMInner: 4096, SSMState: 128, SSMHeads: 64, SSMGroups: 1}
	for il := range micro.ConvLayers {
		micro.ConvLayers[il] = il%10 != 5
	}
	lfm2 := Config{Embd: 2048, Layers: 16, ConvLayers: make([]bool, 16), ConvKernel: 3}
	for il := range 10 {
		lfm2.ConvLayers[il] = true
	}
	for _, tc := range []struct {
		name   string
		c      Config
		floats int
		k      int
	}{
		{"granite-4.0-h-micro", micro, 36 * (3*4352 + 4096*128), 2},
		{"lfm2-1.2b", lfm2, 10 * 2 * 2048, 16},
		{"no recurrent layers", Config{Embd: 64, Layers: 2}, 0, 0},
	} {
		n, k := ConvStateFloats(&tc.c), Checkpoints(&tc.c)
		if n != tc.floats || k != tc.k {
			t.Errorf("%s: %d floats, %d checkpoints; want %d, %d", tc.name, n, k, tc.floats, tc.k)
		}
		if want := int64(4*(1+k)*n + 8*k); ConvStateBytes(&tc.c) != want {
			t.Errorf("%s: ConvStateBytes %d, want %d", tc.name, ConvStateBytes(&tc.c), want)
		}
	}
}

// Tensor dims match a shape, or the shape without trailing 1s, as ggml
// writes them (llama-quantize writes a one-group ssm_norm as [d_inner]);
// not with extra dims of their own.
func TestSameDims(t *testing.T) {
	for _, tc := range []struct {
		dims  []int64
		shape []int
		want  bool
	}{
		{[]int64{4096}, []int{4096, 1}, true},
		{[]int64{4096, 1}, []int{4096}, false},
		{[]int64{64, 64, 1}, []int{64, 64}, false},
		{[]int64{64, 2}, []int{64, 2}, true},
		{[]int64{128}, []int{64, 2}, false},
		{[]int64{64, 2}, []int{64}, false},
		{[]int64{1, 8}, []int{8}, false},
	} {
		if got := sameDims(tc.dims, tc.shape); got != tc.want {
			t.Errorf("sameDims(%v, %v) = %v, want %v", tc.dims, tc.shape, got, tc.want)
		}
	}
}

// A decode step's convolution (ssmConvTask.one) gives the bits of the
// window path (each) that batches take: the outputs, and the state it
// leaves, in place and into another slot, with and without a bias.
func TestSSMConvOneMatchesEach(t *testing.T) {
	c := mustConfig(t, graniteHybridMeta(func(map[string]any) {}))
	W, L, off := c.ssmConvWidth(), c.SSMConv, c.SSMInner
	stride := off + W + 5 // z, then x, B and C, then more
	rnd := func(n int, seed float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(math.Sin(seed*float64(i+1)) * 3)
		}
		return v
	}
	s := &State{m: &Model{Config: c}}
	for _, inPlace := range []bool{true, false} {
		for _, bias := range []bool{true, false} {
			var outs, states [2][]float32
			for i, run := range []func(k *ssmConvTask){func(k *ssmConvTask) { k.one(0, W) }, func(k *ssmConvTask) { k.each(0, W) }} {
				k := ssmConvTask{s: s, n: 1, rows: rnd(stride, 0.37), stride: stride, src: rnd((L-1)*W, 0.71), w: rnd(L*W, 1.3), off: off, width: W}
				k.dst = make([]float32, len(k.src))
				if inPlace {
					k.dst = k.src
				}
				if bias {
					k.b = rnd(W, 2.9)
				}
				run(&k)
				outs[i], states[i] = k.rows, k.dst
			}
			for i := range outs[1] {
				if math.Float32bits(outs[0][i]) != math.Float32bits(outs[1][i]) {
					t.Fatalf("in place %v, bias %v: output %d = %v, the window's %v", inPlace, bias, i, outs[0][i], outs[1][i])
				}
			}
			if !slices.Equal(states[0], states[1]) {
				t.Fatalf("in place %v, bias %v: the states differ", inPlace, bias)
			}
		}
	}
}
