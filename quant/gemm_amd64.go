//go:build amd64 && !purego

package quant

import "github.com/lowmem/llm/internal/cpu"

// gemmAsm is the signature of the assembly GEMM kernels: four rows
// against one packed panel, cols ≤ GemmCols columns stored, over nb ≥ 1
// blocks.
type gemmAsm func(w *byte, wStride int, p *byte, nb int, out *float32, outStride int, cols int)

// gemmVariants lists the assembly GEMM kernels, slowest first per type.
var gemmVariants = []struct {
	level cpu.Level
	name  string
	t     Type
	wb    int
	k     gemmAsm
}{
	{cpu.AVX512VNNI, "avx512vnni", Q4_0, q4_0Bytes, gemmQ4_0VNNI},
	{cpu.AVX512VNNI, "avx512vnni", Q8_0, q8_0Bytes, gemmQ8_0VNNI},
	{cpu.AVX512VNNI, "avx512vnni", Q4_K, q4_KBytes, gemmQ4_KVNNI},
	{cpu.AVX512VNNI, "avx512vnni", Q6_K, q6_KBytes, gemmQ6_KVNNI},
}

func archGemms(t Type) []GemmKernel {
	var ks []GemmKernel
	for _, v := range gemmVariants {
		if v.t != t || !cpu.Has(v.level) {
			continue
		}
		g := gemmGeneric[t]
		g.Name = v.name
		g.Mul = asmGemmMul(v.k, v.t.BlockElems(), v.wb, g.PanelBytes, gemmGeneric[t].Mul)
		ks = append(ks, g)
	}
	return ks
}

// asmGemmMul runs the four-row kernel k over the rows, the pure-Go
// kernel over the rows past the last four.
func asmGemmMul(k gemmAsm, be, wb int, panelBytes func(int) int, rest func(n int, w []byte, wStride, rows int, p []byte, cols int, out []float32, outStride int)) func(n int, w []byte, wStride, rows int, p []byte, cols int, out []float32, outStride int) {
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
		full := rows - rows%4
		for r := 0; r < full; r += 4 {
			k(&w[r*wStride], wStride, &p[0], nb, &out[r], outStride, cols)
		}
		if full < rows {
			rest(n, w[full*wStride:], wStride, rows-full, p, cols, out[full:], outStride)
		}
	}
}
