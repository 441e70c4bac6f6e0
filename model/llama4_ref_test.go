package model

import (
	"fmt"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// Llama 4 (TinyLlama4: Scout's layout, experts on every layer, Q/K unit
// norms; TinyLlama4Maverick: 128 experts on the odd layers, dense ones
// between, no Q/K norms, Q/K/V biases, tied output) against the float64
// reference written from llama.cpp's llama4 graph — NORM RoPE with
// rope_freqs' factors on layers 0–2, which attend within their chunk and
// RMS-normalise each head of Q and K after RoPE (Scout), layer 3 global
// and unrotated, its queries times log(⌊(pos+1)/floor⌋+1)·0.1+1; one
// expert a token chosen by its sigmoid, reading the token times its
// weight, the shared expert added — in one pass, in chunks of 4 and token
// by token, within 5e-3. llama.cpp's chunk and temperature floor, 8192,
// are shortened to 4 on the loaded Config (the engine and the reference
// both read it), so that the 13-token prompt crosses three chunk
// boundaries and three temperature steps. Each ingredient left out (the
// chunks, the window, the temperature, its offset, the Q/K norms, the
// shared expert, Maverick's Q/K/V biases) or moved (the temperature on
// every layer, the weights on the experts' outputs — Scout's: Maverick's
// best of 128 sigmoids weighs about 1 —, RoPE on the global layer,
// softmax gating) moves the reference by more than 3 tolerances.
func TestLlama4MatchesReference(t *testing.T) {
	const tol = 5e-3
	for name, spec := range map[string]testutil.ModelSpec{"scout": testutil.TinyLlama4(), "maverick": testutil.TinyLlama4Maverick()} {
		matchReference(t, name, spec, 13, tol, 3*tol, func(t *testing.T, m *Model) ([]refMove, []string) {
			c, scout := &m.Config, spec.Experts != 128
			if !c.Chunked || c.Window != 8192 || c.AttnTempScale != 0.1 || c.AttnTempOffset != 1 || c.AttnTempFloor != 8192 || !c.AttnTempNoPE ||
				c.QKUnitNorm != scout || c.RopeNeox || !c.ExpertInputWeighted || c.ExpertGating != GatingSigmoid || c.SharedFFN != 32 ||
				m.RopeFreqs == nil || !c.RopeLayer(2) || c.RopeLayer(3) || !c.WindowedLayer(2) || c.WindowedLayer(3) ||
				c.ExpertLayer(0) != scout || !c.ExpertLayer(1) || m.Tied == scout {
				t.Fatalf("config: %+v", m.Config)
			}
			c.Window, c.AttnTempFloor = 4, 4
			moves := []refMove{{"no shared expert", refDecoder{noShared: true}}}
			perturbs := []string{"sliding, not chunked", "no window", "no temperature", "temperature on every layer", "no temperature offset",
				"every layer rotated", "softmax gating"}
			if scout {
				// Maverick's best of 128 sigmoids weighs about 1, where
				// the weight's place changes little (5.9e-3).
				perturbs = append(perturbs, "no Q/K unit norms", "experts' outputs weighted")
			} else {
				moves = append(moves, refMove{"no Q/K/V biases", refDecoder{without: []string{"attn_q.bias", "attn_k.bias", "attn_v.bias"}}})
			}
			return moves, perturbs
		})
	}
}

// After a context shift a chunked layer counts its chunks on the shifted
// positions, as llama.cpp's shifted cells do, and the unrotated layers'
// temperature reads the shifted position: in a one-layer llama4 (its
// chunk and temperature floor shortened to 4; the layer rotated, or
// unrotated with the temperature) the next step's logits after dropping
// positions equal those of a cache filled with the kept tokens at their
// new positions, up to F16 rounding (TestShiftUsesTheLayersRope's bound).
func TestLlama4ShiftMatchesFresh(t *testing.T) {
	pool := ops.NewPool(1)
	defer pool.Close()
	for _, unrotated := range []bool{false, true} {
		t.Run(fmt.Sprintf("unrotated=%v", unrotated), func(t *testing.T) {
			spec := testutil.TinyLlama4()
			spec.Layers, spec.WeightType = 1, quant.F32
			m, _, _ := loadSpec(t, spec)
			m.Window, m.AttnTempFloor = 4, 4
			if unrotated {
				m.NoRopeEvery = 1
			}
			if !m.WindowedLayer(0) || m.RopeLayer(0) == unrotated || m.AttnTempLayer(0) != unrotated {
				t.Fatalf("layer 0: chunked %v, rotated %v, temperature %v", m.WindowedLayer(0), m.RopeLayer(0), m.AttnTempLayer(0))
			}
			checkShiftMatchesFresh(t, m, pool)
		})
	}
}
