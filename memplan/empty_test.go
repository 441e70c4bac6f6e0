package memplan_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/quant"
)

// A tensor of no elements holds no byte of its block, wherever its offset
// lies (here the end of the file): the block's range, its bytes and the
// file's other bytes are the file's without it.
func TestShapeEmptyTensor(t *testing.T) {
	data, err := testutil.ModelBytes(testutil.TinyLlama())
	g, _ := testutil.Parse(t, data, err)
	want, err := memplan.ShapeOf(g, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	g, err = gguf.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	g.Tensors = append(g.Tensors, gguf.TensorInfo{Name: "blk.0.empty.weight", Type: quant.F32, Dims: []int64{0}, Offset: int64(len(data))})
	got, err := memplan.ShapeOf(g, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.BlockRanges, want.BlockRanges) || !slices.Equal(got.LayerBytes, want.LayerBytes) || got.Params != want.Params || got.OtherBytes != want.OtherBytes {
		t.Errorf("blocks %v (%v bytes), %d parameters, %d other bytes; without the empty tensor %v (%v), %d, %d",
			got.BlockRanges, got.LayerBytes, got.Params, got.OtherBytes, want.BlockRanges, want.LayerBytes, want.Params, want.OtherBytes)
	}
}
