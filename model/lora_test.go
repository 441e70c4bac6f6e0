package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/quant"
)

// attachBytes attaches the adapter file ad to m (of file f) at scale.
func attachBytes(m *Model, f *gguf.File, ad []byte, scale float32) (*ops.LoRAScale, error) {
	af, err := gguf.Read(bytes.NewReader(ad), int64(len(ad)))
	if err != nil {
		return nil, err
	}
	h, err := ReadAdapterHeader(af)
	if err != nil {
		return nil, err
	}
	sc := &ops.LoRAScale{}
	sc.Store(scale)
	return sc, m.AttachAdapter(f, af, h, bytes.NewReader(ad), sc)
}

// newAdapted is a model of file f (base its bytes) with the adapter file
// ad attached at scale 1; what names the adapter in a failure.
func newAdapted(t testing.TB, f *gguf.File, base, ad []byte, what string) *Model {
	t.Helper()
	m, err := New(f, base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := attachBytes(m, f, ad, 1); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return m
}

// loraTargets is every matrix of the model file an adapter may correct:
// the blocks' 2-D weights, output.weight, and token_embd.weight unless the
// output is tied to it (a merged token_embd would change the output too;
// the run-time correction, as llama.cpp's, is the input's only).
func loraTargets(f *gguf.File) []string {
	_, untied := f.Tensor("output.weight")
	var names []string
	for _, ti := range f.Tensors {
		switch {
		case len(ti.Dims) != 2:
		case strings.HasPrefix(ti.Name, "blk.") && strings.HasSuffix(ti.Name, ".weight"),
			ti.Name == "output.weight", ti.Name == "token_embd.weight" && untied:
			names = append(names, ti.Name)
		}
	}
	return names
}

// TestLoRAMatchesMerged checks adapters applied at run time against the
// same adapters merged into the F32 weights offline (W + s·B·A, in
// float64): the logits of every position, in one batch and token by
// token, agree within 1e-3 of the largest logit. The sums differ in their
// last bits (B·(A·x) beside (W+BA)·x), and a key or value the F16 cache
// rounds the other way then moves the logits further: measured 8e-8 to
// 1.6e-4 with the float32 adapter alone, where the adapters move them by
// 14 % to 150 %. The second adapter's F16 factors multiply the
// activations and A·x rounded to F16, as llama.cpp's do: with it, 4e-5 to
// 9.1e-4 (AVX-512, AVX2, pure Go and NEON alike), from factors ten times
// a real adapter's. Two adapters add up; an adapter of scale 0 leaves the
// logits the base model's, bit for bit.
func TestLoRAMatchesMerged(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	const tol = 1e-3
	for _, spec := range []testutil.ModelSpec{testutil.TinyLlama(), testutil.TinyQwen3(), testutil.TinyGemma3(),
		testutil.TinyGemma(), testutil.TinyPhi3(), testutil.TinyBitnet()} {
		spec.WeightType = quant.F32
		t.Run(spec.Arch, func(t *testing.T) {
			base, err := testutil.ModelBytes(spec)
			f, _ := testutil.Parse(t, base, err)
			targets := loraTargets(f)
			ad1, err := testutil.LoRABytes(base, testutil.LoRASpec{Tensors: targets, Rank: 4, Alpha: 8, Seed: 1, Amplitude: 0.3})
			if err != nil {
				t.Fatal(err)
			}
			// The second adapter: half the matrices, no alpha, F16 factors.
			ad2, err := testutil.LoRABytes(base, testutil.LoRASpec{Tensors: targets[:len(targets)/2], Rank: 3, Seed: 2, Type: quant.F16, Amplitude: 0.3})
			if err != nil {
				t.Fatal(err)
			}
			toks := prompt(11)
			baseModel, _, _ := loadSpec(t, spec)
			want0 := forwardAll(t, baseModel, pool, toks, len(toks), 32)

			for _, tc := range []struct {
				name   string
				ads    [][]byte
				scales []float32
			}{
				{"one", [][]byte{ad1}, []float32{0.75}},
				{"two", [][]byte{ad1, ad2}, []float32{1, -0.5}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					mergedBytes, err := testutil.MergeLoRA(base, tc.ads, tc.scales)
					mf, _ := testutil.Parse(t, mergedBytes, err)
					merged, err := New(mf, mergedBytes)
					if err != nil {
						t.Fatal(err)
					}
					want := forwardAll(t, merged, pool, toks, len(toks), 32)
					m, err := New(f, base)
					if err != nil {
						t.Fatal(err)
					}
					for i, ad := range tc.ads {
						if _, err := attachBytes(m, f, ad, tc.scales[i]); err != nil {
							t.Fatal(err)
						}
					}
					for _, batch := range []int{len(toks), 1} {
						got := forwardAll(t, m, pool, toks, batch, 32)
						if d := testutil.RelDiff(got, want); !(d <= tol) {
							t.Errorf("batch %d: logits differ from the merged model's by %.3g of the largest (tolerance %g)", batch, d, tol)
						} else {
							t.Logf("batch %d: %.3g", batch, d)
						}
					}
					// The adapter must matter, or the comparison proves nothing.
					if d := testutil.RelDiff(want0, want); d < 50*tol {
						t.Errorf("the merged model's logits moved by only %.3g", d)
					} else {
						t.Logf("the adapters move the logits by %.3g", d)
					}
				})
			}

			t.Run("scale 0", func(t *testing.T) {
				m, err := New(f, base)
				if err != nil {
					t.Fatal(err)
				}
				sc, err := attachBytes(m, f, ad1, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, batch := range []int{len(toks), 1} {
					got := forwardAll(t, m, pool, toks, batch, 32)
					want := forwardAll(t, baseModel, pool, toks, batch, 32)
					if i := testutil.FirstDiff(got, want); i >= 0 {
						t.Fatalf("batch %d: logit %d: %v with the adapter at scale 0, %v without", batch, i, got[i], want[i])
					}
				}
				sc.Store(1) // a scale changed between passes takes effect
				if got := forwardAll(t, m, pool, toks, len(toks), 32); testutil.RelDiff(got, want0) < 50*tol {
					t.Error("scale 1 after 0: the logits did not move")
				}
			})
		})
	}
}

// TestAdapterRefused checks the refusals of adapters that are malformed
// or do not fit the model: each error wraps its sentinel and names the
// key or tensor, nothing panics, and a refused adapter leaves the model
// unadapted.
func TestAdapterRefused(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.WeightType = quant.F32
	base, err := testutil.ModelBytes(spec)
	f, _ := testutil.Parse(t, base, err)
	const q = "blk.0.attn_q.weight"
	ad, err := testutil.LoRABytes(base, testutil.LoRASpec{Tensors: []string{q, "blk.1.ffn_down.weight"}, Rank: 4, Alpha: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	moeBase, err := testutil.ModelBytes(testutil.TinyQwen3MoE())
	moeFile, _ := testutil.Parse(t, moeBase, err)
	nan := ad
	{
		af, _ := testutil.Parse(t, ad, nil)
		ti, _ := af.Tensor(q + ".lora_b")
		nan = bytes.Clone(ad)
		copy(nan[ti.Offset+8:], []byte{0, 0, 0xc0, 0x7f}) // a float32 NaN
	}
	for _, tc := range []struct {
		name  string
		edit  func(af *gguf.File)
		data  []byte     // the adapter's bytes (nil: ad)
		model *gguf.File // nil: f
		want  error
		says  string
	}{
		{name: "general.type", edit: func(af *gguf.File) { af.Set("general.type", "model") }, want: ErrBadAdapter, says: "general.type"},
		{name: "adapter.type", edit: func(af *gguf.File) { af.Set("adapter.type", "control_vector") }, want: ErrBadAdapter, says: "adapter.type"},
		{name: "architecture", edit: func(af *gguf.File) { af.Set("general.architecture", "qwen2") }, want: ErrBadAdapter, says: "qwen2"},
		{name: "NaN alpha", edit: func(af *gguf.File) { af.Set("adapter.lora.alpha", float32(math.NaN())) }, want: ErrBadAdapter, says: "adapter.lora.alpha"},
		{name: "alpha not a float", edit: func(af *gguf.File) { af.Set("adapter.lora.alpha", "8") }, want: ErrBadAdapter, says: "adapter.lora.alpha"},
		{name: "aLoRA", edit: func(af *gguf.File) { af.Set("adapter.alora.invocation_tokens", []uint32{1, 2}) }, want: ErrUnsupportedArch, says: "aLoRA"},
		{name: "suffix", edit: func(af *gguf.File) { af.RenameTensor(q+".lora_b", q+".lora_c") }, want: ErrBadAdapter, says: q + ".lora_c"},
		{name: "missing half", edit: func(af *gguf.File) { af.RenameTensor(q+".lora_b", "blk.0.attn_k.weight.lora_b") }, want: ErrBadAdapter, says: "missing"},
		{name: "unknown tensor", edit: func(af *gguf.File) {
			af.RenameTensor(q+".lora_a", "blk.9.attn_q.weight.lora_a")
			af.RenameTensor(q+".lora_b", "blk.9.attn_q.weight.lora_b")
		}, want: ErrBadAdapter, says: "blk.9.attn_q.weight"},
		{name: "a vector", edit: func(af *gguf.File) {
			af.RenameTensor(q+".lora_a", "blk.0.attn_norm.weight.lora_a")
			af.RenameTensor(q+".lora_b", "blk.0.attn_norm.weight.lora_b")
		}, want: ErrUnsupportedArch, says: "blk.0.attn_norm.weight"},
		{name: "experts", model: moeFile, edit: func(af *gguf.File) {
			af.Set("general.architecture", "qwen3moe")
			af.RenameTensor(q+".lora_a", "blk.0.ffn_up_exps.weight.lora_a")
			af.RenameTensor(q+".lora_b", "blk.0.ffn_up_exps.weight.lora_b")
		}, want: ErrUnsupportedArch, says: "blk.0.ffn_up_exps.weight"},
		{name: "shape", edit: func(af *gguf.File) {
			ti, _ := af.Tensor(q + ".lora_a")
			ti.Dims = []int64{ti.Dims[0] + 1, ti.Dims[1]}
		}, want: ErrBadAdapter, says: q},
		{name: "not transposed", edit: func(af *gguf.File) {
			ti, _ := af.Tensor(q + ".lora_a")
			ti.Dims = []int64{ti.Dims[0], ti.Dims[1] + 1}
		}, want: ErrBadAdapter, says: "transposed"},
		{name: "rank 0", edit: func(af *gguf.File) {
			ti, _ := af.Tensor(q + ".lora_b")
			ti.Dims = []int64{0, ti.Dims[1]}
		}, want: ErrBadAdapter, says: q + ".lora_b"},
		{name: "huge rank", edit: func(af *gguf.File) {
			a, _ := af.Tensor(q + ".lora_a")
			b, _ := af.Tensor(q + ".lora_b")
			a.Dims = []int64{a.Dims[0], 1 << 40}
			b.Dims = []int64{1 << 40, b.Dims[1]}
		}, want: ErrBadAdapter, says: q},
		{name: "type", edit: func(af *gguf.File) {
			ti, _ := af.Tensor(q + ".lora_a")
			ti.Type = quant.Q4_K
		}, want: ErrBadAdapter, says: q + ".lora_a"},
		{name: "NaN factor", data: nan, want: ErrBadAdapter, says: q + ".lora_b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data
			if data == nil {
				data = ad
			}
			af, _ := testutil.Parse(t, data, nil)
			if tc.edit != nil {
				tc.edit(af)
			}
			model, mb := tc.model, moeBase
			if model == nil {
				model, mb = f, base
			}
			m, err := New(model, mb)
			if err != nil {
				t.Fatal(err)
			}
			h, err := ReadAdapterHeader(af)
			if err == nil {
				sc := &ops.LoRAScale{}
				sc.Store(1)
				err = m.AttachAdapter(model, af, h, bytes.NewReader(data), sc)
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want one wrapping %v and naming %q", err, tc.want, tc.says)
			}
			if m.LoRARank != 0 || m.EmbedLoRA != nil {
				t.Error("a refused adapter left corrections behind")
			}
		})
	}

	t.Run("truncated", func(t *testing.T) {
		m, err := New(f, base)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(ad); n += 97 {
			cut := ad[:n]
			af, err := gguf.Read(bytes.NewReader(cut), int64(len(cut)))
			if err != nil {
				continue // the header's own checks
			}
			h, err := ReadAdapterHeader(af)
			if err == nil {
				err = m.AttachAdapter(f, af, h, bytes.NewReader(cut), &ops.LoRAScale{})
			}
			if err == nil {
				t.Fatalf("%d of %d bytes: no error", n, len(ad))
			}
		}
		// A header describing the whole file over a reader that ends early.
		af, _ := testutil.Parse(t, ad, nil)
		h, err := ReadAdapterHeader(af)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.AttachAdapter(f, af, h, bytes.NewReader(ad[:len(ad)-8]), &ops.LoRAScale{}); err == nil {
			t.Fatal("a short read: no error")
		}
	})
}

// TestLoRADecodeAllocs checks that adapters, of float32 and of F16
// factors, add no allocation to a decode step or a batch: their
// rank-wide products and converted activations live in the State. The
// factors held take exactly what their header counts (Bytes: what the
// plan's "lora adapters" is).
func TestLoRADecodeAllocs(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	for _, spec := range []testutil.ModelSpec{testutil.TinyLlama(), testutil.TinyPhi3()} {
		for _, typ := range []quant.Type{quant.F32, quant.F16} {
			base, err := testutil.ModelBytes(spec)
			f, _ := testutil.Parse(t, base, err)
			ad, err := testutil.LoRABytes(base, testutil.LoRASpec{Tensors: loraTargets(f), Rank: 8, Alpha: 16, Seed: 3, Type: typ})
			if err != nil {
				t.Fatal(err)
			}
			m := newAdapted(t, f, base, ad, "the adapter")
			af, _ := testutil.Parse(t, ad, nil)
			h, err := ReadAdapterHeader(af)
			if err != nil {
				t.Fatal(err)
			}
			if held := heldFactorBytes(m); held != h.Bytes {
				t.Errorf("%s, %v: the factors held take %d bytes, the header counts %d", spec.Arch, typ, held, h.Bytes)
			}
			st, err := m.NewState(ops.NewExec(pool), StateOptions{Batch: 8, Cache: kv.F16, Cells: 256})
			if err != nil {
				t.Fatal(err)
			}
			out := make([]float32, 8*m.Vocab)
			pos := 0
			step := func() {
				if err := st.Forward([]int32{int32(3 + pos%200)}, pos, out[:m.Vocab]); err != nil {
					t.Fatal(err)
				}
				pos++
			}
			step()
			if n := testing.AllocsPerRun(50, step); n != 0 {
				t.Errorf("%s, %v: a decode step with an adapter allocates %.1f times, want 0", spec.Arch, typ, n)
			}
		}
	}
}

// heldFactorBytes is the memory of every LoRA factor m holds.
func heldFactorBytes(m *Model) int64 {
	var n int64
	add := func(l *ops.LoRA) {
		for ; l != nil; l = l.Next {
			n += l.A.T.Bytes() + l.B.T.Bytes()
		}
	}
	add(m.EmbedLoRA)
	for _, w := range m.matrixIndex() {
		add(w.LoRA)
	}
	return n
}

// bitnet's scales against adapters, as llama.cpp orders them: attn_q,
// attn_k, attn_v, attn_output and ffn_down are scaled before their
// adapters' corrections are added (build_lora_mm), ffn_gate and ffn_up
// after (build_ffn). With every scale k, that is the merged model of the
// first group's adapter at its scale over k and the second's at its own
// (the merge keeps the scale tensors); merging the first at its own
// scale, as if its scale came after, would be off by far more than the
// tolerance, and so would TestLoRAMatchesMerged's model without scales.
func TestLoRABitnetScales(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	const tol, k, scale = 1e-3, 1.5, 0.75
	spec := testutil.TinyBitnetScales()
	spec.WeightType = quant.F32
	base, err := testutil.ModelBytes(spec)
	f, _ := testutil.Parse(t, base, err)
	var early, late []string
	for _, name := range loraTargets(f) {
		if strings.Contains(name, "ffn_gate") || strings.Contains(name, "ffn_up") {
			late = append(late, name)
		} else if name != "output.weight" {
			early = append(early, name)
		}
	}
	for _, ti := range f.Tensors {
		if strings.HasSuffix(ti.Name, ".scale") {
			binary.LittleEndian.PutUint32(base[ti.Offset:], math.Float32bits(k))
		}
	}
	adE, err := testutil.LoRABytes(base, testutil.LoRASpec{Tensors: early, Rank: 4, Alpha: 8, Seed: 3, Amplitude: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	adL, err := testutil.LoRABytes(base, testutil.LoRASpec{Tensors: late, Rank: 4, Alpha: 8, Seed: 4, Amplitude: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	toks := prompt(11)
	m, err := New(f, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, ad := range [][]byte{adE, adL} {
		if _, err := attachBytes(m, f, ad, scale); err != nil {
			t.Fatal(err)
		}
	}
	got := forwardAll(t, m, pool, toks, len(toks), 32)
	merged := func(scales []float32) []float32 {
		b, err := testutil.MergeLoRA(base, [][]byte{adE, adL}, scales)
		mf, _ := testutil.Parse(t, b, err)
		mm, err := New(mf, b)
		if err != nil {
			t.Fatal(err)
		}
		return forwardAll(t, mm, pool, toks, len(toks), 32)
	}
	if d := testutil.RelDiff(got, merged([]float32{scale / k, scale})); !(d <= tol) {
		t.Errorf("logits differ from the merged model's by %.3g of the largest (tolerance %g)", d, tol)
	} else {
		t.Logf("%.3g", d)
	}
	if d := testutil.RelDiff(got, merged([]float32{scale, scale})); d < 50*tol {
		t.Errorf("the first group's corrections scaled too move the logits by only %.3g", d)
	}
}
