package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

func mustShape(t *testing.T, name string) shape { return mustLookup(t, shapes, "shape", name) }

func mustType(t *testing.T, name string) fileType { return mustLookup(t, fileTypes, "type", name) }

func mustLookup[T named](t *testing.T, list []T, kind, name string) T {
	t.Helper()
	e, err := lookup(list, kind, name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// build writes shape s in type ft to a temporary file and returns its path.
func build(t *testing.T, s shape, ft fileType) string {
	t.Helper()
	m, err := newModel(s, ft, 7)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), s.Name+"-"+ft.Name+".gguf")
	if _, err := writeFile(path, m); err != nil {
		t.Fatal(err)
	}
	return path
}

// evalSteps loads path and evaluates a short prompt and a few single
// tokens, checking that every logit is finite; an encoder embeds a text
// instead.
func evalSteps(t *testing.T, path string) {
	t.Helper()
	m, err := llm.Load(path, llm.WithThreads(2), llm.WithContextSize(64))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Info().EmbeddingOnly {
		vs, err := m.Embed(context.Background(), []string{"the quick brown fox jumps over the lazy dog"})
		if err != nil {
			t.Fatal(err)
		}
		for j, x := range vs[0] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("element %d of the embedding is %v", j, x)
			}
		}
		return
	}
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	vocab := m.Info().VocabSize
	steps := [][]int32{{m.BOS(), 300, 301, 302, 303, 304, 305, 306}, {7}, {400}, {9}}
	for i, toks := range steps {
		logits, err := s.Eval(context.Background(), toks)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if len(logits) != vocab {
			t.Fatalf("step %d: %d logits, want %d", i, len(logits), vocab)
		}
		for j, x := range logits {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("step %d: logit %d is %v", i, j, x)
			}
		}
	}
}

func TestTinyEveryType(t *testing.T) {
	s := mustShape(t, "tiny")
	for _, ft := range fileTypes {
		t.Run(ft.Name, func(t *testing.T) {
			path := build(t, s, ft)
			f := testutil.ReadHeader(t, path)
			if got, _ := f.Uint("general.file_type"); got != uint64(ft.Ftype) {
				t.Errorf("general.file_type = %d, want %d", got, ft.Ftype)
			}
			want, err := plan(s, ft)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Tensors) != len(want) {
				t.Fatalf("%d tensors, want %d", len(f.Tensors), len(want))
			}
			for i, ti := range f.Tensors {
				if ti.Name != want[i].Name || ti.Type != want[i].Type || !slices.Equal(ti.Dims, want[i].Dims) {
					t.Errorf("tensor %d: %s %v %v, want %s %v %v", i, ti.Name, ti.Type, ti.Dims, want[i].Name, want[i].Type, want[i].Dims)
				}
			}
			if toks, _ := f.Strings("tokenizer.ggml.tokens"); len(toks) != s.Vocab {
				t.Errorf("%d tokens, want %d", len(toks), s.Vocab)
			}
			evalSteps(t, path)
		})
	}
}

// miniature keeps the architecture features of a real shape (biases, tied
// output, rope factors, head size, soft-capping) at a size a test can run.
func miniature(s shape) shape {
	s.Name += "-mini"
	s.Vocab, s.Embd, s.Layers, s.FFN, s.Context = 512, 256, 3, 512, 512
	switch {
	case s.encoder(): // no grouped KV heads: the converter writes no head_count_kv
		s.Heads, s.HeadsKV = 4, 4
	case s.DeepSeek2 != nil && s.DeepSeek2.Joined: // the older form states the decompressed heads
		s.Heads, s.HeadsKV = 4, 4
	case s.Arch == "olmoe" || s.Arch == "dots1": // llama.cpp sizes olmoe's attn_k_norm by the width, dots1's attn_k and attn_v as the query
		s.Heads, s.HeadsKV = 4, 4
	case s.DeepSeek2 != nil: // the latent is one KV head
		s.Heads, s.HeadsKV = 4, 1
	case s.HeadDim != 0:
		s.Heads, s.HeadsKV, s.HeadDim = 2, 1, 256
	default:
		s.Heads, s.HeadsKV = 4, 2
	}
	if s.Window != 0 {
		s.Window = 4
	}
	if s.RopeDim != 0 {
		s.RopeDim = 48 // three quarters of the head, as phi-4-mini
	}
	if d := s.DeepSeek2; d != nil {
		// Rows of K-quant blocks where the real shape has them; q_lora_rank
		// 0 written, as llama.cpp asks at 3 blocks.
		s.RopeDim = 64
		s.DeepSeek2 = &testutil.DeepSeek2{KVLora: 256, Nope: 64, Rope: 64, VHead: 64, Shared: d.Shared, Scale: d.Scale, QLoraKey: true}
		if d.Joined { // minicpm3: its query rank, one attn_kv_b
			s.DeepSeek2.QLora, s.DeepSeek2.Joined = 256, true
		}
		if s.KDA != nil { // kimi-linear: expert_gating_func required, and its selection bias
			s.DeepSeek2.Gating, s.DeepSeek2.SelBias = d.Gating, d.SelBias
		}
	}
	if s.LongRope != nil {
		s.LongRope = &longRope{OrigContext: 128}
	}
	if s.Deepstack != 0 {
		s.Deepstack = 2 // below the 3 layers, as llama.cpp needs
	}
	if s.Experts != 0 && s.Arch != "jamba" { // a dense Jamba's one expert is its feed-forward
		// llama4's one a token stays one: llama.cpp's weight_before_ffn
		// runs here for one only.
		s.Experts, s.ExpertsUsed, s.ExpertFFN = 8, min(s.ExpertsUsed, 2), 256
		if s.ffnWideExperts() {
			s.FFN = s.ExpertFFN // llama.cpp sizes these experts by feed_forward_length
		}
	}
	if r := s.Routing; r != nil {
		// One dense layer, then experts; bailingmoe2's query as wide as
		// the embedding and its 8 experts in 4 groups of 2, 2 used.
		s.DenseLead = min(s.DenseLead, 1)
		c := *r
		if c.SharedWidth != 0 {
			c.SharedWidth = s.ExpertFFN
		}
		if c.Groups > 1 {
			c.Groups, c.GroupsUsed = 4, 2
		}
		if s.Arch == "bailingmoe2" {
			s.HeadDim = s.Embd / s.Heads
		}
		s.Routing = &c
	}
	if m := s.Mimo2; m != nil {
		// 4 query heads of keys of 64 (48 rotated) and values of 32: 1
		// KV head on global layer 0, 2 on windowed layers 1 and 2.
		s.Heads, s.HeadsKV, s.HeadDim = 4, 2, 64
		s.Mimo2 = &mimo2Shape{GlobalKV: 1, HeadDimV: 32, GlobalEvery: 3, RopeBaseSWA: m.RopeBaseSWA, ValueScale: m.ValueScale}
	}
	if g := s.Gemma3n; g != nil {
		// Seven layers, the last two sharing the caches of layers 3 and 4.
		s.Layers = 7
		s.Gemma3n = &gemma3nShape{AltUp: g.AltUp, PerLayer: g.PerLayer, LaurelRank: g.LaurelRank, SharedKV: 2}
	}
	if g := s.Gemma4; g != nil {
		// Seven layers, a full one among them (the fifth or sixth), the
		// E-models' last two sharing the caches of layers 3 and 4; the
		// windowed heads half the full ones, which a K=V model's fewer
		// KV heads are.
		c := *g
		s.Layers, c.HeadDimSWA = 7, 128
		s.Heads, s.HeadsKV = 4, 2
		if c.SharedKV > 0 {
			c.SharedKV = 2
		}
		if c.KVHeadsFull > 0 {
			c.KVHeadsFull = 1
		}
		if c.PerLayer > 0 {
			c.PerLayer = 256
		}
		s.Gemma4 = &c
	}
	if s.Pattern != "" {
		// nemotron_h: a Mamba-2 layer, two feed-forward layers (with
		// experts: nemotron_h_moe's), then attention.
		ffn := "--"
		if s.Experts != 0 {
			ffn, s.SharedFFN = "EE", 256
		}
		s.Layers, s.Pattern = 4, "M"+ffn+"*"
	}
	if s.qwen35() { // value heads × head size; 4 value heads on 2 key heads
		s.SSM = &testutil.SSM{Conv: s.SSM.Conv, Inner: 256, State: 64, Heads: 4, Groups: 2}
		if s.Experts != 0 {
			s.Experts, s.ExpertsUsed, s.ExpertFFN, s.SharedFFN = 8, 2, 64, 64
		}
	} else if s.SSM != nil {
		s.SSM = &testutil.SSM{Conv: s.SSM.Conv, Inner: 2 * s.Embd, State: 16, Heads: 8, Groups: 2}
		if s.Experts != 0 {
			s.FFN, s.ExpertFFN, s.SharedFFN = 256, 256, 128 // granitehybrid's experts are FFN wide
		}
	}
	if s.RWKV7 != nil { // heads of 64; ranks within the width, multiples of 32; the gate and group norm as the shape's
		s.RWKV7 = &testutil.RWKV7{Head: 64, Decay: 32, ICLR: 64, Value: 32, Gate: min(s.RWKV7.Gate, 128), NoGroupNorm: s.RWKV7.NoGroupNorm}
		s.Heads, s.HeadsKV = 0, 0
	}
	if s.RWKV6 != nil { // heads of 64; extra dims within the width, multiples of 32
		kv := 0
		if s.RWKV6.HeadsKV != 0 {
			kv = 2 // rwkv6qwen2: 2 key heads of the 4
		}
		s.RWKV6 = &testutil.RWKV6{Head: 64, Mix: 32, Decay: 64, Rescale: 2, HeadsKV: kv}
		s.Heads, s.HeadsKV = 0, 0
	}
	if s.Mamba1 != nil {
		s.Mamba1 = &testutil.Mamba1{Conv: s.Mamba1.Conv, Inner: 2 * s.Embd, State: 16, DtRank: 32}
	}
	if s.PerLayer != nil {
		// deci: attention, none, a layer without a feed-forward; openelm:
		// heads and widths growing.
		s.PerLayer = &testutil.PerLayer{Heads: []int{2, 0, 2}, HeadsKV: []int{1, 0, 1}, FFN: []int{512, 256, 0}}
		if s.Arch == "openelm" {
			s.PerLayer = &testutil.PerLayer{Heads: []int{1, 2, 2}, HeadsKV: []int{1, 1, 1}, FFN: []int{256, 512, 512}}
		}
	}
	if s.mixersOnly() {
		s.Heads, s.HeadsKV = 0, 0
		s.ConvLayers = mambaLayers(s.Layers)
	}
	return s.keepAttention()
}

