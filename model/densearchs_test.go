package model

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
)

// The Configs of cohere2, arcee, apertus and hunyuan-dense as their
// files state them: cohere2's pattern (three windowed, rotated layers of
// four, the fourth global and unrotated), LayerNorm epsilon and logit
// multiplier; arcee's gate-less ReLU² and YaRN; apertus's per-layer
// xIELU, softplus taken of the raw values as ggml_xielu does; and
// hunyuan-dense's norms after RoPE.
func TestConfigDenseArchs(t *testing.T) {
	m, _, _ := loadSpec(t, testutil.TinyCohere2())
	c := m.Config
	if !c.LayerNorm || !c.Parallel || c.NormEps != 1e-5 || c.LogitMul != 0.25 || c.Window != 4 || c.RopeNeox || !m.Tied {
		t.Fatalf("cohere2: %+v", c)
	}
	for il, want := range []struct{ windowed, roped bool }{{true, true}, {true, true}, {true, true}, {false, false}} {
		if c.WindowedLayer(il) != want.windowed || c.RopeLayer(il) != want.roped {
			t.Errorf("cohere2 layer %d: windowed %v, rotated %v", il, c.WindowedLayer(il), c.RopeLayer(il))
		}
	}
	if m.Blocks[0].FFNNorm != nil {
		t.Error("cohere2 block with a norm before the feed-forward")
	}

	m, _, _ = loadSpec(t, testutil.TinyArcee())
	if c := m.Config; !c.ReLU2 || c.YarnExt != 1 || c.RopeScale != 4 || m.Blocks[1].Gate != nil || m.Blocks[1].Up == nil {
		t.Fatalf("arcee: %+v", c)
	}

	m, _, _ = loadSpec(t, testutil.TinyApertus())
	c = m.Config
	want := []ops.XIELU{ops.NewXIELU(0.8, 0.8, 0.5, -1e-6), ops.NewXIELU(-1.5, 2.5, 0.25, -1e-6)}
	if !c.RopeNeox || !c.QKNorm || c.QKNormAfterRope || len(c.XIELU) != 2 || c.XIELU[0] != want[0] || c.XIELU[1] != want[1] || *m.Blocks[1].XIELU != want[1] {
		t.Fatalf("apertus: %+v", c)
	}

	m, _, _ = loadSpec(t, testutil.TinyHunyuanDense())
	if c := m.Config; !c.RopeNeox || !c.QKNorm || !c.QKNormAfterRope || c.RopeBase != 26826958 {
		t.Fatalf("hunyuan-dense: %+v", c)
	}
}

// The Configs of exaone, starcoder2, gemma and nemotron as their files
// state them: exaone's rope_freqs and NEOX pairs; starcoder2's LayerNorms
// with biases and its biases everywhere, GELU without a gate; gemma's
// embedding scale, query scale and tied output; nemotron's half-rotated
// heads, ReLU² and optional biases (layer 1's, not layer 0's).
func TestConfigDenseMore(t *testing.T) {
	m, _, _ := loadSpec(t, testutil.TinyExaone())
	if c := m.Config; !c.RopeNeox || c.LayerNorm || len(m.RopeFreqs) != 8 || !m.Tied || m.Blocks[0].Gate == nil {
		t.Fatalf("exaone: %+v", c)
	}

	m, _, _ = loadSpec(t, testutil.TinyStarCoder2())
	B := m.Blocks[1]
	if c := m.Config; !c.RopeNeox || !c.LayerNorm || c.NormEps != 1e-5 || c.ReLU2 || m.OutNormB == nil || B.Gate != nil ||
		B.AttnNormB == nil || B.FFNNormB == nil || B.Bq == nil || B.Bv == nil || B.Bo == nil || B.BUp == nil || B.BDown == nil {
		t.Fatalf("starcoder2: %+v", c)
	}

	m, _, _ = loadSpec(t, testutil.TinyGemma())
	if c := m.Config; !c.RopeNeox || !c.GELU || c.EmbedScale != 8 || c.QueryScale != invSqrt(32) || c.KQScale != 1 || !m.Tied || c.HeadDimK != 32 || c.HeadsKV != 1 {
		t.Fatalf("gemma: %+v", c)
	}

	m, _, _ = loadSpec(t, testutil.TinyNemotron())
	c := m.Config
	if !c.RopeNeox || !c.LayerNorm || !c.ReLU2 || c.RopeDim != 8 || c.HeadDimK != 16 || m.Tied || m.OutNormB == nil {
		t.Fatalf("nemotron: %+v", c)
	}
	for il, L := range m.Blocks {
		want := il == 1
		for _, b := range [][]float32{L.Bq, L.Bk, L.Bv, L.Bo, L.BUp, L.BDown} {
			if (b != nil) != want {
				t.Errorf("nemotron layer %d: biases %v, want %v", il, b != nil, want)
			}
		}
	}
}

