package model

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/tensor"
)

// TestRepackableTensor: every type with an X8 layout and kernels on this
// CPU is repackable in a block's matrices, its 3-D expert tensors and the
// output (a Q4_K_M
// file's Q5_K, Q6_K and Q8_0 tensors as much as its Q4_K ones), and
// never with rows that are not whole groups of 8, row lengths the kernels
// do not take (Q4_0's, Q8_0's, MXFP4's and Q5_0's any whole number of blocks,
// gpt-oss's 2880 among them; the k-quants' whole super-blocks), or other
// tensors.
func TestRepackableTensor(t *testing.T) {
	c := &Config{FFN: 512}
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.MXFP4, quant.Q5_0, quant.Q4_1, quant.F16} {
		_, x8 := quant.X8(typ, 512)
		x8 = x8 && runtime.GOOS == "linux"
		x8Blocks := x8 && typ.BlockElems() == quant.QK
		for _, tc := range []struct {
			name string
			dims []int64
			want bool
		}{
			{"blk.0.attn_q.weight", []int64{512, 512}, x8},
			{"blk.3.ffn_down.weight", []int64{512, 256}, x8},
			{"output.weight", []int64{512, 1000}, x8},
			{"blk.0.attn_k.weight", []int64{512, 12}, false},
			{"blk.0.attn_k.weight", []int64{512, 36}, false},
			{"blk.0.attn_q.weight", []int64{512 + 256, 512}, x8},
			{"blk.0.attn_q.weight", []int64{512 + 32, 512}, x8Blocks},
			{"blk.0.attn_q.weight", []int64{2880, 4096}, x8Blocks},
			{"output.weight", []int64{2880, 201088}, x8Blocks},
			{"blk.0.attn_q.weight", []int64{512 + 16, 512}, false},
			{"blk.0.attn_q.weight", []int64{1 << 16, 512}, false},
			{"token_embd.weight", []int64{512, 1000}, false},
			{"blk.0.ffn_gate_exps.weight", []int64{512, 512}, false},
			{"blk.0.ffn_gate_exps.weight", []int64{512, 64, 8}, x8},
			{"blk.2.ffn_down_exps.weight", []int64{512, 256, 4}, x8},
			{"blk.0.ffn_up_exps.weight", []int64{512, 36, 8}, false},
			{"blk.0.ffn_up_exps.weight", []int64{512, 64, 0}, false},
			{"blk.0.attn_q.weight", []int64{512, 512, 2}, false},
			{"output.weight", []int64{512, 1000, 2}, false},
			{"blk.0.ffn_gate_inp.weight", []int64{512, 8}, false},
			{"blk.0.attn_q.weight", []int64{512}, false},
		} {
			t.Run(fmt.Sprintf("%v/%s/%v", typ, tc.name, tc.dims), func(t *testing.T) {
				if got := RepackableTensor(c, tc.name, typ, tc.dims); got != tc.want {
					t.Errorf("RepackableTensor: %v, want %v", got, tc.want)
				}
			})
		}
	}
}

// TestRepackPieces: Repack in small pieces, shared by a pool's threads,
// writes what one RepackX8 call writes and tells done of every byte of
// the tensor exactly once, whatever order the pieces finish in.
func TestRepackPieces(t *testing.T) {
	const rows, cols = 8 * 37, 512
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.MXFP4, quant.Q5_0} {
		if _, ok := quant.X8(typ, cols); !ok {
			continue
		}
		for _, threads := range []int{0, 1, 2, 3} {
			t.Run(fmt.Sprintf("%v/threads%d", typ, threads), func(t *testing.T) {
				w := repackMatrix(t, typ, rows, cols)
				want := make([]byte, RepackedBytes(w))
				if err := quant.RepackX8(typ, want, w.T.Data, rows, cols); err != nil {
					t.Fatal(err)
				}
				var pool *ops.Pool
				if threads > 0 {
					pool = ops.NewPool(threads)
					defer pool.Close()
				}
				var mu sync.Mutex
				seen := make([]int, len(w.T.Data))
				got := make([]byte, len(want))
				chunk := 3 * 8 * w.T.RowBytes() // three groups a piece: 13 pieces
				if err := (RepackUnit{Matrix: w}).Repack(got, chunk, pool, func(off, n int64) {
					mu.Lock()
					defer mu.Unlock()
					for i := off; i < off+n; i++ {
						seen[i]++
					}
				}); err != nil {
					t.Fatal(err)
				}
				if i := slices.IndexFunc(seen, func(c int) bool { return c != 1 }); i >= 0 {
					t.Fatalf("byte %d of the tensor reported done %d times, want once", i, seen[i])
				}
				if i := testutil.FirstDiff(got, want); i >= 0 {
					t.Fatalf("byte %d of the X8 layout: %d, one RepackX8 call writes %d", i, got[i], want[i])
				}
				if !w.X8() {
					t.Error("the matrix does not use the X8 layout after Repack")
				}
			})
		}
	}
}

// repackMatrix is a rows × cols matrix of type typ quantized from
// normal random values.
func repackMatrix(t *testing.T, typ quant.Type, rows, cols int) *ops.Matrix {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(typ), 7))
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	tt, err := tensor.New("blk.0.ffn_up.weight", typ, []int{cols, rows})
	if err == nil {
		err = quant.QuantizeRow(typ, tt.Data, x) // whole rows of whole blocks: row by row alike
	}
	var m *ops.Matrix
	if err == nil {
		m, err = ops.NewMatrix(tt)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}
