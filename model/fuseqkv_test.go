package model

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// A file whose attn_q, attn_k and attn_v (and their biases) are fused in
// one attn_qkv, as convert_hf_to_gguf.py's --fuse-qkv writes it, runs as
// the file with them apart does: the same logits, bit for bit, a prompt at
// once and then token by token (the fused product's rows are the three
// products' rows, each of the same dot product), in the spec's weight
// type and in F32. An architecture whose llama.cpp loader or graph cannot
// take it (QKVSeparate) refuses it, naming it.
func TestFusedQKVMatchesSeparate(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	toks := prompt(6)
	tested := 0
	for _, spec := range testutil.TinySpecs() {
		if !separateQKV(t, spec) {
			continue
		}
		for _, weights := range []quant.Type{spec.WeightType, quant.F32} {
			spec := spec
			spec.WeightType, spec.OutputType = weights, 0
			t.Run(spec.Arch+"/"+spec.Variant()+"/"+weights.String(), func(t *testing.T) {
				fused := spec
				fused.FuseQKV = true
				b, err := testutil.ModelBytes(fused)
				f, _ := testutil.Parse(t, b, err)
				mf, err := New(f, b)
				if LookupArch(spec.Arch).QKV == QKVSeparate {
					if !errors.Is(err, ErrUnsupportedArch) || !strings.Contains(err.Error(), "attn_qkv.weight") {
						t.Fatalf("error %v, want one wrapping %v naming attn_qkv", err, ErrUnsupportedArch)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(mf.Blocks, func(L Layer) bool { return L.Wqkv != nil && L.Wq == nil }) {
					t.Fatal("no block runs the fused attn_qkv")
				}
				ms, _, _ := loadSpec(t, spec)
				for _, batch := range []int{4, 1} {
					want := forwardAll(t, ms, pool, toks, batch, 16)
					if got := forwardAll(t, mf, pool, toks, batch, 16); !slices.Equal(got, want) {
						t.Errorf("batches of %d: the fused file's outputs differ from the separate file's", batch)
					}
				}
			})
			tested++
		}
	}
	if tested == 0 {
		t.Fatal("no spec has separate Q, K and V")
	}
}

// separateQKV reports whether spec's file holds some block's query, key
// and value projections apart, which FuseQKV then fuses.
func separateQKV(t *testing.T, spec testutil.ModelSpec) bool {
	t.Helper()
	b, err := testutil.ModelBytes(spec)
	f, _ := testutil.Parse(t, b, err)
	return slices.ContainsFunc(f.Tensors, func(ti gguf.TensorInfo) bool { return strings.HasSuffix(ti.Name, ".attn_k.weight") })
}

// An adapter of attn_q on a model whose projections are fused is refused
// as llama.cpp refuses it (the tensor is not the model's), naming the
// fused one to adapt instead; one of attn_qkv is taken.
func TestFusedQKVAdapter(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.WeightType, spec.FuseQKV = quant.F32, true
	base, err := testutil.ModelBytes(spec)
	f, _ := testutil.Parse(t, base, err)
	for _, tc := range []struct {
		tensor string
		want   error
	}{
		{"blk.0.attn_q.weight", ErrBadAdapter},
		{"blk.1.attn_v.weight", ErrBadAdapter},
		{"blk.0.attn_qkv.weight", nil},
	} {
		t.Run(tc.tensor, func(t *testing.T) {
			var ad []byte
			if tc.want == nil {
				ad, err = testutil.LoRABytes(base, testutil.LoRASpec{Tensors: []string{tc.tensor}, Rank: 4, Alpha: 8, Seed: 1})
			} else {
				// The adapter of the separate file, whose attn_q the fused
				// file lacks.
				sep := spec
				sep.FuseQKV = false
				var sb []byte
				if sb, err = testutil.ModelBytes(sep); err == nil {
					ad, err = testutil.LoRABytes(sb, testutil.LoRASpec{Tensors: []string{tc.tensor}, Rank: 4, Alpha: 8, Seed: 1})
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			m, err := New(f, base)
			if err != nil {
				t.Fatal(err)
			}
			af, _ := testutil.Parse(t, ad, nil)
			h, err := ReadAdapterHeader(af)
			if err != nil {
				t.Fatal(err)
			}
			sc := &ops.LoRAScale{}
			sc.Store(1)
			err = m.AttachAdapter(f, af, h, bytes.NewReader(ad), sc)
			switch {
			case tc.want == nil && err != nil:
				t.Fatal(err)
			case tc.want != nil && (!errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.tensor) || !strings.Contains(err.Error(), "attn_qkv")):
				t.Fatalf("error %v, want one wrapping %v naming %s and the fused attn_qkv", err, tc.want, tc.tensor)
			}
		})
	}
}
