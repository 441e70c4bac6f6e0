package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// SmallThinker (TinySmallThinker: the 4B-A0.6B's make, every layer global
// and rotated, sigmoid routing; TinySmallThinkerSWA: the windowed layers
// and NoPE, softmax routing) against the float64 reference written from
// llama.cpp's smallthinker graph and build_moe_ffn — the router reading
// the layer's input before attention, the gating function the file
// names, the chosen weights renormalised, ReGLU experts, no shared
// expert — in one pass, in chunks of 4 and token by token. The window is
// 4096 whatever the file says (llama.cpp's), which a 13-token prompt
// never reaches: the SWA model is run with its Config's window cut to 4
// so that the windowed layers are seen. Reading the router from the
// experts' input, the other gating function, no renormalisation, SwiGLU
// for ReGLU, and for the SWA model rotating every layer, the NoPE layers
// last of each four rather than first, or no window, each move the
// reference by more than 3 tolerances.
func TestSmallThinkerMatchesReference(t *testing.T) {
	const tol = 5e-3
	for name, spec := range map[string]testutil.ModelSpec{"4B": testutil.TinySmallThinker(), "SWA": testutil.TinySmallThinkerSWA()} {
		matchReference(t, name, spec, 13, tol, 3*tol, func(t *testing.T, m *Model) ([]refMove, []string) {
			// The file's expert_gating_func is llama.cpp's numbering, as
			// Gating is: 2 (sigmoid) for the 4B model, 1 (softmax) for SWA.
			swa, gating := spec.Windowed, Gating(spec.Gating)
			if m.Experts != 8 || m.ExpertsUsed != 2 || m.ExpertFFN != 32 || m.SharedFFN != 0 || m.ExpertGating != gating ||
				!m.ExpertNorm || !m.ReGLU || !m.RouterPreAttn || !m.RopeNeox || m.Tied == swa || m.ExpertSelBias {
				t.Fatalf("config: %+v", m.Config)
			}
			if swa {
				if m.Window != 4096 || m.RopeLayer(0) || !m.RopeLayer(1) || m.RopeLayer(4) || m.WindowedLayer(0) || !m.WindowedLayer(3) || m.WindowedLayer(4) {
					t.Fatalf("SWA config: %+v", m.Config)
				}
				m.Window = 4
			} else if m.Window != 0 || !m.RopeLayer(0) || !m.RopeLayer(3) {
				t.Fatalf("config without a window: %+v", m.Config)
			}
			other := "softmax gating"
			if gating == GatingSoftmax {
				other = "sigmoid gating"
			}
			perturbs := []string{"router reads the experts' input", other, "no renormalisation", "SwiGLU experts"}
			if swa {
				perturbs = append(perturbs, "every layer rotated", "unrotated layers last", "no window")
			}
			return nil, perturbs
		})
	}
}
