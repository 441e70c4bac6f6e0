package llm_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
)

// addTower puts a vision tower into h as Ollama's converter keeps it in
// the text model's file: keys under <arch>.vision and tensors under v.
// and mm. (big enough that a plan counting them would show it).
func addTower(h *hmodel) {
	h.set(".vision.block_count", uint32(1))
	h.set(".vision.embedding_length", uint32(64))
	h.put("v.patch_embd.weight", quant.F16, 64, 588)
	h.put("v.blk.0.attn_q.weight", quant.F16, 64, 64)
	h.put("v.blk.0.ln1.weight", quant.F32, 64)
	h.put("mm.0.weight", quant.F16, 256, 64)
}

// renameArchKeys renames h's architecture, and its keys with it.
func renameArchKeys(h *hmodel, to string) {
	for i := range h.kvs {
		if rest, ok := strings.CutPrefix(h.kvs[i].Key, h.arch+"."); ok {
			h.kvs[i].Key = to + "." + rest
		}
	}
	h.arch = to
	h.set("general.architecture", to)
}

// renamedTo is the edit renameArchKeys(h, to).
func renamedTo(to string) func(*hmodel) {
	return func(h *hmodel) { renameArchKeys(h, to) }
}

// ollamaSections moves rope.dimension_sections to Ollama's key, as the
// three counts of the checkpoint's mrope_section.
func ollamaSections(h *hmodel, key string) {
	s := h.get(".rope.dimension_sections").([]int32)
	h.del(".rope.dimension_sections")
	h.set(key, s[:3])
}

