package seq

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/sampler"
)

func TestLogprobs(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	ln := func(x float64) float32 { return float32(math.Log(x)) }
	lse := math.Log(math.Exp(1) + math.Exp(2) + math.Exp(3))
	tests := []struct {
		name    string
		logits  []float32
		id      int32
		n       int
		lp      float32
		top     []int32
		topLast float32 // the last of top's log-probabilities
	}{
		{"plain", []float32{1, 2, 3}, 1, 2, float32(2 - lse), []int32{2, 1}, float32(2 - lse)},
		{"none asked", []float32{1, 2, 3}, 2, 0, float32(3 - lse), nil, 0},
		{"ties to the lower id", []float32{5, 5, 1}, 2, 2, float32(1 - (5 + math.Log(2+math.Exp(-4)))), []int32{0, 1}, float32(5 - (5 + math.Log(2+math.Exp(-4))))},
		{"more asked than tokens", []float32{0, 0}, 0, 5, ln(0.5), []int32{0, 1}, ln(0.5)},
		{"NaN is -Inf", []float32{nan, 0}, 0, 2, float32(math.Inf(-1)), []int32{1}, 0},
		{"+Inf shares it all", []float32{inf, 1, inf}, 2, 3, ln(0.5), []int32{0, 2, 1}, float32(math.Inf(-1))},
		{"all -Inf", []float32{float32(math.Inf(-1)), float32(math.Inf(-1))}, 0, 1, float32(math.Inf(-1)), []int32{0}, float32(math.Inf(-1))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lp, top := logprobs(tc.logits, tc.id, tc.n)
			if math.Abs(float64(lp-tc.lp)) > 1e-6 && lp != tc.lp {
				t.Errorf("logprob %g, want %g", lp, tc.lp)
			}
			if len(top) != len(tc.top) {
				t.Fatalf("top %v, want ids %v", top, tc.top)
			}
			for i, e := range top {
				if e.ID != tc.top[i] {
					t.Fatalf("top %v, want ids %v", top, tc.top)
				}
			}
			if n := len(top); n > 0 && math.Abs(float64(top[n-1].Logprob-tc.topLast)) > 1e-6 && top[n-1].Logprob != tc.topLast {
				t.Errorf("last of top %g, want %g", top[n-1].Logprob, tc.topLast)
			}
		})
	}
}

// TestGenerateLogprobs: greedy generation yields the most likely token,
// so its log-probability is the first of the top ones; with sampling the
// token's is among its step's and the top ones come in order.
func TestGenerateLogprobs(t *testing.T) {
	m, tok, pool := synthetic(t, testutil.TinyLlama())
	s, err := New(m, ops.NewExec(pool), memplan.NewKVBudget(1<<30, nil), Config{Context: 64, Batch: 8, Vocab: tok})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, temp := range []float32{0, 1} {
		g := Generation{Config: sampler.DefaultConfig(3), MaxTokens: 8, Logprobs: true, TopLogprobs: 4}
		g.Temperature = temp
		steps := 0
		err = s.GenerateFrom(context.Background(), ids(5, 1), g, func(id int32, _ string) bool {
			if id < 0 {
				return true
			}
			steps++
			lp, top := s.Logprobs()
			if len(top) != 4 || lp > 0 || lp < top[3].Logprob && temp == 0 {
				t.Fatalf("token %d: logprob %g, top %v", id, lp, top)
			}
			for i := 1; i < len(top); i++ {
				if top[i].Logprob > top[i-1].Logprob {
					t.Fatalf("top out of order: %v", top)
				}
			}
			if temp == 0 && (top[0].ID != id || top[0].Logprob != lp || top[0].Text != string(tok.Piece(id))) {
				t.Fatalf("greedy token %d (logprob %g): top %v", id, lp, top)
			}
			return true
		})
		if err != nil || steps == 0 {
			t.Fatalf("temperature %g: %v after %d tokens", temp, err, steps)
		}
	}
	g := Generation{Config: sampler.DefaultConfig(3), MaxTokens: 2, TopLogprobs: MaxTopLogprobs + 1}
	if err := s.GenerateFrom(context.Background(), ids(5, 1), g, func(int32, string) bool { return true }); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("top logprobs %d: %v, want ErrInvalidOption", g.TopLogprobs, err)
	}
}

// BenchmarkLogprobs is the cost WithLogprobs adds a token, over Llama 3's
// vocabulary.
func BenchmarkLogprobs(b *testing.B) {
	logits := make([]float32, 128256)
	for i := range logits {
		logits[i] = float32(math.Sin(float64(i))) * 10
	}
	for _, n := range []int{0, 5, 20} {
		b.Run(fmt.Sprintf("top%d", n), func(b *testing.B) {
			for b.Loop() {
				logprobs(logits, 7, n)
			}
		})
	}
}
