package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
)

// TestTranslateGptOss: an Ollama gptoss header reads as llama.cpp's
// gpt-oss (keys, YaRN stated, the o200k pre-tokenizer, tensor names);
// what it already states is kept; a header that names a thing twice is
// refused, naming both; other architectures are left alone.
func TestTranslateGptOss(t *testing.T) {
	header := func(extra ...gguf.KV) *gguf.File {
		f := &gguf.File{KV: append([]gguf.KV{
			{Key: "general.architecture", Value: "gptoss"},
			{Key: "gptoss.block_count", Value: uint32(2)},
			{Key: "gptoss.rope.scaling.factor", Value: float32(32)},
			{Key: "tokenizer.ggml.pre", Value: "default"},
		}, extra...)}
		for _, n := range []string{"blk.0.attn_out.weight", "blk.0.attn_out.bias", "blk.1.ffn_norm.weight", "blk.1.attn_sinks", "blk.1.attn_q.weight", "output_norm.weight"} {
			f.Tensors = append(f.Tensors, gguf.TensorInfo{Name: n})
		}
		return f
	}
	f := header()
	if err := translate(f); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"general.architecture": "gpt-oss", "gpt-oss.rope.scaling.type": "yarn", "tokenizer.ggml.pre": "gpt-4o"} {
		if got, _ := f.String(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if n, _ := f.Uint("gpt-oss.block_count"); n != 2 {
		t.Errorf("gpt-oss.block_count = %d, want 2", n)
	}
	for _, n := range []string{"blk.0.attn_output.weight", "blk.0.attn_output.bias", "blk.1.post_attention_norm.weight", "blk.1.attn_sinks.weight", "blk.1.attn_q.weight", "output_norm.weight"} {
		if _, ok := f.Tensor(n); !ok {
			t.Errorf("tensor %s missing after translation", n)
		}
	}
	if err := translate(f); err != nil {
		t.Errorf("translating twice: %v", err)
	}

	f = header(gguf.KV{Key: "gptoss.rope.scaling.type", Value: "linear"}, gguf.KV{Key: "tokenizer.ggml.pre", Value: "llama-bpe"})
	f.KV = append(f.KV[:3], f.KV[4:]...) // the second pre replaces the first
	if err := translate(f); err != nil {
		t.Fatal(err)
	}
	if typ, _ := f.String("gpt-oss.rope.scaling.type"); typ != "linear" {
		t.Errorf("a stated rope scaling type became %q", typ)
	}
	if pre, _ := f.String("tokenizer.ggml.pre"); pre != "llama-bpe" {
		t.Errorf("a stated pre-tokenizer became %q", pre)
	}

	for _, tc := range []struct {
		name    string
		edit    func(f *gguf.File)
		mention string
	}{
		{"a key twice", func(f *gguf.File) { f.Set("gpt-oss.block_count", uint32(2)) }, "gptoss.block_count and gpt-oss.block_count"},
		{"a tensor twice", func(f *gguf.File) {
			f.Tensors = append(f.Tensors, gguf.TensorInfo{Name: "blk.0.attn_output.weight"})
		}, "blk.0.attn_out.weight and blk.0.attn_output.weight"},
	} {
		f := header()
		tc.edit(f)
		err := translate(f)
		if !errors.Is(err, ErrBadModel) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%s: %v, want ErrBadModel naming %s", tc.name, err, tc.mention)
		}
	}

	f = &gguf.File{KV: []gguf.KV{{Key: "general.architecture", Value: "llama"}}, Tensors: []gguf.TensorInfo{{Name: "blk.0.attn_out.weight"}}}
	if err := translate(f); err != nil || f.Arch() != "llama" || f.Tensors[0].Name != "blk.0.attn_out.weight" {
		t.Errorf("a llama file changed: %v, %q, %q", err, f.Arch(), f.Tensors[0].Name)
	}
}
