//go:build amd64 && !purego

package quant

//go:noescape
func dotF32AVX2Asm(w, x *byte, n int) float32

//go:noescape
func dotF32AVX512Asm(w, x *byte, n int) float32

// dotF32AVX2 is dotF32 with 256-bit FMA.
func dotF32AVX2(n int, w, x []byte) float32 {
	if n <= 0 {
		return 0
	}
	w = w[:4*n]
	x = x[:4*n]
	return dotF32AVX2Asm(&w[0], &x[0], n)
}

// dotF32AVX512 is dotF32 with 512-bit FMA and a masked tail.
func dotF32AVX512(n int, w, x []byte) float32 {
	if n <= 0 {
		return 0
	}
	w = w[:4*n]
	x = x[:4*n]
	return dotF32AVX512Asm(&w[0], &x[0], n)
}
