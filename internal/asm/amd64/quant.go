package main

// quantFiles lists the files of package quant: per weight type its dot
// products (and tile kernels), then the activation quantizers.
func quantFiles() []outFile {
	return []outFile{
		{"f32", func() { floatKernels(elemF32) }},
		{"f16", func() { floatKernels(elemF16); quantF16() }},
		{"q8_0", func() {
			kernels(blockQ8_0, dotBlock, tileBlock, dots2, tiles3)
			blockGemm(blockQ8_0)
			x8BlockKernels(q80X8, blockQ8_0)
			x8Multis(q80X8Multi)
			x8Kernels(q80X8AVX2, q80X8AVX2Multi, false)
			gemmBlockX8AVX2(blockQ8_0)
		}},
		{"q4_0", func() {
			kernels(blockQ4_0, dotBlock, tileBlock, dots3, []tileAt{{avx2, 1}, {avx2, 2}, {vnni, 1}, {vnni, 4}, {vbmi, 1}})
			blockGemm(blockQ4_0)
			x8BlockKernels(q40X8, blockQ4_0)
			x8Multis(q40X8Multi)
			x8Kernels(q40X8AVX2, q40X8AVX2Multi, false)
			gemmBlockX8AVX2(blockQ4_0)
		}},
		{"q4_1", func() { kernels(blockQ4_1, dotBlock, tileBlock, dots2, tiles3) }},
		{"q5_0", func() {
			kernels(blockQ5_0, dotBlock, tileBlock, dots2, tiles3)
			x8Kernels(q50X8, q50X8Multi, true)
			x8Kernels(q50X8AVX2, q50X8AVX2Multi, false)
		}},
		{"q5_1", func() { kernels(blockQ5_1, dotBlock, tileBlock, dots2, tiles3) }},
		{"q4_k", func() {
			kernels(superQ4_K, dotSuper, tileSuper, dots2, tiles3)
			gemmSuper(superQ4_K)
			gemmQ4_KAVX2()
			x8Decoders(q4KX8)
			gemmX8K(superQ4_K)
			x8Multis(q4KX8Multi)
			x8Decoders(q4KX8AVX2)
			q4KX8AVX2Multi.emit(2)
		}},
		{"q5_k", func() {
			kernels(superQ5_K, dotSuper, tileSuper, dots2, tiles3)
			gemmSuper(superQ5_K)
			x8Decoders(q5KX8)
			gemmX8K(superQ5_K)
			q5KX8Multi.emit(2)
			x8Decoders(q5KX8AVX2)
		}},
		{"q6_k", func() {
			kernels(superQ6_K, dotSuper, tileSuper, dots2, tiles3)
			gemmSuper(superQ6_K)
			x8Decoders(q6KX8)
			gemmX8Q6(superQ6_K)
			q6KX8Multi.emit(2)
			x8Decoders(q6KX8AVX2)
		}},
		{"iq4_nl", func() {
			kernels(blockIQ4NL, dotBlock, tileBlock, dots3, []tileAt{{avx2, 1}, {vnni, 1}, {vnni, 4}, {vbmi, 1}})
			x8Kernels(iq4NLX8, iq4NLX8Multi, true)
		}},
		{"mxfp4", func() {
			kernels(blockMXFP4, dotBlock, tileBlock, dots3, []tileAt{{avx2, 1}, {vnni, 1}, {vnni, 4}, {vbmi, 1}})
			x8Kernels(mxfp4X8, mxfp4X8Multi, true)
		}},
		// The VBMI kernels of the low-bit types follow their family; the
		// VNNI 4×4 tile is as fast as a VBMI one for Q2_K and Q3_K.
		{"q2_k", func() { lowFamily(lowQ2_K, tileAt{vbmi, 1}); x8Kernels(q2KX8, q2KX8Multi, false) }},
		{"q3_k", func() { lowFamily(lowQ3_K, tileAt{vbmi, 1}); x8Kernels(q3KX8, q3KX8Multi, false) }},
		{"iq4_xs", func() {
			lowFamily(lowIQ4XS, tileAt{vbmi, 1}, tileAt{vbmi, 4})
			x8Kernels(iq4XSX8, iq4XSX8Multi, true)
		}},
		{"iq3_s", func() {
			lowFamily(lowIQ3S)
			x8Kernels(iq3SX8, iq3SX8Multi, true)
		}},
		{"lattice_x8", func() {
			for _, f := range []latFamily{x8IQ2, x8IQ3XXS, x8IQ1} {
				x8Kernels(f.x8(), f.x8Multi(), true)
				x8Decoders(f.x8AVX2())
			}
		}},
		{"iq2_xxs", func() { dotIQ2(iq2XXS, avx2); dotIQ2(iq2XXS, vnni) }},
		{"iq2_xs", func() { dotIQ2(iq2XS, avx2); dotIQ2(iq2XS, vnni) }},
		{"iq2_s", func() { dotIQ2(iq2S, avx2); dotIQ2(iq2S, vnni) }},
		{"iq3_xxs", func() { dotLattice(latIQ3XXS, avx2); dotLattice(latIQ3XXS, vnni); dotLattice(latIQ3XXS, vbmi) }},
		{"iq1_s", func() { dotLattice(latIQ1S, avx2); dotLattice(latIQ1S, vnni) }},
		{"iq1_m", func() { dotLattice(latIQ1M, avx2); dotLattice(latIQ1M, vnni) }},
		{"tq", func() {
			for _, w := range dots2 {
				dotTQ2_0(w)
				dotTQ1_0(w)
			}
			gemmTQ2_0()
			gemmTQ1_0()
			gemmTQ2_0AVX2()
			gemmTQ1_0AVX2()
		}},
		{"quantize", func() { quantKernel(actQ8_0); quantKernel(actQ8_K) }},
	}
}

