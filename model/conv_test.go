package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
)

// lfm2Meta is an lfm2 header's keys: 4 layers, layer 2 attending.
func lfm2Meta(edit func(m map[string]any)) map[string]any { return hybridMeta("lfm2", edit) }

// hybridMeta is lfm2Meta for architecture arch (lfm2 or lfm2moe).
func hybridMeta(arch string, edit func(m map[string]any)) map[string]any {
	m := base(arch)
	m[arch+".block_count"] = uint32(4)
	m[arch+".attention.head_count_kv"] = []int32{0, 0, 2, 0}
	m[arch+".shortconv.l_cache"] = uint32(3)
	edit(m)
	return m
}

// lfm2moeMeta is an lfm2moe header's keys: lfm2Meta's layers, the first
// dense, the others 8 experts of width 64, 2 a token, sigmoid-gated.
func lfm2moeMeta(edit func(m map[string]any)) map[string]any {
	return hybridMeta("lfm2moe", func(m map[string]any) {
		m["lfm2moe.expert_count"] = uint32(8)
		m["lfm2moe.expert_used_count"] = uint32(2)
		m["lfm2moe.expert_feed_forward_length"] = uint32(64)
		m["lfm2moe.leading_dense_block_count"] = uint32(1)
		m["lfm2moe.expert_gating_func"] = uint32(2)
		edit(m)
	})
}

// headerCase is a header edited (edit) to be refused with want, the error
// naming mention.
type headerCase struct {
	name    string
	edit    func(m map[string]any)
	want    error
	mention string
}

// refuseHeaders checks that each case's header, meta with its edit, is
// refused as it says.
func refuseHeaders(t *testing.T, cases []headerCase, meta func(edit func(m map[string]any)) map[string]any) {
	t.Helper()
	for _, tc := range cases {
		_, err := ConfigFromGGUF(parse(t, meta(tc.edit)))
		if !errors.Is(err, tc.want) || !strings.Contains(fmt.Sprint(err), tc.mention) {
			t.Errorf("%s: err = %v, want %v mentioning %q", tc.name, err, tc.want, tc.mention)
		}
	}
}

