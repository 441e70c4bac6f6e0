package memplan_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
)

// A tensor of no elements that the model has no place for is refused
// like any other such tensor (llama.cpp counts it too), before its offset
// (here the end of the file) can be taken for a byte of its block.
func TestShapeEmptyTensor(t *testing.T) {
	data, err := testutil.ModelBytes(testutil.TinyLlama())
	g, _ := testutil.Parse(t, data, err)
	if _, err := memplan.ShapeOf(g, int64(len(data))); err != nil {
		t.Fatal(err)
	}
	g, err = gguf.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	g.Tensors = append(g.Tensors, gguf.TensorInfo{Name: "blk.0.empty.weight", Type: quant.F32, Dims: []int64{0}, Offset: int64(len(data))})
	_, err = memplan.ShapeOf(g, int64(len(data)))
	if !errors.Is(err, model.ErrUnsupportedArch) || !strings.Contains(fmt.Sprint(err), "blk.0.empty.weight") {
		t.Errorf("ShapeOf with an empty tensor the model has no place for: %v, want ErrUnsupportedArch naming it", err)
	}
}
