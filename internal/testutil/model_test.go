package testutil

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

func readModel(t *testing.T, s ModelSpec) (*gguf.File, []byte) {
	t.Helper()
	b, err := ModelBytes(s)
	return Parse(t, b, err)
}

// wantTensors lists name → dims of every tensor a spec must produce,
// written out independently of model.go.
func wantTensors(s ModelSpec) map[string][]int64 {
	e, v, f := int64(s.Embd), int64(s.Vocab), int64(s.FFN)
	hd := int64(s.HeadDim)
	if hd == 0 {
		hd = e / int64(s.Heads)
	}
	q, kv := int64(s.Heads)*hd, int64(s.HeadsKV)*hd
	qkv := map[string]int64{"attn_q": q, "attn_k": kv, "attn_v": kv}
	m := map[string][]int64{
		"token_embd.weight":  {e, v},
		"output_norm.weight": {e},
	}
	if !s.TiedOutput {
		m["output.weight"] = []int64{e, v}
	}
	if s.Dense > 0 {
		m["dense_2.weight"] = []int64{e, int64(s.Dense)}
		m["dense_3.weight"] = []int64{int64(s.Dense), e}
	}
	if s.LongRope != nil {
		m["rope_factors_long.weight"] = []int64{hd / 2}
		m["rope_factors_short.weight"] = []int64{hd / 2}
	}
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		m[p+"attn_output.weight"] = []int64{q, e}
		switch s.Arch {
		case "olmo2", "exaone4":
		case "seed_oss": // post_attention_norm before the feed-forward
			m[p+"attn_norm.weight"] = []int64{e}
			m[p+"post_attention_norm.weight"] = []int64{e}
		default:
			m[p+"attn_norm.weight"] = []int64{e}
			m[p+"ffn_norm.weight"] = []int64{e}
		}
		fused := s.Arch == "phi3" || s.FusedQKV
		if fused {
			m[p+"attn_qkv.weight"] = []int64{e, q + 2*kv}
		} else {
			for name, d := range qkv {
				m[p+name+".weight"] = []int64{e, d}
			}
		}
		switch s.Arch {
		case "phi3", "glm4", "chatglm": // gate and up fused
			m[p+"ffn_up.weight"] = []int64{e, 2 * f}
			m[p+"ffn_down.weight"] = []int64{f, e}
		case "qwen3moe", "granitemoe":
			x, fe := int64(s.Experts), int64(s.ExpertFFN)
			m[p+"ffn_gate_inp.weight"] = []int64{e, x}
			m[p+"ffn_gate_exps.weight"] = []int64{e, fe, x}
			m[p+"ffn_up_exps.weight"] = []int64{e, fe, x}
			m[p+"ffn_down_exps.weight"] = []int64{fe, e, x}
		default:
			m[p+"ffn_gate.weight"] = []int64{e, f}
			m[p+"ffn_up.weight"] = []int64{e, f}
			m[p+"ffn_down.weight"] = []int64{f, e}
		}
		switch {
		case (s.Arch == "qwen2" || s.QKVBias) && fused:
			m[p+"attn_qkv.bias"] = []int64{q + 2*kv}
		case s.Arch == "qwen2" || s.QKVBias:
			for name, d := range qkv {
				m[p+name+".bias"] = []int64{d}
			}
		}
		switch s.Arch {
		case "gemma2", "gemma3", "gemma-embedding", "olmo2", "exaone4", "glm4":
			m[p+"post_attention_norm.weight"] = []int64{e}
			m[p+"post_ffw_norm.weight"] = []int64{e}
		}
		switch s.Arch {
		case "qwen3", "qwen3moe", "gemma3", "gemma-embedding", "exaone4":
			m[p+"attn_q_norm.weight"] = []int64{hd}
			m[p+"attn_k_norm.weight"] = []int64{hd}
		case "olmo2":
			m[p+"attn_q_norm.weight"] = []int64{q}
			m[p+"attn_k_norm.weight"] = []int64{kv}
		}
	}
	return m
}

