//go:build amd64 && !purego

package ssm

import (
	"testing"

	"github.com/lowmem/llm/internal/cpu"
)

// levels are the kernels this CPU can run, for the tests.
func levels() []cpu.Level {
	var ls []cpu.Level
	for _, l := range []cpu.Level{cpu.AVX2, cpu.AVX512} {
		if cpu.Has(l) {
			ls = append(ls, l)
		}
	}
	return ls
}

// The streaming kernels take s aligned to their vector in rows of whole
// blocks of 16, and nothing else.
func TestStreams(t *testing.T) {
	s := alignedFloats(256)
	for _, tc := range []struct {
		s     []float32
		n     int
		align int
		want  bool
	}{
		{s, 128, 64, true},
		{s, 16, 32, true},
		{s, 17, 64, false},
		{s[8:], 16, 64, false},
		{s[8:], 16, 32, true},
		{s[1:], 16, 32, false},
	} {
		if got := streams(tc.s, tc.n, tc.align); got != tc.want {
			t.Errorf("streams(n %d, align %d) = %v", tc.n, tc.align, got)
		}
	}
}
