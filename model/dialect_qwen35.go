package model

import (
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
)

// translateQwen35 makes Ollama's qwen35, qwen35moe and qwen3next (one
// converter writes the three, in llama.cpp's tensor names) read as
// llama.cpp's. Its head_count_kv is one count a layer, 0 in the delta-net
// layers: llama.cpp's loader reads the array, and which layers are
// delta-net from full_attention_interval; this package runs one KV head
// count, so the array becomes its one non-zero count, the zeros the
// recurrent layers (attention.recurrent_layers, when the file states no
// such flags), which must agree with full_attention_interval when the
// file has it. Its ssm.v_head_reordered says the value heads are tiled
// over the key heads, as llama.cpp's converter orders Qwen 3.5's and
// llama.cpp's qwen35 graph reads them; llama.cpp's qwen3next reads them
// in blocks, as the checkpoint has them. A file marked otherwise has its
// heads in an order the graph does not read, and is refused.
func translateQwen35(f *gguf.File) error {
	arch := f.Arch()
	key := func(s string) string { return arch + "." + s }
	bad := func(err error, format string, args ...any) error {
		return fmt.Errorf("model: Ollama %s file: "+format+": %w", append(append([]any{arch}, args...), err)...)
	}
	if raw, ok := f.Get(key("ssm.v_head_reordered")); ok {
		reordered, isBool := raw.(bool)
		heads, _ := f.Uint(key("ssm.time_step_rank"))
		groups, _ := f.Uint(key("ssm.group_count"))
		switch {
		case !isBool:
			return bad(ErrBadModel, "%s is %s, want a bool", key("ssm.v_head_reordered"), describe(raw))
		case heads != groups && reordered == (arch == "qwen3next"):
			return bad(ErrUnsupportedArch, "%s = %v: its value heads are not in the order llama.cpp's %s reads them", key("ssm.v_head_reordered"), reordered, arch)
		}
	}
	k := key("attention.head_count_kv")
	raw, ok := f.Get(k)
	if !ok {
		return nil
	}
	if _, scalar := f.Uint(k); scalar {
		return nil
	}
	counts, ok := f.Int32s(k)
	if !ok {
		return nil // ConfigFromGGUF names the type
	}
	var kv int32
	recurrent := make([]bool, len(counts))
	for il, n := range counts {
		switch {
		case n == 0:
			recurrent[il] = true
		case kv == 0 || n == kv:
			kv = n
		default:
			return nil // per-layer sizes, refused as such
		}
	}
	if kv <= 0 {
		return bad(ErrBadModel, "%s = %v has no attention layer", k, raw)
	}
	if every, ok := f.Uint(key("full_attention_interval")); ok {
		for il, r := range recurrent {
			if every == 0 || r != ((uint64(il)+1)%every != 0) {
				return bad(ErrBadModel, "%s = %v and %s = %d disagree on layer %d", k, raw, key("full_attention_interval"), every, il)
			}
		}
	}
	if _, ok := f.Get(key("attention.recurrent_layers")); !ok {
		f.Set(key("attention.recurrent_layers"), recurrent)
	}
	f.Set(k, uint32(kv))
	return nil
}
