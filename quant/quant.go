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
	if err := checkSizes("dequantize", t, len(dst), len(src)); err != nil {
		return err
	}
	switch t {
	case F32:
		dequantF32(dst, src)
	case F16:
		dequant16(dst, src, FP16ToFP32)
	case BF16:
		dequant16(dst, src, BF16ToFP32)
	case Q4_0:
		dequantQ4_0(dst, src)
	case Q4_1:
		dequantQ4_1(dst, src)
	case Q5_0:
		dequantQ5_0(dst, src)
	case Q5_1:
		dequantQ5_1(dst, src)
	case Q8_0:
		dequantQ8_0(dst, src)
	case Q8_1:
		dequantQ8_1(dst, src)
	case Q4_K:
		dequantQ4_K(dst, src)
	case Q5_K:
		dequantQ5_K(dst, src)
	case Q6_K:
		dequantQ6_K(dst, src)
	case Q8_K:
		dequantQ8_K(dst, src)
	case Q2_K:
		dequantQ2_K(dst, src)
	case Q3_K:
		dequantQ3_K(dst, src)
	case IQ4_NL:
		dequantIQ4_NL(dst, src)
	case IQ4_XS:
		dequantIQ4_XS(dst, src)
	case IQ3_S:
		dequantIQ3_S(dst, src)
	default:
		return fmt.Errorf("quant: dequantize %v: %w", t, ErrUnsupportedType)
	}
	return nil
}

// QuantizeRow encodes src as type t into dst, which must be exactly
// t.RowBytes(len(src)) bytes; len(src) must be a whole number of blocks.
//
// For the activation types Q8_0, Q8_1 and Q8_K the bytes are identical to
// what llama.cpp's CPU backend produces on x86-64 with AVX2 (see the package
// documentation), so dot products can be compared with llama.cpp bit for
// bit. For the weight types Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K it
// follows ggml's reference quantizers (no importance matrix), and for Q2_K,
// Q3_K, IQ4_NL, IQ4_XS and IQ3_S the quantizers llama-quantize runs without
// an importance matrix, byte for byte; use it to make test models, not to
// requantize real ones. The first IQ3_S call builds a search table
// (about 60 KB, a few tens of milliseconds) that later calls share. F32, F16 and BF16 are converted
// element by element with round-to-nearest-even.
//
// QuantizeRow allocates nothing. It returns an error, never panics, when the
// sizes do not match or t has no encoder.
func QuantizeRow(t Type, dst []byte, src []float32) error {
	if err := checkSizes("quantize", t, len(src), len(dst)); err != nil {
		return err
	}
	switch t {
	case F32:
		quantF32(dst, src)
	case F16:
		quant16(dst, src, FP32ToFP16)
	case BF16:
		quant16(dst, src, FP32ToBF16)
	case Q4_0:
		quantQ4_0(dst, src)
	case Q4_1:
		quantQ4_1(dst, src)
	case Q5_0:
		quantQ5_0(dst, src)
	case Q5_1:
		quantQ5_1(dst, src)
	case Q8_0:
		quantizeQ8_0(dst, src)
	case Q8_1:
		quantQ8_1(dst, src)
	case Q4_K:
		quantQ4_K(dst, src)
	case Q5_K:
		quantQ5_K(dst, src)
	case Q6_K:
		quantQ6_K(dst, src)
	case Q8_K:
		quantizeQ8_K(dst, src)
	case Q2_K:
		quantQ2_K(dst, src)
	case Q3_K:
		quantQ3_K(dst, src)
	case IQ4_NL:
		quantIQ4_NL(dst, src)
	case IQ4_XS:
		quantIQ4_XS(dst, src)
	case IQ3_S:
		quantIQ3_S(dst, src)
	default:
		return fmt.Errorf("quant: quantize %v: %w", t, ErrUnsupportedType)
	}
	return nil
}

// checkSizes validates a conversion of n elements of t held in size bytes.
func checkSizes(op string, t Type, n, size int) error {
	if !t.Supported() {
		return fmt.Errorf("quant: %s %v: %w", op, t, ErrUnsupportedType)
	}
	want, err := t.RowBytes(int64(n))
	if err != nil {
		return err
	}
	if int64(size) != want {
		return fmt.Errorf("quant: %s %v: %d elements take %d bytes, buffer has %d", op, t, n, want, size)
	}
	return nil
}

// genericDot returns the pure-Go dot kernel for rows of type t, or nil when
// t cannot be a weight type of a dot product.
func genericDot(t Type) DotFunc {
	switch t {
	case F32:
		return dotF32
	case F16:
		return dotF16
	case BF16:
		return dotBF16
	case Q4_0:
		return dotQ4_0
	case Q4_1:
		return dotQ4_1
	case Q5_0:
		return dotQ5_0
	case Q5_1:
		return dotQ5_1
	case Q8_0:
		return dotQ8_0
	case Q4_K:
		return dotQ4_K
	case Q5_K:
		return dotQ5_K
	case Q6_K:
		return dotQ6_K
	case Q2_K:
		return dotQ2_K
	case Q3_K:
		return dotQ3_K
	case IQ4_NL:
		return dotIQ4_NL
	case IQ4_XS:
		return dotIQ4_XS
	case IQ3_S:
		return dotIQ3_S
	}
	return nil
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
