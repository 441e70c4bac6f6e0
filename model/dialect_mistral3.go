package model

import (
	"fmt"
	"slices"

	"github.com/lowmem/llm/internal/gguf"
)

// ollamaMistral3Keys are the keys only Ollama's mistral3 converter writes
// (llama.cpp's names YaRN's bounds yarn_beta_fast and yarn_beta_slow, its
// mscale yarn_log_multiplier and Llama 4's temperature
// attention.temperature_scale): any of them marks its dialect.
var ollamaMistral3Keys = []string{"rope.scaling.beta_fast", "rope.scaling.beta_slow", "rope.scaling.mscale", "rope.scaling.mscale_all_dim", "rope.scaling_beta"}

// translateMistral3 makes Ollama's mistral3 (Mistral Small 3.1 and
// Ministral 3 with their vision tower; its converter writes every
// rope.scaling key whatever the checkpoint has) read as llama.cpp's,
// stating what Ollama's runtime does:
//   - an empty rope.scaling.type is no scaling ("none");
//   - with YaRN, beta_fast and beta_slow are yarn_beta_fast and
//     yarn_beta_slow, and mscale and mscale_all_dim, both non-zero, give
//     the attention factor 1/(1 + 0.1·ln factor) that llama.cpp's
//     yarn_log_multiplier = 1 gives (the runtime reads nothing more of
//     them);
//   - with rope.scaling.original_context_length set, the runtime scales
//     the query by Llama 4's temperature with rope.scaling_beta (default
//     0.1), llama.cpp's attention.temperature_scale.
//
// Ollama's Q and K rows are permuted as llama.cpp's converter permutes
// them (both run the non-NeoX RoPE), and its tensor names are llama.cpp's.
func translateMistral3(f *gguf.File) error {
	const arch = "mistral3"
	k := func(s string) string { return arch + "." + s }
	if !slices.ContainsFunc(ollamaMistral3Keys, func(s string) bool { _, ok := f.Get(k(s)); return ok }) {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("model: Ollama mistral3 file: "+format+": %w", append(args, ErrBadModel)...)
	}
	float := func(s string) (float64, bool, error) {
		v, present := f.Get(k(s))
		x, ok := f.Float(k(s))
		if present && !ok {
			return 0, true, bad("%s is %s, want a number", k(s), describe(v))
		}
		return x, present, nil
	}
	typ, _ := f.Get(k("rope.scaling.type"))
	if typ == "" {
		f.Set(k("rope.scaling.type"), "none")
	}
	if typ == "yarn" {
		for _, b := range []string{"beta_fast", "beta_slow"} {
			from, to := "rope.scaling."+b, "rope.scaling.yarn_"+b
			if _, ok := f.Get(k(from)); ok && !f.RenameKey(k(from), k(to)) {
				return bad("it has both %s and %s", k(from), k(to))
			}
		}
		ms, _, err := float("rope.scaling.mscale")
		if err != nil {
			return err
		}
		all, _, err := float("rope.scaling.mscale_all_dim")
		if err != nil {
			return err
		}
		if ms != 0 && all != 0 {
			if err := agree(f, k("rope.scaling.mscale"), k("rope.scaling.yarn_log_multiplier"), 1); err != nil {
				return err
			}
		}
	}
	beta, stated, err := float("rope.scaling_beta")
	if err != nil {
		return err
	}
	if !stated {
		beta = 0.1
	}
	if orig, _ := f.Uint(k("rope.scaling.original_context_length")); orig > 0 {
		if err := agree(f, k("rope.scaling_beta"), k("attention.temperature_scale"), float32(beta)); err != nil {
			return err
		}
	}
	return nil
}
