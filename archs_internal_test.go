package llm

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// The plan's KV cache and activations are what a session of each new
// architecture allocates: gemma3's window pattern, phi3's ignored window,
// the expert model's scratch.
func TestPlanMatchesLoadedNewArchs(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyQwen3(), testutil.TinyGemma3(), testutil.TinyPhi3(), testutil.TinyQwen3MoE()} {
		t.Run(spec.Arch, func(t *testing.T) {
			path := writeSpec(t, spec)
			m, err := Load(path, WithMemoryLimit(1<<30), WithContextSize(200), WithBatchSize(32), WithKVPreallocate())
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			s, err := m.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			byName := map[string]int64{}
			for _, c := range m.Plan().Components {
				byName[c.Name] = c.Bytes
			}
			if got, want := byName["kv cache"], s.st.Cache().Bytes(); got != want {
				t.Errorf("kv planned %d, allocated %d", got, want)
			}
			if got, want := byName["activations"], int64(s.st.Arena().Cap()); got != want {
				t.Errorf("activations planned %d, arena holds %d", got, want)
			}
		})
	}
}
