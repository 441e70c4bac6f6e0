package memplan

import (
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
)

// kvBytes is the planner's KV arithmetic for a model config: kv.Bytes of
// the configuration the model's sessions allocate.
func kvBytes(c *model.Config, t kv.Type, cells int) int64 { return kv.Bytes(c.KVConfig(t, cells)) }

// TestKVBytesMatchesAllocator checks the planner's KV arithmetic against
// what kv.New really allocates.
func TestKVBytesMatchesAllocator(t *testing.T) {
	cfgs := []model.Config{
		{Layers: 4, HeadsKV: 2, HeadDimK: 64, HeadDimV: 64},
		{Layers: 5, HeadsKV: 4, HeadDimK: 8, HeadDimV: 8},
		{Layers: 6, HeadsKV: 2, HeadDimK: 32, HeadDimV: 16, Window: 16},
		{Layers: 3, HeadsKV: 8, HeadDimK: 192, HeadDimV: 128},
		{Layers: 6, HeadsKV: 2, HeadDimK: 32, HeadDimV: 96, Window: 16},
	}
	for _, c := range cfgs {
		for _, kt := range []kv.Type{kv.F16, kv.Int8, kv.Int4} {
			if !kt.HeadDims(c.HeadDimK, c.HeadDimV) {
				continue
			}
			for _, cells := range []int{1, 100, 256, 1000} {
				kcache, err := kv.New(c.KVConfig(kt, cells))
				if err != nil {
					t.Fatal(err)
				}
				if got, want := kvBytes(&c, kt, cells), kcache.Bytes(); got != want {
					t.Errorf("%+v %v %d cells: planner %d, allocator %d", c, kt, cells, got, want)
				}
			}
		}
	}
}

// TestKVBytesKnownShapes pins the KV size of real model shapes.
func TestKVBytesKnownShapes(t *testing.T) {
	llama8B := model.Config{Layers: 32, HeadsKV: 8, HeadDimK: 128, HeadDimV: 128}
	cases := []struct {
		name  string
		c     model.Config
		t     kv.Type
		cells int
		want  int64
	}{
		{"llama-3.1-8b f16 4096", llama8B, kv.F16, 4096, 512 << 20},
		{"llama-3.1-8b f16 8192", llama8B, kv.F16, 8192, 1 << 30},
		// INT8: one byte an element plus a float32 scale per (token, head) row of K and of V.
		{"llama-3.1-8b int8 8192", llama8B, kv.Int8, 8192, 512<<20 + 32*8*8192*8},
		{"llama-3.1-8b f16 131072", llama8B, kv.F16, 131072, 16 << 30},
		// INT4: llama.cpp's q4_0 blocks, 18 bytes per 32 elements of K and of V.
		{"llama-3.1-8b int4 8192", llama8B, kv.Int4, 8192, 32 * 8 * 8192 * (4 + 4) * 18},
		// Gemma-2-9B: 42 layers, half of them windowed to 4096.
		{"gemma-2-9b f16 8192", model.Config{Layers: 42, HeadsKV: 8, HeadDimK: 256, HeadDimV: 256, Window: 4096},
			kv.F16, 8192, 21*8*8192*512*2 + 21*8*4096*512*2},
	}
	for _, c := range cases {
		if got := kvBytes(&c.c, c.t, c.cells); got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, got, c.want)
		}
	}
}