func TestWriteModel(t *testing.T) {
	big := func(s ModelSpec, wt, ot quant.Type) ModelSpec {
		s.Embd, s.FFN, s.HeadDim = 256, 512, 0
		s.WeightType, s.OutputType = wt, ot
		return s
	}
	with := func(s ModelSpec, wt quant.Type) ModelSpec { s.WeightType = wt; return s }
	tests := []struct {
		name     string
		spec     ModelSpec
		fileType uint32
	}{
		{"llama Q8_0", TinyLlama(), 7},
		{"llama F32", with(TinyLlama(), quant.F32), 0},
		{"llama F16", with(TinyLlama(), quant.F16), 1},
		{"llama Q4_0", with(TinyLlama(), quant.Q4_0), 2},
		{"llama Q4_K+Q6_K", big(TinyLlama(), quant.Q4_K, quant.Q6_K), 15},
		{"llama IQ2_XXS", big(TinyLlama(), quant.IQ2_XXS, 0), 19},
		{"llama TQ2_0", big(TinyLlama(), quant.TQ2_0, 0), 37},
		{"qwen2 Q8_0", TinyQwen2(), 7},
		{"qwen2 Q5_K", big(TinyQwen2(), quant.Q5_K, 0), 17},
		{"gemma2 Q8_0", TinyGemma2(), 7},
		{"gemma2 Q4_K+Q6_K", big(TinyGemma2(), quant.Q4_K, quant.Q6_K), 15},
		{"qwen3 Q8_0", TinyQwen3(), 7},
		{"gemma3 Q8_0", TinyGemma3(), 7},
		{"phi3 Q8_0", TinyPhi3(), 7},
		{"qwen3moe Q8_0", TinyQwen3MoE(), 7},
		{"granite Q8_0", TinyGranite(), 7},
		{"minicpm Q8_0", TinyMiniCPM(), 7},
		{"granitemoe Q8_0", TinyGraniteMoE(), 7},
		{"smollm3 Q8_0", TinySmolLM3(), 7},
		{"gemma-embedding Q8_0", TinyGemmaEmbedding(), 7},
		{"olmo2 Q8_0", TinyOlmo2(), 7},
		{"mistral3 Q8_0", TinyMistral3(), 7},
		{"ernie4_5 Q8_0", TinyErnie45(), 7},
		{"seed_oss Q8_0", TinySeedOSS(), 7},
		{"exaone4 Q8_0", TinyExaone4(), 7},
		{"exaone4 SWA Q8_0", TinyExaone4SWA(), 7},
		{"glm4 Q8_0", TinyGLM4(), 7},
		{"glm4 fused Q8_0", TinyGLM4Fused(), 7},
		{"chatglm Q8_0", TinyChatGLM(), 7},
		{"chatglm apart Q8_0", TinyChatGLMApart(), 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.spec
			f, _ := readModel(t, s)
			want := wantTensors(s)
			if len(f.Tensors) != len(want) {
				t.Errorf("%d tensors, want %d", len(f.Tensors), len(want))
			}
			outType := s.OutputType
			if outType == 0 {
				outType = s.WeightType
			}
			for _, ti := range f.Tensors {
				dims, ok := want[ti.Name]
				if !ok {
					t.Errorf("unexpected tensor %q", ti.Name)
					continue
				}
				if !reflect.DeepEqual(ti.Dims, dims) {
					t.Errorf("%s: dims %v, want %v", ti.Name, ti.Dims, dims)
				}
				typ := s.WeightType
				switch {
				case len(dims) == 1 || strings.Contains(ti.Name, "ffn_gate_inp") || strings.HasPrefix(ti.Name, "dense_"):
					typ = quant.F32
				case ti.Name == "output.weight" || ti.Name == "token_embd.weight" && s.TiedOutput:
					typ = outType
				}
				if ti.Type != typ {
					t.Errorf("%s: type %v, want %v", ti.Name, ti.Type, typ)
				}
			}
			a := s.Arch + "."
			hd := s.HeadDim
			if hd == 0 {
				hd = s.Embd / s.Heads
			}
			ints := map[string]uint64{
				"general.file_type":               uint64(tc.fileType),
				a + "context_length":              uint64(s.Context),
				a + "embedding_length":            uint64(s.Embd),
				a + "block_count":                 uint64(s.Layers),
				a + "feed_forward_length":         uint64(s.FFN),
				a + "attention.head_count":        uint64(s.Heads),
				a + "attention.head_count_kv":     uint64(s.HeadsKV),
				a + "rope.dimension_count":        uint64(hd),
				a + "vocab_size":                  uint64(s.Vocab),
				"tokenizer.ggml.bos_token_id":     1,
				"tokenizer.ggml.eos_token_id":     2,
				"tokenizer.ggml.unknown_token_id": 0,
			}
			if s.RopeDim > 0 { // glm4: half of each head rotated
				ints[a+"rope.dimension_count"] = uint64(s.RopeDim)
			}
			if s.Arch == "gemma2" || s.Arch == "gemma3" {
				ints[a+"attention.key_length"] = uint64(hd)
				ints[a+"attention.value_length"] = uint64(hd)
				ints[a+"attention.sliding_window"] = uint64(s.SlidingWindow)
			}
			if s.Arch == "qwen3moe" {
				ints[a+"expert_count"] = uint64(s.Experts)
				ints[a+"expert_used_count"] = uint64(s.ExpertsUsed)
				ints[a+"expert_feed_forward_length"] = uint64(s.ExpertFFN)
			}
			for k, v := range ints {
				if got, ok := f.Uint(k); !ok || got != v {
					t.Errorf("%s = %d, %v; want %d", k, got, ok, v)
				}
			}
			floats := map[string]float64{
				a + "attention.layer_norm_rms_epsilon": float64(s.RMSEps),
				a + "rope.freq_base":                   float64(s.RopeBase),
			}
			if s.Arch == "gemma2" {
				floats[a+"attn_logit_softcapping"] = 50
				floats[a+"final_logit_softcapping"] = 30
			}
			for k, v := range floats {
				if got, ok := f.Float(k); !ok || got != v {
					t.Errorf("%s = %v, %v; want %v", k, got, ok, v)
				}
			}
			if f.Arch() != s.Arch {
				t.Errorf("arch %q, want %q", f.Arch(), s.Arch)
			}
			if m, _ := f.String("tokenizer.ggml.model"); m != "llama" {
				t.Errorf("tokenizer model %q", m)
			}
			if add, ok := f.Bool("tokenizer.ggml.add_bos_token"); !ok || !add {
				t.Error("add_bos_token is not true")
			}
			toks, _ := f.Strings("tokenizer.ggml.tokens")
			scores, _ := f.Float32s("tokenizer.ggml.scores")
			types, _ := f.Int32s("tokenizer.ggml.token_type")
			if len(toks) != s.Vocab || len(scores) != s.Vocab || len(types) != s.Vocab {
				t.Errorf("%d tokens, %d scores, %d types; want %d", len(toks), len(scores), len(types), s.Vocab)
			}
		})
	}
}

