// Package quant implements the ggml tensor element formats that GGUF models
// are stored in: plain F32, F16 and BF16, the 32-element block formats
// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q8_1, the 256-element K-quant formats
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and Q8_K, the non-linear IQ4_NL (32
// elements), IQ4_XS and IQ3_S (256), MXFP4 (32 elements: an E8M0
// power of two and 4-bit E2M1 codes, gpt-oss's expert weights), and the
// ternary TQ1_0 and TQ2_0 (256 elements of d·{−1, 0, 1}: BitNet b1.58's
// weights, 1.69 and 2.06 bits an element). For each
// it can expand a row to float32
// (Dequantize), encode float32s (QuantizeRow), and take the dot
// product of a weight row with an activation vector without expanding
// either (Dot). The lattice types IQ3_XXS, IQ2_S, IQ2_XS, IQ2_XXS, IQ1_M
// and IQ1_S (256 elements) are decoded and multiplied but not encoded:
// llama-quantize makes them only with an importance matrix, and
// QuantizeRow returns ErrUnsupportedType for them.
//
// A matrix-vector product works as in llama.cpp: the activation vector is
// quantized once to the weight type's VecDotType (Q8_0 for Q4_0, Q5_0, Q8_0,
// IQ4_NL and MXFP4; Q8_1 for Q4_1 and Q5_1; Q8_K for the K-quants, the
// 256-element IQ types and the ternary ones; the weight type itself for F32, F16 and BF16), and each weight row is then multiplied
// with it block by block in integer arithmetic, scaled once per block.
//
// Results are meant to match llama.cpp's x86-64 CPU backend. QuantizeRow
// produces the same bytes for the activation types: Q8_0 and Q8_1 follow the
// AVX2 code, which rounds ties to even and multiplies by 127/amax (the
// portable reference rounds ties away from zero), and Q8_K follows ggml's
// reference, which is what x86 runs. FP32ToFP16 rounds exactly like the F16C
// instruction. The dot kernels compute the same integer block sums as
// ggml's vec_dot functions; only the order of the float32 additions
// between blocks differs, so they agree to float32 rounding.
//
// Dot returns the fastest kernel for the CPU; Kernels lists all of them,
// starting with the portable Go one, which is also the only one built with
// -tags purego. Kernels never allocate.
//
// For whole matrices, Tile returns a kernel that multiplies several weight
// rows by one or several activation rows in one call: a matrix-vector
// product (decode) reads each activation block once for four rows and sums
// horizontally once per row, and a matrix-matrix product (prefill) unpacks
// each weight block once for four tokens. Tiles lists every variant.
//
// Example: multiply a Q4_0 weight row by an activation vector.
//
//	const n = 64
//	x := make([]float32, n) // activations, e.g. the output of an RMSNorm
//	row := weights[r]       // n elements of Q4_0, as stored in the GGUF file
//
//	vt := quant.Q4_0.VecDotType() // Q8_0
//	size, _ := vt.RowBytes(n)
//	xq := make([]byte, size) // reuse across rows and steps
//	if err := quant.QuantizeRow(vt, xq, x); err != nil {
//		return err
//	}
//	dot, err := quant.Dot(quant.Q4_0) // look up once per tensor
//	if err != nil {
//		return err
//	}
//	y := dot(n, row, xq)
package quant
