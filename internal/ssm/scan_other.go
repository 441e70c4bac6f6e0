//go:build !(amd64 || arm64) || purego

package ssm

import "github.com/lowmem/llm/internal/cpu"

// scanHeadAt is the twin at every level, streaming or not: no assembly on
// this platform or with -tags purego.
func scanHeadAt(_ cpu.Level, _ bool, s, in, B, C, x, y []float32, dA, dt, d float32) {
	scanHeadGo(s, in, B, C, x, y, dA, dt, d)
}

// selectiveAt is SelectiveScan's twin at every level.
func selectiveAt(_ cpu.Level, s, in, A, B, C, x, dt, D, y []float32) {
	selectiveGo(s, in, A, B, C, x, dt, D, y)
}

// softplusAt is Softplus's twin at every level.
func softplusAt(_ cpu.Level, dst, x, bias []float32) { softplusGo(dst, x, bias) }

// wkv6At is WKV6Head's twin at every level.
func wkv6At(_ cpu.Level, st, in, r, w, k, v, u, y []float32) { wkv6HeadGo(st, in, r, w, k, v, u, y) }

// glaAt is GLAHead's twin at every level.
func glaAt(_ cpu.Level, st, in, r, w, k, v []float32, scale float32, y []float32) {
	glaHeadGo(st, in, r, w, k, v, scale, y)
}
