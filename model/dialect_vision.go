package model

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lowmem/llm/internal/gguf"
)

// Ollama's converter keeps a vision-language model's vision tower in the
// same file as its text model (qwen25vl, qwen3vl, qwen3vlmoe, gemma3 and
// mistral3 from their multimodal checkpoints, qwen35), where llama.cpp's
// writes it to a separate mmproj file. The tower's tensors stay in the
// tensor list, unread: TowerTensor names them, so that no plan counts
// them and residency does not read them ahead (SkippedRanges). This file
// also translates the Qwen vision-language text models' multimodal RoPE.

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
