package quant

import (
	"fmt"
	"math"
	"testing"
)

// TestF32Rows checks DotF32 and TileF32 on both of their paths, the F32
// kernels on the floats' memory (little-endian) and the Go loop
// (big-endian), against float64 sums, and the Go loop against the generic
// F32 kernel to the bit: on a big-endian machine the products are the
// ones the generic kernel gives on a little-endian one. Under qemu-s390x
// the little-endian case is the one that cannot pass by reading the
// memory.
func TestF32Rows(t *testing.T) {
	defer func(le bool) { littleEndian = le }(littleEndian)
	r := newRand(7)
	floats := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	native := littleEndian
	for _, le := range []bool{false, true} {
		if le && !native {
			continue // the kernels would read byte-swapped floats
		}
		littleEndian = le
		tile, maxRows, maxCols := TileF32()
		for _, n := range []int{1, 3, 4, 17, 64, 130} {
			t.Run(fmt.Sprintf("le%v/n%d", le, n), func(t *testing.T) {
				rows, cols := min(maxRows, 5), min(maxCols, 3)
				wStride, xStride, outStride := n+2, n+1, rows+1
				w, x := floats((rows-1)*wStride+n), floats((cols-1)*xStride+n)
				out := make([]float32, (cols-1)*outStride+rows)
				tile(n, w, wStride, rows, x, xStride, cols, out, outStride)
				for c := range cols {
					for ri := range rows {
						a, b := w[ri*wStride:][:n], x[c*xStride:][:n]
						var want float64
						for i := range a {
							want += float64(a[i]) * float64(b[i])
						}
						dot := DotF32(a, b)
						for _, got := range []float32{dot, out[c*outStride+ri]} {
							if math.Abs(float64(got)-want) > 1e-4*math.Sqrt(float64(n))*4 {
								t.Errorf("row %d col %d: %v, want %v", ri, c, got, want)
							}
						}
						if !le && native {
							if g := dotF32(n, f32Bytes(a), f32Bytes(b)); dot != g {
								t.Errorf("row %d col %d: Go loop %v, generic kernel %v", ri, c, dot, g)
							}
						}
					}
				}
			})
		}
	}
	if DotF32(nil, nil) != 0 {
		t.Error("DotF32 of empty rows is not 0")
	}
}
