package model

import (
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/floatbits"
	"github.com/lowmem/llm/internal/testutil"
)

// A decode pass of a granitehybrid State copies no recurrent state: it
// reads the newest checkpoint's slot and writes another, which becomes the
// newest, while the slot it read stays the previous checkpoint, bit for
// bit as before the pass; the slots never move, and with a state so large
// that it keeps two checkpoints the pass's slot rotates through all three.
func TestDecodeRotatesSlots(t *testing.T) {
	big := testutil.TinyGraniteHybrid()
	big.SSMState = 4096
	for _, tc := range []struct {
		name  string
		spec  testutil.ModelSpec
		slots int // distinct slots the decode steps write
	}{
		{"granitehybrid", testutil.TinyGraniteHybrid(), 8},
		{"granitehybrid/big", big, 3},
		{"lfm2", testutil.TinyLFM2(), 8},
		{"qwen35", testutil.TinyQwen35(), 8},
		{"qwen35moe", testutil.TinyQwen35MoE(), 8},
		{"qwen3next", testutil.TinyQwen3Next(), 8},
		{"kimi-linear", testutil.TinyKimiLinear(), 8},
		{"nemotron_h", testutil.TinyNemotronH(), 8},
		{"falcon-h1", testutil.TinyFalconH1(), 8},
		{"jamba", testutil.TinyJamba(), 8},
		{"mamba", testutil.TinyMamba(), 8},
		{"mamba2", testutil.TinyMamba2(), 8},
		{"rwkv7", testutil.TinyRWKV7(), 8},
		{"rwkv6", testutil.TinyRWKV6(), 8},
		{"rwkv6qwen2", testutil.TinyRWKV6Qwen2(), 8},
		{"arwkv7", testutil.TinyARWKV7(), 8},
		{"arwkv7 plain", testutil.TinyARWKV7Plain(), 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, st := smallState(t, tc.spec)
			out := make([]float32, m.Vocab)
			if err := st.Forward([]int32{1, 2, 3}, 0, out); err != nil {
				t.Fatal(err)
			}
			r := &st.conv
			back := &r.back[0]
			wrote := map[int]bool{}
			for i := range 8 {
				read, pos := r.cur, 3+i
				before := make([]float32, r.n)
				copy(before, r.state(read))
				if err := st.Forward([]int32{int32(4 + i%8)}, pos, out); err != nil {
					t.Fatal(err)
				}
				k := len(r.marks)
				switch {
				case r.cur == read:
					t.Fatalf("step %d: the pass wrote the slot it read (%d)", i, read)
				case int(r.slot[k-1]) != r.cur || r.marks[k-1] != pos+1:
					t.Fatalf("step %d: newest checkpoint %d in slot %d, current slot %d", i, r.marks[k-1], r.slot[k-1], r.cur)
				case int(r.slot[k-2]) != read || r.marks[k-2] != pos:
					t.Fatalf("step %d: previous checkpoint %d in slot %d, the pass read slot %d", i, r.marks[k-2], r.slot[k-2], read)
				case !same(r.state(read), before):
					t.Fatalf("step %d: the slot the pass read changed", i)
				case same(r.state(r.cur), before):
					t.Fatalf("step %d: the state did not move on", i)
				case &r.back[0] != back:
					t.Fatalf("step %d: the slots moved", i)
				}
				wrote[r.cur] = true
			}
			if len(wrote) != tc.slots {
				t.Errorf("the decode steps wrote %d slots, want %d", len(wrote), tc.slots)
			}
			if n := Checkpoints(&m.Config); tc.slots == 3 && n != 2 {
				t.Errorf("%d checkpoints, want 2", n)
			}
			step := func() { // back one token (a checkpoint) and on again
				pos := st.Truncate(r.at - 1)
				if err := st.Forward([]int32{5}, pos, out); err != nil {
					t.Fatal(err)
				}
			}
			if n := testing.AllocsPerRun(20, step); n != 0 {
				t.Errorf("a decode step allocates %v times", n)
			}
		})
	}
}