// ollamaDialects are models as Ollama's converter writes them, each from
// a spec of ours in llama.cpp's names: spec is the llama.cpp file (its
// weights shared by both), ollama rewrites it.
var ollamaDialects = []struct {
	name   string
	spec   func() testutil.ModelSpec
	ollama func(h *hmodel)
	canon  func(h *hmodel) // what the spec cannot say of llama.cpp's file, or nil
}{
	{"qwen25vl", func() testutil.ModelSpec {
		s := testutil.TinyQwen2VL()
		s.RopeSections = []int32{2, 3, 3, 0} // Ollama writes three counts
		return s
	}, func(h *hmodel) {
		renameArchKeys(h, "qwen25vl")
		ollamaSections(h, ".rope.mrope_section")
		addTower(h)
	}, nil},
	{"qwen3vl", testutil.TinyQwen3VL, func(h *hmodel) {
		ollamaSections(h, ".mrope_sections")
		h.del(".n_deepstack_layers")
		addTower(h)
	}, nil},
	{"qwen3vl converter key", testutil.TinyQwen3VL, func(h *hmodel) {
		ollamaSections(h, ".rope.mrope_section")
		addTower(h)
	}, nil},
	{"qwen3vlmoe", testutil.TinyQwen3VLMoE, func(h *hmodel) {
		ollamaSections(h, ".mrope_sections")
		h.del(".n_deepstack_layers")
		addTower(h)
	}, nil},
	{"gemma3 with vision", func() testutil.ModelSpec {
		s := testutil.TinyGemma3() // its epsilon and base are Ollama's defaults
		s.RopeBaseSWA = 5000
		return s
	}, func(h *hmodel) {
		h.del(".attention.layer_norm_rms_epsilon")
		h.del(".rope.freq_base")
		h.set(".rope.local.freq_base", h.get(".rope.freq_base_swa"))
		h.del(".rope.freq_base_swa")
		addTower(h)
	}, nil},
	{"mistral3 with YaRN", testutil.TinyMistral3, ollamaMistral3, nil},
	{"mistral3 without scaling", func() testutil.ModelSpec {
		s := testutil.TinyMistral3()
		s.Yarn = nil
		return s
	}, ollamaMistral3, nil},
	{"glm4moelite", func() testutil.ModelSpec {
		s := testutil.TinyDeepSeek3() // GLM-4.7-Flash's form: q_lora, sigmoid, a selection bias
		s.Yarn = nil
		d := *s.DeepSeek2
		d.Groups, d.GroupsUsed = 0, 0
		s.DeepSeek2 = &d
		return s
	}, func(h *hmodel) {
		renameArchKeys(h, "glm4moelite")
		for _, p := range [][2]string{{".attention.key_length", ".attention.key_length_mla"}, {".attention.value_length", ".attention.value_length_mla"}} {
			a, b := h.get(p[0]), h.get(p[1])
			h.set(p[0], b)
			h.set(p[1], a)
		}
		h.set(".attention.head_count_kv", h.get(".attention.head_count"))
		h.set("tokenizer.ggml.pre", "glm4")
	}, nil},
	{"gemma3n", testutil.TinyGemma3n, func(h *hmodel) {
		h.set(".rope.freq_base_local", h.get(".rope.freq_base_swa"))
		h.del(".rope.freq_base_swa")
		h.set(".head_dim", h.get(".attention.key_length"))
		h.del(".attention.key_length")
		h.del(".attention.value_length")
		h.set(".altup.correct_scale", true)
		h.set(".altup.lr_multiplier", float32(1))
	}, func(h *hmodel) {
		h.set(".rope.freq_base_swa", float32(5000))
	}},
	{"qwen3next", testutil.TinyQwen3Next, ollamaQwen35, nil},
	{"qwen35", testutil.TinyQwen35, ollamaQwen35, nil},
	{"qwen35moe", testutil.TinyQwen35MoE, ollamaQwen35, nil},
	{"olmo3", tinyOlmo3, func(h *hmodel) {
		renameArchKeys(h, "olmo3")
		h.set(".attention.sliding_window_pattern", []bool{true, true, true, false})
	}, withWindow},
	{"deepseek2 without scaling", func() testutil.ModelSpec {
		s := testutil.TinyDeepSeek2KVB() // the joined attn_kv_b Ollama's converter writes
		s.Yarn = nil
		return s
	}, func(h *hmodel) { // every rope.scaling key, empty or zero
		h.set(".rope.scaling.type", "")
		h.set(".rope.scaling.factor", float32(0))
		h.set(".rope.scaling.original_context_length", uint32(0))
		h.set(".rope.scaling.yarn_log_multiplier", float32(0))
		h.set(".expert_gating_func", uint32(1))
	}, nil},
	{"llama with narrow heads", func() testutil.ModelSpec {
		s := testutil.TinyLlama()
		s.HeadDim = 8 // 4 heads of 8 in a width of 64, as Mistral Nemo's 32 of 128 in 5120
		return s
	}, func(h *hmodel) {
		h.set(".attention.head_dim", h.get(".attention.key_length"))
		h.set(".rope.dimension_count", h.get(".embedding_length").(uint32)/h.get(".attention.head_count").(uint32))
		h.set(".vocab_size", uint32(len(h.get("tokenizer.ggml.tokens").([]string))))
	}, nil},
	{"phi3 without scaling", func() testutil.ModelSpec {
		s := testutil.TinyPhi3()
		s.LongRope = nil
		return s
	}, ollamaPhi3NoScaling, nil},
}

// ollamaPhi3NoScaling writes a Phi-3 without RoPE scaling as Ollama's
// converter does: its original context stated, and both LongRoPE factor
// tensors written empty (a dimension of 0) before the first block's.
func ollamaPhi3NoScaling(h *hmodel) {
	h.set(".rope.scaling.original_context_length", h.get(".context_length"))
	at := slices.IndexFunc(h.tensors, func(t htensor) bool { return strings.HasPrefix(t.name, "blk.0.") })
	h.tensors = slices.Insert(h.tensors, at,
		htensor{"rope_factors_long.weight", quant.F32, []int64{0}, nil},
		htensor{"rope_factors_short.weight", quant.F32, []int64{0}, nil})
}

// ollamaQwen35 writes a Qwen 3.5 or Qwen3-Next file's keys as Ollama's
// converter does: head_count_kv one a layer, 0 in the delta-net layers;
// Qwen 3.5's sections under its three names and its V heads marked
// reordered (as llama.cpp's converter reorders them too).
func ollamaQwen35(h *hmodel) {
	every := int(h.get(".full_attention_interval").(uint32))
	n := int(h.get(".block_count").(uint32))
	kv := h.get(".attention.head_count_kv").(uint32)
	counts := make([]uint32, n)
	for il := range counts {
		if (il+1)%every == 0 {
			counts[il] = kv
		}
	}
	h.set(".attention.head_count_kv", counts)
	if s := h.get(".rope.dimension_sections"); s != nil {
		h.set(".mrope_sections", s)
		h.set(".rope.mrope_section", s)
		h.set(".rope.mrope_interleaved", true)
		h.set(".ssm.v_head_reordered", true)
	}
	addTower(h)
}

