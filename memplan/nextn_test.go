package memplan

import (
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
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
