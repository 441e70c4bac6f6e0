package model

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// The variants llama.cpp loads that this package runs too, each against
// the file without it: what the variant changes must be exactly what it
// stores.

// rewritten is spec's file written anew with edit deciding each tensor:
// edit gets its name, type, dims and bytes and adds what takes its place
// to w (nothing: dropped).
func rewritten(t *testing.T, spec testutil.ModelSpec, edit func(w *gguf.Writer, f *gguf.File, data []byte, ti *gguf.TensorInfo)) (*Model, []byte) {
	t.Helper()
	b, err := testutil.ModelBytes(spec)
	f, _ := testutil.Parse(t, b, err)
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		w.AddKV(kv.Key, kv.Value)
	}
	for i := range f.Tensors {
		edit(w, f, b, &f.Tensors[i])
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	g, out := testutil.Parse(t, buf.Bytes(), nil)
	m, err := New(g, out)
	if err != nil {
		t.Fatal(err)
	}
	return m, out
}

// keep adds ti unchanged.
func keep(t *testing.T, w *gguf.Writer, data []byte, ti *gguf.TensorInfo) {
	t.Helper()
	if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, data[ti.Offset:ti.Offset+ti.Size]); err != nil {
		t.Fatal(err)
	}
}

// A qwen2 file's output.bias (llama.cpp's qwen2 graph adds it to the
// logits when the file has it) moves each logit by its entry, exactly.
func TestQwen2OutputBias(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	for _, spec := range []testutil.ModelSpec{testutil.TinyQwen2(), testutil.TinyQwen2VL()} {
		m, _, _ := loadSpec(t, spec)
		want := forwardAll(t, m, pool, prompt(6), 3, 16)
		bias := make([]float32, m.Vocab)
		for i := range bias {
			bias[i] = float32(i%7) - 3
		}
		var raw bytes.Buffer
		if err := binary.Write(&raw, binary.LittleEndian, bias); err != nil {
			t.Fatal(err)
		}
		mb, _ := rewritten(t, spec, func(w *gguf.Writer, f *gguf.File, data []byte, ti *gguf.TensorInfo) {
			keep(t, w, data, ti)
			if ti.Name == "output_norm.weight" {
				if err := w.AddTensor("output.bias", quant.F32, []int64{int64(m.Vocab)}, raw.Bytes()); err != nil {
					t.Fatal(err)
				}
			}
		})
		got := forwardAll(t, mb, pool, prompt(6), 3, 16)
		moved := make([]float32, len(want))
		for i := range want {
			moved[i] = want[i] + bias[i%m.Vocab]
		}
		if i, ok := sameLogitBits(got, moved); !ok {
			t.Fatalf("%s: logit %d is %v with output.bias, want %v (%v without, bias %v)", spec.Arch, i, got[i], moved[i], want[i], bias[i%m.Vocab])
		}
	}
}

// A deepseek2 file holding each expert block's gate and up matrices in
// one ffn_gate_up_exps (llama.cpp's create_tensor_gate_up_exps: each
// expert's gate rows, then its up rows) runs as the file with them apart.
func TestDeepSeek2FusedGateUpExps(t *testing.T) {
	fused := 0
	sameAsRewritten(t, testutil.TinyDeepSeek3(), "with the experts' gate and up fused", func(w *gguf.Writer, f *gguf.File, data []byte, ti *gguf.TensorInfo) {
		switch {
		case strings.HasSuffix(ti.Name, ".ffn_up_exps.weight"):
		case strings.HasSuffix(ti.Name, ".ffn_gate_exps.weight"):
			up, _ := f.Tensor(strings.Replace(ti.Name, "gate", "up", 1))
			gate, ups := data[ti.Offset:ti.Offset+ti.Size], data[up.Offset:up.Offset+up.Size]
			n := ti.Dims[2]
			per := ti.Size / n
			var b []byte
			for e := range n {
				b = append(append(b, gate[e*per:(e+1)*per]...), ups[e*per:(e+1)*per]...)
			}
			if err := w.AddTensor(strings.Replace(ti.Name, "gate", "gate_up", 1), ti.Type, []int64{ti.Dims[0], 2 * ti.Dims[1], n}, b); err != nil {
				t.Fatal(err)
			}
			fused++
		default:
			keep(t, w, data, ti)
		}
	})
	if fused == 0 {
		t.Fatal("TinyDeepSeek3 has no experts to fuse")
	}
}

// sameAsRewritten checks that spec's file rewritten by edit (rewritten's)
// gives spec's own file's logits bit for bit; what says how in a failure.
func sameAsRewritten(t *testing.T, spec testutil.ModelSpec, what string, edit func(w *gguf.Writer, f *gguf.File, data []byte, ti *gguf.TensorInfo)) {
	t.Helper()
	pool := ops.NewPool(2)
	defer pool.Close()
	m, _, _ := loadSpec(t, spec)
	want := forwardAll(t, m, pool, prompt(6), 3, 16)
	mr, _ := rewritten(t, spec, edit)
	got := forwardAll(t, mr, pool, prompt(6), 3, 16)
	if i, ok := sameLogitBits(got, want); !ok {
		t.Fatalf("logit %d is %v %s, %v in the file as written", i, got[i], what, want[i])
	}
}

// An rwkv6 file converted before llama.cpp fused the token shift's
// lerps, holding time_mix_lerp_w, _k, _v, _r and _g apart, runs as the
// file with them in one time_mix_lerp_fused: its rows in that order.
func TestRWKV6SeparateLerps(t *testing.T) {
	spec := testutil.TinyRWKV6()
	split := 0
	sameAsRewritten(t, spec, "with the lerps apart", func(w *gguf.Writer, f *gguf.File, data []byte, ti *gguf.TensorInfo) {
		if !strings.HasSuffix(ti.Name, ".time_mix_lerp_fused.weight") {
			keep(t, w, data, ti)
			return
		}
		row := ti.Size / 5
		for b, part := range []string{"w", "k", "v", "r", "g"} {
			name := strings.Replace(ti.Name, "fused", part, 1)
			if err := w.AddTensor(name, ti.Type, ti.Dims[:3], data[ti.Offset+int64(b)*row:ti.Offset+int64(b+1)*row]); err != nil {
				t.Fatal(err)
			}
		}
		split++
	})
	if split != spec.Layers {
		t.Fatalf("split %d layers' lerps, want %d", split, spec.Layers)
	}
}
