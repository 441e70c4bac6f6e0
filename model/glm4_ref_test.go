package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// GLM-4 (TinyGLM4: separate projections with their biases, as the 0414
// files have them; TinyGLM4Fused: attn_qkv and its bias) and ChatGLM
// (TinyChatGLM: attn_qkv and its bias, as ChatGLM3-6B's and
// GLM-4-9B-chat's files have them; TinyChatGLMApart: separate
// projections) against the float64 reference written from llama.cpp's
// glm4 and chatglm graphs — half of each head rotated in NORM pairs,
// gate and up fused in ffn_up, and for glm4 the attention's and the
// feed-forward's outputs normalised before their residual sums — in one
// pass, in chunks of 4 and token by token, within 5e-3. Rotating whole
// heads, NEOX pairs, the gate and up halves swapped, a fused attn_qkv's
// key and value rows swapped, and any bias or either of glm4's norms
// after attention or the feed-forward left out each move the reference
// by more than 1.5e-2, so the comparison sees every step.
func TestGLM4MatchesReference(t *testing.T) {
	// Before the first attention weight whose float32 value lands on the
	// other side of an F16 rounding midpoint from the float64 one, the
	// logits (of order 3) agree within 4e-6; each such flip moves them by
	// up to 4e-3 from there on (seeds 40 to 45: 7.8e-4, 9.4e-4, 2.8e-6,
	// 3.2e-6 and 4.1e-3; the fused file 3.1e-6).
	const glm4Tol = 5e-3
	for _, spec := range []testutil.ModelSpec{testutil.TinyGLM4(), testutil.TinyGLM4Fused(), testutil.TinyChatGLM(), testutil.TinyChatGLMApart()} {
		t.Run(spec.Variant(), func(t *testing.T) {
			pool, m, f, data := loadF32(t, spec)
			postNorms := spec.Arch == "glm4"
			if m.RopeDim != 8 || m.HeadDimK != 16 || m.RopeNeox || m.PostNorms != postNorms || m.Tied {
				t.Fatalf("config: rope %d of %d, NEOX %v, post-norms %v, tied %v", m.RopeDim, m.HeadDimK, m.RopeNeox, m.PostNorms, m.Tied)
			}
			L := &m.Blocks[0]
			if L.GateUp == nil || (L.Wqkv != nil) != spec.FusedQKV || (L.Bqkv != nil) != spec.FusedQKV || (L.Bq != nil) == spec.FusedQKV {
				t.Fatalf("layer 0: gate/up fused %v, attn_qkv %v, its bias %v, attn_q.bias %v", L.GateUp != nil, L.Wqkv != nil, L.Bqkv != nil, L.Bq != nil)
			}
			toks := prompt(13)
			ref, want := checkedRefWithin(t, m, pool, f, data, toks, glm4Tol)

			mustMove(t, "gate and up swapped", ref(refDecoder{swapGateUp: true}), want, 3*glm4Tol)
			biases := []string{"attn_q.bias", "attn_k.bias", "attn_v.bias"}
			if spec.FusedQKV {
				biases = []string{"attn_qkv.bias"}
				mustMove(t, "key and value rows swapped", ref(refDecoder{swapKV: true}), want, 3*glm4Tol)
			}
			if postNorms {
				biases = append(biases, "post_attention_norm.weight", "post_ffw_norm.weight")
			}
			for _, name := range biases {
				if _, ok := f.Tensor("blk.0." + name); !ok {
					t.Fatalf("the file has no blk.0.%s to leave out", name)
				}
				mustMove(t, "without "+name, ref(refDecoder{without: []string{name}}), want, 3*glm4Tol)
			}
			mustMoveAll(t, m, f, data, toks, want, 3*glm4Tol, "every dim rotated", "NEOX pairs")
		})
	}
}
