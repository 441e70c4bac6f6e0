package gguf

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/lowmem/llm/quant"
)

func TestRoundTripValues(t *testing.T) {
	kvs := []KV{
		{"u8", uint8(200)},
		{"i8", int8(-100)},
		{"u16", uint16(60000)},
		{"i16", int16(-30000)},
		{"u32", uint32(4000000000)},
		{"i32", int32(-2000000000)},
		{"f32", float32(1e-5)},
		{"bool.true", true},
		{"bool.false", false},
		{"str", "héllo ▁world"},
		{"str.empty", ""},
		{"u64", uint64(math.MaxUint64)},
		{"i64", int64(math.MinInt64)},
		{"f64", math.Pi},
		{"a.u8", []uint8{0, 1, 255}},
		{"a.i8", []int8{-128, 0, 127}},
		{"a.u16", []uint16{0, 65535}},
		{"a.i16", []int16{-32768, 32767}},
		{"a.u32", []uint32{0, math.MaxUint32}},
		{"a.i32", []int32{math.MinInt32, -1, math.MaxInt32}},
		{"a.f32", []float32{0, -1.5, float32(math.Inf(1))}},
		{"a.bool", []bool{true, false, true}},
		{"a.str", []string{"", "a", "▁the", "<0x0A>"}},
		{"a.u64", []uint64{0, math.MaxUint64}},
		{"a.i64", []int64{math.MinInt64, math.MaxInt64}},
		{"a.f64", []float64{math.SmallestNonzeroFloat64, -2}},
		{"a.empty", []int32{}},
		{"a.nested", []any{[]int32{1, 2}, []string{"x", "y"}, []any{[]bool{true}, []float64{}}}},
		{"a.nested.empty", []any{}},
	}
	w := NewWriter()
	for _, kv := range kvs {
		w.AddKV(kv.Key, kv.Value)
	}
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Errorf("WriteTo returned %d, wrote %d", n, buf.Len())
	}
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 3 || f.Alignment != 32 || len(f.Tensors) != 0 {
		t.Errorf("version %d alignment %d tensors %d, want 3 32 0", f.Version, f.Alignment, len(f.Tensors))
	}
	if !reflect.DeepEqual(f.KV, kvs) {
		for i := range kvs {
			if i >= len(f.KV) || !reflect.DeepEqual(f.KV[i], kvs[i]) {
				t.Errorf("kv %d: got %#v, want %#v", i, f.KV[min(i, len(f.KV)-1)], kvs[i])
			}
		}
	}
	for _, kv := range kvs {
		v, ok := f.Get(kv.Key)
		if !ok || !reflect.DeepEqual(v, kv.Value) {
			t.Errorf("Get(%q) = %#v, %v", kv.Key, v, ok)
		}
	}
}

