//go:build amd64 && !purego

package quant

import (
	"bytes"
	"testing"

	"github.com/lowmem/llm/internal/cpu"
)

// TestQuantizeAVX512MatchesGo checks the AVX-512 encoders of the activation
// types byte for byte against the Go ones.
func TestQuantizeAVX512MatchesGo(t *testing.T) {
	if !cpu.Has(cpu.AVX512) {
		t.Skip("no AVX-512 on this CPU")
	}
	for _, tc := range []struct {
		typ  Type
		fast func(dst []byte, src []float32)
		ref  func(dst []byte, src []float32)
	}{
		{Q8_0, quantizeQ8_0, quantQ8_0},
		{Q8_K, quantizeQ8_K, quantQ8_K},
		{F16, quantizeF16, quantF16},
	} {
		ns := []int{256, 512, 4096}
		if tc.typ == F16 {
			ns = append(ns, 1, 7, 8, 31, 33, 100) // the 32-, 8- and 1-float steps
		}
		for _, n := range ns {
			for i, row := range quantInputs(n) {
				size, _ := tc.typ.RowBytes(int64(n))
				want := make([]byte, size)
				got := make([]byte, size)
				for j := range got {
					got[j] = 0xA5
				}
				tc.ref(want, row)
				tc.fast(got, row)
				if !bytes.Equal(got, want) {
					for j := range got {
						if got[j] != want[j] {
							t.Errorf("%v n=%d row %d: first difference at byte %d: got %#x, want %#x", tc.typ, n, i, j, got[j], want[j])
							break
						}
					}
				}
			}
		}
	}
}
