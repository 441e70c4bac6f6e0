package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"

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
	empty := false
	for i, n := range dims {
		if n < 0 {
			return 0, fmt.Errorf("dimension %d is %d, want at least 0", i, n)
		}
		empty = empty || n == 0
	}
	rowBytes, err := t.RowBytes(dims[0])
	if err != nil {
		return 0, err
	}
	if empty { // no elements and no bytes, as Read takes it
		return 0, nil
	}
	rows := int64(1)
	for _, n := range dims[1:] {
		if rows > math.MaxInt64/n {
			return 0, fmt.Errorf("dimensions %v overflow", dims)
		}
		rows *= n
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

// fixedTypes are the Go types of GGUF's fixed-size values. binary.Write
// encodes each, and an unnamed slice of each, as GGUF stores it: little
// endian, a bool as one byte 0 or 1.
var fixedTypes = map[reflect.Type]valueType{
	reflect.TypeFor[uint8]():   typeUint8,
	reflect.TypeFor[int8]():    typeInt8,
	reflect.TypeFor[uint16]():  typeUint16,
	reflect.TypeFor[int16]():   typeInt16,
	reflect.TypeFor[uint32]():  typeUint32,
	reflect.TypeFor[int32]():   typeInt32,
	reflect.TypeFor[uint64]():  typeUint64,
	reflect.TypeFor[int64]():   typeInt64,
	reflect.TypeFor[float32](): typeFloat32,
	reflect.TypeFor[float64](): typeFloat64,
	reflect.TypeFor[bool]():    typeBool,
}

// fixedArray returns the element type of v when v is an unnamed slice of
// a fixed-size type ([]uint8 … []float64, []bool).
func fixedArray(v any) (valueType, bool) {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Slice || t != reflect.SliceOf(t.Elem()) {
		return 0, false
	}
	et, ok := fixedTypes[t.Elem()]
	return et, ok
}

// typeOf returns the GGUF type of a value AddKV accepts; depth counts the
// arrays enclosing v.
func typeOf(v any, depth int) (valueType, error) {
	if t, ok := fixedTypes[reflect.TypeOf(v)]; ok {
		return t, nil
	}
	var elems []any
	switch x := v.(type) {
	case string:
		return typeString, nil
	case []string:
	case []any:
		elems = x
	default:
		if _, ok := fixedArray(v); !ok {
			return 0, fmt.Errorf("GGUF has no type for Go %T", v)
		}
	}
	if depth >= maxArrayDepth {
		return 0, fmt.Errorf("arrays nested more than %d deep", maxArrayDepth)
	}
	for i, el := range elems {
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

func (e *encoder) u32(v uint32) { e.raw(binary.LittleEndian.AppendUint32(e.w.AvailableBuffer(), v)) }
func (e *encoder) u64(v uint64) { e.raw(binary.LittleEndian.AppendUint64(e.w.AvailableBuffer(), v)) }

// Write lets binary.Write encode into e.
func (e *encoder) Write(p []byte) (int, error) {
	e.raw(p)
	return len(p), e.err
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.raw(append(e.w.AvailableBuffer(), s...))
}

// value writes v, of a type typeOf accepts.
func (e *encoder) value(v any) {
	switch x := v.(type) {
	case string:
		e.str(x)
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
	default:
		if et, ok := fixedArray(v); ok {
			e.arrayHeader(et, reflect.ValueOf(v).Len())
		}
		if e.err == nil {
			e.err = binary.Write(e, binary.LittleEndian, v)
		}
	}
}

func (e *encoder) arrayHeader(t valueType, n int) {
	e.u32(uint32(t))
	e.u64(uint64(n))
}