// TestMXFP4MoE writes a miniature qwen3-30b-a3b as MXFP4_MOE (the mix
// llama-quantize gives a qwen3moe file: checked on one from
// internal/testutil) and runs it.
func TestMXFP4MoE(t *testing.T) {
	path := build(t, miniature(mustShape(t, "qwen3-30b-a3b")), mustType(t, "mxfp4_moe"))
	f := testutil.ReadHeader(t, path)
	for name, want := range map[string]quant.Type{"blk.1.ffn_up_exps.weight": quant.MXFP4, "blk.2.attn_q.weight": quant.Q8_0} {
		if ti, _ := f.Tensor(name); ti.Type != want {
			t.Errorf("%s: %v, want %v", name, ti.Type, want)
		}
	}
	evalSteps(t, path)
}

func TestMiniatureShapes(t *testing.T) {
	for i, s := range shapes {
		if s.Name == "tiny" {
			continue
		}
		for j, typ := range []string{"q4_k_m", "f16"} {
			if raceEnabled && i%2 != j {
				// Under the race detector each shape in one type, the
				// types alternating: the writer's goroutines are the same
				// for every shape, and both types of all shapes were a
				// minute there (every other run writes them all).
				continue
			}
			t.Run(s.Name+"/"+typ, func(t *testing.T) {
				mini := miniature(s)
				path := build(t, mini, mustType(t, typ))
				f := testutil.ReadHeader(t, path)
				if _, ok := f.Tensor("rope_freqs.weight"); ok != (s.Llama3Rope != nil || s.Gemma4 != nil) {
					t.Errorf("rope_freqs.weight present = %v", ok)
				}
				if _, ok := f.Tensor("output.weight"); ok == (s.TiedOutput || s.encoder()) {
					t.Errorf("output.weight present = %v with tied output %v", ok, s.TiedOutput)
				}
				if _, ok := f.Tensor("position_embd.weight"); ok != (s.Arch == "bert" || s.learnedPositions()) {
					t.Errorf("position_embd.weight present = %v", ok)
				}
				if ti, ok := f.Tensor("token_types.weight"); ok != s.encoder() || ok && ti.Type != quant.F32 {
					t.Errorf("token_types.weight present = %v (F32 when present)", ok)
				}
				if _, ok := f.Tensor("blk.0.attn_q.bias"); ok != (s.QKVBias && !s.fusedQKV()) {
					t.Errorf("attn_q.bias present = %v", ok)
				}
				for _, name := range []string{"output_norm.bias", "blk.0.attn_norm.bias", "blk.0.ffn_norm.bias"} {
					// RWKV's LayerNorms have biases too, the second one
					// named attn_norm_2.
					rwkv := s.rwkv() && s.Arch != "rwkv6qwen2" && s.Arch != "arwkv7" && name != "blk.0.ffn_norm.bias"
					parallel := s.parallel() && name == "blk.0.ffn_norm.bias" // phi2's one norm
					if _, ok := f.Tensor(name); ok != (s.normBiases() && !parallel || rwkv) {
						t.Errorf("%s present = %v", name, ok)
					}
				}
				if _, ok := f.Tensor("blk.0.ffn_up.bias"); ok != (s.allBiases() || s.Arch == "bert" || s.Arch == "nomic-bert-moe" || s.Arch == "jina-bert-v3") {
					t.Errorf("ffn_up.bias present = %v", ok)
				}
				// talkie's is a gain a query head ([1, heads]), F32 as ggml_mul takes it.
				if ti, ok := f.Tensor("blk.0.attn_q_norm.weight"); ok != (s.QKNorm && !s.convLayer(0) || s.fullQKNorm() || s.Arch == "talkie") ||
					s.Arch == "talkie" && (ti.Type != quant.F32 || len(ti.Dims) != 2 || ti.Dims[0] != 1) {
					t.Errorf("attn_q_norm.weight present = %v (%+v)", ok, ti)
				}
				if ti, ok := f.Tensor("blk.0.shortconv.conv.weight"); ok != (s.convLayer(0) && s.SSM == nil && s.Mamba1 == nil && s.KDA == nil) || ok && ti.Type != quant.F32 {
					t.Errorf("shortconv.conv.weight present = %v (F32 when present)", ok)
				}
				for _, name := range []string{"blk.0.ssm_conv1d.weight", "blk.0.ssm_a", "blk.0.ssm_d", "blk.0.ssm_norm.weight"} {
					want := s.SSM != nil && (name != "blk.0.ssm_d" || s.Arch == "granitehybrid" || s.Arch == "falcon-h1" || s.Arch == "mamba2" || s.Pattern != "") ||
						s.Mamba1 != nil && name != "blk.0.ssm_norm.weight" || // jamba's and mamba's layer 0
						s.KDA != nil && (name == "blk.0.ssm_a" || name == "blk.0.ssm_norm.weight") // kimi-linear's layer 0
					if ti, ok := f.Tensor(name); ok != want || ok && ti.Type != quant.F32 {
						t.Errorf("%s present = %v (F32 when present)", name, ok)
					}
				}
				if _, ok := f.Tensor("blk.1.ffn_down_shexp.weight"); ok != (s.sharedFFN() > 0) {
					t.Errorf("ffn_down_shexp.weight present = %v", ok)
				}
				if _, ok := f.Tensor("blk.0.attn_qkv.weight"); ok != (s.fusedQKV() || s.Arch == "nomic-bert" || s.Arch == "nomic-bert-moe" || s.Arch == "jina-bert-v3" || s.Arch == "modern-bert" || s.qwen35()) {
					t.Errorf("attn_qkv.weight present = %v", ok)
				}
				if ti, ok := f.Tensor("blk.0.attn_k_b.weight"); ok != (s.DeepSeek2 != nil && !s.DeepSeek2.Joined && !s.convLayer(0)) || ok && len(ti.Dims) != 3 {
					t.Errorf("attn_k_b.weight present = %v (3-D when present)", ok)
				}
				if _, ok := f.Tensor("blk.0.attn_kv_b.weight"); ok != (s.DeepSeek2 != nil && s.DeepSeek2.Joined) {
					t.Errorf("attn_kv_b.weight present = %v", ok)
				}
				if _, ok := f.Tensor("rope_factors_long.weight"); ok != (s.LongRope != nil) {
					t.Errorf("rope_factors_long.weight present = %v", ok)
				}
				if ti, ok := f.Tensor("blk.2.ffn_down_exps.weight"); ok != (s.Experts > 0 && s.Arch != "jamba" && s.MoEEvery == 0) || ok && len(ti.Dims) != 3 {
					t.Errorf("ffn_down_exps.weight present = %v", ok)
				}
				// nomic-bert-moe: experts on the odd layers, no gate.
				if _, ok := f.Tensor("blk.1.ffn_up_exps.weight"); s.MoEEvery > 0 && !ok {
					t.Errorf("blk.1.ffn_up_exps.weight missing")
				}
				if _, ok := f.Tensor("blk.1.ffn_gate_exps.weight"); s.MoEEvery > 0 && ok {
					t.Errorf("blk.1.ffn_gate_exps.weight present")
				}
				// lfm2moe: layer 0 dense, layer 2's experts with their
				// selection bias; gemma4: a dense feed-forward beside every
				// layer's experts.
				if _, ok := f.Tensor("blk.0.ffn_gate.weight"); s.Experts > 0 && ok != (s.DenseLead > 0 || s.Gemma4 != nil || s.Arch == "jamba") {
					t.Errorf("blk.0.ffn_gate.weight present = %v", ok)
				}
				if ti, ok := f.Tensor("blk.2.exp_probs_b.bias"); ok != (mini.selBias() || s.Arch == "nemotron_h_moe") || ok && ti.Type != quant.F32 {
					t.Errorf("exp_probs_b.bias present = %v (F32 when present)", ok)
				}
				if ti, ok := f.Tensor("blk.0.ffn_gate_inp.weight"); ok && ti.Type != quant.F32 {
					t.Errorf("router of type %v, want F32", ti.Type)
				}
				oss := s.Arch == "gpt-oss"
				// olmo2 and exaone4 have no norm before attention.
				if _, ok := f.Tensor("blk.0.attn_norm.weight"); ok && (s.Arch == "olmo2" || s.Arch == "exaone4") {
					t.Errorf("attn_norm.weight present in %s", s.Arch)
				}
				// gpt-oss and seed_oss norm before the feed-forward with
				// post_attention_norm, in ffn_norm's place.
				if _, ok := f.Tensor("blk.0.ffn_norm.weight"); (oss || s.Arch == "seed_oss" || s.Arch == "glm4moe") && ok {
					t.Errorf("ffn_norm.weight present in %s", s.Arch)
				}
				// glm4: norms after attention and the feed-forward beside
				// the ones before, gate and up fused in ffn_up; chatglm:
				// the same without the norms after, Q, K and V fused with
				// their bias.
				if s.Arch == "glm4" || s.Arch == "chatglm" {
					glm4 := s.Arch == "glm4"
					for _, name := range []string{"blk.0.post_attention_norm.weight", "blk.0.post_ffw_norm.weight"} {
						if _, ok := f.Tensor(name); ok != glm4 {
							t.Errorf("%s present in %s = %v", name, s.Arch, ok)
						}
					}
					if _, ok := f.Tensor("blk.0.ffn_norm.weight"); !ok {
						t.Errorf("blk.0.ffn_norm.weight missing in %s", s.Arch)
					}
					if _, ok := f.Tensor("blk.0.attn_qkv.bias"); ok == glm4 {
						t.Errorf("blk.0.attn_qkv.bias present in %s = %v", s.Arch, ok)
					}
					if ti, _ := f.Tensor("blk.0.ffn_up.weight"); len(ti.Dims) != 2 || ti.Dims[1] != 2*int64(mini.FFN) {
						t.Errorf("%s ffn_up.weight %v, want the gate and up rows (%d)", s.Arch, ti.Dims, 2*mini.FFN)
					}
				}
				// afmoe: the output gate, and norms after attention and the
				// feed-forward beside the ones before.
				for _, name := range []string{"blk.0.attn_gate.weight", "blk.0.post_attention_norm.weight", "blk.1.post_ffw_norm.weight"} {
					if _, ok := f.Tensor(name); s.Arch == "afmoe" && !ok {
						t.Errorf("%s missing in afmoe", name)
					}
				}
				if _, ok := f.Tensor("blk.0.attn_sinks.weight"); ok != oss {
					t.Errorf("attn_sinks.weight present = %v", ok)
				}
				if ti, ok := f.Tensor("blk.0.ffn_up_exps.bias"); ok != oss || ok && (ti.Type != quant.F32 || len(ti.Dims) != 2) {
					t.Errorf("ffn_up_exps.bias present = %v (2-D F32 when present)", ok)
				}
				// The NextN blocks after the stack (glm4moe, qwen35) hold
				// their projection.
				if _, ok := f.Tensor(fmt.Sprintf("blk.%d.nextn.eh_proj.weight", mini.Layers)); ok != (s.NextN > 0) {
					t.Errorf("NextN eh_proj present = %v with %d NextN blocks", ok, s.NextN)
				}
				evalSteps(t, path)
			})
		}
	}
}

