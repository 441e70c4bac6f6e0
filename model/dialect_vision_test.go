package model

import (
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
)

// TestTranslateQwen3VLDefault: an Ollama qwen3vl header that states no
// sections (its converter writes none for Qwen3-VL's checkpoints) gets
// the [24, 20, 20] its runtime assumes, padded to llama.cpp's four; a
// llama.cpp header keeps its own.
func TestTranslateQwen3VLDefault(t *testing.T) {
	for _, tc := range []struct {
		name string
		kvs  []gguf.KV
		want []int32
	}{
		{"none stated", nil, []int32{24, 20, 20, 0}},
		{"llama.cpp's", []gguf.KV{{Key: "qwen3vl.rope.dimension_sections", Value: []int32{16, 24, 24, 0}}}, []int32{16, 24, 24, 0}},
		{"Ollama's runtime key", []gguf.KV{{Key: "qwen3vl.mrope_sections", Value: []uint32{16, 24, 24}}}, []int32{16, 24, 24, 0}},
	} {
		f := &gguf.File{KV: append([]gguf.KV{{Key: "general.architecture", Value: "qwen3vl"}}, tc.kvs...)}
		if err := translate(f); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got, _ := f.Int32s("qwen3vl.rope.dimension_sections"); !slices.Equal(got, tc.want) {
			t.Errorf("%s: sections %v, want %v", tc.name, got, tc.want)
		}
		if err := translate(f); err != nil {
			t.Errorf("%s: translating twice: %v", tc.name, err)
		}
	}
}

// TestTowerTensor: the vision and audio towers' tensors of Ollama's files
// are told from the text model's.
func TestTowerTensor(t *testing.T) {
	for name, want := range map[string]bool{
		"v.blk.0.attn_q.weight": true, "mm.0.weight": true, "a.conv1d.0.weight": true, "mm.a.mlp.weight": true,
		"blk.0.attn_q.weight": false, "token_embd.weight": false, "output.weight": false, "per_layer_token_embd.weight": false,
	} {
		if got := TowerTensor(name); got != want {
			t.Errorf("TowerTensor(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestSkippedRangesTower: a vision tower's tensors are skipped ranges
// beside the blocks past Config.Layers; the text model's are not.
func TestSkippedRangesTower(t *testing.T) {
	f := &gguf.File{Tensors: []gguf.TensorInfo{
		{Name: "token_embd.weight", Offset: 0, Size: 10},
		{Name: "blk.0.attn_q.weight", Offset: 10, Size: 10},
		{Name: "v.blk.0.attn_q.weight", Offset: 20, Size: 10},
		{Name: "mm.0.weight", Offset: 30, Size: 5},
		{Name: "blk.1.attn_q.weight", Offset: 35, Size: 10},
	}}
	got := SkippedRanges(f, &Config{Layers: 1})
	want := []Range{{Off: 20, Len: 10}, {Off: 30, Len: 5}, {Off: 35, Len: 10}}
	if !slices.Equal(got, want) {
		t.Errorf("skipped %v, want %v", got, want)
	}
}

// TestTranslateOllamaPre: a byte-level BPE vocabulary whose pre-tokenizer
// Ollama's converter left unnamed ("default", or no key) is given the one
// Ollama's runtime builds into the architecture, in llama.cpp's name; a
// named one, a SentencePiece vocabulary and other architectures are left
// alone.
func TestTranslateOllamaPre(t *testing.T) {
	for _, tc := range []struct {
		arch, model, pre, want string
	}{
		{"mistral3", "gpt2", "default", "tekken"},
		{"qwen3vl", "gpt2", "", "qwen2"},
		{"qwen25vl", "gpt2", "default", "qwen2"},
		{"qwen35", "gpt2", "default", "qwen2"},
		{"olmo3", "gpt2", "default", "llama-bpe"},
		{"gptoss", "gpt2", "default", "gpt-4o"},
		{"qwen35", "gpt2", "qwen35", "qwen35"},
		{"mistral3", "llama", "default", "default"},
		{"llama", "gpt2", "default", "default"},
	} {
		f := &gguf.File{KV: []gguf.KV{{Key: "general.architecture", Value: tc.arch}, {Key: "tokenizer.ggml.model", Value: tc.model}}}
		if tc.pre != "" {
			f.Set("tokenizer.ggml.pre", tc.pre)
		}
		if tc.arch == "qwen25vl" {
			f.Set("qwen25vl.rope.mrope_section", []int32{16, 24, 24})
		}
		if err := translate(f); err != nil {
			t.Fatalf("%s: %v", tc.arch, err)
		}
		if got, _ := f.String("tokenizer.ggml.pre"); got != tc.want && !(got == "" && tc.want == "default") {
			t.Errorf("%s, %s vocabulary, pre %q: %q, want %q", tc.arch, tc.model, tc.pre, got, tc.want)
		}
	}
}