// An lfm2moe header: LFM2's layers, leading dense layers, the gating
// function; each key it can get wrong is refused, naming it.
func TestConfigLFM2MoE(t *testing.T) {
	c := mustConfig(t, lfm2moeMeta(func(map[string]any) {}))
	if !slices.Equal(c.ConvLayers, []bool{true, true, false, true}) || c.Experts != 8 || c.ExpertsUsed != 2 || c.ExpertFFN != 64 ||
		c.DenseLead != 1 || c.ExpertGating != GatingSigmoid || !c.ExpertSelBias || !c.ExpertNorm || c.FFN != 768 ||
		c.ExpertLayer(0) || !c.ExpertLayer(1) || !c.ExpertLayer(3) {
		t.Fatalf("config %+v", c)
	}
	refuseHeaders(t, []headerCase{
		{"gating 0", func(m map[string]any) { m["lfm2moe.expert_gating_func"] = uint32(0) }, ErrUnsupportedArch, "expert_gating_func = 0"},
		{"gating 4", func(m map[string]any) { m["lfm2moe.expert_gating_func"] = uint32(4) }, ErrUnsupportedArch, "expert_gating_func = 4"},
		{"gating a string", func(m map[string]any) { m["lfm2moe.expert_gating_func"] = "sigmoid" }, ErrBadModel, "expert_gating_func"},
		{"no gating", func(m map[string]any) { delete(m, "lfm2moe.expert_gating_func") }, ErrBadModel, "expert_gating_func missing"},
		{"dense lead past the layers", func(m map[string]any) { m["lfm2moe.leading_dense_block_count"] = uint32(5) }, ErrBadModel, "leading_dense_block_count"},
		{"dense lead negative", func(m map[string]any) { m["lfm2moe.leading_dense_block_count"] = int32(-1) }, ErrBadModel, "leading_dense_block_count"},
		{"no dense lead", func(m map[string]any) { delete(m, "lfm2moe.leading_dense_block_count") }, ErrBadModel, "leading_dense_block_count missing"},
		{"dense layers without a width", func(m map[string]any) { delete(m, "lfm2moe.feed_forward_length") }, ErrBadModel, "feed_forward_length"},
		{"no experts", func(m map[string]any) { delete(m, "lfm2moe.expert_count") }, ErrBadModel, "expert_count"},
		{"no expert width", func(m map[string]any) { delete(m, "lfm2moe.expert_feed_forward_length") }, ErrBadModel, "expert_feed_forward_length"},
		{"more used than experts", func(m map[string]any) { m["lfm2moe.expert_used_count"] = uint32(9) }, ErrBadModel, "expert_used_count"},
	}, lfm2moeMeta)
	// Every layer dense is a header llama.cpp takes (it runs no experts);
	// so do these, and a model with no dense layer needs no FFN width.
	for name, edit := range map[string]func(m map[string]any){
		"all dense": func(m map[string]any) { m["lfm2moe.leading_dense_block_count"] = uint32(4) },
		"none dense": func(m map[string]any) {
			m["lfm2moe.leading_dense_block_count"] = uint32(0)
			delete(m, "lfm2moe.feed_forward_length")
		},
	} {
		if _, err := ConfigFromGGUF(parse(t, lfm2moeMeta(edit))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The per-layer head_count_kv marks the conv layers; everything else an
// lfm2 header can get wrong is refused, naming the key.
func TestConfigLFM2(t *testing.T) {
	c := mustConfig(t, lfm2Meta(func(map[string]any) {}))
	if !slices.Equal(c.ConvLayers, []bool{true, true, false, true}) || c.HeadsKV != 2 || c.ConvKernel != 3 ||
		c.KVLayers() != 1 || c.KVLayer(2) != 0 || c.KVLayer(3) != 1 || c.modelLayer(0) != 2 || !c.RopeNeox || !c.QKNorm {
		t.Fatalf("config %+v", c)
	}
	refuseHeaders(t, []headerCase{
		{"one count", func(m map[string]any) { m["lfm2.attention.head_count_kv"] = uint32(2) }, ErrBadModel, "head_count_kv"},
		{"too few counts", func(m map[string]any) { m["lfm2.attention.head_count_kv"] = []int32{0, 2} }, ErrBadModel, "head_count_kv"},
		{"no attention", func(m map[string]any) { m["lfm2.attention.head_count_kv"] = []int32{0, 0, 0, 0} }, ErrBadModel, "no layer attends"},
		{"negative", func(m map[string]any) { m["lfm2.attention.head_count_kv"] = []int32{0, -2, 2, 0} }, ErrBadModel, "head_count_kv[1]"},
		{"counts differ", func(m map[string]any) { m["lfm2.attention.head_count_kv"] = []int32{4, 0, 2, 0} }, ErrUnsupportedArch, "differs"},
		{"count not dividing heads", func(m map[string]any) { m["lfm2.attention.head_count_kv"] = []int32{0, 0, 3, 0} }, ErrBadModel, "head_count_kv"},
		{"no l_cache", func(m map[string]any) { delete(m, "lfm2.shortconv.l_cache") }, ErrBadModel, "shortconv.l_cache"},
		{"l_cache 1", func(m map[string]any) { m["lfm2.shortconv.l_cache"] = uint32(1) }, ErrBadModel, "shortconv.l_cache"},
		{"l_cache huge", func(m map[string]any) { m["lfm2.shortconv.l_cache"] = uint32(1 << 20) }, ErrBadModel, "shortconv.l_cache"},
	}, lfm2Meta)
}

// A State's conv state takes what ConvStateBytes plans, and nothing for a
// model without conv layers.
func TestConvStateBytesIsAllocation(t *testing.T) {
	for _, spec := range append(testutil.TinyRecurrent(), testutil.TinyLlama()) {
		m, st := smallState(t, spec)
		cs := st.Conv()
		got := 4*int64(cap(cs.Cur)+cap(cs.Saved)) + 8*int64(cap(cs.Marks))
		if want := ConvStateBytes(&m.Config); got != want {
			t.Errorf("%s: conv state of %d bytes, planned %d", spec.Arch, got, want)
		}
	}
}

// Restore takes a saved conv state only when it fits the model, its
// checkpoints ascend and none lies past the tokens, and then changes
// nothing on refusal.
func TestConvRestoreRefusals(t *testing.T) {
	m, st := smallState(t, testutil.TinyLFM2())
	out := make([]float32, m.Vocab)
	if err := st.Forward([]int32{1, 2, 3}, 0, out); err != nil {
		t.Fatal(err)
	}
	n := ConvStateFloats(&m.Config)
	ok := func() *ConvState {
		return &ConvState{At: 3, Cur: make([]float32, n), Marks: []int{1, 3}, Saved: make([]float32, 2*n)}
	}
	for name, edit := range map[string]func(cs *ConvState){
		"short state":        func(cs *ConvState) { cs.Cur = cs.Cur[1:] },
		"short checkpoints":  func(cs *ConvState) { cs.Saved = cs.Saved[1:] },
		"marks descend":      func(cs *ConvState) { cs.Marks = []int{3, 1} },
		"mark past the end":  func(cs *ConvState) { cs.Marks = []int{1, 4} },
		"negative position":  func(cs *ConvState) { cs.At = -1 },
		"too many marks":     func(cs *ConvState) { cs.Marks = make([]int, 17); cs.Saved = make([]float32, 17*n) },
		"negative mark":      func(cs *ConvState) { cs.Marks = []int{-1, 3} },
		"repeated mark":      func(cs *ConvState) { cs.Marks = []int{3, 3} },
		"checkpoint of none": func(cs *ConvState) { cs.Cur, cs.Saved, cs.Marks = nil, nil, nil },
	} {
		cs := ok()
		edit(cs)
		before := st.Conv().At
		c, _ := st.NewCache(16)
		if err := st.Restore(c, cs); !errors.Is(err, kv.ErrBadState) {
			t.Errorf("%s: err = %v, want kv.ErrBadState", name, err)
		}
		if st.Conv().At != before || st.Cache() == c {
			t.Errorf("%s: a refused restore changed the state", name)
		}
	}
	// A pass from anywhere but where the state is refuses.
	if err := st.Forward([]int32{4}, 5, out); !errors.Is(err, kv.ErrInvalid) {
		t.Errorf("a pass from 5 with the state at 3: err = %v", err)
	}
}

// smallState loads spec and makes a State of batch 4 and 16 cells on a
// pool of one thread closed with the test.
func smallState(t *testing.T, spec testutil.ModelSpec) (*Model, *State) {
	t.Helper()
	pool := ops.NewPool(1)
	t.Cleanup(pool.Close)
	m, _, _ := loadSpec(t, spec)
	st := newState(t, m, pool, 4, 16)
	return m, st
}
