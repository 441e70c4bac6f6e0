package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/lowmem/llm/quant"
)

// Writer builds a GGUF v3 file: metadata pairs and tensors are added in
// the order they will appear, then WriteTo writes the file in one pass.
// Tensor data is written as it is produced, never gathered in memory.
type Writer struct {
	kvs     []KV
	kvIndex map[string]int
	tensors []wtensor
	names   map[string]bool
	err     error // the first invalid AddKV or SetAlignment, reported by WriteTo
}

type wtensor struct {
	name string
	typ  quant.Type
	dims []int64
	size int64
	data []byte
	fn   func(io.Writer) error
}

// NewWriter returns an empty Writer with the default alignment of 32.
func NewWriter() *Writer {
	return &Writer{kvIndex: map[string]int{}, names: map[string]bool{}}
}

// AddKV adds a metadata pair, or replaces the value of a key added before
// (keeping its position). v must be one of the Go types Read produces:
// uint8, int8, uint16, int16, uint32, int32, uint64, int64, float32,
// float64, bool, string, a slice of one of those, or []any whose elements
// are such slices (an array of arrays). Note that an untyped constant is an
// int, which GGUF has no type for: write uint32(n). An unsupported value is
// reported by WriteTo.
func (w *Writer) AddKV(key string, v any) {
	if _, err := typeOf(v, 0); err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("gguf: key %q: %w", key, err)
		}
		return
	}
	if i, ok := w.kvIndex[key]; ok {
		w.kvs[i].Value = v
		return
	}
	w.kvIndex[key] = len(w.kvs)
	w.kvs = append(w.kvs, KV{Key: key, Value: v})
}

// SetAlignment sets the alignment of the data section and of each tensor
// in it, stored as the uint32 key general.alignment. n must be a power of
// two; the default is 32.
func (w *Writer) SetAlignment(n int) {
	if n <= 0 || n&(n-1) != 0 || n > maxAlignment {
		if w.err == nil {
			w.err = fmt.Errorf("gguf: alignment %d is not a power of two between 1 and %d", n, maxAlignment)
		}
		return
	}
	w.AddKV("general.alignment", uint32(n))
}

// AddTensor adds a tensor whose bytes are data. dims are in ggml order
// (dims[0] is the row length) and len(data) must be exactly the size of
// such a tensor of type t. data is written by WriteTo, not copied: do not
// modify it before then.
func (w *Writer) AddTensor(name string, t quant.Type, dims []int64, data []byte) error {
	size, err := w.check(name, t, dims)
	if err != nil {
		return err
	}
	if int64(len(data)) != size {
		return fmt.Errorf("gguf: tensor %q: %d bytes of data, want %d for %v %v", name, len(data), size, t, dims)
	}
	w.add(wtensor{name: name, typ: t, dims: dims, size: size, data: data})
	return nil
}

// AddTensorFunc adds a tensor whose bytes fn writes when WriteTo reaches
// it, so tensors can be generated without holding them in memory. fn must
// write exactly the tensor's size (TensorBytes); writing more fails, and
// writing less makes WriteTo fail.
func (w *Writer) AddTensorFunc(name string, t quant.Type, dims []int64, fn func(io.Writer) error) error {
	size, err := w.check(name, t, dims)
	if err != nil {
		return err
	}
	if fn == nil {
		return fmt.Errorf("gguf: tensor %q: nil data function", name)
	}
	w.add(wtensor{name: name, typ: t, dims: dims, size: size, fn: fn})
	return nil
}

// TensorBytes returns the size in bytes of a tensor of type t with the
// given ggml dims, or an error saying why no GGUF file can hold it.
func TensorBytes(t quant.Type, dims []int64) (int64, error) {
	if len(dims) < 1 || len(dims) > maxDims {
		return 0, fmt.Errorf("%d dimensions, want 1 to %d", len(dims), maxDims)
	}
	if !t.Known() {
		return 0, fmt.Errorf("unknown tensor type id %d", uint32(t))
	}
	rows := int64(1)
	for i, n := range dims {
		if n <= 0 {
			return 0, fmt.Errorf("dimension %d is %d, want at least 1", i, n)
		}
		if i > 0 {
			if rows > math.MaxInt64/n {
				return 0, fmt.Errorf("dimensions %v overflow", dims)
			}
			rows *= n
		}
	}
	rowBytes, err := t.RowBytes(dims[0])
	if err != nil {
		return 0, err
	}
	if rowBytes > math.MaxInt64/rows {
		return 0, fmt.Errorf("dimensions %v overflow", dims)
	}
	return rowBytes * rows, nil
}

