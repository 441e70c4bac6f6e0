package model

import (
	"math"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
)

// The slopes are ggml's: for 8 heads 2^-1 … 2^-8; for 12 heads those 8,
// then the odd powers 1, 3, 5, 7 of 2^-1/2.
func TestALiBiSlopes(t *testing.T) {
	for _, tc := range []struct {
		heads int
		want  []float64 // log2 of each slope
	}{
		{1, []float64{-8}},
		{8, []float64{-1, -2, -3, -4, -5, -6, -7, -8}},
		{12, []float64{-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5}},
		{6, []float64{-2, -4, -6, -8, -1, -3}},
	} {
		got := alibiSlopes(tc.heads, jinaMaxALiBiBias)
		if len(got) != len(tc.want) {
			t.Fatalf("%d heads: %d slopes", tc.heads, len(got))
		}
		for h, w := range tc.want {
			if math.Abs(float64(got[h])-math.Exp2(w)) > 1e-7 {
				t.Errorf("%d heads: head %d slope %v, want 2^%v", tc.heads, h, got[h], w)
			}
		}
	}
}

// llama.cpp reads no max_alibi_bias for jina-bert-v2 (it sets 8): a file
// with one, whatever its value, embeds the same bits as one without.
func TestJinaMaxALiBiBiasIgnored(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	spec := testutil.TinyJinaBertV2()
	m, _, _ := loadSpec(t, spec)
	want := hiddenOf(t, m, pool, prompt(9))
	for _, v := range []float32{-1, 2, float32(math.NaN())} {
		b, err := testutil.ModelBytes(spec)
		f, _ := testutil.Parse(t, b, err)
		f.Set("jina-bert-v2.attention.max_alibi_bias", v)
		mv, err := New(f, b)
		if err != nil {
			t.Fatalf("max_alibi_bias %v: %v", v, err)
		}
		got := hiddenOf(t, mv, pool, prompt(9))
		if i, ok := sameLogitBits(got, want); !ok {
			t.Errorf("max_alibi_bias %v: element %d is %v, %v without the key", v, i, got[i], want[i])
		}
	}
}