// typeCounts counts the tensors of each type.
func typeCounts(ts []tensorPlan) map[quant.Type]int {
	c := map[quant.Type]int{}
	for _, t := range ts {
		c[t.Type]++
	}
	return c
}

func TestQ4_K_MMix(t *testing.T) {
	ts, err := plan(mustShape(t, "llama-3.1-8b"), mustType(t, "q4_k_m"))
	if err != nil {
		t.Fatal(err)
	}
	// llama.cpp's loader reports these counts for Meta-Llama-3.1-8B Q4_K_M:
	// f32 66 (norms and rope_freqs), q4_K 193, q6_K 33.
	want := map[quant.Type]int{quant.F32: 66, quant.Q4_K: 193, quant.Q6_K: 33}
	if got := typeCounts(ts); !maps.Equal(got, want) {
		t.Errorf("type counts %v, want %v", got, want)
	}
	// use_more_bits for 32 layers: i < 4, i >= 28, (i-4)%3 == 2.
	more := []int{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31}
	for _, tp := range ts {
		want := quant.Q4_K
		var layer int
		var rest string
		switch {
		case len(tp.Dims) == 1:
			want = quant.F32
		case tp.Name == "output.weight":
			want = quant.Q6_K
		case tp.Name == "token_embd.weight":
		default:
			if _, err := fmt.Sscanf(tp.Name, "blk.%d.%s", &layer, &rest); err != nil {
				t.Fatalf("tensor %q: %v", tp.Name, err)
			}
			if (rest == "attn_v.weight" || rest == "ffn_down.weight") && slices.Contains(more, layer) {
				want = quant.Q6_K
			}
		}
		if tp.Type != want {
			t.Errorf("%s: %v, want %v", tp.Name, tp.Type, want)
		}
	}
}

