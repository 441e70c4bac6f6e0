//go:build amd64 && !purego

package quant

//go:noescape
func dotF16AVX2Asm(w, x *byte, n int) float32

//go:noescape
func dotF16AVX512Asm(w, x *byte, n int) float32

// dotF16AVX2 is dotF16 with F16C conversion and 256-bit FMA.
func dotF16AVX2(n int, w, x []byte) float32 {
	if n <= 0 {
		return 0
	}
	w = w[:2*n]
	x = x[:2*n]
	return dotF16AVX2Asm(&w[0], &x[0], n)
}

// dotF16AVX512 is dotF16 with 512-bit conversion and FMA and a masked tail.
func dotF16AVX512(n int, w, x []byte) float32 {
	if n <= 0 {
		return 0
	}
	w = w[:2*n]
	x = x[:2*n]
	return dotF16AVX512Asm(&w[0], &x[0], n)
}
