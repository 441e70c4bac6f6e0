//go:build amd64 && !purego

package quant

import "github.com/lowmem/llm/internal/cpu"

// gemmAsm is the signature of the assembly GEMM kernels: h rows (4 with
// AVX-512, 1 with AVX2) against one packed panel, cols ≤ GemmCols columns
// stored, over nb ≥ 1 blocks. A kernel computes the narrowest of its loop
// widths (32, 16, 8 and, with AVX-512, 4 columns) that holds cols.
type gemmAsm func(w *byte, wStride int, p *byte, nb int, out *float32, outStride int, cols int)

// gemmVariants lists the assembly GEMM kernels, slowest first per type.
// pack, when set, replaces the generic kernel's packer (AVX2's Q8_0 takes
// panels without the bias term).
var gemmVariants = []struct {
	level cpu.Level
	name  string
	t     Type
	wb, h int
	k     gemmAsm
	pack  func(n int, x []byte, xStride, cols int, p []byte)
	rest  func(n int, w []byte, wStride, rows int, p []byte, cols int, out []float32, outStride int)
}{
	{cpu.AVX2, "avx2", Q4_0, q4_0Bytes, 1, gemmQ4_0AVX2, nil, nil},
	{cpu.AVX2, "avx2", Q8_0, q8_0Bytes, 1, gemmQ8_0AVX2, packQ8_0For(0), mulPanelQ8_0Signed},
	{cpu.AVX2, "avx2", Q4_K, q4_KBytes, 1, gemmQ4_KAVX2, nil, nil},
	{cpu.AVX2, "avx2", TQ2_0, tq2_0Bytes, 1, gemmTQ2_0AVX2, nil, nil},
	{cpu.AVX2, "avx2", TQ1_0, tq1_0Bytes, 1, gemmTQ1_0AVX2, nil, nil},
	{cpu.AVX512VNNI, "avx512vnni", Q4_0, q4_0Bytes, 4, gemmQ4_0VNNI, nil, nil},
	{cpu.AVX512VNNI, "avx512vnni", Q8_0, q8_0Bytes, 4, gemmQ8_0VNNI, nil, nil},
	{cpu.AVX512VNNI, "avx512vnni", Q4_K, q4_KBytes, 4, gemmQ4_KVNNI, nil, nil},
	{cpu.AVX512VNNI, "avx512vnni", Q6_K, q6_KBytes, 4, gemmQ6_KVNNI, nil, nil},
	{cpu.AVX512VNNI, "avx512vnni", Q5_K, q5_KBytes, 4, gemmQ5_KVNNI, nil, nil},
	{cpu.AVX512VNNI, "avx512vnni", TQ2_0, tq2_0Bytes, 4, gemmTQ2_0VNNI, nil, nil},
	{cpu.AVX512VNNI, "avx512vnni", TQ1_0, tq1_0Bytes, 4, gemmTQ1_0VNNI, nil, nil},
}

func archGemms(t Type) []GemmKernel {
	var ks []GemmKernel
	for _, v := range gemmVariants {
		if v.t != t || !cpu.Has(v.level) {
			continue
		}
		g := gemmGeneric[t]
		g.Name = v.name
		rest := g.Mul
		if v.pack != nil {
			g.Pack, rest = v.pack, v.rest
		}
		g.Mul = asmGemmMul(v.k, v.h, v.t.BlockElems(), v.wb, g.PanelBytes, rest)
		ks = append(ks, g)
	}
	return ks
}

// asmGemmMul runs the h-row kernel k over the rows, the pure-Go kernel
// over the rows past the last whole h.
func asmGemmMul(k gemmAsm, h, be, wb int, panelBytes func(int) int, rest func(n int, w []byte, wStride, rows int, p []byte, cols int, out []float32, outStride int)) func(n int, w []byte, wStride, rows int, p []byte, cols int, out []float32, outStride int) {
	return func(n int, w []byte, wStride, rows int, p []byte, cols int, out []float32, outStride int) {
		nb := n / be
		cols = min(cols, GemmCols)
		if rows <= 0 || cols <= 0 || nb <= 0 {
			return
		}
		if wStride < nb*wb || (cols > 1 && outStride < rows) {
			rest(n, w, wStride, rows, p, cols, out, outStride)
			return
		}
		// One bounds check each, so the assembly stays inside the slices.
		w = w[:(rows-1)*wStride+nb*wb]
		p = p[:panelBytes(n)]
		out = out[:(cols-1)*outStride+rows]
		full := rows - rows%h
		for r := 0; r < full; r += h {
			k(&w[r*wStride], wStride, &p[0], nb, &out[r], outStride, cols)
		}
		if full < rows {
			rest(n, w[full*wStride:], wStride, rows-full, p, cols, out[full:], outStride)
		}
	}
}
