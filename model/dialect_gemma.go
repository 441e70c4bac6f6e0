package model

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lowmem/llm/internal/gguf"
)

// translateGemma3 gives an Ollama gemma3 file converted from the
// multimodal checkpoint (Gemma3ForConditionalGeneration: it has
// gemma3.vision keys) what its converter leaves out there and Ollama's
// runtime assumes: the RMS norm epsilon 1e-6 and the global RoPE base
// 1e6 (llama.cpp's loader would take 10000); its local base is
// rope.local.freq_base where llama.cpp reads rope.freq_base_swa. A
// gemma3 file without vision keys (Gemma3ForCausalLM, or llama.cpp's)
// states them all and is left alone.
func translateGemma3(f *gguf.File) error {
	if !slices.ContainsFunc(f.KV, func(kv gguf.KV) bool { return strings.HasPrefix(kv.Key, "gemma3.vision.") }) {
		return nil
	}
	if err := renameKey(f, "gemma3.rope.local.freq_base", "gemma3.rope.freq_base_swa"); err != nil {
		return err
	}
	for k, v := range map[string]any{"gemma3.attention.layer_norm_rms_epsilon": float32(1e-6), "gemma3.rope.freq_base": float32(1e6)} {
		if _, ok := f.Get(k); !ok {
			f.Set(k, v)
		}
	}
	return nil
}

// translateGemma3n makes Ollama's gemma3n read as llama.cpp's: its local
// RoPE base is rope.freq_base_local (llama.cpp's rope.freq_base_swa) and
// its head size head_dim (llama.cpp's attention.key_length and
// value_length, whose default, embedding_length / head_count, is what
// the released models have). Its tensor names are llama.cpp's, and its
// converter drops the audio and vision towers.
func translateGemma3n(f *gguf.File) error {
	if err := renameKey(f, "gemma3n.rope.freq_base_local", "gemma3n.rope.freq_base_swa"); err != nil {
		return err
	}
	v, ok := f.Get("gemma3n.head_dim")
	if !ok {
		return nil
	}
	if _, isCount := f.Uint("gemma3n.head_dim"); !isCount {
		return fmt.Errorf("model: Ollama gemma3n file: gemma3n.head_dim is %s, want a count: %w", describe(v), ErrBadModel)
	}
	for _, k := range []string{"gemma3n.attention.key_length", "gemma3n.attention.value_length"} {
		if x, stated := f.Get(k); !stated {
			f.Set(k, v)
		} else if x != v {
			return fmt.Errorf("model: Ollama gemma3n file: %s = %v, but gemma3n.head_dim = %v: %w", k, x, v, ErrBadModel)
		}
	}
	return nil
}
