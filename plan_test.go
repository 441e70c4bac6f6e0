package llm

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
)

func writeSpec(t *testing.T, s testutil.ModelSpec) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.gguf")
	if err := testutil.WriteModelFile(p, s); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestKVBytesMatchesAllocator checks the planner's KV arithmetic against
// what kv.New really allocates.
func TestKVBytesMatchesAllocator(t *testing.T) {
	cfgs := []model.Config{
		{Layers: 4, HeadsKV: 2, HeadDimK: 64, HeadDimV: 64},
		{Layers: 5, HeadsKV: 4, HeadDimK: 8, HeadDimV: 8},
		{Layers: 6, HeadsKV: 2, HeadDimK: 32, HeadDimV: 16, Window: 16},
	}
	for _, c := range cfgs {
		for _, kt := range []KVType{KVF16, KVInt8} {
			for _, cells := range []int{1, 100, 256, 1000} {
				kc := kv.Config{Layers: c.Layers, KVHeads: c.HeadsKV, HeadDimK: c.HeadDimK, HeadDimV: c.HeadDimV,
					Cells: cells, Type: kv.Type(kt)}
				if c.Window > 0 {
					kc.Windows = make([]int, c.Layers)
					for il := range kc.Windows {
						if c.WindowedLayer(il) {
							kc.Windows[il] = c.Window
						}
					}
				}
				kcache, err := kv.New(kc)
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
		t     KVType
		cells int
		want  int64
	}{
		{"llama-3.1-8b f16 4096", llama8B, KVF16, 4096, 512 << 20},
		{"llama-3.1-8b f16 8192", llama8B, KVF16, 8192, 1 << 30},
		// INT8: one byte an element plus a float32 scale per (token, head) row of K and of V.
		{"llama-3.1-8b int8 8192", llama8B, KVInt8, 8192, 512<<20 + 32*8*8192*8},
		{"llama-3.1-8b f16 131072", llama8B, KVF16, 131072, 16 << 30},
		// Gemma-2-9B: 42 layers, half of them windowed to 4096.
		{"gemma-2-9b f16 8192", model.Config{Layers: 42, HeadsKV: 8, HeadDimK: 256, HeadDimV: 256, Window: 4096},
			KVF16, 8192, 21*8*8192*512*2 + 21*8*4096*512*2},
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
	for _, spec := range []testutil.ModelSpec{testutil.TinyLlama(), testutil.TinyQwen2(), testutil.TinyGemma2()} {
		path := writeSpec(t, spec)
		m, err := Load(path, WithMemoryLimit(1<<30), WithContextSize(200), WithBatchSize(32))
		if err != nil {
			t.Fatal(err)
		}
		p := m.Plan()
		s, err := m.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]int64{}
		for _, c := range p.Components {
			byName[c.Name] = c.Bytes
		}
		if got, want := byName["kv cache"], s.st.Cache().Bytes(); got != want {
			t.Errorf("%s: kv planned %d, allocated %d", spec.Arch, got, want)
		}
		if got, want := byName["activations"], int64(m.m.ScratchBytes(32)); got != want {
			t.Errorf("%s: activations planned %d, model needs %d", spec.Arch, got, want)
		}
		if got, want := byName["activations"], int64(s.st.Arena().Cap()); got != want {
			t.Errorf("%s: activations planned %d, arena holds %d", spec.Arch, got, want)
		}
		if p.Total != total(p.Components) || !p.Fits || p.Weights != WeightsResident {
			t.Errorf("%s: plan %+v", spec.Arch, p)
		}
		if !strings.Contains(p.String(), "total (predicted peak)") {
			t.Errorf("String() lacks the total:\n%s", p)
		}
		s.Close()
		m.Close()
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
	path := writeSpec(t, spec)
	sh, err := readShape(path)
	if err != nil {
		t.Fatal(err)
	}
	set := defaultSettings()
	set.threads, set.batch = 2, 64
	totalOf := func(ctx int, kt KVType, w WeightsMode) int64 {
		res := sh.residentWeights()
		if w == WeightsStreaming {
			res = sh.minStreamingWeights()
		}
		return total(sh.components(ctx, kt, w, min(set.batch, ctx), set.threads, res))
	}
	plan := func(limit int64, mut func(*settings)) MemoryPlan {
		s := set
		s.memory = limit
		if mut != nil {
			mut(&s)
		}
		p, err := planFor(sh, s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f16 := totalOf(8192, KVF16, WeightsResident)
	i8 := totalOf(8192, KVInt8, WeightsResident)
	i8short := totalOf(4096, KVInt8, WeightsResident)
	i8floor := totalOf(2048, KVInt8, WeightsResident)
	stream := totalOf(2048, KVInt8, WeightsStreaming)
	if !(f16 > i8 && i8 > i8short && i8short > i8floor && i8floor > stream) {
		t.Fatalf("test shape does not separate the steps: %d %d %d %d %d", f16, i8, i8short, i8floor, stream)
	}
	cases := []struct {
		name  string
		limit int64
		mut   func(*settings)
		fits  bool
		ctx   int
		kv    KVType
		w     WeightsMode
		steps int
	}{
		{"fits as asked", f16, nil, true, 8192, KVF16, WeightsResident, 0},
		{"int8", f16 - 1, nil, true, 8192, KVInt8, WeightsResident, 1},
		{"int8 exact", i8, nil, true, 8192, KVInt8, WeightsResident, 1},
		{"shorter context", i8short, nil, true, 4096, KVInt8, WeightsResident, 2},
		{"streaming", i8floor - 1, nil, true, 0, KVInt8, WeightsStreaming, 3},
		{"refuse", stream - 1, nil, false, 2048, KVInt8, WeightsStreaming, 2},
		{"strict refuses", f16 - 1, func(s *settings) { s.strict = true }, false, 8192, KVF16, WeightsResident, 0},
		{"resident forced: no streaming", i8floor - 1, func(s *settings) { s.weights = WeightsResident }, false, 2048, KVInt8, WeightsResident, 1},
		{"int8 asked: no f16 step", i8, func(s *settings) { s.kvType = KVInt8 }, true, 8192, KVInt8, WeightsResident, 0},
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
	// Load refuses before touching the weights.
	if _, err := Load(path, WithMemoryLimit(stream-1), WithContextSize(8192), WithThreads(2), WithBatchSize(64)); !errors.Is(err, ErrOutOfMemoryBudget) {
		t.Errorf("Load over budget: err = %v, want ErrOutOfMemoryBudget", err)
	}
	pp, err := Plan(path, WithMemoryLimit(i8), WithContextSize(8192), WithThreads(2), WithBatchSize(64))
	if err != nil || pp.KVType != KVInt8 || !pp.Fits {
		t.Errorf("Plan: %+v %v", pp, err)
	}
}