// The Config of internlm2 as its files state it: llama's blocks (RMSNorms,
// SwiGLU, Q, K and V apart, no biases), NORM pairs over whole heads, the
// output its own matrix.
func TestConfigInternLM2(t *testing.T) {
	m, _, _ := loadSpec(t, testutil.TinyInternLM2())
	c, B := m.Config, m.Blocks[1]
	if c.RopeNeox || c.LayerNorm || c.RopeDim != c.HeadDimK || c.RMSEps != 1e-5 || m.Tied || B.Gate == nil || B.Bq != nil || B.Bqkv != nil {
		t.Fatalf("internlm2: %+v", c)
	}
}

// The Configs of olmo as its files state them: no norm tensors, each norm
// a LayerNorm whose weight is a row of ones, NORM pairs, the output
// tied (OLMo-1B's) or its own, clamp_kqv read when the file has it.
func TestConfigOlmo(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyOlmo(), testutil.TinyOlmoClamp()} {
		m, _, _ := loadSpec(t, spec)
		c, B := m.Config, m.Blocks[1]
		if c.RopeNeox || !c.LayerNorm || c.NormEps != 1e-5 || c.ClampKQV != spec.ClampKQV || m.Tied != spec.TiedOutput || m.OutNormB != nil {
			t.Fatalf("%s: %+v", spec.Variant(), c)
		}
		for _, w := range [][]float32{m.OutNorm, B.AttnNorm, B.FFNNorm} {
			if len(w) != m.Embd || slices.ContainsFunc(w, func(w float32) bool { return w != 1 }) {
				t.Fatalf("%s: a norm's weight %v, want %d ones", spec.Variant(), w, m.Embd)
			}
		}
	}
}

// The Configs of falcon as Falcon-7B's and Falcon-40B's files state them:
// LayerNorms of weight and bias, attention and the gate-less GELU
// feed-forward side by side, Q, K and V fused without a bias, whole heads
// in NEOX pairs, no other bias; Falcon-40B's attn_norm_2 the attention's
// norm and attn_norm the feed-forward's (the block's FFNNorm), the
// output tied when the file has none.
func TestConfigFalcon(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyFalcon(), testutil.TinyFalcon40B()} {
		m, _, _ := loadSpec(t, spec)
		c, B := m.Config, m.Blocks[1]
		if !c.RopeNeox || !c.LayerNorm || !c.Parallel || c.ParallelNorms || c.NormEps != 1e-5 || c.ReLU2 ||
			c.RopeDim != c.HeadDimK || c.HeadsKV != spec.HeadsKV || c.QueryScale != 0 || m.Tied != spec.TiedOutput || m.OutNormB == nil || m.OutB != nil {
			t.Fatalf("%s: %+v", spec.Variant(), c)
		}
		if B.Wqkv == nil || B.Bqkv != nil || B.Gate != nil || B.AttnNormB == nil || (B.FFNNorm != nil) != spec.AttnNorm2 ||
			(B.FFNNormB != nil) != spec.AttnNorm2 || B.Bo != nil || B.BUp != nil || B.BDown != nil {
			t.Fatalf("%s: block 1 %+v", spec.Variant(), B)
		}
	}
	falcon := baseHeaderOf("falcon", map[string]float32{"attention.layer_norm_epsilon": 1e-5})
	checkRequired(t, falcon, "falcon", "attention.layer_norm_epsilon")
	checkKeyErrors(t, falcon, wholeHeadCases("falcon", 32))
}

