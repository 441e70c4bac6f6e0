package model

import (
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
)

// translateGlm4MoeLite makes Ollama's glm4moelite (GLM-4.7-Flash) read as
// llama.cpp's deepseek2, which is how llama.cpp runs it: the same latent
// attention (attn_k_b and attn_v_b split as llama.cpp's converter splits
// them), sigmoid routing with a selection bias and leading dense layers,
// under another architecture name. Ollama's converter states the sizes
// the other way round: its key_length and value_length are the
// decompressed heads' (llama.cpp's key_length_mla and value_length_mla)
// and its _mla keys the latent's, so the pairs are swapped; and it writes
// the checkpoint's num_key_value_heads, where llama.cpp's converter
// writes the one latent head the cache holds. The NextN layer is not in
// its file (its converter drops the blocks past block_count).
func translateGlm4MoeLite(f *gguf.File) error {
	if err := renameArch(f, "glm4moelite", "deepseek2"); err != nil {
		return err
	}
	for _, pair := range [][2]string{{"attention.key_length", "attention.key_length_mla"}, {"attention.value_length", "attention.value_length_mla"}} {
		a, b := "deepseek2."+pair[0], "deepseek2."+pair[1]
		va, okA := f.Get(a)
		vb, okB := f.Get(b)
		if !okA || !okB {
			return fmt.Errorf("model: Ollama glm4moelite file: glm4moelite.%s and glm4moelite.%s come together (the file lacks one): %w", pair[0], pair[1], ErrBadModel)
		}
		for _, kv := range []struct {
			k string
			v any
		}{{a, va}, {b, vb}} {
			if _, ok := f.Uint(kv.k); !ok {
				return fmt.Errorf("model: Ollama glm4moelite file: glm4moelite.%s is %s, want a count: %w", kv.k[len("deepseek2."):], describe(kv.v), ErrBadModel)
			}
		}
		f.Set(a, vb)
		f.Set(b, va)
	}
	f.Set("deepseek2.attention.head_count_kv", uint32(1))
	return nil
}

// translateDeepSeek2 makes Ollama's deepseek2 (DeepSeek-V2, -V3 and
// Coder-V2; the joined attn_kv_b llama.cpp's converter also wrote before
// it split it) read as llama.cpp's: its converter writes every
// rope.scaling key whatever the checkpoint has, and an empty
// rope.scaling.type with an original_context_length of 0 means no
// scaling, the length then unread — stated as llama.cpp's file states
// it, type "none" and the trained context.
func translateDeepSeek2(f *gguf.File) error {
	if typ, _ := f.Get("deepseek2.rope.scaling.type"); typ != "" {
		return nil
	}
	f.Set("deepseek2.rope.scaling.type", "none")
	if n, ok := f.Uint("deepseek2.rope.scaling.original_context_length"); ok && n == 0 {
		if ctx, ok := f.Get("deepseek2.context_length"); ok {
			f.Set("deepseek2.rope.scaling.original_context_length", ctx)
		}
	}
	return nil
}
