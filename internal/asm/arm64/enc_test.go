package main

import "testing"

// The words below are the encodings the Arm Architecture Reference Manual
// gives for these instructions (cross-checked with llvm-mc -show-encoding
// -mattr=+dotprod,+i8mm), and the texts are how an assembler prints them.
// They pin every field the encoders fill in: register numbers in each slot,
// arrangements, lane indexes, shifts, immediates and post-increments.
func TestEncodings(t *testing.T) {
	check := func(got Inst, text string, word uint32) {
		t.Helper()
		if got.Text != text {
			t.Errorf("text %q, want %q", got.Text, text)
		}
		if got.Word != word {
			t.Errorf("%s: word %#08x, want %#08x (differing bits %#08x)", text, got.Word, word, got.Word^word)
		}
	}
	// The instructions of three vector registers in one arrangement, each
	// on v1, v2 and v3.
	for _, tc := range []struct {
		op   func(a Arr, d, n, m VReg) Inst
		a    Arr
		text string
		word uint32
	}{
		{ADD, S4, "add v1.4s, v2.4s, v3.4s", 0x4ea38441},
		{SUB, B16, "sub v1.16b, v2.16b, v3.16b", 0x6e238441},
		{ADDP, S4, "addp v1.4s, v2.4s, v3.4s", 0x4ea3bc41},
		{AND, B16, "and v1.16b, v2.16b, v3.16b", 0x4e231c41},
		{ORR, B16, "orr v1.16b, v2.16b, v3.16b", 0x4ea31c41},
		{EOR, B16, "eor v1.16b, v2.16b, v3.16b", 0x6e231c41},
		{BSL, B16, "bsl v1.16b, v2.16b, v3.16b", 0x6e631c41},
		{BIT, B16, "bit v1.16b, v2.16b, v3.16b", 0x6ea31c41},
		{MUL, S4, "mul v1.4s, v2.4s, v3.4s", 0x4ea39c41},
		{MLA, S4, "mla v1.4s, v2.4s, v3.4s", 0x4ea39441},
		{SMIN, S4, "smin v1.4s, v2.4s, v3.4s", 0x4ea36c41},
		{SMAX, S4, "smax v1.4s, v2.4s, v3.4s", 0x4ea36441},
		{CMGT, S4, "cmgt v1.4s, v2.4s, v3.4s", 0x4ea33441},
		{CMEQ, B16, "cmeq v1.16b, v2.16b, v3.16b", 0x6e238c41},
		{FADD, S4, "fadd v1.4s, v2.4s, v3.4s", 0x4e23d441},
		{FSUB, S4, "fsub v1.4s, v2.4s, v3.4s", 0x4ea3d441},
		{FMUL, S4, "fmul v1.4s, v2.4s, v3.4s", 0x6e23dc41},
		{FMLA, S4, "fmla v1.4s, v2.4s, v3.4s", 0x4e23cc41},
		{FMLS, S4, "fmls v1.4s, v2.4s, v3.4s", 0x4ea3cc41},
		{FMAX, S4, "fmax v1.4s, v2.4s, v3.4s", 0x4e23f441},
		{FCMGT, S4, "fcmgt v1.4s, v2.4s, v3.4s", 0x6ea3e441},
		{FCMEQ, S4, "fcmeq v1.4s, v2.4s, v3.4s", 0x4e23e441},
		{FACGT, S4, "facgt v1.4s, v2.4s, v3.4s", 0x6ea3ec41},
		{FCMGE, S4, "fcmge v1.4s, v2.4s, v3.4s", 0x6e23e441},
		{SMULL, B8, "smull v1.8h, v2.8b, v3.8b", 0x0e23c041},
		{SMULL, B16, "smull2 v1.8h, v2.16b, v3.16b", 0x4e23c041},
		{SMLAL, B8, "smlal v1.8h, v2.8b, v3.8b", 0x0e238041},
		{SMLAL, B16, "smlal2 v1.8h, v2.16b, v3.16b", 0x4e238041},
		{SMULL, H4, "smull v1.4s, v2.4h, v3.4h", 0x0e63c041},
		{SMLAL, H8, "smlal2 v1.4s, v2.8h, v3.8h", 0x4e638041},
		{MLA, B16, "mla v1.16b, v2.16b, v3.16b", 0x4e239441},
		{ZIP1, H8, "zip1 v1.8h, v2.8h, v3.8h", 0x4e433841},
		{ZIP1, D2, "zip1 v1.2d, v2.2d, v3.2d", 0x4ec33841},
		{ZIP2, D2, "zip2 v1.2d, v2.2d, v3.2d", 0x4ec37841},
		{ZIP1, S4, "zip1 v1.4s, v2.4s, v3.4s", 0x4e833841},
		{ZIP2, S4, "zip2 v1.4s, v2.4s, v3.4s", 0x4e837841},
		{UZP1, S4, "uzp1 v1.4s, v2.4s, v3.4s", 0x4e831841},
		{UZP2, S4, "uzp2 v1.4s, v2.4s, v3.4s", 0x4e835841},
		{TRN1, S4, "trn1 v1.4s, v2.4s, v3.4s", 0x4e832841},
		{CMTST, B16, "cmtst v1.16b, v2.16b, v3.16b", 0x4e238c41},
		{BIC, B16, "bic v1.16b, v2.16b, v3.16b", 0x4e631c41},
		{FADDP, S4, "faddp v1.4s, v2.4s, v3.4s", 0x6e23d441},
	} {
		check(tc.op(tc.a, 1, 2, 3), tc.text, tc.word)
	}
	// The loads and stores of v1, or of the list from v1: k registers, or
	// the lane k; base register xn, post-increment post (0: none).
	for _, tc := range []struct {
		op   func(a Arr, t VReg, k int, n XReg, post int) Inst
		a    Arr
		k    int
		n    XReg
		post int
		text string
		word uint32
	}{
		{LD1, B16, 1, 2, 0, "ld1 { v1.16b }, [x2]", 0x4c407041},
		{LD1, B16, 2, 3, 0, "ld1 { v1.16b, v2.16b }, [x3]", 0x4c40a061},
		{LD1, B16, 1, 2, 16, "ld1 { v1.16b }, [x2], #16", 0x4cdf7041},
		{LD1, B16, 2, 3, 32, "ld1 { v1.16b, v2.16b }, [x3], #32", 0x4cdfa061},
		{LD1, B16, 4, 3, 64, "ld1 { v1.16b, v2.16b, v3.16b, v4.16b }, [x3], #64", 0x4cdf2061},
		{LD1, B16, 3, 3, 48, "ld1 { v1.16b, v2.16b, v3.16b }, [x3], #48", 0x4cdf6061},
		{LD1, S4, 2, 3, 32, "ld1 { v1.4s, v2.4s }, [x3], #32", 0x4cdfa861},
		{LD1, H8, 1, 3, 16, "ld1 { v1.8h }, [x3], #16", 0x4cdf7461},
		{LD1, H4, 1, 3, 8, "ld1 { v1.4h }, [x3], #8", 0x0cdf7461},
		{LD1, B8, 1, 3, 8, "ld1 { v1.8b }, [x3], #8", 0x0cdf7061},
		{LD1L, H4, 3, 2, 0, "ld1 { v1.h }[3], [x2]", 0x0d405841},
		{LD1L, H4, 5, 2, 2, "ld1 { v1.h }[5], [x2], #2", 0x4ddf4841},
		{LD1L, S2, 1, 2, 4, "ld1 { v1.s }[1], [x2], #4", 0x0ddf9041},
		{LD1L, S2, 3, 2, 0, "ld1 { v1.s }[3], [x2]", 0x4d409041},
		{LD1L, B8, 9, 2, 0, "ld1 { v1.b }[9], [x2]", 0x4d400441},
		{LD1L, D1, 1, 2, 0, "ld1 { v1.d }[1], [x2]", 0x4d408441},
		{ST1, S4, 1, 2, 0, "st1 { v1.4s }, [x2]", 0x4c007841},
		{ST1, S4, 1, 2, 16, "st1 { v1.4s }, [x2], #16", 0x4c9f7841},
		{ST1, S4, 2, 2, 32, "st1 { v1.4s, v2.4s }, [x2], #32", 0x4c9fa841},
		{ST1L, S2, 2, 2, 0, "st1 { v1.s }[2], [x2]", 0x4d008041},
		{ST1L, S2, 1, 2, 4, "st1 { v1.s }[1], [x2], #4", 0x0d9f9041},
		{ST1, B8, 1, 2, 8, "st1 { v1.8b }, [x2], #8", 0x0c9f7041},
		{ST1, B16, 1, 2, 16, "st1 { v1.16b }, [x2], #16", 0x4c9f7041},
	} {
		check(tc.op(tc.a, 1, tc.k, tc.n, tc.post), tc.text, tc.word)
	}
	for _, tc := range []struct {
		got  Inst
		text string
		word uint32
	}{
		{SDOT(1, 2, 3), "sdot v1.4s, v2.16b, v3.16b", 0x4e839441},
		{SHLL(H4, 0, 1), "shll v0.4s, v1.4h, #16", 0x2e613820},
		{SHLL(H8, 2, 3), "shll2 v2.4s, v3.8h, #16", 0x6e613862},
		{USHL(B16, 0, 1, 2), "ushl v0.16b, v1.16b, v2.16b", 0x6e224420},
		{USHL(H8, 3, 4, 5), "ushl v3.8h, v4.8h, v5.8h", 0x6e654483},
		{UDOT(31, 0, 17), "udot v31.4s, v0.16b, v17.16b", 0x6e91941f},
		{SDOTe(1, 2, 3, 3), "sdot v1.4s, v2.16b, v3.4b[3]", 0x4fa3e841},
		{SMMLA(5, 6, 7), "smmla v5.4s, v6.16b, v7.16b", 0x4e87a4c5},
		{UMMLA(5, 6, 7), "ummla v5.4s, v6.16b, v7.16b", 0x6e87a4c5},
		{USMMLA(5, 6, 7), "usmmla v5.4s, v6.16b, v7.16b", 0x4e87acc5},
		{MLAe(S4, 1, 2, 3, 1), "mla v1.4s, v2.4s, v3.s[1]", 0x6fa30041},
		{MULe(H8, 1, 2, 3, 5), "mul v1.8h, v2.8h, v3.h[5]", 0x4f538841},
		{FMULe(S4, 1, 2, 3, 2), "fmul v1.4s, v2.4s, v3.s[2]", 0x4f839841},
		{FMLAe(S4, 1, 2, 3, 3), "fmla v1.4s, v2.4s, v3.s[3]", 0x4fa31841},
		{FMLAe(S4, 1, 2, 19, 1), "fmla v1.4s, v2.4s, v19.s[1]", 0x4fb31041},
		{SADDLP(H8, 1, 2), "saddlp v1.4s, v2.8h", 0x4e602841},
		{SADALP(H8, 1, 2), "sadalp v1.4s, v2.8h", 0x4e606841},
		{SADDLP(B16, 1, 2), "saddlp v1.8h, v2.16b", 0x4e202841},
		{UADDLP(B16, 1, 2), "uaddlp v1.8h, v2.16b", 0x6e202841},
		{XTN(B8, 1, 2), "xtn v1.8b, v2.8h", 0x0e212841},
		{XTN(H4, 1, 2), "xtn v1.4h, v2.4s", 0x0e612841},
		{XTN(B16, 1, 2), "xtn2 v1.16b, v2.8h", 0x4e212841},
		{SQXTN(H4, 1, 2), "sqxtn v1.4h, v2.4s", 0x0e614841},
		{SQXTN(H8, 1, 2), "sqxtn2 v1.8h, v2.4s", 0x4e614841},
		{SQXTN(B8, 1, 2), "sqxtn v1.8b, v2.8h", 0x0e214841},
		{SCVTF(S4, 1, 2), "scvtf v1.4s, v2.4s", 0x4e21d841},
		{FCVTL(H4, 1, 2), "fcvtl v1.4s, v2.4h", 0x0e217841},
		{FCVTL(H8, 1, 2), "fcvtl2 v1.4s, v2.8h", 0x4e217841},
		{FCVTN(H4, 1, 2), "fcvtn v1.4h, v2.4s", 0x0e216841},
		{FCVTNS(S4, 1, 2), "fcvtns v1.4s, v2.4s", 0x4e21a841},
		{FCVTZS(S4, 1, 2), "fcvtzs v1.4s, v2.4s", 0x4ea1b841},
		{FRINTN(S4, 1, 2), "frintn v1.4s, v2.4s", 0x4e218841},
		{FABS(S4, 1, 2), "fabs v1.4s, v2.4s", 0x4ea0f841},
		{FNEG(S4, 1, 2), "fneg v1.4s, v2.4s", 0x6ea0f841},
		{NOT(B16, 1, 2), "mvn v1.16b, v2.16b", 0x6e205841},
		{CNT(B16, 1, 2), "cnt v1.16b, v2.16b", 0x4e205841},
		{CNT(B8, 3, 4), "cnt v3.8b, v4.8b", 0x0e205883},
		{TBL(B16, 1, 2, 4, 6), "tbl v1.16b, { v2.16b, v3.16b, v4.16b, v5.16b }, v6.16b", 0x4e066041},
		{ADDV(H4, 1, 2), "addv h1, v2.4h", 0x0e71b841},
		{UMOV(H8, 3, 1, 5), "umov w3, v1.h[5]", 0x0e163c23},
		{SSHR(H8, 1, 2, 15), "sshr v1.8h, v2.8h, #15", 0x4f110441},
		{USHL(H4, 3, 4, 5), "ushl v3.4h, v4.4h, v5.4h", 0x2e654483},
		{USHR(H4, 1, 2, 12), "ushr v1.4h, v2.4h, #12", 0x2f140441},
		{USHR(S4, 1, 2, 27), "ushr v1.4s, v2.4s, #27", 0x6f250441},
		{MOVI(H8, 1, 7, 8), "movi v1.8h, #7, lsl #8", 0x4f00a4e1},
		{LDR(8, 1, 2, 48), "ldr d1, [x2, #48]", 0xfd401841},
		{ADDV(S4, 1, 2), "addv s1, v2.4s", 0x4eb1b841},
		{SADDLV(H8, 1, 2), "saddlv s1, v2.8h", 0x4e703841},
		{FMAXV(1, 2), "fmaxv s1, v2.4s", 0x6e30f841},
		{USHR(B16, 1, 2, 4), "ushr v1.16b, v2.16b, #4", 0x6f0c0441},
		{USHR(S4, 1, 2, 16), "ushr v1.4s, v2.4s, #16", 0x6f300441},
		{SSHR(S4, 1, 2, 31), "sshr v1.4s, v2.4s, #31", 0x4f210441},
		{SHL(B16, 1, 2, 4), "shl v1.16b, v2.16b, #4", 0x4f0c5441},
		{SHL(S4, 1, 2, 23), "shl v1.4s, v2.4s, #23", 0x4f375441},
		{SLI(B16, 1, 2, 4), "sli v1.16b, v2.16b, #4", 0x6f0c5441},
		{SRI(B16, 1, 2, 4), "sri v1.16b, v2.16b, #4", 0x6f0c4441},
		{SSHLL(B8, 1, 2, 0), "sshll v1.8h, v2.8b, #0", 0x0f08a441},
		{SSHLL(B16, 1, 2, 0), "sshll2 v1.8h, v2.16b, #0", 0x4f08a441},
		{USHLL(H4, 1, 2, 0), "ushll v1.4s, v2.4h, #0", 0x2f10a441},
		{USHLL(H8, 1, 2, 0), "ushll2 v1.4s, v2.8h, #0", 0x6f10a441},
		{SSHLL(H4, 1, 2, 0), "sshll v1.4s, v2.4h, #0", 0x0f10a441},
		{DUPe(S4, 1, 2, 1), "dup v1.4s, v2.s[1]", 0x4e0c0441},
		{DUPe(D2, 1, 2, 1), "dup v1.2d, v2.d[1]", 0x4e180441},
		{DUPg(B16, 1, 3), "dup v1.16b, w3", 0x4e010c61},
		{DUPg(S4, 1, 3), "dup v1.4s, w3", 0x4e040c61},
		{INSg(S2, 1, 2, 3), "mov v1.s[2], w3", 0x4e141c61},
		{INSg(H4, 1, 3, 3), "mov v1.h[3], w3", 0x4e0e1c61},
		{INSe(S2, 1, 1, 2, 3), "mov v1.s[1], v2.s[3]", 0x6e0c6441},
		{UMOV(S2, 3, 1, 2), "mov w3, v1.s[2]", 0x0e143c23},
		{UMOV(D1, 3, 1, 1), "mov x3, v1.d[1]", 0x4e183c23},
		{EXT(B16, 1, 2, 3, 8), "ext v1.16b, v2.16b, v3.16b, #8", 0x6e034041},
		{TBL(B16, 1, 2, 1, 3), "tbl v1.16b, { v2.16b }, v3.16b", 0x4e030041},
		{TBL(B16, 1, 2, 2, 4), "tbl v1.16b, { v2.16b, v3.16b }, v4.16b", 0x4e042041},
		{MOVI(B16, 1, 15, 0), "movi v1.16b, #15", 0x4f00e5e1},
		{MOVI(B16, 1, 8, 0), "movi v1.16b, #8", 0x4f00e501},
		{MOVI(S4, 1, 0, 0), "movi v1.4s, #0", 0x4f000401},
		{MOVIzero(1), "movi v1.2d, #0000000000000000", 0x6f00e401},
		{MOVI(S4, 1, 75, 24), "movi v1.4s, #75, lsl #24", 0x4f026561},
		{MOVI(H8, 1, 32, 0), "movi v1.8h, #32", 0x4f018401},
		{LD1Post(B16, 1, 1, 2, 5), "ld1 { v1.16b }, [x2], x5", 0x4cc57041},
		{LD1R(S4, 1, 2, 0), "ld1r { v1.4s }, [x2]", 0x4d40c841},
		{LD1R(H8, 1, 2, 2), "ld1r { v1.8h }, [x2], #2", 0x4ddfc441},
		{LDR(16, 1, 2, 0), "ldr q1, [x2]", 0x3dc00041},
		{LDR(16, 1, 2, 16), "ldr q1, [x2, #16]", 0x3dc00441},
		{LDR(8, 1, 2, 8), "ldr d1, [x2, #8]", 0xfd400441},
		{LDR(4, 1, 2, 4), "ldr s1, [x2, #4]", 0xbd400441},
		{LDR(2, 1, 2, 208), "ldr h1, [x2, #208]", 0x7d41a041},
		{STR(4, 1, 2, 4), "str s1, [x2, #4]", 0xbd000441},
		{STR(16, 1, 2, 32), "str q1, [x2, #32]", 0x3d800841},
		{FMLAse(1, 2, 3, 2), "fmla s1, s2, v3.s[2]", 0x5f831841},
		{SCVTFs(1, 2), "scvtf s1, s2", 0x5e21d841},
		{INSg(D1, 1, 1, 3), "mov v1.d[1], x3", 0x4e181c61},
		{DUPg(D2, 1, 3), "dup v1.2d, x3", 0x4e080c61},
		{FADDPs(1, 2), "faddp s1, v2.2s", 0x7e30d841},
		{FMULe(S4, 1, 2, 3, 0), "fmul v1.4s, v2.4s, v3.s[0]", 0x4f839041},
	} {
		check(tc.got, tc.text, tc.word)
	}
}

// Operands an encoding cannot hold must stop the generator, not produce a
// wrong word.
func TestEncodingsReject(t *testing.T) {
	for name, f := range map[string]func(){
		"register 32":         func() { ADD(S4, 32, 0, 0) },
		"ushr by 0":           func() { USHR(B16, 0, 0, 0) },
		"shl by 8 on bytes":   func() { SHL(B16, 0, 0, 8) },
		"lane 4 of s":         func() { LD1L(S2, 0, 4, 0, 0) },
		"sdot element v16":    func() { SDOTe(0, 0, 16, 0) },
		"ld1 post mismatch":   func() { LD1(B16, 0, 2, 0, 16) },
		"ldr unaligned":       func() { LDR(16, 0, 0, 8) },
		"and on words":        func() { AND(S4, 0, 0, 0) },
		"fadd on bytes":       func() { FADD(B16, 0, 0, 0) },
		"mul h element v16":   func() { MULe(H8, 0, 0, 16, 0) },
		"register list wraps": func() { LD1(B16, 30, 3, 0, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
