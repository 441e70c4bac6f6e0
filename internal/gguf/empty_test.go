package gguf

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/quant"
)

// emptyTensors are the tensors of emptyFile: tensors of no elements (a
// dimension of 0, as Ollama's converter writes Phi-3's absent rope
// factors) between and after ones with data, one of them with dimensions
// that would overflow but for the 0.
var emptyTensors = []sampleTensor{
	{"token_embd.weight", quant.F32, []int64{16, 3}},
	{"rope_factors_long.weight", quant.F32, []int64{0}},
	{"rope_factors_short.weight", quant.F32, []int64{0}},
	{"blk.0.attn_q.weight", quant.Q8_0, []int64{32, 2}},
	{"blk.0.huge_empty.weight", quant.Q8_0, []int64{0, 1 << 40, 1 << 40}},
	{"blk.0.mid_empty.weight", quant.F32, []int64{4, 0, 3}},
	{"output_norm.weight", quant.F32, []int64{16}},
	{"last_empty.weight", quant.F16, []int64{8, 0}},
}

func emptyFile(t testing.TB) []byte {
	t.Helper()
	w := NewWriter()
	w.AddKV("general.architecture", "llama")
	w.SetAlignment(32)
	return writeSample(t, w, emptyTensors)
}

// TestReadEmptyTensors reads tensors with a dimension of 0 as ggml's
// reader does: no bytes, at an aligned offset where the tensors before
// them end, and the tensors with data around them unmoved.
func TestReadEmptyTensors(t *testing.T) {
	b := emptyFile(t)
	f, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range emptyTensors {
		ti, ok := f.Tensor(st.name)
		if !ok {
			t.Fatalf("tensor %q missing", st.name)
		}
		want, _ := TensorBytes(st.typ, st.dims)
		if ti.Size != want || ti.Type != st.typ || !slices.Equal(ti.Dims, st.dims) {
			t.Errorf("%s: %v %v %d bytes, want %v %v %d", st.name, ti.Type, ti.Dims, ti.Size, st.typ, st.dims, want)
		}
		if (ti.Offset-f.DataOffset)%f.Alignment != 0 || ti.Offset+ti.Size > f.Size {
			t.Errorf("%s: offset %d (data at %d, alignment %d, file %d bytes)", st.name, ti.Offset, f.DataOffset, f.Alignment, f.Size)
		}
		if !bytes.Equal(b[ti.Offset:ti.Offset+ti.Size], sampleData(i, want)) {
			t.Errorf("%s: data differs", st.name)
		}
	}
	for _, name := range []string{"rope_factors_long.weight", "blk.0.huge_empty.weight", "last_empty.weight"} {
		if ti, _ := f.Tensor(name); ti.Size != 0 {
			t.Errorf("%s: %d bytes, want 0", name, ti.Size)
		}
	}
}

// TestReadEmptyTensorsHostile places or shapes an empty tensor where
// ggml's reader refuses it: at an offset not a multiple of the alignment,
// past the end of the file, inside another tensor's data (ggml wants it
// where the tensor before it ends), with a dimension above 2^63-1, or with
// a row that is not whole blocks.
func TestReadEmptyTensorsHostile(t *testing.T) {
	offAt := func(b []byte, name string, nd int) int { return after(t, b, name) + 4 + 8*nd + 4 }
	dimsAt := func(b []byte, name string) int { return after(t, b, name) + 4 }
	tests := []struct {
		name   string
		mutate func(b []byte) []byte
		want   string
	}{
		{"misaligned", func(b []byte) []byte {
			at := offAt(b, "rope_factors_long.weight", 1)
			put64(b, at, bytesU64(b[at:])+4)
			return b
		}, `tensor "rope_factors_long.weight": offset`},
		{"past the end", func(b []byte) []byte {
			put64(b, offAt(b, "rope_factors_short.weight", 1), 1<<40)
			return b
		}, `tensor "rope_factors_short.weight": offset 1099511627776 past end of file`},
		{"one alignment past the end", func(b []byte) []byte {
			at := offAt(b, "last_empty.weight", 2)
			put64(b, at, uint64(len(b))+32) // past the file whatever the data offset
			return b
		}, `tensor "last_empty.weight": `},
		{"inside another tensor", func(b []byte) []byte {
			// token_embd is 16×3 F32 = 192 bytes from the data's start.
			put64(b, offAt(b, "rope_factors_long.weight", 1), 64)
			return b
		}, `tensor "rope_factors_long.weight": data [`},
		{"dimension above int64", func(b []byte) []byte {
			put64(b, dimsAt(b, "blk.0.mid_empty.weight")+16, 1<<63)
			return b
		}, `tensor "blk.0.mid_empty.weight": dimension 2 is 9223372036854775808`},
		{"partial block", func(b []byte) []byte {
			put64(b, dimsAt(b, "blk.0.huge_empty.weight"), 48)
			put64(b, dimsAt(b, "blk.0.huge_empty.weight")+8, 0)
			return b
		}, "row of 48 elements is not a multiple of the Q8_0 block size 32"},
	}
	good := emptyFile(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.mutate(bytes.Clone(good))
			err := readLimited(t, b, int64(len(b)))
			if err == nil {
				t.Fatal("Read succeeded")
			}
			if !errors.Is(err, ErrBadFile) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want ErrBadFile containing %q", err, tc.want)
			}
		})
	}
}