// typeOf is the type the plan gives the tensor called name.
func typeOf(t *testing.T, ts []tensorPlan, name string) quant.Type {
	t.Helper()
	for _, tp := range ts {
		if tp.Name == name {
			return tp.Type
		}
	}
	t.Fatalf("no tensor %q", name)
	return 0
}

func TestTypeRules(t *testing.T) {
	tests := []struct {
		shape, typ string
		tensor     string
		want       quant.Type
	}{
		{"tinyllama-1.1b", "q4_0", "output.weight", quant.Q6_K},
		{"tinyllama-1.1b", "q4_0", "token_embd.weight", quant.Q4_0},
		{"tinyllama-1.1b", "q4_0", "blk.0.ffn_down.weight", quant.Q4_0},
		{"tinyllama-1.1b", "q8_0", "output.weight", quant.Q8_0},
		{"tinyllama-1.1b", "q8_0", "blk.0.attn_v.weight", quant.Q8_0},
		{"tinyllama-1.1b", "f16", "output.weight", quant.F16},
		{"tinyllama-1.1b", "f16", "blk.0.attn_norm.weight", quant.F32},
		{"tinyllama-1.1b", "q4_k_m", "token_embd.weight", quant.Q4_K},
		// 22 layers: i < 2, i >= 19, (i-2)%3 == 2.
		{"tinyllama-1.1b", "q4_k_m", "blk.1.attn_v.weight", quant.Q6_K},
		{"tinyllama-1.1b", "q4_k_m", "blk.2.attn_v.weight", quant.Q4_K},
		{"tinyllama-1.1b", "q4_k_m", "blk.4.ffn_down.weight", quant.Q6_K},
		{"tinyllama-1.1b", "q4_k_m", "blk.18.ffn_down.weight", quant.Q4_K},
		{"tinyllama-1.1b", "q4_k_m", "blk.19.ffn_down.weight", quant.Q6_K},
		{"tinyllama-1.1b", "q4_k_m", "blk.19.attn_q.weight", quant.Q4_K},
		// A tied output makes the token embedding the output tensor.
		{"gemma-2-9b", "q4_k_m", "token_embd.weight", quant.Q6_K},
		{"gemma-2-9b", "q4_0", "token_embd.weight", quant.Q6_K},
		{"gemma-2-9b", "q8_0", "token_embd.weight", quant.Q8_0},
		{"qwen2.5-7b", "q4_k_m", "output.weight", quant.Q6_K},
		{"qwen2.5-7b", "q4_k_m", "blk.0.attn_q.bias", quant.F32},
		// MXFP4_MOE: the experts MXFP4, every other matrix Q8_0 (the
		// output and the embedding too), the router F32.
		{"qwen3-30b-a3b", "mxfp4_moe", "blk.0.ffn_down_exps.weight", quant.MXFP4},
		{"qwen3-30b-a3b", "mxfp4_moe", "blk.0.ffn_gate_exps.weight", quant.MXFP4},
		{"qwen3-30b-a3b", "mxfp4_moe", "blk.0.attn_v.weight", quant.Q8_0},
		{"qwen3-30b-a3b", "mxfp4_moe", "output.weight", quant.Q8_0},
		{"qwen3-30b-a3b", "mxfp4_moe", "token_embd.weight", quant.Q8_0},
		{"qwen3-30b-a3b", "mxfp4_moe", "blk.0.ffn_gate_inp.weight", quant.F32},
		{"tinyllama-1.1b", "mxfp4_moe", "blk.0.ffn_down.weight", quant.Q8_0},
	}
	for _, tt := range tests {
		ts, err := plan(mustShape(t, tt.shape), mustType(t, tt.typ))
		if err != nil {
			t.Fatal(err)
		}
		if got := typeOf(t, ts, tt.tensor); got != tt.want {
			t.Errorf("%s %s %s: %v, want %v", tt.shape, tt.typ, tt.tensor, got, tt.want)
		}
	}
}

func TestFallback(t *testing.T) {
	tests := []struct {
		t    quant.Type
		n    int64
		want quant.Type
		err  bool
	}{
		{quant.Q4_K, 512, quant.Q4_K, false},
		{quant.Q4_K, 288, quant.Q5_0, false},
		{quant.Q6_K, 288, quant.Q8_0, false},
		{quant.Q6_K, 100, quant.F16, false},
		{quant.Q4_0, 100, 0, true},
		{quant.Q2_K, 288, quant.Q4_0, false},
		{quant.Q3_K, 288, quant.Q4_0, false},
		{quant.TQ1_0, 288, quant.Q4_0, false},
		{quant.TQ2_0, 896, quant.Q4_0, false},
		{quant.Q5_K, 288, quant.Q5_1, false},
		{quant.IQ4_XS, 288, quant.IQ4_NL, false},
		{quant.IQ4_XS, 100, quant.F16, false},
		{quant.IQ3_S, 288, quant.IQ4_NL, false},
	}
	for _, tt := range tests {
		got, err := fallback(tt.t, tt.n)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("fallback(%v, %d) = %v, %v; want %v, error %v", tt.t, tt.n, got, err, tt.want, tt.err)
		}
	}
}

