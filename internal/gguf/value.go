package gguf

import (
	"fmt"
	"reflect"

	"github.com/lowmem/llm/quant"
)

// valueType is the type id GGUF stores before every metadata value.
type valueType uint32

const (
	typeUint8   valueType = 0
	typeInt8    valueType = 1
	typeUint16  valueType = 2
	typeInt16   valueType = 3
	typeUint32  valueType = 4
	typeInt32   valueType = 5
	typeFloat32 valueType = 6
	typeBool    valueType = 7
	typeString  valueType = 8
	typeArray   valueType = 9
	typeUint64  valueType = 10
	typeInt64   valueType = 11
	typeFloat64 valueType = 12
)

// minBytes is the smallest encoding of one value of type t, used to bound
// counts by the bytes left in the file before allocating. It is 0 for an
// unknown type.
func (t valueType) minBytes() int64 {
	switch t {
	case typeUint8, typeInt8, typeBool:
		return 1
	case typeUint16, typeInt16:
		return 2
	case typeUint32, typeInt32, typeFloat32:
		return 4
	case typeUint64, typeInt64, typeFloat64, typeString: // a string is at least its length
		return 8
	case typeArray: // element type and count
		return 12
	}
	return 0
}

func (t valueType) String() string {
	names := [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32",
		"float32", "bool", "string", "array", "uint64", "int64", "float64"}
	if int(t) < len(names) {
		return names[t]
	}
	return fmt.Sprintf("value type %d", uint32(t))
}

// KV is one metadata pair. Value holds uint8, int8, uint16, int16, uint32,
// int32, uint64, int64, float32, float64, bool or string; an array holds the
// matching slice ([]uint8 … []string, []bool); an array of arrays holds
// []any whose elements are such slices (or further []any).
type KV struct {
	Key   string
	Value any
}

// TensorInfo describes one tensor. Dims are in ggml order: Dims[0] is the
// length of a row (the innermost, contiguous dimension). Offset is absolute
// in the file, and Offset+Size is within it.
type TensorInfo struct {
	Name   string
	Dims   []int64
	Type   quant.Type
	Offset int64
	Size   int64
}

// Elems returns the number of elements of the tensor.
func (t *TensorInfo) Elems() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// File is the parsed header of a GGUF file.
type File struct {
	Version    uint32
	KV         []KV         // in file order
	Tensors    []TensorInfo // in file order
	Alignment  int64        // of the data section and of every tensor in it
	DataOffset int64        // absolute offset of the tensor data section (past Size in a file without tensors)
	Size       int64        // of the whole file

	kvIndex     map[string]int
	tensorIndex map[string]int
}

// Get returns the value of a metadata key.
func (f *File) Get(key string) (any, bool) {
	i, ok := f.kvAt(key)
	if !ok {
		return nil, false
	}
	return f.KV[i].Value, true
}

// Tensor returns the descriptor of the named tensor.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tensorAt(name)
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// Arch returns general.architecture ("llama", "qwen2", …), or "" when the
// key is missing or not a string.
func (f *File) Arch() string {
	s, _ := f.String("general.architecture")
	return s
}

// String returns a string value. ok is false when the key is missing or
// holds another type.
func (f *File) String(key string) (string, bool) { return value[string](f, key) }

// Bool returns a bool value. ok is false when the key is missing or holds
// another type.
func (f *File) Bool(key string) (bool, bool) { return value[bool](f, key) }

// Uint returns an integer value of any GGUF integer type as uint64. ok is
// false when the key is missing, is not an integer, or is negative.
func (f *File) Uint(key string) (uint64, bool) {
	v, _ := f.Get(key)
	return toInt[uint64](v)
}

// Int returns an integer value of any GGUF integer type as int64. ok is
// false when the key is missing, is not an integer, or does not fit.
func (f *File) Int(key string) (int64, bool) {
	v, _ := f.Get(key)
	return toInt[int64](v)
}

// Float returns a float32 or float64 value as float64. ok is false when the
// key is missing or holds another type.
func (f *File) Float(key string) (float64, bool) {
	v, _ := f.Get(key)
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Float32 || rv.Kind() == reflect.Float64 {
		return rv.Float(), true
	}
	return 0, false
}

// Strings returns a string array. The slice is shared with the File; do
// not modify it.
func (f *File) Strings(key string) ([]string, bool) { return value[[]string](f, key) }

// value is the value of key if it holds a T.
func value[T any](f *File, key string) (T, bool) {
	v, _ := f.Get(key)
	x, ok := v.(T)
	return x, ok
}

// Float32s returns a float array as []float32. A float32 array is returned
// as stored (shared with the File; do not modify it); a float64 array is
// converted.
func (f *File) Float32s(key string) ([]float32, bool) {
	v, _ := f.Get(key)
	switch x := v.(type) {
	case []float32:
		return x, true
	case []float64:
		return Cast[float32](x), true
	}
	return nil, false
}

// Cast is x with each element converted to a To as Go converts it
// (truncating, rounding to the nearest float): for arrays stored in a
// wider or signed type than their reader takes, whose values the format
// bounds.
func Cast[To, From integer | float32 | float64](x []From) []To {
	out := make([]To, len(x))
	for i, e := range x {
		out[i] = To(e)
	}
	return out
}

// Int32s returns an integer array of any GGUF integer type as []int32. An
// int32 array is returned as stored (shared with the File; do not modify
// it); other types are converted, and ok is false if a value does not fit
// in an int32.
func (f *File) Int32s(key string) ([]int32, bool) {
	v, _ := f.Get(key)
	if x, ok := v.([]int32); ok {
		return x, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || !isInteger(rv.Type().Elem().Kind()) {
		return nil, false
	}
	out := make([]int32, rv.Len())
	for i := range out {
		e, ok := intValue[int32](rv.Index(i))
		if !ok {
			return nil, false
		}
		out[i] = e
	}
	return out, true
}

// integer is the GGUF integer types.
type integer interface {
	int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64
}

// convert is x as an R; ok is false (and the value 0) if x does not fit.
func convert[R, T integer](x T) (R, bool) {
	// x fits if it survives the round trip with its sign: a large
	// unsigned value can come back from a negative R unchanged.
	r := R(x)
	if T(r) != x || (r < 0) != (x < 0) {
		return 0, false
	}
	return r, true
}

// toInt is an integer value of any GGUF integer type as an R (int64 or
// uint64); ok is false when v is not an integer or does not fit.
func toInt[R int64 | uint64](v any) (R, bool) { return intValue[R](reflect.ValueOf(v)) }

// intValue is rv, of any GGUF integer type, as an R: a reflect.Value
// carries the type, so one switch on its kind serves a value and each
// element of an array, where a type switch would list the eight types for
// each. ok is false when rv is not an integer or does not fit.
func intValue[R int32 | int64 | uint64](rv reflect.Value) (R, bool) {
	switch k := rv.Kind(); {
	case !isInteger(k):
		return 0, false
	case k >= reflect.Uint8:
		return convert[R](rv.Uint())
	}
	return convert[R](rv.Int())
}

// isInteger is whether k is a GGUF integer type's kind (Go's int and uint,
// which GGUF has not, are not).
func isInteger(k reflect.Kind) bool {
	return k >= reflect.Int8 && k <= reflect.Int64 || k >= reflect.Uint8 && k <= reflect.Uint64
}