func (w *Writer) check(name string, t quant.Type, dims []int64) (int64, error) {
	if w.names[name] {
		return 0, fmt.Errorf("gguf: tensor %q: added twice", name)
	}
	size, err := TensorBytes(t, dims)
	if err != nil {
		return 0, fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	return size, nil
}

func (w *Writer) add(t wtensor) {
	t.dims = append([]int64(nil), t.dims...)
	w.names[t.name] = true
	w.tensors = append(w.tensors, t)
}

// WriteTo writes the file to out and returns the number of bytes written.
// Each tensor starts at a multiple of the alignment and is padded with
// zeros to the next one.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	e := &encoder{w: bufio.NewWriterSize(out, 1<<16)}
	n, err := w.writeTo(e)
	if err != nil {
		return n, err
	}
	if err := e.w.Flush(); err != nil {
		return e.n - int64(e.w.Buffered()), err
	}
	return e.n, nil
}

func (w *Writer) writeTo(e *encoder) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	align := int64(defaultAlignment)
	if i, ok := w.kvIndex["general.alignment"]; ok {
		a, ok := w.kvs[i].Value.(uint32)
		if !ok || a == 0 || a&(a-1) != 0 || a > maxAlignment {
			return 0, fmt.Errorf("gguf: key \"general.alignment\": %v (%T) is not a uint32 power of two", w.kvs[i].Value, w.kvs[i].Value)
		}
		align = int64(a)
	}
	e.raw([]byte(magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		e.str(kv.Key)
		t, _ := typeOf(kv.Value, 0)
		e.u32(uint32(t))
		e.value(kv.Value)
	}
	off := int64(0)
	for _, t := range w.tensors {
		e.str(t.name)
		e.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			e.u64(uint64(d))
		}
		e.u32(uint32(t.typ))
		e.u64(uint64(off))
		off += pad(t.size, align)
	}
	if len(w.tensors) > 0 { // vocab-only files end right after the header
		e.zeros(pad(e.n, align) - e.n)
	}
	for _, t := range w.tensors {
		if e.err != nil {
			break
		}
		if t.fn == nil {
			e.raw(t.data)
		} else {
			tw := &tensorWriter{e: e, left: t.size}
			if err := t.fn(tw); err != nil {
				return e.n, fmt.Errorf("gguf: tensor %q: %w", t.name, err)
			}
			if tw.left != 0 {
				return e.n, fmt.Errorf("gguf: tensor %q: data function wrote %d bytes, want %d", t.name, t.size-tw.left, t.size)
			}
		}
		e.zeros(pad(t.size, align) - t.size)
	}
	return e.n, e.err
}

func pad(n, align int64) int64 { return (n + align - 1) / align * align }

// errTooMuch is returned to a tensor data function that writes past the
// tensor's size.
var errTooMuch = errors.New("data function wrote more than the tensor's size")

type tensorWriter struct {
	e    *encoder
	left int64
}

func (t *tensorWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > t.left {
		return 0, errTooMuch
	}
	t.e.raw(p)
	if t.e.err != nil {
		return 0, t.e.err
	}
	t.left -= int64(len(p))
	return len(p), nil
}

// typeOf returns the GGUF type of a value AddKV accepts; depth counts the
// arrays enclosing v.
func typeOf(v any, depth int) (valueType, error) {
	switch x := v.(type) {
	case uint8:
		return typeUint8, nil
	case int8:
		return typeInt8, nil
	case uint16:
		return typeUint16, nil
	case int16:
		return typeInt16, nil
	case uint32:
		return typeUint32, nil
	case int32:
		return typeInt32, nil
	case uint64:
		return typeUint64, nil
	case int64:
		return typeInt64, nil
	case float32:
		return typeFloat32, nil
	case float64:
		return typeFloat64, nil
	case bool:
		return typeBool, nil
	case string:
		return typeString, nil
	case []uint8, []int8, []uint16, []int16, []uint32, []int32, []uint64, []int64,
		[]float32, []float64, []bool, []string:
		if depth >= maxArrayDepth {
			return 0, fmt.Errorf("arrays nested more than %d deep", maxArrayDepth)
		}
		return typeArray, nil
	case []any:
		if depth >= maxArrayDepth {
			return 0, fmt.Errorf("arrays nested more than %d deep", maxArrayDepth)
		}
		for i, el := range x {
			t, err := typeOf(el, depth+1)
			if err != nil {
				return 0, err
			}
			if t != typeArray {
				return 0, fmt.Errorf("element %d of an array of arrays is a %T, not an array", i, el)
			}
		}
		return typeArray, nil
	}
	return 0, fmt.Errorf("GGUF has no type for Go %T", v)
}