// TestBlockStatistics checks that random blocks dequantize to finite
// weights with mean near 0 and standard deviation near 1/sqrt(fan-in), and
// that every fp16 block scale is positive.
func TestBlockStatistics(t *testing.T) {
	const fanIn, rows = 4096, 64
	std := 1 / math.Sqrt(fanIn)
	for _, typ := range []quant.Type{quant.F16, quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_K, quant.Q6_K,
		quant.Q2_K, quant.Q3_K, quant.Q5_K, quant.Q5_1, quant.IQ4_NL, quant.IQ4_XS, quant.IQ3_S,
		quant.IQ3_XXS, quant.IQ2_S, quant.IQ2_XS, quant.IQ2_XXS, quant.IQ1_M, quant.IQ1_S, quant.MXFP4,
		quant.TQ1_0, quant.TQ2_0} {
		t.Run(typ.String(), func(t *testing.T) {
			p, err := newBlockParams(typ, std)
			if err != nil {
				t.Fatal(err)
			}
			rowBytes, _ := typ.RowBytes(fanIn)
			buf := make([]byte, rows*rowBytes)
			fillBlocks(typ, buf, rand.NewPCG(1, 2), p)
			vals := make([]float32, rows*fanIn)
			if err := quant.Dequantize(typ, vals, buf); err != nil {
				t.Fatal(err)
			}
			var sum, sq float64
			for i, v := range vals {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("weight %d is %v", i, v)
				}
				sum += float64(v)
				sq += float64(v) * float64(v)
			}
			n := float64(len(vals))
			mean := sum / n
			sd := math.Sqrt(sq/n - mean*mean)
			if math.Abs(mean) > 0.02*std || math.Abs(sd/std-1) > 0.05 {
				t.Errorf("mean %.3g, std %.4g; want about 0 and %.4g", mean, sd, std)
			}
			for off := int64(0); off < int64(len(buf)); off += int64(typ.BlockBytes()) {
				for _, at := range scaleOffsets(typ) {
					h := uint16(buf[off+int64(at)]) | uint16(buf[off+int64(at)+1])<<8
					if typ == quant.IQ1_M {
						h = 0
						for i := range 4 {
							h |= uint16(buf[off+49+2*int64(i)]>>4) << (4 * i)
						}
					}
					if typ == quant.IQ4_NL {
						h &^= 0x8000 // its sign is part of the weights
					}
					if f := quant.FP16ToFP32(h); !(f > 0) || math.IsInf(float64(f), 0) {
						t.Fatalf("block at %d: scale %v", off, f)
					}
				}
			}
		})
	}
}

// scaleOffsets are the offsets of the fp16 scales within a block.
func scaleOffsets(t quant.Type) []int {
	switch t {
	case quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q5_1, quant.IQ4_NL, quant.IQ4_XS, quant.IQ3_S,
		quant.IQ3_XXS, quant.IQ2_S, quant.IQ2_XS, quant.IQ2_XXS, quant.IQ1_S, quant.IQ1_M:
		return []int{0} // IQ1_M: the scale assembled from its nibbles
	case quant.Q4_K, quant.Q5_K:
		return []int{0, 2}
	case quant.Q6_K:
		return []int{208}
	case quant.Q2_K:
		return []int{80, 82}
	case quant.Q3_K:
		return []int{108}
	case quant.TQ1_0, quant.TQ2_0:
		return []int{t.BlockBytes() - 2}
	}
	return nil
}

func TestDeterministic(t *testing.T) {
	write := func(seed uint64, workers int) []byte {
		m, err := newModel(mustShape(t, "tiny"), mustType(t, "q4_k_m"), seed)
		if err != nil {
			t.Fatal(err)
		}
		m.workers = workers
		var b bytes.Buffer
		if _, err := m.writeTo(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a := write(1, 1)
	if !bytes.Equal(a, write(1, 3)) {
		t.Error("bytes depend on the number of workers")
	}
	if bytes.Equal(a, write(2, 1)) {
		t.Error("seeds 1 and 2 give the same file")
	}
}

// TestParallelChunksInOrder makes tensors of many chunks so the parallel
// path runs, and compares it with the serial one.
func TestParallelChunksInOrder(t *testing.T) {
	const n = 37
	fill := func(buf []byte, c int) []byte {
		buf = buf[:1+c%5]
		for i := range buf {
			buf[i] = byte(c)
		}
		return buf
	}
	var want bytes.Buffer
	for c := range n {
		want.Write(fill(make([]byte, 8), c))
	}
	for _, workers := range []int{2, 3, 8} {
		var got bytes.Buffer
		if err := parallelChunks(&got, n, workers, 8, fill); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%d workers: chunks out of order", workers)
		}
	}
}

// failWriter fails after accepting n bytes.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, fmt.Errorf("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestParallelChunksWriteError(t *testing.T) {
	fill := func(buf []byte, c int) []byte { return buf }
	err := parallelChunks(&failWriter{n: 20}, 100, 2, 8, fill)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("error %v, want disk full", err)
	}
}

func TestRopeFactors(t *testing.T) {
	s := mustShape(t, "llama-3.1-8b")
	f := ropeFactors(s.Llama3Rope, s.RopeBase, s.headDim())
	if len(f) != 64 {
		t.Fatalf("%d factors, want 64", len(f))
	}
	// Wavelength 2π·500000^(i/64) is below 8192/4 for i <= 28 and above
	// 8192 for i >= 35.
	for i, x := range f {
		switch {
		case i <= 28 && x != 1, i >= 35 && x != 8:
			t.Errorf("factor %d = %v", i, x)
		case i > 28 && i < 35 && !(x > f[i-1] && x < 8):
			t.Errorf("factor %d = %v not between %v and 8", i, x, f[i-1])
		}
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-shape", "tiny"}, "-o are required"},
		{[]string{"-shape", "huge", "-o", "x"}, `unknown shape "huge"`},
		{[]string{"-shape", "tiny", "-type", "q3_k", "-o", "x"}, `unknown type "q3_k"`},
		{[]string{"-shape", "tiny", "-o", filepath.Join(t.TempDir(), "no", "such", "dir")}, "no such file"},
		{[]string{"-shape", "tiny", "-experts", "4", "-o", "x"}, "has 0 routed experts"},
		{[]string{"-shape", "qwen3.5-35b-a3b", "-experts", "300", "-o", "x"}, "has 256 routed experts"},
		{[]string{"-shape", "ling-mini-2.0", "-experts", "8", "-o", "x"}, "8 expert groups"},
		{[]string{"-shape", "ling-mini-2.0", "-experts", "20", "-o", "x"}, "8 expert groups"},
		{[]string{"-shape", "grovemoe-33b-a3b", "-experts", "8", "-o", "x"}, "groups of 2 experts"},
		{[]string{"-shape", "grovemoe-33b-a3b", "-experts", "15", "-o", "x"}, "groups of 2 experts"},
		{[]string{"-shape", "qwen3.5-35b-a3b", "-vocab", "100", "-o", "x"}, "want 1024 to"},
		{[]string{"-shape", "olmo-2-1b", "-fuse-qkv", "-o", "x"}, "refuses a fused attn_qkv"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		err := run(tt.args, &out, &errOut)
		// Lower case: js/wasm spells the system's "No such file".
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tt.want)) {
			t.Errorf("run(%q) = %v, want an error containing %q", tt.args, err, tt.want)
		}
	}
}

func TestRunWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	var out, errOut bytes.Buffer
	if err := run([]string{"-shape", "tiny", "-type", "q8_0", "-o", path, "-seed", "3"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "wrote "+path) {
		t.Errorf("stderr %q does not report the file", errOut.String())
	}
	f := testutil.ReadHeader(t, path)
	if name, _ := f.String("general.name"); !strings.Contains(name, "seed 3") {
		t.Errorf("general.name %q", name)
	}
}