// tileAt is a tile kernel's width and columns.
type tileAt struct {
	w    width
	cols int
}

// The usual sets: dot products with AVX2 and VNNI (and VBMI); the 4×1
// tile with AVX2 and VNNI and the 4×4 tile with VNNI.
var (
	dots2  = []width{avx2, vnni}
	dots3  = []width{avx2, vnni, vbmi}
	tiles3 = []tileAt{{avx2, 1}, {vnni, 1}, {vnni, 4}}
)

// kernels emits weight type t's dot products at the widths dots, then its
// tile kernels.
func kernels[T any](t T, dot func(T, width), tile func(T, width, int), dots []width, tiles []tileAt) {
	for _, w := range dots {
		dot(t, w)
	}
	for _, tl := range tiles {
		tile(t, tl.w, tl.cols)
	}
}

// blockGemm emits a block type's row kernels (one per prefetch variant)
// and its GEMM kernels.
func blockGemm(t *blockType) {
	for _, pf := range rowPrefetches {
		rowBlock(t, pf)
	}
	gemmBlock(t)
	gemmBlockAVX2(t)
}

// lowFamily emits a low-bit super-block type's kernels: the dot product
// and the 4×1 tile with AVX2 and VNNI, the 4×4 tile with VNNI; then, with
// vbmi tiles, the VBMI dot product and those tiles.
func lowFamily(t *lowType, vbmiTiles ...tileAt) {
	kernels(t, dotLow, tileLow, dots2, tiles3)
	if len(vbmiTiles) > 0 {
		kernels(t, dotLow, tileLow, []width{vbmi}, vbmiTiles)
	}
}

// floatKernels emits a float element type's dot products and tiles.
func floatKernels(e floatElem) {
	dotFloat(e, avx2)
	dotFloat(e, avx512)
	tileFloat(e, avx2, 2)
	tileFloat(e, avx2, 1)
	tileFloat(e, avx512, 4)
	if e.size == 2 {
		// F16's 4×6 tile: fewer widened loads a FMA (F32 loads without
		// widening, and its 4×6 did not beat its 4×4).
		tileFloat(e, avx512, 6)
	}
	tileFloat(e, avx512, 1)
}