// The Configs of phi2 as its files state them, Q, K and V apart and
// fused: one LayerNorm of weight and bias before attention and the
// feed-forward side by side (no ffn_norm), biases on every projection
// and on the untied output, GELU without a gate, a quarter of each head
// rotated in NEOX pairs, the query scaled by 1/sqrt(head size) and the
// attention unscaled.
func TestConfigPhi2(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyPhi2(), testutil.TinyPhi2Fused()} {
		m, _, _ := loadSpec(t, spec)
		c, B := m.Config, m.Blocks[1]
		if !c.RopeNeox || !c.LayerNorm || !c.Parallel || c.NormEps != 1e-5 || c.ReLU2 || c.RopeDim != 8 || c.HeadDimK != 16 ||
			c.QueryScale != invSqrt(16) || c.KQScale != 1 || m.Tied || m.OutNormB == nil || len(m.OutB) != m.Vocab {
			t.Fatalf("%s: %+v", spec.Variant(), c)
		}
		qkvBias := B.Bq != nil && B.Bk != nil && B.Bv != nil
		if spec.FusedQKV {
			qkvBias = B.Bqkv != nil
		}
		if !qkvBias || B.Gate != nil || B.FFNNorm != nil || B.AttnNormB == nil || B.Bo == nil || B.BUp == nil || B.BDown == nil {
			t.Fatalf("%s: block 1 %+v", spec.Variant(), B)
		}
	}
}

// cohere2 and apertus in one pass, in chunks of 4 and token by token
// against the float64 reference: cohere2's window of 4 is shorter than
// the prompt, so a chunk's tokens attend one by one over a ring the
// chunk overwrites; within TestDecoderMatchesReference's 3e-3. starcoder2
// and nemotron (LayerNorms with biases, biases on the projections, the
// half-rotated heads) and phi2 (those, in parallel, and the output's
// bias) the same three ways, and stablelm's two layouts; gpt2 and
// starcoder, whose learned positions each chunk must take from its own
// first position; gptneox's two layouts; bitnet's two, whose sub norms
// take each token's row; internlm2; olmo's two, whose clamp takes each
// token's Q, K and V; command-r's two, Command R+'s Q/K norms each
// token's heads; falcon's two (Falcon-7B's one norm, Falcon-40B's two);
// bloom and mpt's two, whose ALiBi measures each token's distance from its
// own position; jais2; xverse, orion, refact (ALiBi on one KV head) and
// baichuan's two depths (RoPE at 32 layers, ALiBi at 40); codeshell.
func TestDenseArchsInChunks(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyCohere2(), testutil.TinyApertus(), testutil.TinyStarCoder2(), testutil.TinyNemotron(), testutil.TinyJais2(),
		testutil.TinyPhi2(),
		testutil.TinyStableLM(), testutil.TinyStableLM12B(), testutil.TinyGPT2(), testutil.TinyStarCoder(),
		testutil.TinyGPTNeoX(), testutil.TinyGPTNeoXSequential(), testutil.TinyBitnet(), testutil.TinyBitnetScales(),
		testutil.TinyInternLM2(), testutil.TinyOlmo(), testutil.TinyOlmoClamp(), testutil.TinyCommandR(), testutil.TinyCommandRPlus(),
		testutil.TinyFalcon(), testutil.TinyFalcon40B(), testutil.TinyBloom(), testutil.TinyMPT(), testutil.TinyMPTClamp(),
		testutil.TinyXverse(), testutil.TinyOrion(), testutil.TinyRefact(), testutil.TinyBaichuan(), testutil.TinyBaichuan13B(),
		testutil.TinyCodeShell()} {
		t.Run(spec.Variant(), func(t *testing.T) {
			pool, m, f, data := loadF32(t, spec)
			toks := prompt(13)
			want := perturbedRef(t, m, f, data, toks)(refDecoder{})
			tol := 3e-3
			if spec.Arch == "mpt" || spec.Layers >= 32 {
				// mpt's GELU steps through F16 (TestALiBiDecodersMatchReference
				// takes it within 1e-2) and Command R+'s 64 layers, and
				// baichuan's 32 and 40, pass each F16 rounding on: 9.2e-3 and
				// 4.4e-3 with the AVX2 kernels (baichuan within
				// TestDecoderMatchesReference's and
				// TestALiBiDecodersMatchReference's 1e-2).
				tol = 1e-2
			}
			checkBatchesWithin(t, m, pool, toks, want, "", tol)
		})
	}
}

