//go:build purego

package llm_test

// puregoBuild: the assembly kernels are left out, so every product runs
// the pure-Go twins, several times slower. The long golden prompts (P2)
// then run only in the default build: the short ones still take every
// weight type, and every KV type, through the pure-Go kernels end to end.
const puregoBuild = true