func TestRoundTripTensors(t *testing.T) {
	for _, align := range []int{1, 32, 64, 4096} {
		w := NewWriter()
		w.SetAlignment(align)
		var want [][]byte
		for i, st := range sampleTensors {
			size, err := TensorBytes(st.typ, st.dims)
			if err != nil {
				t.Fatal(err)
			}
			data := sampleData(i, size)
			want = append(want, data)
			if i%2 == 0 {
				err = w.AddTensor(st.name, st.typ, st.dims, data)
			} else { // streamed in uneven pieces
				err = w.AddTensorFunc(st.name, st.typ, st.dims, func(w io.Writer) error {
					for p := data; len(p) > 0; {
						k := min(len(p), 5)
						if _, err := w.Write(p[:k]); err != nil {
							return err
						}
						p = p[k:]
					}
					return nil
				})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		f, err := Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("alignment %d: %v", align, err)
		}
		if f.Alignment != int64(align) || f.DataOffset%int64(align) != 0 {
			t.Errorf("alignment %d: read alignment %d, data offset %d", align, f.Alignment, f.DataOffset)
		}
		if len(f.Tensors) != len(sampleTensors) {
			t.Fatalf("alignment %d: %d tensors, want %d", align, len(f.Tensors), len(sampleTensors))
		}
		for i, st := range sampleTensors {
			ti, ok := f.Tensor(st.name)
			if !ok || ti != &f.Tensors[i] {
				t.Fatalf("Tensor(%q) = %v, %v", st.name, ti, ok)
			}
			if ti.Type != st.typ || !reflect.DeepEqual(ti.Dims, st.dims) || ti.Size != int64(len(want[i])) {
				t.Errorf("%s: %v %v %d bytes, want %v %v %d", st.name, ti.Type, ti.Dims, ti.Size, st.typ, st.dims, len(want[i]))
			}
			if ti.Offset%int64(align) != 0 {
				t.Errorf("%s: offset %d not aligned to %d", st.name, ti.Offset, align)
			}
			if got := b[ti.Offset : ti.Offset+ti.Size]; !bytes.Equal(got, want[i]) {
				t.Errorf("%s: data differs", st.name)
			}
		}
		if int64(len(b))%int64(align) != 0 {
			t.Errorf("alignment %d: file of %d bytes is not padded", align, len(b))
		}
	}
}

// Named types are not GGUF's: AddKV takes the built-in ones only.
type (
	namedU32  uint32
	namedU32s []uint32
)

func TestWriterErrors(t *testing.T) {
	f32 := func(n int) []byte { return make([]byte, 4*n) }
	tests := []struct {
		name string
		do   func(w *Writer) error
		want string
	}{
		{"int value", func(w *Writer) error { w.AddKV("k", 5); return nil }, "no type for Go int"},
		{"scalar in nested array", func(w *Writer) error { w.AddKV("k", []any{uint8(1)}); return nil }, "not an array"},
		{"named scalar type", func(w *Writer) error { w.AddKV("k", namedU32(1)); return nil }, "no type for Go gguf.namedU32"},
		{"named slice type", func(w *Writer) error { w.AddKV("k", namedU32s{1}); return nil }, "no type for Go gguf.namedU32s"},
		{"slice of int", func(w *Writer) error { w.AddKV("k", []int{1}); return nil }, "no type for Go []int"},
		{"nil value", func(w *Writer) error { w.AddKV("k", nil); return nil }, "no type for Go <nil>"},
		{"bad element deep in nested array", func(w *Writer) error { w.AddKV("k", []any{[]any{[]int{1}}}); return nil }, "no type for Go []int"},
		{"arrays nested too deep", func(w *Writer) error {
			v := any([]int32{1})
			for range maxArrayDepth {
				v = []any{v}
			}
			w.AddKV("k", v)
			return nil
		}, "nested more than 8 deep"},
		{"bad alignment", func(w *Writer) error { w.SetAlignment(3); return nil }, "not a power of two"},
		{"alignment of wrong type", func(w *Writer) error { w.AddKV("general.alignment", uint64(64)); return nil }, "general.alignment"},
		{"short data", func(w *Writer) error { return w.AddTensor("t", quant.F32, []int64{4}, f32(3)) }, "12 bytes of data, want 16"},
		{"duplicate", func(w *Writer) error {
			if err := w.AddTensor("t", quant.F32, []int64{4}, f32(4)); err != nil {
				return err
			}
			return w.AddTensor("t", quant.F32, []int64{4}, f32(4))
		}, "added twice"},
		{"negative dim", func(w *Writer) error { return w.AddTensor("t", quant.F32, []int64{4, -1}, nil) }, "dimension 1 is -1"},
		{"five dims", func(w *Writer) error { return w.AddTensor("t", quant.F32, []int64{1, 1, 1, 1, 1}, f32(1)) }, "5 dimensions"},
		{"unknown type", func(w *Writer) error { return w.AddTensor("t", quant.Type(99), []int64{4}, nil) }, "unknown tensor type id 99"},
		{"partial block", func(w *Writer) error { return w.AddTensor("t", quant.Q8_0, []int64{48}, nil) }, "not a multiple"},
		{"overflow", func(w *Writer) error { return w.AddTensor("t", quant.F32, []int64{1 << 40, 1 << 40}, nil) }, "overflow"},
		{"func writes too little", func(w *Writer) error {
			return w.AddTensorFunc("t", quant.F32, []int64{4}, func(w io.Writer) error { _, err := w.Write(f32(3)); return err })
		}, "wrote 12 bytes, want 16"},
		{"func writes too much", func(w *Writer) error {
			return w.AddTensorFunc("t", quant.F32, []int64{4}, func(w io.Writer) error { _, err := w.Write(f32(5)); return err })
		}, "more than the tensor's size"},
		{"func fails", func(w *Writer) error {
			return w.AddTensorFunc("t", quant.F32, []int64{4}, func(io.Writer) error { return errors.New("boom") })
		}, "boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWriter()
			err := tc.do(w)
			if err == nil {
				_, err = w.WriteTo(io.Discard)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// writeRead writes w out and reads the result back.
func writeRead(t *testing.T, w *Writer) *File {
	t.Helper()
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestAddKVReplaces(t *testing.T) {
	w := NewWriter()
	w.AddKV("a", uint32(1))
	w.AddKV("b", "x")
	w.AddKV("a", "two")
	f := writeRead(t, w)
	want := []KV{{"a", "two"}, {"b", "x"}}
	if !reflect.DeepEqual(f.KV, want) {
		t.Errorf("got %v, want %v", f.KV, want)
	}
}

func TestAccessors(t *testing.T) {
	f := &File{KV: []KV{
		{"general.architecture", "qwen2"},
		{"u8", uint8(5)},
		{"i32.neg", int32(-3)},
		{"i64", int64(1 << 40)},
		{"u64.huge", uint64(math.MaxUint64)},
		{"f32", float32(0.5)},
		{"f64", 0.25},
		{"b", true},
		{"s", "str"},
		{"ss", []string{"a", "b"}},
		{"f32s", []float32{1, 2}},
		{"f64s", []float64{1.5}},
		{"i32s", []int32{-1, 2}},
		{"u8s", []uint8{1, 255}},
		{"u32s.big", []uint32{math.MaxUint32}},
		{"i64s", []int64{-5, 6}},
	}}
	check := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
	two := func(v any, ok bool) []any { return []any{v, ok} }
	check("Arch", f.Arch(), "qwen2")
	check("Uint(u8)", two(f.Uint("u8")), []any{uint64(5), true})
	check("Uint(i32.neg)", two(f.Uint("i32.neg")), []any{uint64(0), false})
	check("Uint(i64)", two(f.Uint("i64")), []any{uint64(1 << 40), true})
	check("Uint(s)", two(f.Uint("s")), []any{uint64(0), false})
	check("Uint(missing)", two(f.Uint("missing")), []any{uint64(0), false})
	check("Int(i32.neg)", two(f.Int("i32.neg")), []any{int64(-3), true})
	check("Int(u64.huge)", two(f.Int("u64.huge")), []any{int64(0), false})
	check("Int(u8)", two(f.Int("u8")), []any{int64(5), true})
	check("Float(f32)", two(f.Float("f32")), []any{0.5, true})
	check("Float(f64)", two(f.Float("f64")), []any{0.25, true})
	check("Float(u8)", two(f.Float("u8")), []any{0.0, false})
	check("Bool(b)", two(f.Bool("b")), []any{true, true})
	check("Bool(u8)", two(f.Bool("u8")), []any{false, false})
	check("String(s)", two(f.String("s")), []any{"str", true})
	check("String(ss)", two(f.String("ss")), []any{"", false})
	check("Strings(ss)", two(f.Strings("ss")), []any{[]string{"a", "b"}, true})
	check("Float32s(f32s)", two(f.Float32s("f32s")), []any{[]float32{1, 2}, true})
	check("Float32s(f64s)", two(f.Float32s("f64s")), []any{[]float32{1.5}, true})
	check("Float32s(i32s)", two(f.Float32s("i32s")), []any{[]float32(nil), false})
	check("Int32s(i32s)", two(f.Int32s("i32s")), []any{[]int32{-1, 2}, true})
	check("Int32s(u8s)", two(f.Int32s("u8s")), []any{[]int32{1, 255}, true})
	check("Int32s(i64s)", two(f.Int32s("i64s")), []any{[]int32{-5, 6}, true})
	check("Int32s(u32s.big)", two(f.Int32s("u32s.big")), []any{[]int32(nil), false})
	check("Int32s(ss)", two(f.Int32s("ss")), []any{[]int32(nil), false})
	if _, ok := f.Tensor("x"); ok {
		t.Error("Tensor on a file without tensors found one")
	}
}

// failAfter accepts limit bytes, then fails every write.
type failAfter struct {
	limit int
	err   error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n := f.limit
		f.limit = 0
		return n, f.err
	}
	f.limit -= len(p)
	return len(p), nil
}

// TestWriteToFailingWriter: an output that fails anywhere (in the header,
// inside a large array, in a tensor written directly or by a function, at
// the final flush) makes WriteTo return its error.
func TestWriteToFailingWriter(t *testing.T) {
	build := func() *Writer {
		w := NewWriter()
		w.AddKV("big", make([]float32, 40000)) // larger than the write buffer
		w.AddKV("s", []string{"a", "b"})
		if err := w.AddTensor("t", quant.F32, []int64{20000}, make([]byte, 80000)); err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensorFunc("u", quant.F32, []int64{4}, func(w io.Writer) error {
			_, err := w.Write(make([]byte, 16))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return w
	}
	total, err := build().WriteTo(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	for _, limit := range []int{0, 10, 70000, 160100, int(total) - 1} {
		n, err := build().WriteTo(&failAfter{limit: limit, err: boom})
		if !errors.Is(err, boom) {
			t.Errorf("output failing after %d of %d bytes: error %v, want %v", limit, total, err, boom)
		}
		if n > total {
			t.Errorf("output failing after %d bytes: %d bytes reported written, more than the file's %d", limit, n, total)
		}
	}
}
