package llm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/quant"
)

// loraFiles writes spec's model, an adapter of rank 4 for its blocks'
// matrices and output (seed), and returns their paths and bytes.
func loraFiles(t *testing.T, spec testutil.ModelSpec, seed uint64) (model, adapter string, mb, ab []byte) {
	t.Helper()
	return loraFilesOf(t, spec, testutil.LoRASpec{Rank: 4, Alpha: 8, Seed: seed, Amplitude: 0.3})
}

// loraFilesOf is loraFiles for the adapter ls, of the same tensors.
func loraFilesOf(t *testing.T, spec testutil.ModelSpec, ls testutil.LoRASpec) (model, adapter string, mb, ab []byte) {
	t.Helper()
	dir := t.TempDir()
	mb, err := testutil.ModelBytes(spec)
	f, _ := testutil.Parse(t, mb, err)
	var names []string
	for _, ti := range f.Tensors {
		if len(ti.Dims) == 2 && (strings.HasPrefix(ti.Name, "blk.") || ti.Name == "output.weight") {
			names = append(names, ti.Name)
		}
	}
	ls.Tensors = names
	ab, err = testutil.LoRABytes(mb, ls)
	if err != nil {
		t.Fatal(err)
	}
	model, adapter = filepath.Join(dir, "model.gguf"), filepath.Join(dir, "adapter.gguf")
	for p, b := range map[string][]byte{model: mb, adapter: ab} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return model, adapter, mb, ab
}

