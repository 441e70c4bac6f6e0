package llm_test

import (
	"context"
	"os"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// benchModel is $LLM_BENCH_MODEL (e.g. a file from internal/cmd/mkmodel), or
// tiny-llama-q4_k_m from the shared test data.
func benchModel(b *testing.B) string {
	if p := os.Getenv("LLM_BENCH_MODEL"); p != "" {
		return p
	}
	return testutil.Testdata(b, "models/tiny-llama-q4_k_m.gguf")
}

// benchSession loads the benchmark model with a context of n tokens and
// opens a session; both close when the benchmark ends.
func benchSession(b *testing.B, n int) (*llm.Model, *llm.Session) {
	m := load(b, benchModel(b), llm.WithContextSize(n))
	return m, session(b, m)
}

// BenchmarkDecode measures one decode step (one token through the model).
func BenchmarkDecode(b *testing.B) {
	m, s := benchSession(b, 4096)
	ctx := context.Background()
	tok := []int32{m.BOS()}
	b.SetBytes(m.Info().FileBytes)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if s.Len() == s.Context() {
			s.Reset()
		}
		if _, err := s.Eval(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrefill measures a 128-token prompt.
func BenchmarkPrefill(b *testing.B) {
	_, s := benchSession(b, 512)
	toks := make([]int32, 128)
	for i := range toks {
		toks[i] = int32(100 + i)
	}
	for b.Loop() {
		s.Reset()
		if _, err := s.Eval(context.Background(), toks); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(toks)*b.N)/b.Elapsed().Seconds(), "tok/s")
}
