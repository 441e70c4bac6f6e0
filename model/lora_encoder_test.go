package model

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// jina-embeddings-v3's task adapters are LoRA files of its blocks'
// matrices (and of token_embd and token_types): applied at run time to
// jina-bert-v3's encoder, the hidden states are the merged model's within
// 1e-3 of the largest, and the adapter moves them. An adapter of
// token_types — the released ones hold one — is checked and then passed
// over, as llama.cpp d32676d77 loads it and its bert graph adds
// type_embd's row 0 as it is: the hidden states do not move.
func TestLoRAEncoderMatchesMerged(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	spec := testutil.TinyJinaBertV3()
	spec.WeightType = quant.F32
	base, err := testutil.ModelBytes(spec)
	f, _ := testutil.Parse(t, base, err)
	ad, err := testutil.LoRABytes(base, testutil.LoRASpec{Tensors: testutil.BlockMatrices(f), Rank: 4, Alpha: 4, Seed: 3, Amplitude: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	mergedBytes, err := testutil.MergeLoRA(base, [][]byte{ad}, []float32{1})
	mf, _ := testutil.Parse(t, mergedBytes, err)
	merged, err := New(mf, mergedBytes)
	if err != nil {
		t.Fatal(err)
	}
	toks := prompt(13)
	want := hiddenOf(t, merged, pool, toks)
	m, err := New(f, base)
	if err != nil {
		t.Fatal(err)
	}
	unadapted := hiddenOf(t, m, pool, toks)
	if _, err := attachBytes(m, f, ad, 1); err != nil {
		t.Fatal(err)
	}
	got := hiddenOf(t, m, pool, toks)
	if d := testutil.RelDiff(got, want); !(d <= 1e-3) {
		t.Errorf("hidden states differ from the merged model's by %.3g of the largest", d)
	} else {
		t.Logf("%.3g", d)
	}
	if d := testutil.RelDiff(unadapted, want); d < 5e-2 {
		t.Errorf("the adapter moves the hidden states by only %.3g", d)
	}

	typed, err := testutil.LoRABytes(base, testutil.LoRASpec{Tensors: []string{"token_types.weight"}, Rank: 1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	plain := newAdapted(t, f, base, typed, "an adapter of token_types")
	if got := hiddenOf(t, plain, pool, toks); !slices.Equal(got, unadapted) {
		t.Errorf("an adapter of token_types moved the hidden states by %.3g of the largest", testutil.RelDiff(got, unadapted))
	}
	// One of another model's token_types (two types) is the wrong base.
	other := spec
	other.TokenTypes = 2
	otherBase, err := testutil.ModelBytes(other)
	if err != nil {
		t.Fatal(err)
	}
	misfit, err := testutil.LoRABytes(otherBase, testutil.LoRASpec{Tensors: []string{"token_types.weight"}, Rank: 1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := attachBytes(plain, f, misfit, 1); !errors.Is(err, ErrBadAdapter) || !strings.Contains(err.Error(), "token_types.weight") {
		t.Errorf("an adapter of another model's token_types: err = %v, want ErrBadAdapter naming it", err)
	}
}
