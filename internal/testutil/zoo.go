package testutil

// The synthetic models of every architecture, each constructor listed
// once, in the one group it belongs to, so that a new architecture or
// variant joins every test that means "all of them" (or all of a group)
// by being added here. The groups are the facts tests filter by beyond
// what a ModelSpec's fields say (Experts > 0 and the like): whether a
// model carries a recurrent state, and whether it makes logits at all.
var (
	// tinyAttention are the decoders whose only state is the KV cache.
	tinyAttention = []func() ModelSpec{
		TinyLlama, TinyQwen2, TinyQwen3, TinyQwen3MoE, TinyQwen2MoE, TinyPhiMoE,
		TinyGemma2, TinyGemma3, TinyPhi3,
		TinyGranite, TinyGraniteMoE, TinySmolLM3, TinyMistral3, TinyOlmo2, TinyErnie45, TinyErnie45MoE, TinySeedOSS,
		TinyExaone4, TinyExaone4SWA, TinyGLM4, TinyGLM4Fused,
		TinyGptOss, TinySmallThinker, TinySmallThinkerSWA, TinyMiniCPM, TinyMiniCPM3, TinyOLMoE,
		TinyGemma3n, TinyDeepSeek2, TinyDeepSeek3, TinyDeepSeek2KVB, TinyGemma4, TinyGemma4MoE,
		TinyQwen2VL, TinyQwen3VL, TinyQwen3VLMoE,
		TinyGLM4MoE, TinyGLM4MoEAir, TinyBailingMoE2,
		TinyCohere2, TinyArcee, TinyApertus, TinyHunyuanDense,
		TinyExaone, TinyStarCoder2, TinyGemma, TinyNemotron,
		TinyStableLM, TinyStableLM12B,
		TinyPhi2, TinyPhi2Fused, TinyGPT2, TinyStarCoder, TinyGPTNeoX, TinyGPTNeoXSequential,
		TinyBitnet, TinyBitnetScales, TinyChatGLM, TinyChatGLMApart,
		TinyInternLM2, TinyOlmo, TinyOlmoClamp, TinyCommandR, TinyCommandRPlus,
		TinyFalcon, TinyFalcon40B, TinyBloom, TinyMPT, TinyMPTClamp,
		TinyAfmoe, TinyAfmoeGlobal, TinyHunyuanMoE, TinyDots1,
		TinyMellum, TinyMellumPattern, TinyMaincoder, TinyGroveMoE, TinyPlamo3, TinyPlamo3Pattern, TinyJais2, TinyNanbeige, TinyNanbeigeSkip, TinyTalkie, TinyMiniMaxM2, TinyExaoneMoE,
		TinyLlama4, TinyLlama4Maverick, TinyLaguna, TinyLagunaGlobal, TinyMimo2, TinyMimo2Fused,
		TinyXverse, TinyOrion, TinyRefact, TinyBaichuan, TinyBaichuan13B, TinyCodeShell,
		TinyCohere2MoE, TinyCohere2MoERMS, TinyBailingMoE,
		TinyMistral4, TinyDeci, TinyOpenELM,
	}
	// tinyRecurrent are the decoders with a recurrent state beside (or
	// instead of) the KV cache: convolutions, Mamba scans, delta nets,
	// RWKV's mixes.
	tinyRecurrent = []func() ModelSpec{
		TinyFalconH1, TinyJamba, TinyMamba, TinyMamba2,
		TinyRWKV7, TinyRWKV6, TinyRWKV6Qwen2, TinyARWKV7, TinyARWKV7Plain,
		TinyLFM2, TinyLFM2MoE, TinyGraniteHybrid, TinyGraniteHybridMoE,
		TinyQwen35, TinyQwen35MoE, TinyQwen35MoEFused, TinyQwen3Next, TinyQwen3NextSSMIn,
		TinyNemotronH, TinyNemotronHMoE, TinyKimiLinear,
	}
	// tinyEmbedders make embeddings and no logits: the encoders,
	// gemma-embedding and the decoders made embedders (eurobert, neo-bert,
	// llama-embed).
	tinyEmbedders = []func() ModelSpec{
		TinyGemmaEmbedding, TinyBert, TinyNomicBert, TinyNomicBertMoE, TinyJinaBertV2, TinyModernBert,
		TinyJinaBertV3, TinyEuroBert, TinyNeoBert, TinyLlamaEmbed, TinyLlamaEmbedBidirectional,
	}
)

// TinySpecs returns a fresh synthetic model of every supported
// architecture and of each variant that loads differently (fused tensors,
// sliding windows, optional parts), decoders first, TinyLlama the very
// first. A test over every architecture ranges over it; add a new
// architecture's constructor to its group here, not to the tests.
func TinySpecs() []ModelSpec {
	return specsOf(tinyAttention, tinyRecurrent, tinyEmbedders)
}

// TinyDecoders returns TinySpecs without the embedding models (bert,
// nomic-bert, jina-bert-v2, modernbert, gemma-embedding …): the models a
// session can decode with.
func TinyDecoders() []ModelSpec {
	return specsOf(tinyAttention, tinyRecurrent)
}

// TinyRecurrent returns the decoders of TinySpecs that keep a recurrent
// state (conv, SSM, delta-net or RWKV) that a session must save, restore
// and rewind beside its KV cache.
func TinyRecurrent() []ModelSpec {
	return specsOf(tinyRecurrent)
}

// specsOf calls every constructor of the lists, in order.
func specsOf(lists ...[]func() ModelSpec) []ModelSpec {
	var specs []ModelSpec
	for _, l := range lists {
		for _, f := range l {
			specs = append(specs, f())
		}
	}
	return specs
}
