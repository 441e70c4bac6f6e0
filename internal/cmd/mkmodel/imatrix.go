package main

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
)

// writeImatrix writes an importance matrix in llama.cpp's legacy binary
// format that weighs every input column of every matrix of m equally, so
// that llama-quantize --imatrix can make the types it refuses to make
// without one (IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M) from an f16 file of
// the same shape. Such a file is as large and as fast to run as one made
// with a real importance matrix; only its weights differ.
//
// The format: int32 entry count; per entry an int32 name length, the
// name, int32 call count and int32 value count, then the values as
// float32 (the per-column mean of the squared activations: sum/calls).
// A matrix's entry has a value per input column, times the experts for a
// 3-D expert tensor.
func (m *model) writeImatrix(out io.Writer) (int64, error) {
	var entries []tensorPlan
	for _, t := range m.tensors {
		if len(t.Dims) >= 2 && t.Name != "token_embd.weight" {
			entries = append(entries, t)
		}
	}
	w := bufio.NewWriter(out)
	put := func(v any) { binary.Write(w, binary.LittleEndian, v) }
	put(int32(len(entries)))
	size := int64(4)
	one := math.Float32bits(1)
	for _, t := range entries {
		n := t.Dims[0]
		if len(t.Dims) == 3 {
			n *= t.Dims[2]
		}
		size += 12 + int64(len(t.Name)) + 4*n
		put(int32(len(t.Name)))
		w.WriteString(t.Name)
		put(int32(1)) // calls
		put(int32(n))
		for range n {
			put(one)
		}
	}
	return size, w.Flush()
}