// mergedFile writes the model mb with the adapter ab merged at scale
// (testutil.MergeLoRA) and returns its path.
func mergedFile(t *testing.T, mb, ab []byte, scale float32) string {
	t.Helper()
	merged, err := testutil.MergeLoRA(mb, [][]byte{ab}, []float32{scale})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "merged.gguf")
	if err := os.WriteFile(p, merged, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// loraPlanBytes is m's plan's "lora adapters" component (0 without it).
func loraPlanBytes(m *llm.Model) int64 {
	for _, c := range m.Plan().Components {
		if c.Name == memplan.LoRAComponent {
			return c.Bytes
		}
	}
	return 0
}

// evalLogits loads path with opts and returns the logits of a prompt
// evaluated whole.
func evalLogits(t *testing.T, path string, opts ...llm.Option) []float32 {
	t.Helper()
	m, err := llm.Load(path, append([]llm.Option{llm.WithThreads(2), llm.WithContextSize(64)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	return sessionLogits(t, m)
}

func sessionLogits(t *testing.T, m *llm.Model) []float32 {
	t.Helper()
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.EvalAll(context.Background(), []int32{1, 5, 9, 13, 200, 7, 42})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoRA checks WithLoRA through the public API: the logits equal those
// of the model with the adapter merged offline (within 1e-3 of the
// largest, as model.TestLoRAMatchesMerged), resident and streamed from
// disk; the plan counts the adapter; SetLoRAScale(…, 0) gives back the
// base model's logits bit for bit.
func TestLoRA(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.WeightType = quant.F32
	spec.Layers, spec.Embd, spec.FFN = 8, 128, 256 // blocks worth streaming
	model, adapter, mb, ab := loraFiles(t, spec, 1)
	want := evalLogits(t, mergedFile(t, mb, ab, 0.5))
	base := evalLogits(t, model)
	if testutil.RelDiff(base, want) < 0.05 {
		t.Fatal("the adapter hardly moves the logits: the test cannot see it")
	}
	got := evalLogits(t, model, llm.WithLoRA(adapter, 0.5))
	// Within 3 % of the largest logit, TestRepackOnOff's bound without an
	// adapter: the X8 kernels sum in another order, and a rounding apart
	// can move an activation's 8-bit quantization by a step (measured:
	// 3.6e-3 with LLM_CPU=avx2, 7e-6 with AVX-512; the same model without
	// the adapter, 1e-7 and 6.4e-3).
	if d := testutil.RelDiff(got, want); !(d <= 0.03) {
		t.Errorf("logits differ from the merged model's by %.3g of the largest", d)
	}
	// Every block read from disk: the streamed copies of the blocks'
	// matrices carry the corrections too.
	opts := []llm.Option{llm.WithThreads(2), llm.WithContextSize(64), llm.WithWeights(llm.WeightsStreaming), llm.WithLoRA(adapter, 0.5)}
	sm, _ := loadLeast(t, model, opts...)
	got = sessionLogits(t, sm)
	if st := sm.Residency(); st.OnDisk != st.Blocks {
		t.Errorf("%d of %d blocks streamed, want all", st.OnDisk, st.Blocks)
	}
	sm.Close()
	// Within 3 % of the largest logit, TestRepackOnOff's bound without an
	// adapter: the X8 kernels sum in another order, and a rounding apart
	// can move an activation's 8-bit quantization by a step (measured:
	// 3.6e-3 with LLM_CPU=avx2, 7e-6 with AVX-512; the same model without
	// the adapter, 1e-7 and 6.4e-3).
	if d := testutil.RelDiff(got, want); !(d <= 0.03) {
		t.Errorf("streamed: logits differ from the merged model's by %.3g of the largest", d)
	}

	m, err := llm.Load(model, llm.WithThreads(2), llm.WithContextSize(64), llm.WithLoRA(adapter, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	lora := loraPlanBytes(m)
	if lora <= 0 || lora > int64(len(ab))+1<<12 {
		t.Errorf("the plan's %q component is %d bytes; the F32 adapter file %d", memplan.LoRAComponent, lora, len(ab))
	}
	if as := m.LoRAAdapters(); len(as) != 1 || as[0].Path != adapter || as[0].Scale != 0.5 {
		t.Errorf("LoRAAdapters() = %+v", as)
	}
	if err := m.SetLoRAScale(0, 0); err != nil {
		t.Fatal(err)
	}
	if got := sessionLogits(t, m); testutil.FirstDiff(got, base) >= 0 {
		t.Error("scale 0: the logits are not the base model's")
	}
	for _, tc := range []struct {
		id    int
		scale float32
	}{{1, 1}, {-1, 1}, {0, float32(math.NaN())}, {0, float32(math.Inf(1))}} {
		if err := m.SetLoRAScale(tc.id, tc.scale); !errors.Is(err, llm.ErrInvalidOption) {
			t.Errorf("SetLoRAScale(%d, %v): %v, want ErrInvalidOption", tc.id, tc.scale, err)
		}
	}
}

// TestLoRAFactorTypes loads adapters of each factor type llama.cpp's
// converter writes (F16 by default; BF16, Q8_0; F32 is TestLoRA's) and
// one quant does not multiply (Q8_1): the plan's "lora adapters"
// component is exactly the memory their factors take (their files'
// tensors as they are; Q8_1's widened to float32), and the logits match
// the merged model's within TestLoRA's bound (the factors' products take
// the activations converted to their types, as llama.cpp's do).
func TestLoRAFactorTypes(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.WeightType = quant.F32
	for _, tc := range []struct {
		typ   quant.Type
		rank  int // a whole number of the type's blocks: lora_b's rows
		widen bool
	}{{quant.F16, 4, false}, {quant.BF16, 4, false}, {quant.Q8_0, 32, false}, {quant.Q8_1, 32, true}} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			model, adapter, mb, ab := loraFilesOf(t, spec, testutil.LoRASpec{Rank: tc.rank, Alpha: 8, Seed: 10, Type: tc.typ, Amplitude: 0.3})
			af, _ := testutil.Parse(t, ab, nil)
			var want int64
			for _, ti := range af.Tensors {
				if tc.widen {
					want += 4 * ti.Elems()
				} else {
					want += ti.Size
				}
			}
			m, err := llm.Load(model, llm.WithThreads(2), llm.WithContextSize(64), llm.WithLoRA(adapter, 0.5))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if lora := loraPlanBytes(m); lora != want {
				t.Errorf("the plan's %q component is %d bytes, the factors held %d", memplan.LoRAComponent, lora, want)
			}
			if d := testutil.RelDiff(sessionLogits(t, m), evalLogits(t, mergedFile(t, mb, ab, 0.5))); !(d <= 0.03) {
				t.Errorf("logits differ from the merged model's by %.3g of the largest", d)
			} else {
				t.Logf("%.3g", d)
			}
		})
	}
}

// TestLoRARefused checks Load's refusals of adapters: each wraps its
// sentinel, names the file, and nothing panics.
func TestLoRARefused(t *testing.T) {
	spec := testutil.TinyLlama()
	model, adapter, _, ab := loraFiles(t, spec, 2)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// An adapter of another architecture, and one of llama with other widths.
	_, qwen, _, _ := loraFiles(t, testutil.TinyQwen2(), 3)
	wide := testutil.TinyLlama()
	wide.FFN *= 2
	_, wideAd, _, _ := loraFiles(t, wide, 4)
	for _, tc := range []struct {
		name  string
		path  string
		scale float32
		want  error
	}{
		{"missing", filepath.Join(dir, "none.gguf"), 1, llm.ErrInvalidOption},
		{"NaN scale", adapter, float32(math.NaN()), llm.ErrInvalidOption},
		{"empty path", "", 1, llm.ErrInvalidOption},
		{"the model itself", model, 1, llm.ErrBadAdapter},
		{"other architecture", qwen, 1, llm.ErrBadAdapter},
		{"other widths", wideAd, 1, llm.ErrBadAdapter},
		{"truncated", write("cut.gguf", ab[:len(ab)/2]), 1, llm.ErrBadAdapter},
		{"empty", write("empty.gguf", nil), 1, llm.ErrBadAdapter},
		{"a directory", dir, 1, llm.ErrBadAdapter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := llm.Load(model, llm.WithThreads(1), llm.WithContextSize(64), llm.WithLoRA(tc.path, tc.scale))
			if err == nil {
				m.Close()
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("%v, want an error wrapping %v", err, tc.want)
			}
			if _, err := llm.Plan(model, llm.WithLoRA(tc.path, tc.scale)); err == nil && tc.want != llm.ErrBadAdapter {
				t.Errorf("Plan: no error")
			}
		})
	}
}

// TestLoRARepacked checks an adapter on repacked weights (the X8 layout,
// Q8_0 here): the same logits as on the file's layout, within 1e-3 of
// the largest (the kernels' sums differ in their last bits), where the
// adapter moves them by far more.
func TestLoRARepacked(t *testing.T) {
	testutil.NeedX8(t)
	spec := testutil.TinyLlama()
	spec.Embd, spec.FFN = 256, 512 // whole X8 blocks
	model, adapter, _, _ := loraFiles(t, spec, 5)
	m, err := llm.Load(model, llm.WithThreads(2), llm.WithContextSize(64), llm.WithLoRA(adapter, 1), llm.WithWeights(llm.WeightsResident))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Plan().Repacked == 0 {
		t.Skip("the plan repacks nothing here")
	}
	got := sessionLogits(t, m)
	want := evalLogits(t, model, llm.WithLoRA(adapter, 1), llm.WithRepack(false))
	// Within 3 % of the largest logit, TestRepackOnOff's bound without an
	// adapter: the X8 kernels sum in another order, and a rounding apart
	// can move an activation's 8-bit quantization by a step (measured:
	// 3.6e-3 with LLM_CPU=avx2, 7e-6 with AVX-512; the same model without
	// the adapter, 1e-7 and 6.4e-3).
	if d := testutil.RelDiff(got, want); !(d <= 0.03) {
		t.Errorf("repacked: logits differ from the file layout's by %.3g of the largest", d)
	}
	if d := testutil.RelDiff(evalLogits(t, model), want); d < 0.05 {
		t.Errorf("the adapter moves the logits by only %.3g", d)
	}
}

// TestLoRAOllama: a manifest's application/vnd.ollama.image.adapter
// layer (a Modelfile's ADAPTER) is applied at scale 1 when the model is
// loaded by name, as WithLoRA(blob, 1) applies it.
func TestLoRAOllama(t *testing.T) {
	spec := testutil.TinyLlama()
	_, _, mb, ab := loraFiles(t, spec, 6)
	store := t.TempDir()
	model, adapter := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	for name, b := range map[string][]byte{
		"blobs/sha256-" + model:   mb,
		"blobs/sha256-" + adapter: ab,
		"manifests/registry.ollama.ai/library/tuned/latest": []byte(`{"layers":[` +
			`{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:` + model + `"},` +
			`{"mediaType":"application/vnd.ollama.image.adapter","digest":"sha256:` + adapter + `"}]}`),
	} {
		p := filepath.Join(store, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("OLLAMA_MODELS", store)
	m, err := llm.Load("ollama:tuned", llm.WithThreads(2), llm.WithContextSize(64))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	blob := filepath.Join(store, "blobs", "sha256-"+adapter)
	if as := m.LoRAAdapters(); len(as) != 1 || as[0].Path != blob || as[0].Scale != 1 {
		t.Fatalf("LoRAAdapters() = %+v, want the adapter blob at 1", as)
	}
	got := sessionLogits(t, m)
	want := evalLogits(t, filepath.Join(store, "blobs", "sha256-"+model), llm.WithLoRA(blob, 1))
	if i := testutil.FirstDiff(got, want); i >= 0 {
		t.Errorf("logit %d: %v by name, %v with WithLoRA", i, got[i], want[i])
	}
	if p, err := llm.Plan("ollama:tuned"); err != nil || !slices.ContainsFunc(p.Components, func(c llm.Component) bool { return c.Name == memplan.LoRAComponent }) {
		t.Errorf("Plan: %v, %v: no %q component", p, err, memplan.LoRAComponent)
	}
}

// TestHostileAdapterBytes loads a model with adapters corrupted byte by
// byte (in the header, where counts, lengths, dims and offsets are) and
// cut short: each load fails with ErrBadAdapter (or ErrUnsupportedArch),
// never ErrInternal (a panic caught), or loads and evaluates.
func TestHostileAdapterBytes(t *testing.T) {
	model, _, _, ab := loraFiles(t, testutil.TinyLlama(), 7)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 13))
	var files [][]byte
	for range 48 {
		b := bytes.Clone(ab)
		i := rng.IntN(min(len(b), 4096)) // the header: counts, lengths, dims, offsets
		b[i] ^= byte(1 + rng.IntN(255))
		files = append(files, b)
	}
	for n := 0; n < len(ab); n += len(ab)/16 + 1 {
		files = append(files, ab[:n])
	}
	for i, b := range files {
		p := filepath.Join(dir, fmt.Sprintf("a%d.gguf", i))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := llm.Load(model, llm.WithThreads(1), llm.WithContextSize(32), llm.WithLoRA(p, 1), llm.WithLogger(quietLogger()))
		if err != nil {
			if errors.Is(err, llm.ErrInternal) || !errors.Is(err, llm.ErrBadAdapter) && !errors.Is(err, llm.ErrUnsupportedArch) {
				t.Errorf("file %d: %v", i, err)
			}
			continue
		}
		s, err := m.NewSession()
		if err == nil {
			_, err = s.EvalAll(context.Background(), []int32{1, 2, 3})
			s.Close()
		}
		if err != nil {
			t.Errorf("file %d loaded, then: %v", i, err)
		}
		m.Close()
	}
}

// TestLoRASaveRestore: a session saved under an adapter at a scale is
// restored under the same adapter and scale, and refused (ErrBadState)
// at another scale or without the adapter, whose cache it does not hold.
func TestLoRASaveRestore(t *testing.T) {
	model, adapter, _, _ := loraFiles(t, testutil.TinyLlama(), 8)
	opts := []llm.Option{llm.WithThreads(1), llm.WithContextSize(64)}
	m := load(t, model, append(opts, llm.WithLoRA(adapter, 0.5))...)
	plain := load(t, model, opts...)
	s := session(t, m)
	if _, err := s.Eval(context.Background(), []int32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	var saved bytes.Buffer
	if err := s.Save(&saved); err != nil {
		t.Fatal(err)
	}
	restore := func(m *llm.Model) error {
		r, err := m.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		return r.Restore(bytes.NewReader(saved.Bytes()))
	}
	if err := restore(m); err != nil {
		t.Errorf("the same adapter and scale: %v", err)
	}
	if err := restore(plain); !errors.Is(err, llm.ErrBadState) {
		t.Errorf("without the adapter: %v, want ErrBadState", err)
	}
	if err := m.SetLoRAScale(0, 1); err != nil {
		t.Fatal(err)
	}
	if err := restore(m); !errors.Is(err, llm.ErrBadState) {
		t.Errorf("at another scale: %v, want ErrBadState", err)
	}
	if err := m.SetLoRAScale(0, 0.5); err != nil {
		t.Fatal(err)
	}
	if err := restore(m); err != nil {
		t.Errorf("back at the saved scale: %v", err)
	}
}

// TestLoRAScalesPerGeneration: WithLoRAScales runs one generation at its
// own scales — {0: 0} the base model's tokens, {0: s} those of the model
// at s — while the model's scale stays; a change of scales makes the
// session evaluate its prompt again (no token reused).
func TestLoRAScalesPerGeneration(t *testing.T) {
	model, adapter, _, _ := loraFiles(t, testutil.TinyLlama(), 9)
	opts := []llm.Option{llm.WithThreads(1), llm.WithContextSize(64)}
	ctx := context.Background()
	gen := func(m *llm.Model, s *llm.Session, extra ...llm.GenerateOption) ([]int32, llm.Usage) {
		t.Helper()
		var ids []int32
		for tok, err := range s.CompleteTokens(ctx, []int32{1, 5, 9, 13}, append([]llm.GenerateOption{llm.MaxTokens(12), llm.Temperature(0)}, extra...)...) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, tok.ID)
		}
		return ids, s.Usage()
	}
	session := func(m *llm.Model) *llm.Session {
		s, err := m.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	load := func(o ...llm.Option) *llm.Model {
		m, err := llm.Load(model, append(opts, o...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	base, _ := gen(nil, session(load()))
	tuned, _ := gen(nil, session(load(llm.WithLoRA(adapter, 2))))
	if slices.Equal(base, tuned) {
		t.Fatal("the adapter does not change the tokens: the test cannot see it")
	}
	m := load(llm.WithLoRA(adapter, 1))
	s := session(m)
	if got, _ := gen(m, s, llm.WithLoRAScales(map[int]float32{0: 0})); !slices.Equal(got, base) {
		t.Errorf("scale 0 for one generation: %v, want the base model's %v", got, base)
	}
	got, u := gen(m, s, llm.WithLoRAScales(map[int]float32{0: 2}))
	if !slices.Equal(got, tuned) {
		t.Errorf("scale 2 for one generation: %v, want %v", got, tuned)
	}
	if u.ReusedTokens != 0 {
		t.Errorf("after a change of scales %d tokens were reused", u.ReusedTokens)
	}
	if _, u := gen(m, s, llm.WithLoRAScales(map[int]float32{0: 2})); u.ReusedTokens == 0 {
		t.Error("the same scales again: nothing reused")
	}
	if as := m.LoRAAdapters(); as[0].Scale != 1 {
		t.Errorf("the model's scale became %v", as[0].Scale)
	}
	for _, bad := range []map[int]float32{{1: 1}, {-1: 1}, {0: float32(math.NaN())}} {
		for _, err := range s.CompleteTokens(ctx, []int32{1}, llm.WithLoRAScales(bad)) {
			if !errors.Is(err, llm.ErrInvalidOption) {
				t.Errorf("%v: %v, want ErrInvalidOption", bad, err)
			}
			break
		}
	}
}
