//go:build !arm64 || purego

package kv

import "github.com/lowmem/llm/internal/cpu"

// No Int4 assembly on this platform or with -tags purego: the twins.

func scoresQ4At(_ cpu.Level, dst []float32, k []byte, q []float32) { scoresQ4Rows(dst, k, q) }

func valuesQ4At(_ cpu.Level, o, w []float32, v []byte) { valuesQ4Rows(o, w, v) }