// command-r's two depths as their files state them: Cohere's block
// (LayerNorm without bias, epsilon 1e-5; attention and the feed-forward
// side by side; the logits times logit_scale; the output tied) with every
// layer rotated in NORM pairs and none windowed; no Q/K norms below 64
// layers, and at 64 (Command R+'s) per-head Q/K LayerNorms, a weight row
// a head.
func TestConfigCommandR(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyCommandR(), testutil.TinyCommandRPlus()} {
		m, _, _ := loadSpec(t, spec)
		c, last := m.Config, m.Blocks[len(m.Blocks)-1]
		plus := spec.Layers >= 64
		if !c.LayerNorm || !c.Parallel || c.NormEps != spec.NormEps || c.LogitMul != spec.LogitScale || c.Window != 0 || c.RopeNeox || !m.Tied ||
			c.QKNorm != plus || c.QKLayerNorm != plus || last.FFNNorm != nil {
			t.Fatalf("%s: %+v", spec.Variant(), c)
		}
		for il := range c.Layers {
			if c.WindowedLayer(il) || !c.RopeLayer(il) {
				t.Fatalf("%s layer %d: windowed %v, rotated %v", spec.Variant(), il, c.WindowedLayer(il), c.RopeLayer(il))
			}
		}
		if (last.QNorm != nil) != plus || (last.KNorm != nil) != plus ||
			plus && (len(last.QNorm) != c.HeadDimK*c.Heads || len(last.KNorm) != c.HeadDimK*c.HeadsKV) {
			t.Fatalf("%s: Q norm of %d, K norm of %d", spec.Variant(), len(last.QNorm), len(last.KNorm))
		}
	}
}

// stablelm's two layouts as their files state them: StableLM 2 1.6B's
// (LayerNorms with biases, Q/K/V biases, a quarter of each head rotated,
// ffn_norm before the feed-forward) and 12B's (no ffn_norm: the
// feed-forward beside the attention; per-head Q/K LayerNorms, a weight
// row a head), whose two steps the reference must see.
func TestConfigStableLM(t *testing.T) {
	m, _, _ := loadSpec(t, testutil.TinyStableLM())
	c, B := m.Config, m.Blocks[1]
	if !c.RopeNeox || !c.LayerNorm || !c.OptionalFFNNorm || c.NormEps != 1e-5 || c.RopeDim != 4 || c.HeadDimK != 16 || m.Tied || m.OutNormB == nil ||
		B.Bq == nil || B.Bk == nil || B.Bv == nil || B.FFNNorm == nil || B.FFNNormB == nil || B.QNorm != nil || B.Gate == nil {
		t.Fatalf("stablelm: %+v", c)
	}

	_, m, f, data := loadF32(t, testutil.TinyStableLM12B())
	c, B = m.Config, m.Blocks[0]
	if !c.QKLayerNorm || B.FFNNorm != nil || B.FFNNormB != nil || B.Bq != nil || len(B.QNorm) != c.Heads*c.HeadDimK || len(B.KNorm) != c.HeadsKV*c.HeadDimK {
		t.Fatalf("stablelm 12B: ffn_norm %v, Q/K norms of %d and %d", B.FFNNorm != nil, len(B.QNorm), len(B.KNorm))
	}
	toks := prompt(13)
	want := perturbedRef(t, m, f, data, toks)(refDecoder{})
	mustMoveAll(t, m, f, data, toks, want, 1e-2, "RMS Q/K norms", "sequential without ffn_norm")
}

// gpt2 and starcoder as their files state them: learned positions (a row
// of position_embd for each trained position) and no RoPE, LayerNorms and
// biases everywhere, Q, K and V fused; gpt2's output tied to the
// embedding (the file has no output.weight), starcoder's one KV head and
// its own output. A pass reaching past the trained context is refused
// (kv.ErrFull) before anything is stored, where llama.cpp's graph would
// read past position_embd.
func TestConfigLearnedPositions(t *testing.T) {
	pool := ops.NewPool(1)
	defer pool.Close()
	for _, tc := range []struct {
		spec    testutil.ModelSpec
		headsKV int
		tied    bool
	}{{testutil.TinyGPT2(), 4, true}, {testutil.TinyStarCoder(), 1, false}} {
		m, _, _ := loadSpec(t, tc.spec)
		c, B := m.Config, m.Blocks[1]
		if !c.AbsPositions || !c.LayerNorm || c.NormEps != 1e-5 || c.RopeLayer(0) || c.HeadsKV != tc.headsKV || m.Tied != tc.tied ||
			m.PosEmbed == nil || m.PosEmbed.Rows() != c.Context || m.OutNormB == nil || m.PositionLimit() != c.Context {
			t.Fatalf("%s: %+v", tc.spec.Arch, c)
		}
		if B.Wqkv == nil || B.Bqkv == nil || B.Bo == nil || B.AttnNormB == nil || B.FFNNormB == nil || B.Gate != nil || B.BUp == nil || B.BDown == nil {
			t.Fatalf("%s: block 1 %+v", tc.spec.Arch, B)
		}
		st := newState(t, m, pool, c.Context, c.Context+1)
		out := make([]float32, m.Vocab)
		if err := st.Forward(prompt(c.Context), 0, out); err != nil {
			t.Fatalf("%s: the whole trained context: %v", tc.spec.Arch, err)
		}
		err := st.Forward(prompt(1), c.Context, out)
		if !errors.Is(err, kv.ErrFull) || !strings.Contains(err.Error(), "position_embd") || st.Cache().Len() != c.Context {
			t.Fatalf("%s: a position past the trained context: %v (cache of %d)", tc.spec.Arch, err, st.Cache().Len())
		}
	}
}

