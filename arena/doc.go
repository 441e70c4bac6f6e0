// Package arena is a bump allocator for per-step scratch memory.
//
// A decode step needs many short-lived buffers (activations, quantized
// activations, attention scores). Allocating them from the Go heap every
// token costs garbage-collector time and makes memory use hard to predict.
// An Arena hands them out from one preallocated chunk instead, and Reset
// makes the whole chunk available again for the next step.
//
// Every slice starts on a 64-byte boundary, so SIMD loads are aligned and
// buffers written by different goroutines never share a cache line. Sizes
// are accounted in bytes, each request rounded up to a multiple of 64.
//
// A request that does not fit never fails: it is served from a fresh
// overflow block, counted by Overflows and included in Used and HighWater.
// The next Reset replaces the chunk with one of HighWater bytes, so after a
// single warm-up step the same sequence of requests allocates nothing.
//
// Typical use in a decode loop:
//
//	a := arena.New(plannedBytes)
//	for step := 0; step < n; step++ {
//		a.Reset()
//		x := a.Float32s(dim)    // contents are garbage: overwrite fully
//		acc := a.Zeroed32(dim)  // contents are zero
//		q := a.Bytes(rowBytes)  // e.g. Q8_K activations
//		...
//	}
//
// An Arena is not safe for concurrent use. Carve per-worker buffers before
// fanning work out to goroutines; the buffers themselves may then be used
// concurrently since they never alias.
package arena
