package tensor

import (
	"fmt"

	"github.com/lowmem/llm/quant"
)

// Tensor is a typed, shaped block of bytes. Shape follows ggml's order:
// Shape[0] is the number of elements in a row (the input dimension of a
// weight matrix), Shape[1] the number of rows, and so on.
//
// A borrowed tensor (from View) points into memory owned by someone else,
// usually a mapped model file; it must not outlive that memory and must not
// be written to.
type Tensor struct {
	Name     string
	Type     quant.Type
	Shape    []int
	Data     []byte
	rowBytes int
	borrowed bool
}

// View wraps data as a tensor without copying it. It checks that data holds
// exactly the bytes the type and shape require.
func View(name string, t quant.Type, shape []int, data []byte) (*Tensor, error) {
	tt, err := build(name, t, shape, data)
	if err != nil {
		return nil, err
	}
	tt.borrowed = true
	return tt, nil
}

// New allocates an owned, zeroed tensor on the Go heap.
func New(name string, t quant.Type, shape []int) (*Tensor, error) {
	n, err := byteSize(t, shape)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	return build(name, t, shape, make([]byte, n))
}

func build(name string, t quant.Type, shape []int, data []byte) (*Tensor, error) {
	n, err := byteSize(t, shape)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	if int64(len(data)) != n {
		return nil, fmt.Errorf("tensor %q: %v%v needs %d bytes, have %d", name, t, shape, n, len(data))
	}
	rb, _ := t.RowBytes(int64(shape[0]))
	return &Tensor{Name: name, Type: t, Shape: append([]int(nil), shape...), Data: data, rowBytes: int(rb)}, nil
}

func byteSize(t quant.Type, shape []int) (int64, error) {
	if len(shape) == 0 || len(shape) > 4 {
		return 0, fmt.Errorf("shape %v: want 1 to 4 dimensions", shape)
	}
	rb, err := t.RowBytes(int64(shape[0]))
	if err != nil {
		return 0, err
	}
	total := rb
	for _, d := range shape[1:] {
		if d <= 0 {
			return 0, fmt.Errorf("shape %v: dimension %d", shape, d)
		}
		if total > (1<<62)/int64(d) {
			return 0, fmt.Errorf("shape %v: size overflows", shape)
		}
		total *= int64(d)
	}
	return total, nil
}

// Borrowed reports whether the tensor's bytes belong to someone else.
func (t *Tensor) Borrowed() bool { return t.borrowed }

// Cols is the number of elements in one row.
func (t *Tensor) Cols() int { return t.Shape[0] }

// Rows is the number of rows: the product of every dimension after the first.
func (t *Tensor) Rows() int {
	r := 1
	for _, d := range t.Shape[1:] {
		r *= d
	}
	return r
}

// RowBytes is the size in bytes of one row.
func (t *Tensor) RowBytes() int { return t.rowBytes }

// Row returns the bytes of row i, sharing the tensor's memory.
func (t *Tensor) Row(i int) []byte {
	return t.Data[i*t.rowBytes : (i+1)*t.rowBytes : (i+1)*t.rowBytes]
}

// Bytes is the size of the tensor's data.
func (t *Tensor) Bytes() int64 { return int64(len(t.Data)) }
