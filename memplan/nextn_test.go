package memplan

import (
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
)

// A glm4moe's or bailingmoe2's NextN block is never read, as llama.cpp
// skips it: its bytes are SkippedBytes, in no block's bytes or range and
// not in the resident weights.
func TestShapeSkipsNextN(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyGLM4MoE(), testutil.TinyBailingMoE2()} {
		t.Run(spec.Arch, func(t *testing.T) {
			path, sh, _ := tinyPlan(t, spec)
			g, _ := testutil.ReadModel(t, path)
			var nextn int64
			for _, ti := range g.Tensors {
				if strings.HasPrefix(ti.Name, "blk.3.") {
					nextn += ti.Size
				}
			}
			if nextn == 0 || sh.SkippedBytes != nextn || len(sh.LayerBytes) != 3 || sh.Config.NextN != 1 {
				t.Fatalf("skipped %d bytes over %d blocks, want the NextN block's %d after 3", sh.SkippedBytes, len(sh.LayerBytes), nextn)
			}
			all := *sh
			all.SkippedBytes = 0
			if got, want := sh.ResidentWeights(), all.ResidentWeights()-nextn; got != want {
				t.Errorf("resident weights %d, want %d (without the NextN block)", got, want)
			}
		})
	}
}

// A tensor llama.cpp loads and its graph never reads (model.PassedOver:
// here gemma-embedding's output matrix) is counted as skipped, as a
// NextN block is: not output bytes, not resident, not read ahead.
func TestShapeSkipsPassedOver(t *testing.T) {
	data, err := testutil.ModelBytes(testutil.TinyGemmaEmbedding())
	g, _ := testutil.Parse(t, data, err)
	want, err := ShapeOf(g, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	// Its bytes are some of the file's (the file's size unchanged): they
	// leave the resident weights.
	out := gguf.TensorInfo{Name: "output.weight", Type: quant.F32, Dims: []int64{64, 320}, Size: 64 * 320 * 4}
	g.Tensors = append(g.Tensors, out)
	got, err := ShapeOf(g, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got.SkippedBytes != want.SkippedBytes+out.Size || got.OutBytes != 0 || got.ResidentWeights() != want.ResidentWeights()-out.Size {
		t.Errorf("with output.weight: %d skipped, %d output and %d resident bytes; want %d, 0 and %d",
			got.SkippedBytes, got.OutBytes, got.ResidentWeights(), want.SkippedBytes+out.Size, want.ResidentWeights()-out.Size)
	}
	if rs := model.SkippedRanges(g, &got.Config); !slices.Contains(rs, model.Range{Off: out.Offset, Len: out.Size}) {
		t.Errorf("skipped ranges %v leave out output.weight's", rs)
	}
}
