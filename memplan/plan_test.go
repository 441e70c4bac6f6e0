package memplan

import (
	"fmt"
	"slices"
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
		// INT4: llama.cpp's q4_0 blocks, 18 bytes per 32 elements of K and of
		// V, and per layer 144 positions in F16 (kv.DefaultRecent and 16
		// sinks) with a 4-byte position tag each.
		{"llama-3.1-8b int4 8192", llama8B, kv.Int4, 8192, 32*8*8192*(4+4)*18 + 32*(144*8*256*2+144*4)},
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
	for _, spec := range testutil.TinySpecs() {
		path, _, p := tinyPlan(t, spec)
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
		// An encoder's text is one forward pass: its batch is the context.
		if want := map[bool]int{false: 32, true: 200}[m.NonCausal]; p.Batch != want {
			t.Errorf("%s: batch %d, want %d", spec.Arch, p.Batch, want)
		}
		if got, want := byName["activations"], int64(m.ScratchBytes(p.Batch)); got != want {
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

// totalOf is the predicted total of a configuration: with streaming
// weights, the least it runs in (every block read from disk).
func totalOf(sh *Shape, req Request, ctx int, kt kv.Type, w WeightsMode) int64 {
	cs, res, _ := sh.components(req, 1<<50, ctx, kt, WeightsResident)
	t := total(cs)
	if w == WeightsStreaming {
		t += res.Weights(len(res.Order)) - res.Weights(0)
	}
	return t
}

// TestPlanDegradationOrder sets limits between the totals of successive
// configurations and checks each step of F16 KV → INT8 KV → streaming →
// shorter context → refuse.
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
	f16 := totalOf(sh, req, 8192, kv.F16, WeightsResident)
	i8 := totalOf(sh, req, 8192, kv.Int8, WeightsResident)
	stream := totalOf(sh, req, 8192, kv.Int8, WeightsStreaming)
	streamShort := totalOf(sh, req, 4096, kv.Int8, WeightsStreaming)
	streamFloor := totalOf(sh, req, 2048, kv.Int8, WeightsStreaming)
	i8short := totalOf(sh, req, 4096, kv.Int8, WeightsResident)
	if !(f16 > i8 && i8 > stream && stream > streamShort && streamShort > streamFloor && i8 > i8short) {
		t.Fatalf("test shape does not separate the steps: %d %d %d %d %d", f16, i8, stream, streamShort, streamFloor)
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
		{"streaming", i8 - 1, nil, true, 8192, kv.Int8, WeightsStreaming, 2},
		{"streaming exact", stream, nil, true, 8192, kv.Int8, WeightsStreaming, 2},
		{"shorter context", streamShort, nil, true, 4096, kv.Int8, WeightsStreaming, 3},
		{"refuse", streamFloor - 1, nil, false, 2048, kv.Int8, WeightsStreaming, 2},
		{"strict refuses", f16 - 1, func(r *Request) { r.Strict = true }, false, 8192, kv.F16, WeightsResident, 0},
		{"resident forced: shorter context", i8short, func(r *Request) { r.Weights = WeightsResident }, true, 4096, kv.Int8, WeightsResident, 2},
		{"int8 asked: no f16 step", i8, func(r *Request) { r.KVType = kv.Int8 }, true, 8192, kv.Int8, WeightsResident, 0},
		{"streaming forced", stream, func(r *Request) { r.Weights, r.KVType = WeightsStreaming, kv.Int8 }, true, 8192, kv.Int8, WeightsStreaming, 0},
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
// KV → streaming, on a model whose head size (32) allows INT4;
// TestPlanDegradationOrder covers one whose head size (16) does not, where
// INT8 goes straight to streaming.
func TestPlanDegradationInt4(t *testing.T) {
	sh := int4Shape(t, 8192, 1024)
	req := Request{Threads: 2, Batch: 64}
	i8 := totalOf(sh, req, 8192, kv.Int8, WeightsResident)
	i4 := totalOf(sh, req, 8192, kv.Int4, WeightsResident)
	stream := totalOf(sh, req, 8192, kv.Int4, WeightsStreaming)
	streamShort := totalOf(sh, req, 4096, kv.Int4, WeightsStreaming)
	streamFloor := totalOf(sh, req, 2048, kv.Int4, WeightsStreaming)
	if !(i8 > i4 && i4 > stream && stream > streamShort && streamShort > streamFloor) {
		t.Fatalf("test shape does not separate the steps: %d %d %d %d %d", i8, i4, stream, streamShort, streamFloor)
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
		{"streaming", i4 - 1, kv.F16, true, 8192, kv.Int4, WeightsStreaming, 3},
		{"shorter context", streamShort, kv.F16, true, 4096, kv.Int4, WeightsStreaming, 4},
		{"refuse", streamFloor - 1, kv.F16, false, 2048, kv.Int4, WeightsStreaming, 3},
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

// TestPlanStreamingKeepsKV: a model that must stream its weights whatever
// its KV type keeps the requested F16 cache when that costs at most a 32nd
// of the limit more at the full context (a short context beside large
// weights, as a mixture-of-experts model's few megabytes of cache beside
// its experts), and stays degraded when the cache is a large part of the
// memory (a long context), which then goes to the weights.
func TestPlanStreamingKeepsKV(t *testing.T) {
	req := Request{Threads: 2, Batch: 64}
	for _, c := range []struct {
		name     string
		ctx, ffn int
		kv       kv.Type
		steps    int
	}{
		{"short context: F16 kept", 512, 4096, kv.F16, 1},
		{"long context: INT4", 8192, 16384, kv.Int4, 3},
	} {
		sh := int4Shape(t, c.ctx, c.ffn)
		limit := totalOf(sh, req, c.ctx, kv.Int4, WeightsResident) - 1
		if f16 := totalOf(sh, req, c.ctx, kv.F16, WeightsStreaming); f16 > limit {
			t.Fatalf("%s: streaming with an F16 cache (%d) does not fit the limit %d: the test shape tests nothing", c.name, f16, limit)
		}
		p, err := Make(sh, req2(req, limit))
		if err != nil {
			t.Fatal(err)
		}
		if !p.Fits || p.Weights != WeightsStreaming || p.KVType != c.kv || len(p.Steps) != c.steps || p.Total > limit {
			t.Errorf("%s: fits=%v weights=%v kv=%v steps=%q total %d of %d", c.name, p.Fits, p.Weights, p.KVType, p.Steps, p.Total, limit)
		}
		f16, i4 := totalOf(sh, req, c.ctx, kv.F16, WeightsStreaming), totalOf(sh, req, c.ctx, kv.Int4, WeightsStreaming)
		t.Logf("%s: KV F16 costs %d more than INT4, a 32nd of the limit is %d", c.name, f16-i4, limit/32)
	}
}

func TestStreamOrder(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{1, "[0]"},
		{2, "[1 0]"},
		{8, "[4 0 2 6 1 3 5 7]"},
		{10, "[5 0 2 7 1 3 4 6 8 9]"},
	} {
		if got := fmt.Sprint(DiskOrder(tc.n)); got != tc.want {
			t.Errorf("DiskOrder(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
	for n := range 70 {
		o := DiskOrder(n)
		if len(o) != n || !slices.Equal(slices.Sorted(slices.Values(o)), seq(n)) {
			t.Fatalf("DiskOrder(%d) = %v is not a permutation", n, o)
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestResidencySchedule checks the plan's prediction of which blocks are
// read from disk as a session fills its context, against the arithmetic
// done by hand: blocks leave in DiskOrder, the fewest that leave room,
// the buffers paid for by the first ones.
func TestResidencySchedule(t *testing.T) {
	r := Residency{
		Pool: 1000, Buffers: 150, Blocks: []int64{100, 100, 100, 100, 100, 100, 100, 100},
		Order: DiskOrder(8), Batch: 64,
		KV: (&model.Config{Layers: 1, HeadsKV: 1, HeadDimK: 16, HeadDimV: 16}).KVConfig(kv.F16, 2048), // 64 bytes a cell
	}
	for _, tc := range []struct {
		kv   int64
		n    int
		fits bool
	}{
		{0, 0, true}, {200, 0, true}, {201, 2, true}, {250, 2, true}, {251, 3, true},
		{750, 7, true}, {850, 8, true}, {851, 8, false},
	} {
		if n, ok := r.OnDisk(tc.kv); n != tc.n || ok != tc.fits {
			t.Errorf("OnDisk(%d) = %d, %v; want %d, %v", tc.kv, n, ok, tc.n, tc.fits)
		}
	}
	if r.MaxKV() != 850 || r.Weights(0) != 800 || r.Weights(2) != 750 {
		t.Errorf("MaxKV %d, Weights(0) %d, Weights(2) %d", r.MaxKV(), r.Weights(0), r.Weights(2))
	}
	// One session, 256 bytes a cell (4 layers of 64), blocks of 64 KiB,
	// buffers of 128 KiB, and a pool that holds every block beside 256
	// cells and 16 KiB: each growth by 256 cells (the room is always
	// short) sends the blocks out that pay for it and for the old layer
	// it holds meanwhile (a layer of the old size). Done by hand.
	const K = 1 << 10
	r = Residency{
		Pool: 8*64*K + 64*K + 16*K, Buffers: 128 * K, Blocks: slices.Repeat([]int64{64 * K}, 8),
		Order: DiskOrder(8), Batch: 64,
		KV: (&model.Config{Layers: 4, HeadsKV: 1, HeadDimK: 16, HeadDimV: 16}).KVConfig(kv.F16, 2048),
	}
	var got []string
	for _, p := range r.Schedule(10, 0) {
		got = append(got, fmt.Sprintf("%d:%d:%d", p.Tokens, p.Cells, len(p.OnDisk)))
		_, transient := kv.GrowBytes(r.KV, max(p.Cells-256, 1), p.Cells)
		if p.Tokens == 0 {
			transient = 0
		}
		if want := 10 + r.Weights(len(p.OnDisk)) + p.KV + transient; p.Total != want {
			t.Errorf("point %+v: total %d, want %d", p, p.Total, want)
		}
		if p.DiskBytes != int64(len(p.OnDisk))*64*K {
			t.Errorf("point %+v: disk bytes %d", p, p.DiskBytes)
		}
	}
	// At 1600 tokens the cache cannot grow even with every block on disk.
	if want := "[0:256:0 320:512:3 576:768:5 832:1024:6 1088:1280:7 1344:1536:8]"; fmt.Sprint(got) != want {
		t.Errorf("schedule %v, want %s", got, want)
	}
	// The pool is full at 320 and 576 tokens (the growths that moved
	// blocks out exactly paid for themselves), not at 832.
	if peak := r.PeakAt(10, 1000); peak != r.Pool+10 {
		t.Errorf("PeakAt(1000) = %d, want %d", peak, r.Pool+10)
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

// TestPlanInt4WithoutRecent: with streaming weights, a plan whose INT4
// caches' F16 copies of recent positions would move a block to disk at the
// start goes without them (Plan.KVNoRecent, a step saying so), and then
// reads fewer blocks from disk; where they cost no block they stay.
func TestPlanInt4WithoutRecent(t *testing.T) {
	// Blocks large beside the KV cache, as a quantized 8B's are.
	sh := int4Shape(t, 2048, 4096)
	req := Request{Threads: 2, Batch: 64, KVType: kv.Int4}
	hi := totalOf(sh, req, 2048, kv.Int4, WeightsResident) - 1
	atStart := func(p Plan) int { n, _ := p.Residency.OnDisk(p.InitialKV); return n }
	// Limits a third of the copies' bytes apart, so that some fall where
	// the copies decide a block.
	kc := sh.Config.KVConfig(kv.Int4, 2048)
	withBytes := kv.Bytes(kc)
	kc.Recent = 0
	step := max((withBytes-kv.Bytes(kc))/3, 1)
	var dropped, kept int
	for limit := hi; limit > hi-sh.FileBytes; limit -= step {
		r := req
		r.Limit = limit
		p, err := Make(sh, r)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Fits || p.Context != 2048 || p.Weights != WeightsStreaming {
			break
		}
		r.KVNoRecent = true
		without, err := Make(sh, r)
		if err != nil {
			t.Fatal(err)
		}
		with, err := choose(sh, req2(req, limit))
		if err != nil {
			t.Fatal(err)
		}
		if p.KVNoRecent {
			dropped++
			if atStart(p) != atStart(without) || atStart(p) >= atStart(with) || p.Total != without.Total {
				t.Errorf("limit %d: without F16 copies %d blocks on disk at the start (total %d); asked without them %d (%d), with them %d",
					limit, atStart(p), p.Total, atStart(without), without.Total, atStart(with))
			}
			if last := p.Steps[len(p.Steps)-1]; !strings.Contains(last, "without F16 copies") {
				t.Errorf("limit %d: last step %q", limit, last)
			}
		} else {
			kept++
			if atStart(p) > atStart(without) {
				t.Errorf("limit %d: kept the F16 copies with %d blocks on disk at the start, %d without", limit, atStart(p), atStart(without))
			}
		}
	}
	t.Logf("%d limits: %d plans without the F16 copies, %d with", dropped+kept, dropped, kept)
	if dropped == 0 || kept == 0 {
		t.Errorf("of the limits tried, %d plans dropped the F16 copies and %d kept them; want some of each", dropped, kept)
	}
}

// int4Shape is the shape of an 8-layer Q8_0 tiny-llama whose head size
// (32) allows INT4, of the given context and feed-forward width.
func int4Shape(t *testing.T, ctx, ffn int) *Shape {
	t.Helper()
	spec := testutil.TinyLlama()
	spec.Context, spec.WeightType, spec.Layers, spec.FFN = ctx, quant.Q8_0, 8, ffn
	spec.HeadDim = 32
	sh, err := ReadShape(testutil.TempModel(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// req2 is r with the limit set.
func req2(r Request, limit int64) Request {
	r.Limit = limit
	return r
}

// bert's learned positions end at its trained context: a plan asking for
// more stops there. An encoder has no output matrix: only the rows of its
// embedding the tokens read count as resident, as for an untied one.
func TestPlanEncoder(t *testing.T) {
	spec := testutil.TinyBert()
	spec.WeightType = quant.F32 // an embedding of several pages
	sh, err := ReadShape(testutil.TempModel(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(sh, Request{Limit: 1 << 30, Context: 4096, Batch: 32, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p.Context != spec.Context || p.Batch != spec.Context || len(p.Steps) != 0 {
		t.Errorf("context %d, batch %d, steps %q: want both %d, no degradation", p.Context, p.Batch, p.Steps, spec.Context)
	}
	// A real embedding (nomic-embed-text's, Q8_0) is larger than the rows
	// a session is assumed to touch.
	big := &Shape{Config: model.Config{Encoder: true}, FileBytes: 150 << 20, EmbedBytes: 24 << 20, EmbedRow: 816}
	if got, want := big.ResidentWeights(), int64(150<<20-24<<20+embedRowsPerRun*4096); got != want {
		t.Errorf("an encoder's resident weights %d, want %d: the embedding's untouched rows stay out", got, want)
	}
	big.Config.Encoder = false
	if got := big.ResidentWeights(); got != big.FileBytes {
		t.Errorf("a tied decoder's resident weights %d, want the whole file", got)
	}
}

// Gemma 3n's per-layer embeddings are read a token's row at a time, as an
// untied embedding is: only the rows of the tokens seen count as resident
// (the table is most of E2B's file: 262400 rows of 7680 weights), so a
// budget that holds the rest plans the model resident. Its token
// embedding is the output matrix too: all of it counts.
func TestPlanPerLayerEmbeddings(t *testing.T) {
	sh, err := ReadShape(testutil.TempModel(t, testutil.TinyGemma3n()))
	if err != nil {
		t.Fatal(err)
	}
	if sh.PerLayerBytes == 0 || sh.PerLayerRow != sh.PerLayerBytes/int64(sh.Vocab) {
		t.Fatalf("per-layer embeddings %d bytes, row %d", sh.PerLayerBytes, sh.PerLayerRow)
	}
	// E2B's sizes, its per-layer rows in Q8_0 (8160 bytes: two pages).
	row := int64(7680 / 32 * 34)
	e2b := &Shape{Config: sh.Config, FileBytes: 4_500_000_000, PerLayerBytes: 262400 * row, PerLayerRow: row, EmbedBytes: 500 << 20, EmbedRow: 2048}
	want := e2b.FileBytes - e2b.PerLayerBytes + embedRowsPerRun*2*4096
	if got := e2b.ResidentWeights(); got != want {
		t.Errorf("resident weights %d, want %d: the untouched per-layer rows stay out, the tied embedding in", got, want)
	}
	p, err := Make(e2b, Request{Limit: 3 << 30, Context: 512, Batch: 32, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Fits || p.Weights != WeightsResident {
		t.Errorf("a 3 GiB limit for a 4.5 GB file whose per-layer rows are 2.1 GB: fits %v, weights %v; want resident", p.Fits, p.Weights)
	}
}

// An lfm2 session's conv state and a mamba2 session's recurrent state,
// and their checkpoints, are planned with the session: exactly what a
// State allocates for them.
func TestPlanCountsConvState(t *testing.T) {
	for _, tc := range []struct {
		spec   testutil.ModelSpec
		floats int64 // a state
	}{
		// 3 conv layers × 2 rows × 64 floats.
		{testutil.TinyLFM2(), 3 * 2 * 64},
		// 3 Mamba-2 layers of llama.cpp's n_embd_r, (d_conv-1)·(d_inner +
		// 2·groups·d_state), and n_embd_s, d_state·d_inner.
		{testutil.TinyMamba2(), 3 * ((4-1)*(128+2*2*16) + 16*128)},
	} {
		_, sh, p := tinyPlan(t, tc.spec)
		cb := model.ConvStateBytes(&sh.Config)
		// 17 copies, and 16 positions.
		if cb != 4*17*tc.floats+8*16 {
			t.Fatalf("%s: ConvStateBytes %d", tc.spec.Arch, cb)
		}
		for _, c := range p.Components {
			if c.Name == "session" && (c.Bytes < cb || !strings.Contains(c.Note, "conv state")) {
				t.Errorf("%s: session component %d bytes (%s) without the conv state's %d", tc.spec.Arch, c.Bytes, c.Note, cb)
			}
		}
	}
}

// tinyPlan writes spec to a file and plans it: a context of 200 in 1 GiB,
// batches of 32 on 2 threads.
func tinyPlan(t *testing.T, spec testutil.ModelSpec) (string, *Shape, Plan) {
	t.Helper()
	path := testutil.TempModel(t, spec)
	sh, err := ReadShape(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(sh, Request{Limit: 1 << 30, Context: 200, Batch: 32, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	return path, sh, p
}
