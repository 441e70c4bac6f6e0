//go:build !(amd64 || arm64) || purego

package ssm

import "github.com/lowmem/llm/internal/cpu"

// levels are the kernels this CPU can run, for the tests: none.
func levels() []cpu.Level { return nil }