// gptneox's Configs as its files state them: LayerNorms of weight and
// bias, the fused attn_qkv and every projection with biases, a quarter
// of each head rotated in NEOX pairs, an untied output; use_parallel_residual
// true puts the feed-forward, on ffn_norm of the block's input, beside
// the attention (ParallelNorms), false after it.
func TestConfigGPTNeoX(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyGPTNeoX(), testutil.TinyGPTNeoXSequential()} {
		m, _, _ := loadSpec(t, spec)
		c, B := m.Config, m.Blocks[1]
		if !c.RopeNeox || !c.LayerNorm || c.ParallelNorms == spec.Sequential || c.Parallel || c.NormEps != 1e-5 || c.RopeDim != 4 ||
			c.AbsPositions || m.Tied || m.OutNormB == nil {
			t.Fatalf("%s: %+v", spec.Variant(), c)
		}
		if B.Wqkv == nil || B.Bqkv == nil || B.Bo == nil || B.FFNNorm == nil || B.FFNNormB == nil || B.Gate != nil || B.BUp == nil || B.BDown == nil {
			t.Fatalf("%s: block 1 %+v", spec.Variant(), B)
		}
	}
}

// bitnet's Configs as its files state them: NEOX pairs, RMSNorms, the
// output always the embedding, every block's sub norms and (when the file
// has them) its projections' scales; hidden_activation, as llama.cpp's
// later loader maps it, chooses SiLU (absent, silu, swish, swiglu), ReLU²
// (relu2) or ReLU (relu) of the gate. The spellings llama.cpp maps to a
// fused-gate op (its graph aborts on them beside ffn_gate), an unknown
// one (it would run SiLU) and a value not a string are refused naming
// the key, and so are a header without the RMS epsilon and heads that do
// not span the width (llama.cpp shapes attn_q [n_embd, n_embd]).
func TestConfigBitnet(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyBitnet(), testutil.TinyBitnetScales()} {
		m, _, _ := loadSpec(t, spec)
		c, B := m.Config, m.Blocks[1]
		if !c.RopeNeox || c.LayerNorm || c.GatedReLU2 != (spec.HiddenAct == "relu2") || c.ReGLU || c.ReLU2 || !m.Tied || c.RMSEps != 1e-5 {
			t.Fatalf("%s: %+v", spec.Variant(), c)
		}
		scales := [][]float32{B.ScaleQ, B.ScaleK, B.ScaleV, B.ScaleO, B.ScaleGate, B.ScaleUp, B.ScaleDown}
		if len(B.AttnSubNorm) != c.Embd || len(B.FFNSubNorm) != c.FFN || B.Gate == nil ||
			slices.ContainsFunc(scales, func(s []float32) bool { return len(s) != min(len(scales[0]), 1) }) || (B.ScaleQ != nil) != spec.Scales {
			t.Fatalf("%s: block 1 %+v", spec.Variant(), B)
		}
	}
	bitnet := func(mut func(map[string]any)) map[string]any {
		return archMeta("bitnet", map[string]any{
			"embedding_length": uint32(2560), "block_count": uint32(30), "feed_forward_length": uint32(6912),
			"attention.head_count": uint32(20), "attention.head_count_kv": uint32(5), "context_length": uint32(4096),
			"attention.layer_norm_rms_epsilon": float32(1e-5), "rope.freq_base": float32(500000),
		}, mut)
	}
	for _, tc := range []struct {
		act         any // nil: no key
		relu2, relu bool
	}{{nil, false, false}, {"silu", false, false}, {"swish", false, false}, {"swiglu", false, false}, {"relu2", true, false}, {"relu", false, true}} {
		c := mustConfig(t, bitnet(func(m map[string]any) { setKey(m, "bitnet.hidden_activation", tc.act) }))
		if c.GatedReLU2 != tc.relu2 || c.ReGLU != tc.relu || c.HeadDimK != 128 {
			t.Errorf("hidden_activation %v: ReLU² %v, ReLU %v, head %d", tc.act, c.GatedReLU2, c.ReGLU, c.HeadDimK)
		}
	}
	act := "bitnet.hidden_activation"
	checkKeyErrors(t, bitnet, []keyCase{
		{"gelu", act, "gelu", ErrUnsupportedArch}, {"geglu", act, "geglu", ErrUnsupportedArch}, {"reglu", act, "reglu", ErrUnsupportedArch},
		{"unknown", act, "relu_squared", ErrUnsupportedArch}, {"not a string", act, uint32(2), ErrBadModel},
		{"no RMS epsilon", "bitnet.attention.layer_norm_rms_epsilon", nil, ErrBadModel},
		{"heads narrower than the width", "bitnet.attention.key_length", uint32(64), ErrBadModel},
		{"values narrower than the keys", "bitnet.attention.value_length", uint32(64), ErrBadModel},
	})
}

