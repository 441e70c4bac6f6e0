// Package cpu says which instruction-set levels the assembly kernels of
// packages quant and kv may use in this process. It reads the CPU's
// features and the LLM_CPU environment variable once, at start-up.
//
// LLM_CPU caps the level: with LLM_CPU=avx2 on an AVX-512 machine every
// kernel registry (quant.Kernels, quant.Tiles, kv's attention kernels)
// lists and picks only kernels of level avx2 and below, so the end-to-end
// tests can run the AVX2 path there:
//
//	LLM_CPU=avx2 go test -run Golden -short .
//
// On arm64 the levels are neon, dotprod and i8mm (LLM_CPU=dotprod on a
// Graviton3 runs the SDOT kernels, not the SMMLA ones); a level of the
// other architecture means generic. LLM_CPU=generic runs the pure-Go
// kernels only. Unset (or empty), every
// level the CPU supports is used. The names are those of Level.String.
package cpu