func TestTinyLlamaSize(t *testing.T) {
	b, err := ModelBytes(TinyLlama())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("TinyLlama: %d bytes", len(b))
	if len(b) >= 1<<20 {
		t.Errorf("TinyLlama is %d bytes, want under 1 MiB", len(b))
	}
}

func TestDeterministic(t *testing.T) {
	a, err := ModelBytes(TinyGemma2())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ModelBytes(TinyGemma2())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the same spec gave different bytes")
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := WriteModelFile(path, TinyGemma2()); err != nil {
		t.Fatal(err)
	}
	c, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, c) {
		t.Error("WriteModelFile and ModelBytes differ")
	}
	s := TinyGemma2()
	s.Seed++
	d, err := ModelBytes(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != len(a) || bytes.Equal(a, d) {
		t.Errorf("another seed: %d bytes (want %d), equal %v", len(d), len(a), bytes.Equal(a, d))
	}
}

// tensorValues dequantizes a whole tensor.
func tensorValues(t *testing.T, f *gguf.File, b []byte, name string) []float32 {
	t.Helper()
	ti, ok := f.Tensor(name)
	if !ok {
		t.Fatalf("no tensor %q", name)
	}
	out := make([]float32, ti.Elems())
	if err := quant.Dequantize(ti.Type, out, b[ti.Offset:ti.Offset+ti.Size]); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWeights checks the distributions, and that a quantized model holds
// the same weights as the F32 model of the same seed, up to quantization
// error.
func TestWeights(t *testing.T) {
	s32 := TinyLlama()
	s32.WeightType = quant.F32
	f32, b32 := readModel(t, s32)
	fq, bq := readModel(t, TinyLlama())
	stats := func(x []float32) (mean, std float64) {
		for _, v := range x {
			mean += float64(v)
		}
		mean /= float64(len(x))
		for _, v := range x {
			std += (float64(v) - mean) * (float64(v) - mean)
		}
		return mean, math.Sqrt(std / float64(len(x)))
	}
	tests := []struct {
		name      string
		mean, std float64
	}{
		{"token_embd.weight", 0, 1},
		{"output.weight", 0, 4 / math.Sqrt(64)},
		{"blk.0.attn_q.weight", 0, 1 / math.Sqrt(64)},
		{"blk.1.ffn_down.weight", 0, 1 / math.Sqrt(128)},
		{"blk.0.attn_norm.weight", 1, 0.1},
		{"output_norm.weight", 1, 0.1},
	}
	for _, tc := range tests {
		x := tensorValues(t, f32, b32, tc.name)
		mean, std := stats(x)
		tol := 4 * tc.std / math.Sqrt(float64(len(x)))
		if math.Abs(mean-tc.mean) > tol || math.Abs(std-tc.std) > 0.15*tc.std {
			t.Errorf("%s: mean %.4f std %.4f, want %.4f %.4f", tc.name, mean, std, tc.mean, tc.std)
		}
		y := tensorValues(t, fq, bq, tc.name)
		// Q8_0 rounds each value to a step of amax/127 of its block, then
		// stores the step as F16 (relative error up to 2^-11 on up to 127
		// steps).
		for i := 0; i < len(x); i += 32 {
			amax := 0.0
			for _, v := range x[i : i+min(32, len(x)-i)] {
				amax = max(amax, math.Abs(float64(v)))
			}
			for j := i; j < i+32 && j < len(x); j++ {
				if d := math.Abs(float64(x[j] - y[j])); d > amax/127*(0.5+127.0/2048)+1e-6 {
					t.Fatalf("%s[%d]: F32 %v, Q8_0 %v", tc.name, j, x[j], y[j])
				}
			}
		}
	}
}

func TestSpecErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(*ModelSpec)
		want string
	}{
		{"unknown arch", func(s *ModelSpec) { s.Arch = "gptj" }, "unknown architecture"},
		{"no layers", func(s *ModelSpec) { s.Layers = 0 }, "must all be positive"},
		{"small vocab", func(s *ModelSpec) { s.Vocab = 100 }, "smaller than the 259"},
		{"gqa", func(s *ModelSpec) { s.HeadsKV = 3 }, "not a multiple of 3 KV heads"},
		{"odd head", func(s *ModelSpec) { s.Embd, s.WeightType = 20, quant.F32 }, "head size 5"},
		{"block size", func(s *ModelSpec) { s.WeightType = quant.Q4_K }, "not a multiple of the block size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := TinyLlama()
			tc.edit(&s)
			var buf bytes.Buffer
			err := WriteModel(&buf, s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if buf.Len() != 0 {
				t.Errorf("%d bytes written before the error", buf.Len())
			}
		})
	}
	if err := WriteModelFile(filepath.Join(t.TempDir(), "no", "such", "dir"), TinyLlama()); err == nil {
		t.Error("WriteModelFile into a missing directory succeeded")
	}
}

