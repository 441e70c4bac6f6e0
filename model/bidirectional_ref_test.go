package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// EuroBERT's, NeoBERT's and llama-embed's hidden states — a decoder's
// pre-norm RMSNorm blocks, the final norm's output the embeddings;
// EuroBERT's Q, K and V apart, SwiGLU and NEOX RoPE, NeoBERT's fused
// attn_qkv, fused SwiGLU ffn_up, NORM RoPE and enc.output_norm,
// llama-embed's llama blocks — against the reference, within an F16 step
// of an attention weight (the reference rounds as the cache does).
// EuroBERT and NeoBERT attend over the whole text; llama-embed as the file
// says: causally without attention.causal (as llama-embed-nemotron's
// converter writes it and llama.cpp d32676d77 then runs it), over the
// whole text with it false (4.2e-4 and 5.6e-7 measured; other seeds 6e-5
// to 5.5e-4 either way). The other attention or the other RoPE pairing
// would be off by more than 2e-2.
func TestBidirectionalMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		spec      testutil.ModelSpec
		nonCausal bool
		perturbs  []string // the other attention's and the other RoPE pairing's perturbations
	}{
		{testutil.TinyEuroBert(), true, []string{"causal", "NORM pairs"}},
		{testutil.TinyNeoBert(), true, []string{"causal", "NEOX pairs"}},
		{testutil.TinyLlamaEmbed(), false, []string{"bidirectional", "NEOX pairs"}},
		{testutil.TinyLlamaEmbedBidirectional(), true, []string{"causal", "NEOX pairs"}},
	} {
		t.Run(tc.spec.Variant(), func(t *testing.T) {
			pool, m, f, data := loadF32(t, tc.spec)
			if m.NonCausal != tc.nonCausal || !m.NoHead || m.OutNorm == nil || m.Output != nil {
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
			mustMoveAll(t, m, f, data, toks, want, 2e-2, tc.perturbs...)
		})
	}
}