// -fuse-qkv writes each block's attn_q, attn_k and attn_v (qwen2: and
// their biases) as one attn_qkv of their rows, as the converter's
// --fuse-qkv does, of the type the mix gives attn_v (llama-quantize's
// rule for attn_qkv); the file loads and runs.
func TestRunFuseQKV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fused.gguf")
	var out, errOut bytes.Buffer
	if err := run([]string{"-shape", "qwen2.5-0.5b", "-layers", "2", "-vocab", "1024", "-type", "q4_k_m", "-fuse-qkv", "-o", path}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	f := testutil.ReadHeader(t, path)
	s := mustShape(t, "qwen2.5-0.5b").keepLayers(2)
	s.Vocab = 1024
	apart, err := plan(s, mustType(t, "q4_k_m"))
	if err != nil {
		t.Fatal(err)
	}
	q, kv := int64(s.Heads*s.headDim()), int64(s.HeadsKV*s.headDim())
	for l := range 2 {
		p := fmt.Sprintf("blk.%d.", l)
		v := apart[slices.IndexFunc(apart, func(tp tensorPlan) bool { return tp.Name == p+"attn_v.weight" })]
		for name, dims := range map[string][]int64{"attn_qkv.weight": {int64(s.Embd), q + 2*kv}, "attn_qkv.bias": {q + 2*kv}} {
			ti, ok := f.Tensor(p + name)
			if !ok || !slices.Equal(ti.Dims, dims) || len(dims) == 2 && ti.Type != v.Type {
				t.Errorf("%s: %v, want %v of %v", p+name, ti, dims, v.Type)
			}
		}
		for _, name := range []string{"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_q.bias"} {
			if _, ok := f.Tensor(p + name); ok {
				t.Errorf("%s beside the fused attn_qkv", p+name)
			}
		}
	}
	evalSteps(t, path)
}

// The Q4_K_M mix of the new architectures agrees, tensor by tensor, with
// what llama-quantize made of the reference models in testdata (manifest
// §9.1): the fused attn_qkv takes attn_v's rule, a tied token_embd the
// output's.
func TestQ4_K_MMixMatchesLlamaQuantize(t *testing.T) {
	cases := []struct {
		file string
		s    shape
	}{
		{"tiny-qwen3-q4_k_m.gguf", shape{Name: "tiny-qwen3", Arch: "qwen3", Vocab: 151936, Embd: 256, Layers: 2, Heads: 4, HeadsKV: 2,
			HeadDim: 64, FFN: 768, Context: 40960, RopeBase: 1e6, RMSEps: 1e-6, QKNorm: true, TiedOutput: true}},
		{"tiny-gemma3-q4_k_m.gguf", shape{Name: "tiny-gemma3", Arch: "gemma3", Vocab: 32000, Embd: 256, Layers: 6, Heads: 4, HeadsKV: 2,
			HeadDim: 64, FFN: 768, Context: 32768, RopeBase: 1e6, RMSEps: 1e-6, QKNorm: true, TiedOutput: true, Window: 64}},
		{"tiny-phi3-q4_k_m.gguf", shape{Name: "tiny-phi3", Arch: "phi3", Vocab: 32064, Embd: 256, Layers: 2, Heads: 4, HeadsKV: 2,
			FFN: 768, Context: 4096, RopeBase: 10000, RMSEps: 1e-5}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(testutil.TestdataDir(), "models", tc.file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s: %v", tc.file, err)
			}
			ref := testutil.ReadHeader(t, path)
			ts, err := plan(tc.s, mustType(t, "q4_k_m"))
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != len(ref.Tensors) {
				t.Errorf("%d tensors, llama-quantize's file has %d", len(ts), len(ref.Tensors))
			}
			for _, tp := range ts {
				ti, ok := ref.Tensor(tp.Name)
				switch {
				case !ok:
					t.Errorf("%s: not in the reference file", tp.Name)
				case ti.Type != tp.Type || !slices.Equal(ti.Dims, tp.Dims):
					t.Errorf("%s: %v %v, llama-quantize made %v %v", tp.Name, tp.Type, tp.Dims, ti.Type, ti.Dims)
				}
			}
		})
	}
}

