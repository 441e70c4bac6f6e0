package quant

import (
	"encoding/binary"
	"unsafe"
)

// Float32 rows held as []float32 rather than encoded bytes (a pass's own
// projections, the rows kv attends over) go to the F32 kernels as their
// memory, with no copy. The kernels read F32 rows as little-endian, so only a
// little-endian machine may hand them that memory; a big-endian one (s390x)
// would have them read every float byte-swapped, and computes in Go on the
// floats instead.

// littleEndian is whether float32 slices lie in memory as F32 rows do. A
// variable, not a build tag, so that tests run the big-endian path anywhere.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// f32Dot and f32Tile are the F32 kernels DotF32 and TileF32 use. Dot
// fails only for a type without kernels, which F32 is not.
var (
	f32Dot, _                 = Dot(F32)
	f32Tile, f32Rows, f32Cols = Tile(F32)
)

// DotF32 returns the float32 dot product of a and b[:len(a)] (b must be at
// least as long), summed like Dot(F32)'s kernel, which it runs on the
// floats' memory where the machine is little-endian. It never allocates.
func DotF32(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	b = b[:len(a)]
	if !littleEndian {
		return dotFloats(a, b)
	}
	return f32Dot(len(a), f32Bytes(a), f32Bytes(b))
}

// TileF32Func is a TileFunc over float32 rows: for r < rows and c < cols
// it sets out[c*outStride+r] to the dot product of the n floats at
// w[r*wStride:] and at x[c*xStride:] (strides in floats).
type TileF32Func func(n int, w []float32, wStride, rows int, x []float32, xStride, cols int, out []float32, outStride int)

// TileF32 returns the tile product over float32 rows, Tile(F32)'s kernel
// on the floats' memory where the machine is little-endian, and the
// largest tile it takes. It never allocates.
func TileF32() (f TileF32Func, maxRows, maxCols int) {
	return tileF32, f32Rows, f32Cols
}

func tileF32(n int, w []float32, wStride, rows int, x []float32, xStride, cols int, out []float32, outStride int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	if !littleEndian {
		for c := range cols {
			for r := range rows {
				out[c*outStride+r] = DotF32(w[r*wStride:][:n], x[c*xStride:][:n])
			}
		}
		return
	}
	wb := w[:(rows-1)*wStride+n]
	xb := x[:(cols-1)*xStride+n]
	f32Tile(n, f32Bytes(wb), 4*wStride, rows, f32Bytes(xb), 4*xStride, cols, out, outStride)
}

// f32Bytes is x's memory as bytes: its F32 row on a little-endian machine.
func f32Bytes(x []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 4*len(x))
}

// dotFloats is dotF32 on floats: the same four accumulators, each element
// past the last whole four added to the first.
func dotFloats(a, b []float32) float32 {
	var s [4]float32
	whole := len(a) &^ 3
	for i, v := range a[:whole] {
		s[i&3] += v * b[i]
	}
	for i, v := range a[whole:] {
		s[0] += v * b[whole+i]
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}