// Conv lays rotated checkpoints out in order, the newest the current
// state, and restoring what it gives — the state's own view, or a copy of
// it after more passes — leaves the same state: the next pass gives the
// same logits, bit for bit.
func TestConvViewRestores(t *testing.T) {
	spec := testutil.TinyGraniteHybrid()
	spec.SSMState = 4096 // two checkpoints: the slots rotate every pass
	m, st := smallState(t, spec)
	out, want := make([]float32, m.Vocab), make([]float32, m.Vocab)
	forward := func(tok, pos int, out []float32) {
		t.Helper()
		if err := st.Forward([]int32{int32(tok)}, pos, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Forward([]int32{1, 2, 3}, 0, out); err != nil {
		t.Fatal(err)
	}
	for pos := 3; pos < 8; pos++ {
		forward(pos, pos, out)
	}
	cs := st.Conv()
	for i, mk := range cs.Marks {
		if int(st.conv.slot[i]) != i || mk != []int{7, 8}[i] {
			t.Fatalf("checkpoint %d at %d in slot %d", i, mk, st.conv.slot[i])
		}
	}
	if !same(cs.Saved[len(cs.Saved)-len(cs.Cur):], cs.Cur) {
		t.Fatal("the newest checkpoint is not the current state")
	}
	saved := ConvState{At: cs.At, Cur: slices.Clone(cs.Cur), Marks: slices.Clone(cs.Marks), Saved: slices.Clone(cs.Saved)}
	if err := st.Restore(st.Cache(), st.Conv()); err != nil {
		t.Fatal(err)
	}
	again := st.Conv()
	if again.At != saved.At || !slices.Equal(again.Marks, saved.Marks) || !same(again.Cur, saved.Cur) || !same(again.Saved, saved.Saved) {
		t.Fatal("restoring the state's own view changed it")
	}
	forward(8, 8, want)
	forward(9, 9, out) // rotate once more
	if err := st.Restore(st.Cache(), &saved); err != nil {
		t.Fatal(err)
	}
	if st.Truncate(8) != 8 {
		t.Fatal("the restored state is not at 8")
	}
	forward(8, 8, out)
	if !same(out, want) {
		t.Fatal("after restoring, a pass gives other logits")
	}
}

// same reports whether a and b hold the same floats, bit for bit.
func same(a, b []float32) bool { return len(a) == len(b) && floatbits.FirstDiff(a, b) < 0 }

// A pass that fails half way has written only the slot it took: Truncate
// goes back to the newest checkpoint, which it only read, and the next
// pass gives the logits of a State that never failed, bit for bit.
func TestFailedPassKeepsCheckpoint(t *testing.T) {
	spec := testutil.TinyGraniteHybrid()
	spec.SSMState = 4096 // two checkpoints: every slot but the pass's in use
	m, a := smallState(t, spec)
	_, b := smallState(t, spec)
	want, got := make([]float32, m.Vocab), make([]float32, m.Vocab)
	for _, st := range []*State{a, b} {
		for _, p := range []struct {
			toks []int32
			pos  int
		}{{[]int32{1, 2, 3}, 0}, {[]int32{4}, 3}, {[]int32{5}, 4}} {
			if err := st.Forward(p.toks, p.pos, want); err != nil {
				t.Fatal(err)
			}
		}
	}
	// a's pass fails after its first recurrent layer wrote garbage.
	r := &a.conv
	r.begin()
	_, dst := r.layer(0, recurrentFloats(&m.Config))
	for i := range dst {
		dst[i] = float32(i) * 1e30
	}
	if n := a.Truncate(6); n != 5 {
		t.Fatalf("Truncate(6) after a failed pass = %d, want 5", n)
	}
	if err := a.Forward([]int32{6}, 5, got); err != nil {
		t.Fatal(err)
	}
	if err := b.Forward([]int32{6}, 5, want); err != nil {
		t.Fatal(err)
	}
	if !same(got, want) {
		t.Fatal("after a failed pass, the next one gives other logits")
	}
}

// A state that streams its out-of-place writes (ssm.ScanHeadStream, for
// states past the caches; forced here on a small one, whose rows are
// aligned) gives the same logits, bit for bit, prefill and decode.
func TestStreamingScanSameBits(t *testing.T) {
	m, a := smallState(t, testutil.TinyGraniteHybrid())
	_, b := smallState(t, testutil.TinyGraniteHybrid())
	a.conv.stream = true
	got, want := make([]float32, m.Vocab), make([]float32, m.Vocab)
	for _, p := range []struct {
		toks []int32
		pos  int
	}{{[]int32{1, 2, 3, 4}, 0}, {[]int32{5, 6, 7}, 4}, {[]int32{8}, 7}, {[]int32{9}, 8}} {
		if err := a.Forward(p.toks, p.pos, got); err != nil {
			t.Fatal(err)
		}
		if err := b.Forward(p.toks, p.pos, want); err != nil {
			t.Fatal(err)
		}
		if !same(got, want) || !same(a.Conv().Cur, b.Conv().Cur) {
			t.Fatalf("pass at %d: streaming changed the logits or the state", p.pos)
		}
	}
}