// TestLowBitMixes checks the per-tensor types of the q2_k, q3_k_m, iq4_xs,
// iq4_nl and iq3_s mixes (and the lattice and ternary ones). The counts are those of the files llama-quantize
// (llama.cpp d32676d77, no importance matrix) wrote from F16 models of the
// same tensor names, layer count and query heads per KV head, made by
// mkmodel at embedding 256.
func TestLowBitMixes(t *testing.T) {
	F32, Q2, Q3, Q4, Q5, Q6 := quant.F32, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K
	XS, NL, S3 := quant.IQ4_XS, quant.IQ4_NL, quant.IQ3_S
	X3, S2, X2, XX2, M1, S1 := quant.IQ3_XXS, quant.IQ2_S, quant.IQ2_XS, quant.IQ2_XXS, quant.IQ1_M, quant.IQ1_S
	tiny, tl := mustShape(t, "tiny"), mustShape(t, "tinyllama-1.1b")
	l70 := mustShape(t, "tiny")
	l70.Name, l70.Layers, l70.Heads, l70.HeadsKV = "llama-70b-like", 80, 32, 4
	// A Qwen2 with 28 query heads over a 896-wide embedding: rows of 896
	// fall back to 32-wide types.
	q896 := mustShape(t, "tiny")
	q896.Name, q896.Arch, q896.Layers, q896.Heads, q896.HeadsKV, q896.Embd, q896.QKVBias = "qwen2-896", "qwen2", 28, 28, 4, 896, true
	// nomic-embed-text-v2-moe cut to 4 layers: 8 experts, so llama.cpp
	// gives attn_qkv Q8_0 and attn_output Q5_K (compared tensor for tensor
	// with llama-quantize's files of mkmodel's F16 cut, vocabulary 32000).
	nmoe := mustShape(t, "nomic-embed-text-v2-moe").keepLayers(4)
	tests := []struct {
		shape shape
		typ   string
		want  map[quant.Type]int
	}{
		{nmoe, "q4_k_m", map[quant.Type]int{F32: 33, Q4: 6, Q5: 4, Q6: 3, quant.Q8_0: 4}},
		{nmoe, "q3_k_m", map[quant.Type]int{F32: 33, Q3: 4, Q4: 4, Q5: 4, Q6: 1, quant.Q8_0: 4}},
		{nmoe, "q2_k", map[quant.Type]int{F32: 33, Q2: 4, Q3: 4, Q5: 4, Q6: 1, quant.Q8_0: 4}},
		{nmoe, "iq4_xs", map[quant.Type]int{F32: 33, XS: 8, Q5: 4, Q6: 1, quant.Q8_0: 4}},
		// 32 layers, 4 query heads per KV head.
		{mustShape(t, "llama-3.1-8b"), "q2_k", map[quant.Type]int{F32: 66, Q2: 129, Q3: 64, Q4: 32, Q6: 1}},
		{mustShape(t, "llama-3.1-8b"), "q3_k_m", map[quant.Type]int{F32: 66, Q3: 129, Q4: 92, Q5: 4, Q6: 1}},
		{mustShape(t, "llama-3.1-8b"), "iq4_xs", map[quant.Type]int{F32: 66, XS: 189, Q5: 36, Q6: 1}},
		{mustShape(t, "llama-3.1-8b"), "iq4_nl", map[quant.Type]int{F32: 66, NL: 189, Q5: 36, Q6: 1}},
		{mustShape(t, "llama-3.1-8b"), "iq3_s", map[quant.Type]int{F32: 66, S3: 193, Q4: 32, Q6: 1}},
		// 22 layers, 8 query heads per KV head.
		{mustShape(t, "tinyllama-1.1b"), "q2_k", map[quant.Type]int{F32: 45, Q2: 89, Q3: 44, Q4: 22, Q6: 1}},
		{mustShape(t, "tinyllama-1.1b"), "q3_k_m", map[quant.Type]int{F32: 45, Q3: 89, Q4: 63, Q5: 3, Q6: 1}},
		{mustShape(t, "tinyllama-1.1b"), "iq4_xs", map[quant.Type]int{F32: 45, XS: 131, Q5: 24, Q6: 1}},
		// 42 layers, 2 query heads per KV head, tied output.
		{mustShape(t, "gemma-2-9b"), "q2_k", map[quant.Type]int{F32: 169, Q2: 168, Q3: 126, Q6: 1}},
		{mustShape(t, "gemma-2-9b"), "q3_k_m", map[quant.Type]int{F32: 169, Q3: 168, Q4: 122, Q5: 4, Q6: 1}},
		{mustShape(t, "gemma-2-9b"), "iq4_xs", map[quant.Type]int{F32: 169, XS: 289, Q5: 5, Q6: 1}},
		{mustShape(t, "gemma-2-9b"), "iq3_s", map[quant.Type]int{F32: 169, S3: 294, Q6: 1}},
		// 80 layers with grouped KV heads: llama.cpp's 70B rule for attn_v.
		{l70, "q2_k", map[quant.Type]int{F32: 161, Q2: 321, Q3: 160, Q5: 80, Q6: 1}},
		{l70, "q3_k_m", map[quant.Type]int{F32: 161, Q3: 321, Q4: 155, Q5: 85, Q6: 1}},
		{l70, "q4_k_m", map[quant.Type]int{F32: 161, Q4: 441, Q5: 40, Q6: 81}},
		// Fallbacks.
		{q896, "q2_k", map[quant.Type]int{F32: 141, quant.Q4_0: 141, quant.Q5_0: 28, quant.Q8_0: 1, Q3: 28}},
		{q896, "q3_k_m", map[quant.Type]int{F32: 141, quant.Q4_0: 113, quant.Q5_0: 54, quant.Q5_1: 2, quant.Q8_0: 1, Q4: 27, Q5: 1}},
		{q896, "iq4_xs", map[quant.Type]int{F32: 141, quant.Q5_1: 28, quant.Q8_0: 1, Q5: 3, NL: 141, XS: 25}},
		{q896, "iq3_s", map[quant.Type]int{F32: 141, quant.Q5_0: 28, quant.Q8_0: 1, NL: 141, S3: 28}},
		// The lattice types, with an importance matrix, as llama.cpp
		// d32676d77's llama-quantize made them with -imatrix's matrix of
		// ones (compared tensor for tensor: all seven on the tiny shape,
		// 2 query heads per KV head; all but IQ2_M on TinyLlama, 8).
		{tiny, "iq3_xxs", map[quant.Type]int{F32: 5, Q5: 1, X3: 8, S3: 3, S2: 4}},
		{tiny, "iq2_m", map[quant.Type]int{F32: 5, Q5: 1, S3: 5, S2: 10}},
		{tiny, "iq2_s", map[quant.Type]int{F32: 5, Q5: 1, X2: 10, S3: 5}},
		{tiny, "iq2_xs", map[quant.Type]int{F32: 5, Q2: 3, Q5: 1, X2: 12}},
		{tiny, "iq2_xxs", map[quant.Type]int{F32: 5, Q2: 3, Q5: 1, XX2: 12}},
		{tiny, "iq1_m", map[quant.Type]int{F32: 5, Q2: 3, Q5: 1, XX2: 2, M1: 10}},
		{tiny, "iq1_s", map[quant.Type]int{F32: 5, Q2: 3, Q5: 1, XX2: 2, S1: 10}},
		{tl, "iq3_xxs", map[quant.Type]int{F32: 45, Q4: 22, Q5: 1, X3: 66, S3: 23, S2: 44}},
		{tl, "iq2_xxs", map[quant.Type]int{F32: 45, Q2: 3, Q4: 22, Q5: 1, XX2: 130}},
		{tl, "iq2_s", map[quant.Type]int{F32: 45, Q4: 22, Q5: 1, X2: 108, S3: 25}},
		{tl, "iq1_s", map[quant.Type]int{F32: 45, Q2: 3, Q4: 22, Q5: 1, XX2: 22, S1: 108}},
		{tl, "iq2_xs", map[quant.Type]int{F32: 45, Q2: 3, Q4: 22, Q5: 1, X2: 130}},
		{tl, "iq1_m", map[quant.Type]int{F32: 45, Q2: 3, Q4: 22, Q5: 1, XX2: 22, M1: 108}},
		// The ternary types: token_embd Q4_K, rows of 896 Q4_0 (and a
		// tied output of 896 Q8_0); qwen2.5-0.5b and olmoe-1b-7b cut to one
		// layer compared tensor for tensor with llama-quantize's files of
		// mkmodel's F16 cuts (vocabulary 1024).
		{tiny, "tq1_0", map[quant.Type]int{F32: 5, Q4: 1, Q6: 1, quant.TQ1_0: 14}},
		{tiny, "tq2_0", map[quant.Type]int{F32: 5, Q4: 1, Q6: 1, quant.TQ2_0: 14}},
		{mustShape(t, "qwen2.5-0.5b").keepLayers(1), "tq1_0", map[quant.Type]int{F32: 6, quant.Q4_0: 6, quant.Q8_0: 1, quant.TQ1_0: 1}},
		{mustShape(t, "olmoe-1b-7b").keepLayers(1), "tq2_0", map[quant.Type]int{F32: 6, Q4: 1, Q6: 1, quant.TQ2_0: 7}},
		// 48 layers of three expert tensors, four attention matrices.
		{mustShape(t, "qwen3-30b-a3b"), "mxfp4_moe", map[quant.Type]int{F32: 241, quant.Q8_0: 194, quant.MXFP4: 144}},
		// 128 experts: attn_v takes Q4_K.
		{mustShape(t, "qwen3-30b-a3b"), "iq2_xxs", map[quant.Type]int{F32: 241, Q2: 7, Q4: 48, Q5: 1, XX2: 282}},
		// The encoders, from their F16 files (compared tensor for tensor,
		// with q8_0, q4_0, q2_k, iq4_nl and iq3_s too, and all-minilm-l6-v2
		// alike): token_embd takes the output's rule (there is none), the
		// fused attn_qkv attn_v's, position_embd and token_types stay F32,
		// bert's ffn_down.bias is no ffn_down, and rows of 384 fall back.
		{mustShape(t, "nomic-embed-text-v1.5"), "q4_k_m", map[quant.Type]int{F32: 51, Q4: 48, Q6: 13}},
		{mustShape(t, "nomic-embed-text-v1.5"), "q3_k_m", map[quant.Type]int{F32: 51, Q3: 24, Q4: 34, Q5: 2, Q6: 1}},
		{mustShape(t, "nomic-embed-text-v1.5"), "iq4_xs", map[quant.Type]int{F32: 51, XS: 59, Q5: 1, Q6: 1}},
		{mustShape(t, "bge-small-en-v1.5"), "q4_k_m", map[quant.Type]int{F32: 124, Q4: 6, quant.Q5_0: 54, Q6: 6, quant.Q8_0: 7}},
		{mustShape(t, "bge-small-en-v1.5"), "q3_k_m", map[quant.Type]int{F32: 124, quant.Q4_0: 36, Q4: 12, quant.Q5_0: 22, quant.Q5_1: 2, quant.Q8_0: 1}},
		{mustShape(t, "bge-small-en-v1.5"), "iq4_xs", map[quant.Type]int{F32: 124, NL: 60, XS: 11, Q5: 1, quant.Q8_0: 1}},
	}
	for _, tt := range tests {
		ts, err := plan(tt.shape, mustType(t, tt.typ))
		if err != nil {
			t.Fatal(err)
		}
		if got := typeCounts(ts); !maps.Equal(got, tt.want) {
			t.Errorf("%s %s: type counts %v, want %v", tt.shape.Name, tt.typ, got, tt.want)
		}
	}
	// Per tensor, in the two-layer tiny shape.
	rules := []struct {
		typ    string
		tensor string
		want   quant.Type
	}{
		{"q2_k", "token_embd.weight", Q2},
		{"q2_k", "blk.1.attn_q.weight", Q2},
		{"q2_k", "blk.1.attn_v.weight", Q3},
		{"q2_k", "blk.1.attn_output.weight", Q3},
		{"q2_k", "blk.1.ffn_down.weight", Q3},
		{"q2_k", "output.weight", Q6},
		{"q3_k_m", "blk.0.attn_v.weight", Q5},
		{"q3_k_m", "blk.1.ffn_down.weight", Q4},
		{"q3_k_m", "blk.1.attn_output.weight", Q4},
		{"q3_k_m", "blk.1.ffn_up.weight", Q3},
		{"iq4_xs", "blk.0.ffn_down.weight", XS},
		{"iq4_xs", "token_embd.weight", XS},
		{"iq4_nl", "blk.1.attn_v.weight", NL},
		{"iq2_xxs", "token_embd.weight", Q2},
		{"iq2_xxs", "blk.0.attn_v.weight", Q2},
		{"iq2_xxs", "blk.0.ffn_down.weight", XX2}, // two layers: no first eighth
		{"iq2_m", "blk.1.attn_output.weight", S3},
		{"iq1_s", "blk.1.attn_output.weight", XX2},
		{"iq3_xxs", "blk.0.attn_q.weight", S2},
		{"iq3_xxs", "blk.0.attn_k.weight", S2},
		{"iq3_xxs", "blk.0.attn_v.weight", X3},
		{"iq3_xxs", "token_embd.weight", S3},
		{"iq3_xxs", "output.weight", Q5},
	}
	for _, r := range rules {
		ts, err := plan(mustShape(t, "tiny"), mustType(t, r.typ))
		if err != nil {
			t.Fatal(err)
		}
		if got := typeOf(t, ts, r.tensor); got != r.want {
			t.Errorf("tiny %s %s: %v, want %v", r.typ, r.tensor, got, r.want)
		}
	}
}

