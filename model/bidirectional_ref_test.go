package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// EuroBERT's and NeoBERT's hidden states — a decoder's pre-norm RMSNorm
// blocks over the whole text, the final norm's output the embeddings;
// EuroBERT's Q, K and V apart, SwiGLU and NEOX RoPE, NeoBERT's fused
// attn_qkv, fused SwiGLU ffn_up, NORM RoPE and enc.output_norm — against
// the reference, within an F16 step of an attention weight (the
// reference rounds as the cache does). Attention causal or the other RoPE
// pairing would be off by tenths.
func TestBidirectionalMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		spec    testutil.ModelSpec
		pairing string // the perturbation of the RoPE pairs
	}{
		{testutil.TinyEuroBert(), "NORM pairs"},
		{testutil.TinyNeoBert(), "NEOX pairs"},
	} {
		t.Run(tc.spec.Arch, func(t *testing.T) {
			pool, m, f, data := loadF32(t, tc.spec)
			if !m.NonCausal || !m.NoHead || m.OutNorm == nil {
				t.Fatalf("config: non-causal %v, no head %v, final norm %v", m.NonCausal, m.NoHead, m.OutNorm != nil)
			}
			toks := prompt(19)
			got := hiddenOf(t, m, pool, toks)
			want := (&refDecoder{refEncoder: refEncoder{t: t, f: f, data: data, c: &m.Config, round16: true}}).hidden(toks)
			if worst := refDiff(got, want); !(worst <= 2e-3) {
				t.Errorf("hidden states differ from the reference by up to %g", worst)
			} else {
				t.Logf("worst difference %.3g", worst)
			}
			mustMoveAll(t, m, f, data, toks, want, 2e-2, "causal", tc.pairing)
		})
	}
}

// llama-embed's hidden states — llama's blocks, the final norm's output
// the embeddings — against the reference, as the file says: attending
// causally without attention.causal (as llama-embed-nemotron's converter
// writes it and llama.cpp d32676d77 then runs it), over the whole text
// with attention.causal false. The tolerance is
// TestBidirectionalMatchesReference's (4.2e-4 causal and 5.6e-7 over the
// whole text measured; other seeds 6e-5 to 5.5e-4, either way); the other
// attention or NEOX's RoPE pairs would be off by more than 2e-2.
func TestLlamaEmbedMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		spec      testutil.ModelSpec
		attention string // the perturbation of the attention's reach
	}{
		{testutil.TinyLlamaEmbed(), "bidirectional"},
		{testutil.TinyLlamaEmbedBidirectional(), "causal"},
	} {
		t.Run(tc.spec.Variant(), func(t *testing.T) {
			pool, m, f, data := loadF32(t, tc.spec)
			if m.NonCausal != tc.spec.NonCausal || !m.NoHead || m.OutNorm == nil || m.Output != nil {
				t.Fatalf("config: non-causal %v, no head %v, final norm %v, output %v", m.NonCausal, m.NoHead, m.OutNorm != nil, m.Output != nil)
			}
			toks := prompt(19)
			got := hiddenOf(t, m, pool, toks)
			want := (&refDecoder{refEncoder: refEncoder{t: t, f: f, data: data, c: &m.Config, round16: true}}).hidden(toks)
			if worst := refDiff(got, want); !(worst <= 2e-3) {
				t.Errorf("hidden states differ from the reference by up to %g", worst)
			} else {
				t.Logf("worst difference %.3g", worst)
			}
			mustMoveAll(t, m, f, data, toks, want, 2e-2, tc.attention, "NEOX pairs")
		})
	}
}
