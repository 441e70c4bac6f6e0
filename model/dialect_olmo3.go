package model

import (
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
)

// translateOlmo3 makes Ollama's olmo3 (OLMo 3; its converter writes OLMo
// 2's checkpoints under that name too) read as llama.cpp's olmo2, which
// runs both: the same keys and tensor names under another architecture
// name. Its attention.sliding_window_pattern, one flag a layer from the
// checkpoint's layer_types, is what llama.cpp fixes for olmo2 with a
// window (three windowed layers of four, the fourth global); a file whose
// flags say otherwise is refused, since llama.cpp's graph would run
// another pattern than its checkpoint's.
func translateOlmo3(f *gguf.File) error {
	if err := renameArch(f, "olmo3", "olmo2"); err != nil {
		return err
	}
	k := "olmo2.attention.sliding_window_pattern"
	raw, ok := f.Get(k)
	if !ok {
		return nil
	}
	flags, isFlags := raw.([]bool)
	if !isFlags {
		return fmt.Errorf("model: Ollama olmo3 file: olmo3.attention.sliding_window_pattern is %s, want one flag a layer: %w", describe(raw), ErrBadModel)
	}
	if w, _ := f.Uint("olmo2.attention.sliding_window"); w == 0 {
		return nil // no window: every layer global, the flags unread as llama.cpp leaves them
	}
	for il, windowed := range flags {
		if windowed != ((il+1)%4 != 0) {
			return fmt.Errorf("model: Ollama olmo3 file: olmo3.attention.sliding_window_pattern %v: layer %d is not as llama.cpp's olmo2 runs it (three windowed layers of four): %w", flags, il, ErrUnsupportedArch)
		}
	}
	return nil
}
