package llm_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// Every architecture loads, plans and decodes through the public API, and
// a decode step of the mixture-of-experts model allocates nothing.
func TestNewArchitecturesDecode(t *testing.T) {
	dir := t.TempDir()
	for _, spec := range []testutil.ModelSpec{testutil.TinyQwen3(), testutil.TinyGemma3(), testutil.TinyPhi3(), testutil.TinyQwen3MoE(), testutil.TinyQwen2MoE(), testutil.TinyPhiMoE(),
		testutil.TinySmallThinker(), testutil.TinySmallThinkerSWA(),
		testutil.TinyAfmoe(), testutil.TinyAfmoeGlobal(),
		testutil.TinyFalconH1(), testutil.TinyJamba(), testutil.TinyMamba(), testutil.TinyMamba2(), testutil.TinyRWKV7(), testutil.TinyRWKV6(), testutil.TinyRWKV6Qwen2(), testutil.TinyARWKV7(),
		testutil.TinyGranite(), testutil.TinyGraniteMoE(), testutil.TinySmolLM3(), testutil.TinyOlmo2(), testutil.TinyMistral3(), testutil.TinyErnie45(), testutil.TinyErnie45MoE(), testutil.TinySeedOSS(), testutil.TinyExaone4(), testutil.TinyExaone4SWA(), testutil.TinyGLM4(), testutil.TinyGLM4Fused(), testutil.TinyGptOss(), testutil.TinyLFM2(),
		testutil.TinyLFM2MoE(), testutil.TinyGemma3n(), testutil.TinyGraniteHybrid(), testutil.TinyGraniteHybridMoE(), testutil.TinyDeepSeek2(), testutil.TinyDeepSeek3(), testutil.TinyDeepSeek2KVB(), testutil.TinyQwen35(), testutil.TinyQwen35MoE(), testutil.TinyQwen3Next(), testutil.TinyQwen3NextSSMIn(), testutil.TinyGemma4(), testutil.TinyGemma4MoE(), testutil.TinyNemotronH(), testutil.TinyNemotronHMoE(),
		testutil.TinyQwen2VL(), testutil.TinyQwen3VL(), testutil.TinyQwen3VLMoE(),
		testutil.TinyGLM4MoE(), testutil.TinyGLM4MoEAir(), testutil.TinyBailingMoE2(),
		testutil.TinyCohere2(), testutil.TinyArcee(), testutil.TinyApertus(), testutil.TinyHunyuanDense(),
		testutil.TinyExaone(), testutil.TinyStarCoder2(), testutil.TinyGemma(), testutil.TinyNemotron(),
		testutil.TinyStableLM(), testutil.TinyStableLM12B(), testutil.TinyPhi2(), testutil.TinyPhi2Fused(),
		testutil.TinyGPT2(), testutil.TinyStarCoder(), testutil.TinyGPTNeoX(), testutil.TinyGPTNeoXSequential(),
		testutil.TinyBitnet(), testutil.TinyBitnetScales(), testutil.TinyChatGLM(), testutil.TinyChatGLMApart(), testutil.TinyInternLM2(), testutil.TinyOlmo(), testutil.TinyOlmoClamp(),
		testutil.TinyCommandR(), testutil.TinyCommandRPlus(),
		testutil.TinyFalcon(), testutil.TinyFalcon40B(), testutil.TinyBloom(), testutil.TinyMPT(), testutil.TinyMPTClamp()} {
		t.Run(spec.Variant(), func(t *testing.T) {
			path := filepath.Join(dir, spec.Arch+".gguf")
			if err := testutil.WriteModelFile(path, spec); err != nil {
				t.Fatal(err)
			}
			if _, err := llm.Plan(path, llm.WithContextSize(256)); err != nil {
				t.Fatal(err)
			}
			m, err := llm.Load(path, llm.WithThreads(2), llm.WithContextSize(256))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if got := m.Info().Architecture; got != spec.Arch {
				t.Fatalf("architecture %q, want %q", got, spec.Arch)
			}
			s, err := m.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			ids, _ := m.Tokenize("Once upon a time there was a small machine")
			if _, err := s.Eval(ctx, ids); err != nil {
				t.Fatal(err)
			}
			if raceEnabled {
				return // allocation counts are not meaningful under the race detector
			}
			checkDecodeAllocs(t, s, 30, "decode step")
		})
	}
}
