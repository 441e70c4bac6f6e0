package model

import (
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
)

// An empty tensor's offset is no byte of its block: layerRanges covers the
// tensors with data alone, and a block of only empty tensors has none.
func TestLayerRangesSkipEmpty(t *testing.T) {
	f := &gguf.File{Tensors: []gguf.TensorInfo{
		{Name: "blk.0.a.weight", Offset: 1024, Size: 64},
		{Name: "blk.0.empty.weight", Offset: 8192},
		{Name: "blk.0.b.weight", Offset: 1088, Size: 64},
		{Name: "blk.1.empty.weight", Offset: 4096},
	}}
	if got, want := layerRanges(f, 2), [][2]int64{{1024, 1152}, {0, 0}}; !slices.Equal(got, want) {
		t.Errorf("ranges %v, want %v", got, want)
	}
}
