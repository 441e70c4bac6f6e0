package quant

import (
	"errors"
	"fmt"
)

// Type is a tensor element type, numbered as ggml and GGUF number them, so a
// value read from a GGUF tensor info converts directly.
type Type uint32

// The ggml type ids. Only the types with a layout in this package can be
// dequantized or used in a dot product; the others are named so that an
// error can say which unsupported type a file contains.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
)

// QK is the element count of the 32-wide block formats; QKK of the
// 256-wide K-quant super-blocks.
const (
	QK  = 32
	QKK = 256
)

// ErrUnsupportedType is returned for a type this package has no layout or
// kernel for. Callers branch on it to reject a model before loading it.
var ErrUnsupportedType = errors.New("unsupported tensor type")

type traits struct {
	name       string
	blockElems int // elements per block
	blockBytes int // bytes per block
	// vecDot is the type the activation vector is converted to before a dot
	// product with a row of this type, as llama.cpp does (its vec_dot_type).
	vecDot Type
}

var typeTraits = map[Type]traits{
	F32:     {"F32", 1, 4, F32},
	F16:     {"F16", 1, 2, F16},
	BF16:    {"BF16", 1, 2, BF16},
	Q4_0:    {"Q4_0", QK, 2 + QK/2, Q8_0},
	Q4_1:    {"Q4_1", QK, 4 + QK/2, Q8_1},
	Q5_0:    {"Q5_0", QK, 2 + 4 + QK/2, Q8_0},
	Q5_1:    {"Q5_1", QK, 4 + 4 + QK/2, Q8_1},
	Q8_0:    {"Q8_0", QK, 2 + QK, Q8_0},
	Q8_1:    {"Q8_1", QK, 4 + QK, Q8_1},
	Q2_K:    {"Q2_K", QKK, q2_KBytes, Q8_K},
	Q3_K:    {"Q3_K", QKK, q3_KBytes, Q8_K},
	Q4_K:    {"Q4_K", QKK, 144, Q8_K},
	Q5_K:    {"Q5_K", QKK, 176, Q8_K},
	Q6_K:    {"Q6_K", QKK, 210, Q8_K},
	Q8_K:    {"Q8_K", QKK, 4 + QKK + 2*QKK/16, Q8_K},
	IQ2_XXS: {"IQ2_XXS", QKK, iq2_XXSBytes, Q8_K},
	IQ2_XS:  {"IQ2_XS", QKK, iq2_XSBytes, Q8_K},
	IQ3_XXS: {"IQ3_XXS", QKK, iq3_XXSBytes, Q8_K},
	IQ1_S:   {"IQ1_S", QKK, iq1_SBytes, Q8_K},
	IQ4_NL:  {"IQ4_NL", QK, iq4_NLBytes, Q8_0},
	IQ3_S:   {"IQ3_S", QKK, iq3_SBytes, Q8_K},
	IQ2_S:   {"IQ2_S", QKK, iq2_SBytes, Q8_K},
	IQ4_XS:  {"IQ4_XS", QKK, iq4_XSBytes, Q8_K},
	I8:      {"I8", 1, 1, I8},
	I16:     {"I16", 1, 2, I16},
	I32:     {"I32", 1, 4, I32},
	I64:     {"I64", 1, 8, I64},
	F64:     {"F64", 1, 8, F64},
	IQ1_M:   {"IQ1_M", QKK, iq1_MBytes, Q8_K},
	TQ1_0:   {"TQ1_0", QKK, tq1_0Bytes, Q8_K},
	TQ2_0:   {"TQ2_0", QKK, tq2_0Bytes, Q8_K},
	MXFP4:   {"MXFP4", QK, mxfp4Bytes, Q8_0},
}

// String returns the ggml name of the type ("Q4_K"), or "type(N)" for an id
// ggml does not define.
func (t Type) String() string {
	if tr, ok := typeTraits[t]; ok {
		return tr.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Known reports whether the type has a layout ggml defines (so its sizes are
// meaningful), whether or not this package can compute with it.
func (t Type) Known() bool {
	_, ok := typeTraits[t]
	return ok
}

// Supported reports whether this package can dequantize the type and use it
// in dot products.
func (t Type) Supported() bool {
	return opsOf(t).dequant != nil
}

// BlockElems is the number of elements in one block (1 for plain types).
// It is 0 for an unknown type.
func (t Type) BlockElems() int { return typeTraits[t].blockElems }

// BlockBytes is the size in bytes of one block. It is 0 for an unknown type.
func (t Type) BlockBytes() int { return typeTraits[t].blockBytes }

// VecDotType is the type an activation vector must be converted to (with
// QuantizeRow) before a DotFunc from Dot can multiply it with a row of type t.
func (t Type) VecDotType() Type { return typeTraits[t].vecDot }

// RowBytes returns the bytes of a row of n elements, or an error when n is
// not a whole number of blocks or the type is unknown. It is overflow-safe
// for any n a GGUF file can declare.
func (t Type) RowBytes(n int64) (int64, error) {
	tr, ok := typeTraits[t]
	if !ok {
		return 0, fmt.Errorf("quant: %v: %w", t, ErrUnsupportedType)
	}
	if n < 0 || n%int64(tr.blockElems) != 0 {
		return 0, fmt.Errorf("quant: %v: row of %d elements is not a multiple of the block size %d", t, n, tr.blockElems)
	}
	blocks := n / int64(tr.blockElems)
	if blocks > (1<<62)/int64(tr.blockBytes) {
		return 0, fmt.Errorf("quant: %v: row of %d elements overflows", t, n)
	}
	return blocks * int64(tr.blockBytes), nil
}
