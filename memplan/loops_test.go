package memplan

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// A looped stack (nanbeige) keeps keys and values once a run of its
// blocks, as llama.cpp d32676d77 gives each of its block_count ×
// num_loops logical layers cells of its own (llama-bench on TinyNanbeige
// run 3 times: "256 cells, 6 layers", 0.19 MiB): the plan's cache is the
// same model's run once times num_loops, each run's layers in it.
func TestPlanLoopedKV(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyNanbeige(), testutil.TinyNanbeigeSkip()} {
		t.Run(spec.Variant(), func(t *testing.T) {
			once := spec
			once.Loops = 1
			_, sh, p := tinyPlan(t, spec)
			_, _, p1 := tinyPlan(t, once)
			if kc := sh.Config.KVConfig(p.KVType, p.Context); kc.Layers != spec.Layers*spec.Loops {
				t.Errorf("%d cache layers, want %d blocks × %d runs", kc.Layers, spec.Layers, spec.Loops)
			}
			got, one := p.kvBytes(), p1.kvBytes()
			if one == 0 || got != int64(spec.Loops)*one {
				t.Errorf("kv cache planned %d bytes, want %d runs × %d", got, spec.Loops, one)
			}
		})
	}
}
