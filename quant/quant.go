package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Dequantize expands len(dst) elements of type t from src into dst. src must
// hold exactly t.RowBytes(len(dst)) bytes, and len(dst) must be a whole
// number of blocks. It returns an error wrapping ErrUnsupportedType for a
// type without a layout here, and an error naming the sizes when they do not
// match; it never panics on bad input.
func Dequantize(t Type, dst []float32, src []byte) error {
	return convertRow("dequantize", opsOf(t).dequant, t, dst, src, len(dst), len(src))
}

// QuantizeRow encodes src as type t into dst, which must be exactly
// t.RowBytes(len(src)) bytes; len(src) must be a whole number of blocks.
//
// For the activation types Q8_0, Q8_1 and Q8_K the bytes are identical to
// what llama.cpp's CPU backend produces on x86-64 with AVX2 (see the package
// documentation), so dot products can be compared with llama.cpp bit for
// bit. For the weight types Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K it
// follows ggml's reference quantizers (no importance matrix), and for Q2_K,
// Q3_K, IQ4_NL, IQ4_XS, IQ3_S, MXFP4, TQ1_0 and TQ2_0 the quantizers
// llama-quantize runs without an importance matrix, byte for byte (MXFP4's
// and the ternary types' take none); use it to make test models, not to
// requantize real ones. The first IQ3_S call builds a search table
// (about 60 KB, a few tens of milliseconds) that later calls share. F32, F16 and BF16 are converted
// element by element with round-to-nearest-even.
//
// QuantizeRow allocates nothing. It returns an error, never panics, when the
// sizes do not match or t has no encoder.
func QuantizeRow(t Type, dst []byte, src []float32) error {
	return convertRow("quantize", opsOf(t).quant, t, dst, src, len(src), len(dst))
}

// convertRow runs conv, t's conversion (op) of a row of n elements held
// in size bytes, from src to dst, after checking that t has one (conv is
// not nil) and that size is what n elements of t take.
func convertRow[D, S any](op string, conv func(dst D, src S), t Type, dst D, src S, n, size int) error {
	if conv == nil {
		return fmt.Errorf("quant: %s %v: %w", op, t, ErrUnsupportedType)
	}
	want, err := t.RowBytes(int64(n))
	if err != nil {
		return err
	}
	if int64(size) != want {
		return fmt.Errorf("quant: %s %v: %d elements take %d bytes, buffer has %d", op, t, n, want, size)
	}
	conv(dst, src)
	return nil
}

// typeOps are the pure-Go operations on one type, nil where the type has
// none: dequant and quant convert rows, dot is the DotFunc for rows of the
// type as weights.
type typeOps struct {
	dequant func(dst []float32, src []byte)
	quant   func(dst []byte, src []float32)
	dot     DotFunc
}

// opsByType is the one place that says what this package computes with
// each type; Supported, Dequantize, QuantizeRow and Kernels read it. Q8_1
// and Q8_K are only ever activations, so they have no dot product. The
// SWAR tile kernels are not here: a call through a function value would
// move their packed columns to the heap (see swarSpec).
var opsByType = [...]typeOps{
	F32:    {dequantF32, quantF32, dotF32},
	F16:    {dequantF16, quantizeF16, dotF16},
	BF16:   {dequantBF16, quantBF16, dotBF16},
	Q4_0:   {dequantQ4_0, quantQ4_0, dotQ4_0},
	Q4_1:   {dequantQ4_1, quantQ4_1, dotQ4_1},
	Q5_0:   {dequantQ5_0, quantQ5_0, dotQ5_0},
	Q5_1:   {dequantQ5_1, quantQ5_1, dotQ5_1},
	Q8_0:   {dequantQ8_0, quantizeQ8_0, dotQ8_0},
	Q8_1:   {dequantQ8_1, quantQ8_1, nil},
	Q2_K:   {dequantQ2_K, quantQ2_K, dotQ2_K},
	Q3_K:   {dequantQ3_K, quantQ3_K, dotQ3_K},
	Q4_K:   {dequantQ4_K, quantQ4_K, dotQ4_K},
	Q5_K:   {dequantQ5_K, quantQ5_K, dotQ5_K},
	Q6_K:   {dequantQ6_K, quantQ6_K, dotQ6_K},
	Q8_K:   {dequantQ8_K, quantizeQ8_K, nil},
	IQ4_NL: {dequantIQ4_NL, quantIQ4_NL, dotIQ4_NL},
	IQ3_S:  {dequantIQ3_S, quantIQ3_S, dotIQ3_S},
	IQ4_XS: {dequantIQ4_XS, quantIQ4_XS, dotIQ4_XS},
	MXFP4:  {dequantMXFP4, quantMXFP4, dotMXFP4},
	TQ1_0:  {dequantTQ1_0, quantTQ1_0, dotTQ1_0},
	TQ2_0:  {dequantTQ2_0, quantTQ2_0, dotTQ2_0},
	// The lowest-bit types, which llama-quantize makes only with an
	// importance matrix, are decoded and multiplied but not encoded.
	IQ2_XXS: {dequantSigned(iq2_XXSBytes, 0.25, iq2XXSGroup), nil, dotIQ2_XXS},
	IQ2_XS:  {dequantSigned(iq2_XSBytes, 0.25, iq2XSGroup), nil, dotIQ2_XS},
	IQ2_S:   {dequantSigned(iq2_SBytes, 0.25, iq2SGroup), nil, dotIQ2_S},
	IQ3_XXS: {dequantSigned(iq3_XXSBytes, 0.5, iq3XXSGroup), nil, dotIQ3_XXS},
	IQ1_S:   {dequantIQ1(iq1_SBytes, f16At, iq1SGroup), nil, dotIQ1_S},
	IQ1_M:   {dequantIQ1(iq1_MBytes, iq1MD, iq1MDequantGroup), nil, dotIQ1_M},
}

// opsOf returns t's entry of opsByType, all nil for a type it lacks.
func opsOf(t Type) typeOps {
	if int(t) < len(opsByType) {
		return opsByType[t]
	}
	return typeOps{}
}

// le16 reads a little-endian uint16; b must hold at least 2 bytes.
func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }

// put16 writes a little-endian uint16.
func put16(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }

// f16At reads the fp16 number at the start of b as a float32.
func f16At(b []byte) float32 { return FP16ToFP32(le16(b)) }

// f32At reads the little-endian float32 at the start of b.
func f32At(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// nearestInt rounds f to the nearest integer, ties to even, the way ggml's
// nearest_int does: by adding 1.5·2^23 and reading the low mantissa bits.
// It is exact for |f| < 2^22; outside that range it returns the same
// meaningless value ggml would. Callers pass an already rounded float32
// product (wrap it in float32(...)) so that no fused multiply-add changes
// the result.
func nearestInt(f float32) int32 {
	v := float32(f) + 12582912
	return int32(math.Float32bits(v)&0x007fffff) - 0x00400000
}