// The Configs of bloom and mpt as BLOOM's and MPT-7B's files state them:
// LayerNorms, a fused attn_qkv, a gate-less GELU feed-forward, no RoPE
// and no learned positions but ALiBi slopes of each head (bloom's of
// maximum bias 8, mpt's of attention.max_alibi_bias), the KV cache a
// layer a block (not jina-bert-v2's placeholder); bloom's token_embd_norm
// and every bias, mpt's biases only where the file has them and its
// clamp. The keys each requires are required.
func TestConfigALiBiDecoders(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyBloom(), testutil.TinyMPT(), testutil.TinyMPTClamp()} {
		m, _, _ := loadSpec(t, spec)
		c, B := m.Config, m.Blocks[1]
		maxBias := 8.0
		if spec.Arch == "mpt" {
			maxBias = float64(spec.MaxALiBiBias)
		}
		biased := spec.Arch == "bloom" || spec.QKVBias
		if !c.LayerNorm || c.RopeLayer(0) || c.AbsPositions || c.NonCausal || c.NormEps != 1e-5 || c.ClampKQV != spec.ClampKQV ||
			!slices.Equal(c.ALiBi, alibiSlopes(spec.Heads, maxBias)) || c.KVConfig(kv.F16, 8).Layers != spec.Layers || m.Tied != spec.TiedOutput ||
			(m.EmbedNorm != nil) != (spec.Arch == "bloom") || (m.EmbedNormB != nil) != (spec.Arch == "bloom") || (m.OutNormB != nil) != biased {
			t.Fatalf("%s: %+v", spec.Variant(), c)
		}
		if B.Wqkv == nil || B.Gate != nil || (B.Bqkv != nil) != biased || (B.AttnNormB != nil) != biased || (B.FFNNormB != nil) != biased ||
			(B.Bo != nil) != biased || (B.BUp != nil) != biased || (B.BDown != nil) != biased {
			t.Fatalf("%s: block 1 %+v", spec.Variant(), B)
		}
	}
	bloom := baseHeaderOf("bloom", map[string]float32{"attention.layer_norm_epsilon": 1e-5})
	checkRequired(t, bloom, "bloom", "attention.layer_norm_epsilon")
	mpt := baseHeaderOf("mpt", map[string]float32{"attention.layer_norm_epsilon": 1e-5, "attention.max_alibi_bias": 8})
	checkRequired(t, mpt, "mpt", "attention.layer_norm_epsilon")
}

// An mpt whose attention.max_alibi_bias is missing (TinyMPT's writer
// leaves out a 0), 0 or below biases nothing, as llama.cpp's mask then
// carries no distance (use_alibi false): every slope 0, not ggml's slope
// 1 of max_bias 0, and still no RoPE.
func TestMPTWithoutALiBiBias(t *testing.T) {
	for _, maxBias := range []float32{0, -1} {
		spec := testutil.TinyMPT()
		spec.MaxALiBiBias = maxBias
		m, f, _ := loadSpec(t, spec)
		if _, has := f.Get("mpt.attention.max_alibi_bias"); has != (maxBias != 0) {
			t.Fatalf("max_alibi_bias %v written: %v", maxBias, has)
		}
		if !slices.Equal(m.ALiBi, make([]float32, spec.Heads)) || m.RopeLayer(0) {
			t.Fatalf("max_alibi_bias %v: slopes %v, rotated %v", maxBias, m.ALiBi, m.RopeLayer(0))
		}
	}
}
