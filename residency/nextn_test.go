package residency

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
)

// A glm4moe's or bailingmoe2's NextN block is never read ahead, resident
// or streamed: no range Start reads ahead meets its tensors.
func TestNextNNotReadAhead(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyGLM4MoE(), testutil.TinyBailingMoE2()} {
		for _, mode := range []memplan.WeightsMode{memplan.WeightsResident, memplan.WeightsStreaming} {
			t.Run(spec.Arch+"/"+mode.String(), func(t *testing.T) {
				limit := int64(1 << 40)
				if mode == memplan.WeightsStreaming {
					limit = 0
				}
				l := load(t, testutil.TempModel(t, spec), request(mode, limit), nil)
				defer l.close()
				skipped := model.SkippedRanges(l.w.cfg.File, &l.m.Config)
				if len(skipped) == 0 {
					t.Fatal("no NextN tensors")
				}
				for _, a := range l.w.ahead {
					for _, s := range skipped {
						if a.Off < s.Off+s.Len && s.Off < a.Off+a.Len {
							t.Errorf("read ahead [%d, %d) meets a NextN tensor at [%d, %d)", a.Off, a.Off+a.Len, s.Off, s.Off+s.Len)
						}
					}
				}
			})
		}
	}
}