// ollamaMistral3 writes a mistral3's keys as Ollama's converter does:
// every rope.scaling key (empty or zero when the checkpoint has none),
// YaRN's bounds as beta_fast and beta_slow, its multiplier of 1 as
// mscale and mscale_all_dim, the attention temperature as
// rope.scaling_beta; and the vision tower.
func ollamaMistral3(h *hmodel) {
	if h.get(".rope.scaling.type") == nil {
		h.set(".rope.scaling.type", "")
		h.set(".rope.scaling.factor", float32(0))
	}
	yarn := h.get(".rope.scaling.type") == "yarn"
	for b, def := range map[string]float32{"beta_fast": 32, "beta_slow": 1} { // Ministral 3's, llama.cpp's defaults
		v, ok := h.get(".rope.scaling.yarn_" + b).(float32)
		if !ok && yarn {
			v = def
		}
		h.del(".rope.scaling.yarn_" + b)
		h.set(".rope.scaling."+b, v)
	}
	if h.get(".rope.scaling.yarn_log_multiplier") != nil {
		h.del(".rope.scaling.yarn_log_multiplier")
		h.set(".rope.scaling.mscale", float32(1))
		h.set(".rope.scaling.mscale_all_dim", float32(1))
	}
	if v := h.get(".attention.temperature_scale"); v != nil {
		h.del(".attention.temperature_scale")
		h.set(".rope.scaling_beta", v)
	}
	h.set(".vocab_size", uint32(len(h.get("tokenizer.ggml.tokens").([]string))))
	addTower(h)
}

// TestOllamaDialects: each model of ollamaDialects, as Ollama stores it
// (its architecture name and keys, its vision tower in the same file),
// loads as llama.cpp's file of the same weights and gives bit for bit its
// logits; the tower's tensors are neither read nor counted by the plan
// (memplan.Shape's SkippedBytes holds exactly them, the parameters are
// the text model's).
func TestOllamaDialects(t *testing.T) {
	quiet := llm.WithLogger(slog.New(slog.DiscardHandler))
	ctx := context.Background()
	ids := []int32{1, 7, 30, 2, 55, 9, 13, 4, 21}
	for _, tc := range ollamaDialects {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := modelBytes(t, tc.spec())
			if tc.canon != nil {
				h := parseModel(t, file)
				tc.canon(h)
				file = h.bytes(t)
			}
			canonPath := writeTemp(t, dir, "llama.cpp.gguf", file)
			ref := load(t, canonPath, llm.WithThreads(1), quiet)
			want := mustEval(t, ctx, session(t, ref).EvalAll, ids)
			h := parseModel(t, file)
			tc.ollama(h)
			path := writeTemp(t, dir, "ollama.gguf", h.bytes(t))
			m := load(t, path, llm.WithThreads(1), quiet)
			if got, wantArch := m.Info().Architecture, ref.Info().Architecture; got != wantArch {
				t.Errorf("architecture %q, want %q", got, wantArch)
			}
			got := mustEval(t, ctx, session(t, m).EvalAll, ids)
			vocab := len(want) / len(ids)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("token %d, logit %d: %v, want %v", i/vocab, i%vocab, got[i], want[i])
				}
			}
			// Of the Ollama file [0] and of llama.cpp's [1]: the shape
			// memplan reads and the plan.
			var shapes [2]*memplan.Shape
			var plans [2]llm.MemoryPlan
			for i, file := range []string{path, canonPath} {
				var err error
				if shapes[i], err = memplan.ReadShape(file); err != nil {
					t.Fatal(err)
				}
				if plans[i], err = llm.Plan(file); err != nil {
					t.Fatal(err)
				}
			}
			sh, canon := shapes[0], shapes[1]
			var tower int64
			for _, tn := range h.tensors {
				if model.TowerTensor(tn.name) {
					tower += int64(len(tn.data))
				}
			}
			if sh.SkippedBytes != tower || sh.Params != canon.Params || sh.OtherBytes != canon.OtherBytes || sh.HeapBytes != canon.HeapBytes {
				t.Errorf("skipped %d bytes (want the tower's %d), %d parameters, %d other bytes and %d on the heap (want %d, %d and %d)",
					sh.SkippedBytes, tower, sh.Params, sh.OtherBytes, sh.HeapBytes, canon.Params, canon.OtherBytes, canon.HeapBytes)
			}
			p, cp := plans[0], plans[1]
			// The files differ by the tower and Ollama's keys: the plans by
			// the keys (and tensor names) and where pages then fall alone.
			if d := p.ResidentWeights - cp.ResidentWeights; d < -16<<10 || d > 16<<10 {
				t.Errorf("resident weights %d, llama.cpp's file's %d: %d apart (the tower is %d bytes)", p.ResidentWeights, cp.ResidentWeights, d, tower)
			}
		})
	}
}

