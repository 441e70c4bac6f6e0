package model

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/lowmem/llm/quant"
)

// TestRepackableTensor: every type with an X8 layout and kernels on this
// CPU is repackable in a block's matrices and the output (a Q4_K_M
// file's Q5_K, Q6_K and Q8_0 tensors as much as its Q4_K ones), and
// never with rows that are not whole groups of 8, row lengths the kernels
// do not take, or other tensors.
func TestRepackableTensor(t *testing.T) {
	c := &Config{FFN: 512}
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q4_1, quant.F16} {
		_, x8 := quant.X8(typ, 512)
		x8 = x8 && runtime.GOOS == "linux"
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
			{"blk.0.attn_q.weight", []int64{512 + 32, 512}, false},
			{"blk.0.attn_q.weight", []int64{1 << 16, 512}, false},
			{"token_embd.weight", []int64{512, 1000}, false},
			{"blk.0.ffn_gate_exps.weight", []int64{512, 512}, false},
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
