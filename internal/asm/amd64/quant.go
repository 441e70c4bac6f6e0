package main

// quantFiles lists the files of package quant: per weight type its dot
// products (and tile kernels), then the activation quantizers.
func quantFiles() []outFile {
	return []outFile{
		{"f32", func() { dotFloat(elemF32, avx2); dotFloat(elemF32, avx512) }},
		{"f16", func() { dotFloat(elemF16, avx2); dotFloat(elemF16, avx512) }},
		{"q8_0", func() {
			dotBlock(blockQ8_0, avx2)
			dotBlock(blockQ8_0, vnni)
			tileBlock(blockQ8_0, avx2, 1)
			tileBlock(blockQ8_0, vnni, 1)
			tileBlock(blockQ8_0, vnni, 4)
			for _, pf := range rowPrefetches {
				rowBlock(blockQ8_0, pf)
			}
			gemmBlock(blockQ8_0)
			gemmBlockAVX2(blockQ8_0)
		}},
		{"q4_0", func() {
			dotBlock(blockQ4_0, avx2)
			dotBlock(blockQ4_0, vnni)
			dotBlock(blockQ4_0, vbmi)
			tileBlock(blockQ4_0, avx2, 1)
			tileBlock(blockQ4_0, avx2, 2)
			tileBlock(blockQ4_0, vnni, 1)
			tileBlock(blockQ4_0, vnni, 4)
			tileBlock(blockQ4_0, vbmi, 1)
			for _, pf := range rowPrefetches {
				rowBlock(blockQ4_0, pf)
			}
			gemmBlock(blockQ4_0)
			gemmBlockAVX2(blockQ4_0)
		}},
		{"q4_1", func() { dotBlock(blockQ4_1, avx2); dotBlock(blockQ4_1, vnni) }},
		{"q5_0", func() { dotBlock(blockQ5_0, avx2); dotBlock(blockQ5_0, vnni) }},
		{"q4_k", func() {
			dotSuper(superQ4_K, avx2)
			dotSuper(superQ4_K, vnni)
			tileSuper(superQ4_K, avx2, 1)
			tileSuper(superQ4_K, vnni, 1)
			tileSuper(superQ4_K, vnni, 4)
			gemmSuper(superQ4_K)
			gemmQ4_KAVX2()
		}},
		{"q5_k", func() { dotSuper(superQ5_K, avx2); dotSuper(superQ5_K, vnni) }},
		{"q6_k", func() {
			dotSuper(superQ6_K, avx2)
			dotSuper(superQ6_K, vnni)
			tileSuper(superQ6_K, avx2, 1)
			tileSuper(superQ6_K, vnni, 1)
			tileSuper(superQ6_K, vnni, 4)
			gemmSuper(superQ6_K)
		}},
		{"iq4_nl", func() {
			dotBlock(blockIQ4NL, avx2)
			dotBlock(blockIQ4NL, vnni)
			dotBlock(blockIQ4NL, vbmi)
			tileBlock(blockIQ4NL, avx2, 1)
			tileBlock(blockIQ4NL, vnni, 1)
			tileBlock(blockIQ4NL, vnni, 4)
			tileBlock(blockIQ4NL, vbmi, 1)
		}},
		{"q2_k", func() {
			lowFamily(lowQ2_K)
			dotLow(lowQ2_K, vbmi)
			tileLow(lowQ2_K, vbmi, 1) // the VNNI 4×4 is as fast
		}},
		{"q3_k", func() {
			lowFamily(lowQ3_K)
			dotLow(lowQ3_K, vbmi)
			tileLow(lowQ3_K, vbmi, 1) // the VNNI 4×4 is as fast
		}},
		{"iq4_xs", func() {
			lowFamily(lowIQ4XS)
			dotLow(lowIQ4XS, vbmi)
			tileLow(lowIQ4XS, vbmi, 1)
			tileLow(lowIQ4XS, vbmi, 4)
		}},
		{"iq3_s", func() { lowFamily(lowIQ3S) }},
		{"quantize", func() { quantKernel(actQ8_0); quantKernel(actQ8_K) }},
	}
}

// lowFamily emits a low-bit super-block type's kernels: the dot product
// and the 4×1 tile with AVX2 and VNNI, the 4×4 tile with VNNI.
func lowFamily(t *lowType) {
	dotLow(t, avx2)
	dotLow(t, vnni)
	tileLow(t, avx2, 1)
	tileLow(t, vnni, 1)
	tileLow(t, vnni, 4)
}