// TinyLFM2's file as llama.cpp's converter lays out LFM2: per-layer KV
// head counts with 0 for the conv layers, shortconv.l_cache, the conv
// layers' three shortconv tensors (the kernel F32, [l_cache, Embd]) in place
// of attention, per-head Q/K norms on the attention layer, the final norm
// named token_embd_norm and no output matrix.
func TestTinyLFM2Layout(t *testing.T) {
	s := TinyLFM2()
	f, _ := readModel(t, s)
	if kvs, ok := f.Int32s("lfm2.attention.head_count_kv"); !ok || !reflect.DeepEqual(kvs, []int32{0, 0, 2, 0}) {
		t.Errorf("head_count_kv %v, %v; want [0 0 2 0]", kvs, ok)
	}
	if k, ok := f.Uint("lfm2.shortconv.l_cache"); !ok || k != 3 {
		t.Errorf("shortconv.l_cache %d, %v; want 3", k, ok)
	}
	want := map[string]struct {
		typ  quant.Type
		dims []int64
	}{
		"token_embd_norm.weight":          {quant.F32, []int64{64}},
		"blk.0.shortconv.in_proj.weight":  {quant.Q8_0, []int64{64, 192}},
		"blk.0.shortconv.conv.weight":     {quant.F32, []int64{3, 64}},
		"blk.0.shortconv.out_proj.weight": {quant.Q8_0, []int64{64, 64}},
		"blk.2.attn_q_norm.weight":        {quant.F32, []int64{16}},
		"blk.2.attn_k.weight":             {quant.Q8_0, []int64{64, 32}},
	}
	for name, w := range want {
		ti, ok := f.Tensor(name)
		if !ok || ti.Type != w.typ || !reflect.DeepEqual(ti.Dims, w.dims) {
			t.Errorf("%s: %v %v (present %v), want %v %v", name, ti.Type, ti.Dims, ok, w.typ, w.dims)
		}
	}
	for _, absent := range []string{"output.weight", "output_norm.weight", "blk.0.attn_q.weight", "blk.2.shortconv.conv.weight"} {
		if _, ok := f.Tensor(absent); ok {
			t.Errorf("%s present", absent)
		}
	}
}

// TestVariantsUnique: the tests over every architecture name their
// subtests by Variant, so two specs of one name would run as "x" and
// "x#01", which -run cannot tell apart; a new variant needs a Label.
func TestVariantsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range TinySpecs() {
		v := s.Variant()
		if seen[v] {
			t.Errorf("two specs are named %q: give the variant a Label", v)
		}
		seen[v] = true
	}
}
