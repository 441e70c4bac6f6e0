package kv

import "math"

// The Walsh–Hadamard rotation of an Int4 cache, as llama.cpp applies it to
// quantized caches by default since its PR #21038 (src/llama-kv-cache.cpp
// and src/llama-graph.cpp; LLAMA_ATTN_ROT_DISABLE turns it off there). The
// matrix is Sylvester's H(2n) = [[H(n), H(n)], [H(n), -H(n)]] scaled by
// 1/√n: orthonormal and symmetric, hence its own inverse. llama.cpp
// multiplies each consecutive block of a head by it:
//
//   - keys, and with them the queries, by blocks of the largest power of two
//     that divides the key head size (the whole head when that is a power
//     of two), so q·k is unchanged in exact arithmetic;
//   - values by blocks of 64, and the attention output by the same blocks
//     again, which undoes it, since the output is a weighted sum of values;
//   - each only when its head size is a multiple of 64.
//
// Rotating spreads a large channel over the whole block before the block's
// one scale is chosen, so the other elements keep their precision.

// rotationOrders returns the Walsh–Hadamard orders llama.cpp rotates keys
// and values of a quantized cache by, for key and value head sizes dk and
// dv; 0 means no rotation.
func rotationOrders(dk, dv int) (rk, rv int) {
	if dk%64 == 0 {
		rk = 64
		for dk%(2*rk) == 0 {
			rk *= 2
		}
	}
	if dv%64 == 0 {
		rv = 64
	}
	return rk, rv
}

// hadamard multiplies each consecutive block of n elements of x by the
// orthonormal Walsh–Hadamard matrix of order n, in place: log₂n passes of
// butterflies (a, b) → (a+b, a−b) and one scaling by 1/√n, O(n log n)
// additions instead of a matrix product's n². n is a power of two and
// len(x) a multiple of it; n = 0 leaves x as it is. It allocates nothing.
func hadamard(x []float32, n int) {
	if n <= 1 {
		return
	}
	s := float32(1 / math.Sqrt(float64(n)))
	for b := 0; b+n <= len(x); b += n {
		blk := x[b : b+n : b+n]
		for h := 1; h < n; h *= 2 {
			for i := 0; i < n; i += 2 * h {
				lo := blk[i : i+h : i+h]
				hi := blk[i+h : i+2*h : i+2*h]
				for j, a := range lo {
					c := hi[j]
					lo[j], hi[j] = a+c, a-c
				}
			}
		}
		for i := range blk {
			blk[i] *= s
		}
	}
}