// Gemma 4 E2B cut to its first blocks keeps the first shared layer where
// the full model has it, the 15th, and so the double-wide feed-forwards.
func TestKeepLayersGemma4(t *testing.T) {
	s := mustShape(t, "gemma-4-e2b")
	for _, tc := range []struct{ layers, shared, ffn int }{{4, 0, 6144}, {15, 0, 6144}, {17, 2, 12288}} {
		k := s.keepLayers(tc.layers)
		_, _, ffn := k.gemma4Layers()
		if k.Gemma4.SharedKV != tc.shared || ffn[len(ffn)-1] != int32(tc.ffn) {
			t.Errorf("-layers %d: %d shared KV layers, the last feed-forward %d, want %d and %d", tc.layers, k.Gemma4.SharedKV, ffn[len(ffn)-1], tc.shared, tc.ffn)
		}
	}
}

// Gemma 3n cut to its first blocks keeps the first shared layer where the
// full model has it (llama.cpp fixes it at 20): none shared before.
func TestKeepLayersGemma3n(t *testing.T) {
	s := mustShape(t, "gemma-3n-e2b")
	for _, tc := range []struct{ layers, shared int }{{4, 0}, {20, 0}, {25, 5}, {30, 10}} {
		if got := s.keepLayers(tc.layers).Gemma3n.SharedKV; got != tc.shared {
			t.Errorf("-layers %d: %d shared KV layers, want %d", tc.layers, got, tc.shared)
		}
	}
	if s.Gemma3n.SharedKV != 10 {
		t.Error("keepLayers changed the shape it was given")
	}
}

// An expert model's ffn_down tensors take their block's number and
// block_count in the Q4_K_M rule, as llama-quantize's layer_info does,
// so a block's ffn_down_exps and ffn_down_shexp agree: of qwen3.5-35b-a3b's
// first 4 blocks and its NextN block, blocks 2 and 4 get Q6_K, as
// llama-quantize d32676d77 made them of mkmodel's F16 file (-layers 4
// -experts 32 -vocab 32768), every other tensor's type agreeing too.
func TestExpertFFNDownByBlock(t *testing.T) {
	s := mustShape(t, "qwen3.5-35b-a3b").keepLayers(4).keepExperts(32).keepAttention()
	ts, err := plan(s, mustType(t, "q4_k_m"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tp := range ts {
		var il int
		if _, err := fmt.Sscanf(tp.Name, "blk.%d.", &il); err != nil || !strings.Contains(tp.Name, "ffn_down") {
			continue
		}
		n++
		if want := map[bool]quant.Type{true: quant.Q6_K, false: quant.Q4_K}[il == 2 || il == 4]; tp.Type != want {
			t.Errorf("%s: %v, want %v", tp.Name, tp.Type, want)
		}
	}
	if n != 10 {
		t.Errorf("%d ffn_down tensors, want 10 (exps and shexp in 5 blocks)", n)
	}
}

// Qwen3-VL cut to its first blocks keeps its 3 DeepStack layers while
// a later layer follows them, and fewer when the cut would end on one:
// llama-bench d32676d77 asserts (ggml_can_repeat) on a 2-block file that
// says 3 and runs one that says 1, or 3 in 4 blocks.
func TestKeepLayersDeepstack(t *testing.T) {
	s := mustShape(t, "qwen3-vl-8b")
	for _, tc := range []struct{ layers, want int }{{1, 0}, {2, 1}, {4, 3}, {36, 3}} {
		if got := s.keepLayers(tc.layers).Deepstack; got != tc.want {
			t.Errorf("-layers %d: %d DeepStack layers, want %d", tc.layers, got, tc.want)
		}
	}
}

// TestRunFuseQKVNothingToFuse: a shape whose attention is fused already
// (gpt2-xl), latent (deepseek-v2-lite) or absent (falcon-mamba-7b) has
// nothing -fuse-qkv could fuse, which is said rather than a file written
// as without the flag.
func TestRunFuseQKVNothingToFuse(t *testing.T) {
	for _, shape := range []string{"gpt2-xl", "deepseek-v2-lite", "falcon-mamba-7b"} {
		path := filepath.Join(t.TempDir(), "fused.gguf")
		var out, errOut bytes.Buffer
		err := run([]string{"-shape", shape, "-layers", "1", "-vocab", "1024", "-type", "q8_0", "-fuse-qkv", "-o", path}, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "-fuse-qkv") {
			t.Errorf("%s -fuse-qkv: %v, want an error naming -fuse-qkv", shape, err)
		}
	}
}