// TestPlanMatchesLoadedModel checks that the components planned from the
// header equal what a loaded model and session really use.
func TestPlanMatchesLoadedModel(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	for _, spec := range []testutil.ModelSpec{testutil.TinyLlama(), testutil.TinyQwen2(), testutil.TinyGemma2(),
		testutil.TinyQwen3(), testutil.TinyGemma3(), testutil.TinyPhi3(), testutil.TinyQwen3MoE()} {
		path := testutil.TempModel(t, spec)
		sh, err := ReadShape(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Make(sh, Request{Limit: 1 << 30, Context: 200, Batch: 32, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.New(testutil.ReadModel(t, path))
		if err != nil {
			t.Fatal(err)
		}
		st, err := m.NewState(ops.NewExec(pool), model.StateOptions{Batch: p.Batch, Cache: p.KVType, Cells: p.Context,
			Initial: InitialCells(p.Context, false)})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]int64{}
		for _, c := range p.Components {
			byName[c.Name] = c.Bytes
		}
		if got, want := byName["kv cache"], st.Cache().Bytes(); got != want {
			t.Errorf("%s: kv planned %d, allocated %d", spec.Arch, got, want)
		}
		if got, want := byName["activations"], int64(m.ScratchBytes(32)); got != want {
			t.Errorf("%s: activations planned %d, model needs %d", spec.Arch, got, want)
		}
		if got, want := byName["activations"], int64(st.Arena().Cap()); got != want {
			t.Errorf("%s: activations planned %d, arena holds %d", spec.Arch, got, want)
		}
		if p.Total != total(p.Components) || !p.Fits || p.Weights != WeightsResident {
			t.Errorf("%s: plan %+v", spec.Arch, p)
		}
		if !strings.Contains(p.String(), "total (predicted peak)") {
			t.Errorf("String() lacks the total:\n%s", p)
		}
	}
}

// TestPlanDegradationOrder sets limits between the totals of successive
// configurations and checks each step of F16 KV → INT8 KV → shorter
// context → streaming → refuse.
func TestPlanDegradationOrder(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.Context = 8192
	spec.WeightType = quant.Q8_0
	spec.Layers = 8
	spec.FFN = 1024
	sh, err := ReadShape(testutil.TempModel(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Threads: 2, Batch: 64}
	totalOf := func(ctx int, kt kv.Type, w WeightsMode) int64 {
		res := sh.ResidentWeights()
		if w == WeightsStreaming {
			res = sh.MinStreamingWeights()
		}
		return total(sh.components(req, ctx, kt, w, res))
	}
	plan := func(limit int64, mut func(*Request)) Plan {
		r := req
		r.Limit = limit
		if mut != nil {
			mut(&r)
		}
		p, err := Make(sh, r)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f16 := totalOf(8192, kv.F16, WeightsResident)
	i8 := totalOf(8192, kv.Int8, WeightsResident)
	i8short := totalOf(4096, kv.Int8, WeightsResident)
	i8floor := totalOf(2048, kv.Int8, WeightsResident)
	stream := totalOf(2048, kv.Int8, WeightsStreaming)
	if !(f16 > i8 && i8 > i8short && i8short > i8floor && i8floor > stream) {
		t.Fatalf("test shape does not separate the steps: %d %d %d %d %d", f16, i8, i8short, i8floor, stream)
	}
	cases := []struct {
		name  string
		limit int64
		mut   func(*Request)
		fits  bool
		ctx   int
		kv    kv.Type
		w     WeightsMode
		steps int
	}{
		{"fits as asked", f16, nil, true, 8192, kv.F16, WeightsResident, 0},
		{"int8", f16 - 1, nil, true, 8192, kv.Int8, WeightsResident, 1},
		{"int8 exact", i8, nil, true, 8192, kv.Int8, WeightsResident, 1},
		{"shorter context", i8short, nil, true, 4096, kv.Int8, WeightsResident, 2},
		{"streaming", i8floor - 1, nil, true, 0, kv.Int8, WeightsStreaming, 3},
		{"refuse", stream - 1, nil, false, 2048, kv.Int8, WeightsStreaming, 2},
		{"strict refuses", f16 - 1, func(r *Request) { r.Strict = true }, false, 8192, kv.F16, WeightsResident, 0},
		{"resident forced: no streaming", i8floor - 1, func(r *Request) { r.Weights = WeightsResident }, false, 2048, kv.Int8, WeightsResident, 1},
		{"int8 asked: no f16 step", i8, func(r *Request) { r.KVType = kv.Int8 }, true, 8192, kv.Int8, WeightsResident, 0},
	}
	for _, c := range cases {
		p := plan(c.limit, c.mut)
		if p.Fits != c.fits || (c.ctx != 0 && p.Context != c.ctx) || p.KVType != c.kv || p.Weights != c.w || len(p.Steps) != c.steps {
			t.Errorf("%s (limit %d): fits=%v ctx=%d kv=%v weights=%v steps=%q reason=%q",
				c.name, c.limit, p.Fits, p.Context, p.KVType, p.Weights, p.Steps, p.Reason)
		}
		if p.Fits && p.Total > c.limit {
			t.Errorf("%s: fits with total %d over limit %d", c.name, p.Total, c.limit)
		}
		if !p.Fits && p.Reason == "" {
			t.Errorf("%s: no reason given", c.name)
		}
	}
}

// TestPlanDegradationInt4 checks the INT4 step of F16 KV → INT8 KV → INT4
// KV → shorter context → streaming, on a model whose head size (32) allows
// INT4; TestPlanDegradationOrder covers one whose head size (16) does not,
// where INT8 goes straight to a shorter context.
func TestPlanDegradationInt4(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.Context, spec.WeightType, spec.Layers, spec.FFN = 8192, quant.Q8_0, 8, 1024
	spec.HeadDim = 32
	sh, err := ReadShape(testutil.TempModel(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Threads: 2, Batch: 64}
	totalOf := func(ctx int, kt kv.Type, w WeightsMode) int64 {
		res := sh.ResidentWeights()
		if w == WeightsStreaming {
			res = sh.MinStreamingWeights()
		}
		return total(sh.components(req, ctx, kt, w, res))
	}
	i8 := totalOf(8192, kv.Int8, WeightsResident)
	i4 := totalOf(8192, kv.Int4, WeightsResident)
	i4short := totalOf(4096, kv.Int4, WeightsResident)
	i4floor := totalOf(2048, kv.Int4, WeightsResident)
	stream := totalOf(2048, kv.Int4, WeightsStreaming)
	if !(i8 > i4 && i4 > i4short && i4short > i4floor && i4floor > stream) {
		t.Fatalf("test shape does not separate the steps: %d %d %d %d %d", i8, i4, i4short, i4floor, stream)
	}
	for _, c := range []struct {
		name  string
		limit int64
		ask   kv.Type
		fits  bool
		ctx   int
		kv    kv.Type
		w     WeightsMode
		steps int
	}{
		{"int8 fits", i8, kv.F16, true, 8192, kv.Int8, WeightsResident, 1},
		{"int4", i8 - 1, kv.F16, true, 8192, kv.Int4, WeightsResident, 2},
		{"int4 exact", i4, kv.F16, true, 8192, kv.Int4, WeightsResident, 2},
		{"shorter context", i4short, kv.F16, true, 4096, kv.Int4, WeightsResident, 3},
		{"streaming", i4floor - 1, kv.F16, true, 0, kv.Int4, WeightsStreaming, 4},
		{"refuse", stream - 1, kv.F16, false, 2048, kv.Int4, WeightsStreaming, 3},
		{"int8 asked", i4, kv.Int8, true, 8192, kv.Int4, WeightsResident, 1},
		{"int4 asked", i4, kv.Int4, true, 8192, kv.Int4, WeightsResident, 0},
	} {
		r := req
		r.Limit, r.KVType = c.limit, c.ask
		p, err := Make(sh, r)
		if err != nil {
			t.Fatal(err)
		}
		if p.Fits != c.fits || (c.ctx != 0 && p.Context != c.ctx) || p.KVType != c.kv || p.Weights != c.w || len(p.Steps) != c.steps {
			t.Errorf("%s (limit %d): fits=%v ctx=%d kv=%v weights=%v steps=%q reason=%q",
				c.name, c.limit, p.Fits, p.Context, p.KVType, p.Weights, p.Steps, p.Reason)
		}
		if p.Fits && p.Total > c.limit {
			t.Errorf("%s: fits with total %d over limit %d", c.name, p.Total, c.limit)
		}
	}
}

// TestPlanSessions checks that a plan for several sessions counts each
// one's KV cache, resize, activations and session memory, and nothing
// else more than once, so its KV limit leaves room for every cache.
func TestPlanSessions(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.Context = 8192
	sh, err := ReadShape(testutil.TempModel(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	r := Request{Threads: 2, Batch: 64, Limit: 1 << 30}
	one, err := Make(sh, r)
	if err != nil {
		t.Fatal(err)
	}
	r.Sessions = 3
	three, err := Make(sh, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Components) != len(three.Components) || one.Sessions != 1 || three.Sessions != 3 {
		t.Fatalf("components %d and %d, sessions %d and %d", len(one.Components), len(three.Components), one.Sessions, three.Sessions)
	}
	var perSession, kv1 int64
	for i, c := range one.Components {
		got := three.Components[i].Bytes
		switch c.Name {
		case KVComponent, KVResizeComponent, "activations", "session":
			perSession += c.Bytes
			if got != 3*c.Bytes {
				t.Errorf("%s: %d for 3 sessions, %d for one", c.Name, got, c.Bytes)
			}
			if c.Name == KVComponent {
				kv1 = c.Bytes
			}
		default:
			if got != c.Bytes {
				t.Errorf("%s: %d for 3 sessions, %d for one", c.Name, got, c.Bytes)
			}
		}
	}
	if three.Total != one.Total+2*perSession {
		t.Errorf("total %d for 3 sessions, %d for one (+2×%d)", three.Total, one.Total, perSession)
	}
	if three.KVLimit() < 3*kv1 || !strings.Contains(three.String(), "3 sessions") {
		t.Errorf("KV limit %d for three caches of %d; plan:\n%s", three.KVLimit(), kv1, three)
	}
}
