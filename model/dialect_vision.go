package model

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lowmem/llm/internal/gguf"
)

// Ollama's converter keeps a vision-language model's vision tower (and
// gemma3n's audio tower) in the same file as its text model, where
// llama.cpp's writes it to a separate mmproj file; and it states the
// text model's multimodal RoPE and a few defaults under names of its own.
// This file translates those headers (qwen25vl, qwen3vl, qwen3vlmoe,
// gemma3 with vision) into llama.cpp's names. The tower's tensors stay in
// the tensor list, unread: TowerTensor names them, so that no plan counts
// them and residency does not read them ahead (SkippedRanges).

// TowerTensor reports whether the tensor named name belongs to a vision
// or audio tower or its projector into the text model ("v.", "a.", "mm."
// in Ollama's files), which this package, running text only, never reads.
func TowerTensor(name string) bool {
	return strings.HasPrefix(name, "v.") || strings.HasPrefix(name, "a.") || strings.HasPrefix(name, "mm.")
}

// qwenDefaultSections is the multimodal RoPE sections Ollama's qwen3vl
// runtime assumes when its file states none (its converter writes them
// only when the checkpoint's rope_scaling has a "type"; Qwen3-VL's have
// "rope_type"): 24, 20 and 20 of a 128-wide head's 64 pairs.
var qwenDefaultSections = []int32{24, 20, 20}

// translateQwen25VL makes Ollama's qwen25vl (Qwen2.5-VL) read as
// llama.cpp's qwen2vl: the same layers and RoPE under another
// architecture name, its sections in rope.mrope_section.
func translateQwen25VL(f *gguf.File) error {
	if err := renameArch(f, "qwen25vl", "qwen2vl"); err != nil {
		return err
	}
	return mropeSections(f, "qwen2vl", nil, "rope.mrope_section")
}

// translateQwen3VL states the sections of an Ollama qwen3vl or qwen3vlmoe
// file as llama.cpp's rope.dimension_sections: from mrope_sections (what
// Ollama's runtime reads), rope.mrope_section (what its converter
// writes), or the runtime's default. A file that already has
// rope.dimension_sections is llama.cpp's and left alone, unless it
// states the sections under Ollama's names as well.
func translateQwen3VL(f *gguf.File) error {
	return mropeSections(f, f.Arch(), qwenDefaultSections, "mrope_sections", "rope.mrope_section")
}

// mropeSections sets arch's rope.dimension_sections from the first of
// Ollama's keys the file has (each an integer array of at most four
// counts, padded with zeros: the sections llama.cpp gives the extra
// position), or def when it has none and def is not nil. Names that
// state other sections than one another are refused; the same sections
// under both dialects' names are not (a header translated once reads so).
func mropeSections(f *gguf.File, arch string, def []int32, keys ...string) error {
	target := arch + ".rope.dimension_sections"
	from := target
	xs, stated := f.Int32s(target)
	if _, ok := f.Get(target); ok && !stated {
		return nil // multimodalRope names the type
	}
	for _, k := range keys {
		k = arch + "." + k
		v, ok := f.Get(k)
		if !ok {
			continue
		}
		ys, ok := f.Int32s(k)
		if !ok || len(ys) == 0 || len(ys) > 4 {
			return fmt.Errorf("model: Ollama %s file: %s is %s, want 1 to 4 integer counts: %w", arch, k, describe(v), ErrBadModel)
		}
		ys = append(ys[:len(ys):len(ys)], make([]int32, 4-len(ys))...)
		if xs != nil && !slices.Equal(xs, ys) {
			return fmt.Errorf("model: Ollama %s file: %s = %v and %s = %v disagree: %w", arch, from, xs, k, ys, ErrBadModel)
		}
		from, xs = k, ys
	}
	if xs == nil && def != nil {
		xs = append(slices.Clone(def), make([]int32, 4-len(def))...)
	}
	if !stated && xs != nil {
		f.Set(target, xs)
	}
	return nil
}

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

// renameArch renames the architecture from to to, and its keys with it;
// a key under both names is refused.
func renameArch(f *gguf.File, from, to string) error {
	for i := range f.KV {
		k := f.KV[i].Key
		if rest, ok := strings.CutPrefix(k, from+"."); ok && !f.RenameKey(k, to+"."+rest) {
			return fmt.Errorf("model: Ollama %s file: it has both %s and %s.%s: %w", from, k, to, rest, ErrBadModel)
		}
	}
	f.Set("general.architecture", to)
	return nil
}

// renameKey renames Ollama's key from, when the file has it, to
// llama.cpp's to; a file with both is refused.
func renameKey(f *gguf.File, from, to string) error {
	if _, ok := f.Get(from); ok && !f.RenameKey(from, to) {
		return fmt.Errorf("model: Ollama %s file: it has both %s and %s: %w", f.Arch(), from, to, ErrBadModel)
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