// TestOllamaDialectsHostile: a half-translated file — a thing under both
// dialects' names, an Ollama key of the wrong type — is refused with
// ErrBadModel naming it.
func TestOllamaDialectsHostile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    func() testutil.ModelSpec
		edit    func(h *hmodel)
		mention string
	}{
		{"qwen3vl other sections under both names", testutil.TinyQwen3VL, set(".mrope_sections", []int32{4, 4, 8}),
			"qwen3vl.rope.dimension_sections = [8 4 4 0] and qwen3vl.mrope_sections = [4 4 8 0] disagree"},
		{"qwen3vl sections a string", testutil.TinyQwen3VL, edits(del(".rope.dimension_sections"), set(".mrope_sections", "8,4,4")),
			"qwen3vl.mrope_sections is"},
		{"qwen3vl sections too many", testutil.TinyQwen3VL, edits(del(".rope.dimension_sections"), set(".rope.mrope_section", []int32{8, 4, 4, 0, 0})),
			"qwen3vl.rope.mrope_section is"},
		{"qwen3vl Ollama's two keys disagree", testutil.TinyQwen3VL,
			edits(del(".rope.dimension_sections"), set(".mrope_sections", []int32{8, 4, 4}, ".rope.mrope_section", []int32{4, 4, 8})),
			"disagree"},
		{"qwen25vl key under both names", testutil.TinyQwen2VL, set("qwen25vl.block_count", uint32(2), "general.architecture", "qwen25vl"),
			"qwen25vl.block_count and qwen2vl.block_count"},
		{"qwen25vl without sections", testutil.TinyQwen2VL, edits(renamedTo("qwen25vl"), del(".rope.dimension_sections")),
			"qwen2vl.rope.dimension_sections missing"},
		{"mistral3 YaRN bound under both names", testutil.TinyMistral3, set(".rope.scaling.beta_fast", float32(32), ".rope.scaling.yarn_beta_fast", float32(32)),
			"mistral3.rope.scaling.beta_fast and mistral3.rope.scaling.yarn_beta_fast"},
		{"mistral3 scaling_beta a string", testutil.TinyMistral3, edits(del(".attention.temperature_scale"), set(".rope.scaling_beta", "0.1")),
			"mistral3.rope.scaling_beta is"},
		{"mistral3 temperature stated otherwise", testutil.TinyMistral3, set(".rope.scaling_beta", float32(0.2)),
			"mistral3.attention.temperature_scale = 0.1, but mistral3.rope.scaling_beta implies 0.2"},
		{"glm4moelite key under both names", testutil.TinyDeepSeek3, set("glm4moelite.block_count", uint32(3), "general.architecture", "glm4moelite"),
			"glm4moelite.block_count and deepseek2.block_count"},
		{"glm4moelite size a string", testutil.TinyDeepSeek3, edits(renamedTo("glm4moelite"), set(".attention.key_length_mla", "48")),
			"glm4moelite.attention.key_length_mla is"},
		{"glm4moelite without its _mla sizes", testutil.TinyDeepSeek3, edits(renamedTo("glm4moelite"), del(".attention.value_length_mla")),
			"glm4moelite.attention.value_length and glm4moelite.attention.value_length_mla come together"},
		{"qwen35 head counts against the interval", testutil.TinyQwen35, set(".attention.head_count_kv", []uint32{2, 0, 0, 2}),
			"qwen35.attention.head_count_kv = [2 0 0 2] and qwen35.full_attention_interval = 4 disagree on layer 0"},
		{"qwen35 reordered flag a string", testutil.TinyQwen35, set(".ssm.v_head_reordered", "yes"),
			"qwen35.ssm.v_head_reordered is"},
		{"olmo3 pattern a count", testutil.TinyOlmo2, edits(renamedTo("olmo3"), set(".attention.sliding_window_pattern", uint32(4))),
			"olmo3.attention.sliding_window_pattern is"},
		{"llama head_dim against key_length", func() testutil.ModelSpec {
			s := testutil.TinyLlama()
			s.HeadDim = 8
			return s
		}, set(".attention.head_dim", uint32(12), ".rope.dimension_count", uint32(16)),
			"llama.attention.key_length = 8, but llama.attention.head_dim = 12"},
		{"gemma3 local base under both names", testutil.TinyGemma3, edits(addTower, set(".rope.local.freq_base", float32(10000), ".rope.freq_base_swa", float32(10000))),
			"gemma3.rope.local.freq_base and gemma3.rope.freq_base_swa"},
		{"gemma3n local base under both names", testutil.TinyGemma3n, set(".rope.freq_base_local", float32(10000), ".rope.freq_base_swa", float32(10000)),
			"gemma3n.rope.freq_base_local and gemma3n.rope.freq_base_swa"},
		{"gemma3n head_dim against key_length", testutil.TinyGemma3n, set(".head_dim", uint32(16)),
			"gemma3n.attention.key_length = 32, but gemma3n.head_dim = 16"},
		{"gemma3n head_dim a float", testutil.TinyGemma3n, set(".head_dim", float32(32)),
			"gemma3n.head_dim is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := parseModel(t, modelBytes(t, tc.spec()))
			tc.edit(h)
			path := writeTemp(t, t.TempDir(), "m.gguf", h.bytes(t))
			_, err := llm.Load(path)
			if !errors.Is(err, model.ErrBadModel) || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("%v, want ErrBadModel naming %q", err, tc.mention)
			}
		})
	}
}

