package testutil

// The synthetic models of every architecture, each constructor listed
// once, so that a new architecture or variant joins every test that means
// "all of them" by being added here. The embedding models (the encoders
// and gemma-embedding) are listed apart because they make no logits: a
// decode test has nothing to run on them.
var (
	tinyDecoders = []func() ModelSpec{
		TinyLlama, TinyQwen2, TinyQwen3, TinyQwen3MoE, TinyQwen2MoE, TinyPhiMoE,
		TinyGemma2, TinyGemma3, TinyPhi3,
		TinyGranite, TinyGraniteMoE, TinySmolLM3, TinyMistral3, TinyOlmo2, TinyErnie45, TinyErnie45MoE, TinySeedOSS,
		TinyExaone4, TinyExaone4SWA, TinyGLM4, TinyGLM4Fused,
		TinyGptOss, TinySmallThinker, TinySmallThinkerSWA, TinyFalconH1, TinyMiniCPM, TinyMiniCPM3, TinyOLMoE,
		TinyJamba, TinyMamba, TinyMamba2, TinyRWKV7, TinyRWKV6, TinyRWKV6Qwen2, TinyARWKV7, TinyARWKV7Plain,
		TinyLFM2, TinyLFM2MoE, TinyGemma3n, TinyGraniteHybrid, TinyGraniteHybridMoE,
		TinyQwen35, TinyQwen35MoE, TinyQwen35MoEFused, TinyQwen3Next, TinyQwen3NextSSMIn,
		TinyDeepSeek2, TinyDeepSeek3, TinyDeepSeek2KVB,
		TinyGemma4, TinyGemma4MoE, TinyNemotronH, TinyNemotronHMoE,
		TinyQwen2VL, TinyQwen3VL, TinyQwen3VLMoE,
		TinyGLM4MoE, TinyGLM4MoEAir, TinyBailingMoE2,
		TinyCohere2, TinyArcee, TinyApertus, TinyHunyuanDense,
		TinyExaone, TinyStarCoder2, TinyGemma, TinyNemotron,
		TinyStableLM, TinyStableLM12B,
		TinyPhi2, TinyPhi2Fused, TinyGPT2, TinyStarCoder, TinyGPTNeoX, TinyGPTNeoXSequential,
		TinyBitnet, TinyBitnetScales, TinyChatGLM, TinyChatGLMApart,
		TinyInternLM2, TinyOlmo, TinyOlmoClamp, TinyCommandR, TinyCommandRPlus,
		TinyFalcon, TinyFalcon40B, TinyBloom, TinyMPT, TinyMPTClamp,
		TinyAfmoe, TinyAfmoeGlobal,
	}
	tinyEmbedders = []func() ModelSpec{
		TinyGemmaEmbedding, TinyBert, TinyNomicBert, TinyNomicBertMoE, TinyJinaBertV2, TinyModernBert,
	}
)

// TinySpecs returns a fresh synthetic model of every supported
// architecture and of each variant that loads differently (fused tensors,
// sliding windows, optional parts), decoders first, TinyLlama the very
// first. A test over every architecture ranges over it; add a new
// architecture's constructor to its list here, not to the tests.
func TinySpecs() []ModelSpec {
	return specsOf(tinyDecoders, tinyEmbedders)
}

// TinyDecoders returns TinySpecs without the embedding models (bert,
// nomic-bert, jina-bert-v2, modernbert, gemma-embedding …): the models a
// session can decode with.
func TinyDecoders() []ModelSpec {
	return specsOf(tinyDecoders)
}

func specsOf(lists ...[]func() ModelSpec) []ModelSpec {
	var specs []ModelSpec
	for _, l := range lists {
		for _, f := range l {
			specs = append(specs, f())
		}
	}
	return specs
}
