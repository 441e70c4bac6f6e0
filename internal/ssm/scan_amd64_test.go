//go:build amd64 && !purego

package ssm

import "github.com/lowmem/llm/internal/cpu"

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
