//go:build !kvnorotate

package kv

// rotateInt4 is whether an Int4 cache rotates its keys and values (see
// hadamard.go). Building with -tags kvnorotate turns the rotation off, to
// measure what it buys (README, KV cache); the default is llama.cpp's.
const rotateInt4 = true
