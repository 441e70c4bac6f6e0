package llm

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
)

// TestKVBytesInt4MatchesAllocator checks the planner's INT4 arithmetic
// against what kv.New allocates: 18 bytes per 32 elements of K and V.
func TestKVBytesInt4MatchesAllocator(t *testing.T) {
	for _, c := range []model.Config{
		{Layers: 4, HeadsKV: 2, HeadDimK: 64, HeadDimV: 64},
		{Layers: 3, HeadsKV: 8, HeadDimK: 192, HeadDimV: 128},
		{Layers: 6, HeadsKV: 2, HeadDimK: 32, HeadDimV: 96, Window: 16},
	} {
		for _, cells := range []int{1, 100, 256, 1000} {
			kc := kv.Config{Layers: c.Layers, KVHeads: c.HeadsKV, HeadDimK: c.HeadDimK, HeadDimV: c.HeadDimV,
				Cells: cells, Type: kv.Int4}
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
			if got, want := kvBytes(&c, KVInt4, cells), kcache.Bytes(); got != want {
				t.Errorf("%+v %d cells: planner %d, allocator %d", c, cells, got, want)
			}
		}
	}
	llama8B := model.Config{Layers: 32, HeadsKV: 8, HeadDimK: 128, HeadDimV: 128}
	if got, want := kvBytes(&llama8B, KVInt4, 8192), int64(32*8*8192*(4+4)*18); got != want {
		t.Errorf("llama-3.1-8b int4 8192: %d, want %d (288 MiB)", got, want)
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
	path := writeSpec(t, spec)
	sh, err := readShape(path)
	if err != nil {
		t.Fatal(err)
	}
	set := defaultSettings()
	set.threads, set.batch, set.context = 2, 64, 8192
	totalOf := func(ctx int, kt KVType, w WeightsMode) int64 {
		res := sh.residentWeights()
		if w == WeightsStreaming {
			res = sh.minStreamingWeights()
		}
		return total(sh.components(ctx, kt, w, min(set.batch, ctx), set.threads, res))
	}
	i8 := totalOf(8192, KVInt8, WeightsResident)
	i4 := totalOf(8192, KVInt4, WeightsResident)
	i4short := totalOf(4096, KVInt4, WeightsResident)
	i4floor := totalOf(2048, KVInt4, WeightsResident)
	stream := totalOf(2048, KVInt4, WeightsStreaming)
	if !(i8 > i4 && i4 > i4short && i4short > i4floor && i4floor > stream) {
		t.Fatalf("test shape does not separate the steps: %d %d %d %d %d", i8, i4, i4short, i4floor, stream)
	}
	for _, c := range []struct {
		name  string
		limit int64
		ask   KVType
		fits  bool
		ctx   int
		kv    KVType
		w     WeightsMode
		steps int
	}{
		{"int8 fits", i8, KVF16, true, 8192, KVInt8, WeightsResident, 1},
		{"int4", i8 - 1, KVF16, true, 8192, KVInt4, WeightsResident, 2},
		{"int4 exact", i4, KVF16, true, 8192, KVInt4, WeightsResident, 2},
		{"shorter context", i4short, KVF16, true, 4096, KVInt4, WeightsResident, 3},
		{"streaming", i4floor - 1, KVF16, true, 0, KVInt4, WeightsStreaming, 4},
		{"refuse", stream - 1, KVF16, false, 2048, KVInt4, WeightsStreaming, 3},
		{"int8 asked", i4, KVInt8, true, 8192, KVInt4, WeightsResident, 1},
		{"int4 asked", i4, KVInt4, true, 8192, KVInt4, WeightsResident, 0},
	} {
		s := set
		s.memory, s.kvType = c.limit, c.ask
		p, err := planFor(sh, s)
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
