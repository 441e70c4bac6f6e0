package cpu_test

import (
	"fmt"

	"github.com/lowmem/llm/internal/cpu"
)

// A kernel registry lists a variant only when its level is allowed.
func ExampleHas() {
	type variant struct {
		name  string
		level cpu.Level
	}
	var usable []string
	for _, v := range []variant{{"generic", cpu.Generic}, {"avx2", cpu.AVX2}, {"avx512vnni", cpu.AVX512VNNI}} {
		if cpu.Has(v.level) {
			usable = append(usable, v.name)
		}
	}
	fmt.Println(usable[0]) // the pure-Go variant is always there
	// Output: generic
}