// tinyOlmo3 is TinyOlmo2 made as OLMo 3 is: 4 layers, a window of 4 on
// three of them (the spec writes no window for olmo2: withWindow does).
func tinyOlmo3() testutil.ModelSpec {
	s := testutil.TinyOlmo2()
	s.Layers = 4
	return s
}

func withWindow(h *hmodel) { h.set(".attention.sliding_window", uint32(4)) }

// TestOllamaDialectsUnsupported: an Ollama file whose weights are not
// what llama.cpp's graph reads, though its names translate — a Qwen 3.5
// or Qwen3-Next whose ssm.v_head_reordered says its value heads are in
// the other one's order, an OLMo 3 whose window pattern is not llama.cpp's
// — is refused with ErrUnsupportedArch naming why.
func TestOllamaDialectsUnsupported(t *testing.T) {
	reorder := func(v bool) func(h *hmodel) { return func(h *hmodel) { h.set(".ssm.v_head_reordered", v) } }
	for _, tc := range []struct {
		name    string
		spec    func() testutil.ModelSpec
		edit    func(h *hmodel)
		mention string
	}{
		{"qwen35 heads grouped", testutil.TinyQwen35, reorder(false), "qwen35.ssm.v_head_reordered = false"},
		{"qwen35moe heads grouped", testutil.TinyQwen35MoE, reorder(false), "qwen35moe.ssm.v_head_reordered = false"},
		{"qwen3next heads tiled", testutil.TinyQwen3Next, reorder(true), "qwen3next.ssm.v_head_reordered = true"},
		{"olmo3 pattern not llama.cpp's", tinyOlmo3, func(h *hmodel) {
			withWindow(h)
			renameArchKeys(h, "olmo3")
			h.set(".attention.sliding_window_pattern", []bool{true, false, true, false})
		}, "layer 1 is not as llama.cpp's olmo2 runs it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := parseModel(t, modelBytes(t, tc.spec()))
			tc.edit(h)
			_, err := llm.Load(writeTemp(t, t.TempDir(), "m.gguf", h.bytes(t)))
			if !errors.Is(err, model.ErrUnsupportedArch) || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("%v, want ErrUnsupportedArch naming %q", err, tc.mention)
			}
		})
	}
}