// encoder writes little-endian fields and counts bytes; the first error
// sticks and turns later writes into no-ops.
type encoder struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (e *encoder) raw(p []byte) {
	if e.err != nil {
		return
	}
	var k int
	k, e.err = e.w.Write(p)
	e.n += int64(k)
}

var zeroPage [4096]byte

func (e *encoder) zeros(n int64) {
	for n > 0 && e.err == nil {
		k := min(n, int64(len(zeroPage)))
		e.raw(zeroPage[:k])
		n -= k
	}
}

func (e *encoder) u32(v uint32) { writeOne(e, v, appendU32) }
func (e *encoder) u64(v uint64) { writeOne(e, v, appendU64) }

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.raw(append(e.w.AvailableBuffer(), s...))
}

// value writes v, of a type typeOf accepts. Single values and arrays
// share the element encodings below.
func (e *encoder) value(v any) {
	switch x := v.(type) {
	case uint8:
		writeOne(e, x, appendU8)
	case int8:
		writeOne(e, x, appendI8)
	case bool:
		writeOne(e, x, appendBool)
	case uint16:
		writeOne(e, x, appendU16)
	case int16:
		writeOne(e, x, appendI16)
	case uint32:
		writeOne(e, x, appendU32)
	case int32:
		writeOne(e, x, appendI32)
	case float32:
		writeOne(e, x, appendF32)
	case uint64:
		writeOne(e, x, appendU64)
	case int64:
		writeOne(e, x, appendI64)
	case float64:
		writeOne(e, x, appendF64)
	case string:
		e.str(x)
	case []uint8:
		e.arrayHeader(typeUint8, len(x))
		e.raw(x)
	case []int8:
		writeArray(e, typeInt8, x, appendI8)
	case []bool:
		writeArray(e, typeBool, x, appendBool)
	case []uint16:
		writeArray(e, typeUint16, x, appendU16)
	case []int16:
		writeArray(e, typeInt16, x, appendI16)
	case []uint32:
		writeArray(e, typeUint32, x, appendU32)
	case []int32:
		writeArray(e, typeInt32, x, appendI32)
	case []float32:
		writeArray(e, typeFloat32, x, appendF32)
	case []uint64:
		writeArray(e, typeUint64, x, appendU64)
	case []int64:
		writeArray(e, typeInt64, x, appendI64)
	case []float64:
		writeArray(e, typeFloat64, x, appendF64)
	case []string:
		e.arrayHeader(typeString, len(x))
		for _, s := range x {
			e.str(s)
		}
	case []any:
		e.arrayHeader(typeArray, len(x))
		for _, el := range x {
			e.value(el)
		}
	}
}

// GGUF's little-endian encodings of its fixed-size element types.
func appendU8(b []byte, v uint8) []byte    { return append(b, v) }
func appendI8(b []byte, v int8) []byte     { return append(b, byte(v)) }
func appendBool(b []byte, v bool) []byte   { return append(b, b2u(v)) }
func appendU16(b []byte, v uint16) []byte  { return binary.LittleEndian.AppendUint16(b, v) }
func appendI16(b []byte, v int16) []byte   { return appendU16(b, uint16(v)) }
func appendU32(b []byte, v uint32) []byte  { return binary.LittleEndian.AppendUint32(b, v) }
func appendI32(b []byte, v int32) []byte   { return appendU32(b, uint32(v)) }
func appendF32(b []byte, v float32) []byte { return appendU32(b, math.Float32bits(v)) }
func appendU64(b []byte, v uint64) []byte  { return binary.LittleEndian.AppendUint64(b, v) }
func appendI64(b []byte, v int64) []byte   { return appendU64(b, uint64(v)) }
func appendF64(b []byte, v float64) []byte { return appendU64(b, math.Float64bits(v)) }

// writeOne encodes one fixed-size value into the bufio buffer.
func writeOne[T any](e *encoder, x T, put func([]byte, T) []byte) {
	e.raw(put(e.w.AvailableBuffer(), x))
}

func (e *encoder) arrayHeader(t valueType, n int) {
	e.u32(uint32(t))
	e.u64(uint64(n))
}

// writeArray encodes fixed-size elements into the bufio buffer in batches.
func writeArray[T any](e *encoder, t valueType, xs []T, put func([]byte, T) []byte) {
	e.arrayHeader(t, len(xs))
	const batch = 512
	for i := 0; i < len(xs); i += batch {
		b := e.w.AvailableBuffer()
		for _, v := range xs[i:min(i+batch, len(xs))] {
			b = put(b, v)
		}
		e.raw(b)
	}
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}
