package model

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
)

func parse(t *testing.T, kv map[string]any) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	for k, v := range kv {
		w.AddKV(k, v)
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Read(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// mustConfig is the Config of a file of those keys, failing the test on
// an error.
func mustConfig(t *testing.T, kv map[string]any) Config {
	t.Helper()
	c, err := ConfigFromGGUF(parse(t, kv))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// keyCase changes one key of a header — deleted when value is nil, else
// set to it — and names the sentinel the refusal must wrap.
type keyCase struct {
	name, key string
	value     any
	want      error
}

// checkKeyErrors fails unless, for each case, the header that header
// builds with the case's key changed is refused with the case's sentinel
// in an error naming the key.
func checkKeyErrors(t *testing.T, header func(mut func(map[string]any)) map[string]any, cases []keyCase) {
	t.Helper()
	for _, tc := range cases {
		_, err := ConfigFromGGUF(parse(t, header(func(m map[string]any) { setKey(m, tc.key, tc.value) })))
		if !errors.Is(err, tc.want) || err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: %v, want %v naming %s", tc.name, err, tc.want, tc.key)
		}
	}
}

// checkRequired fails unless the header that header builds without any
// one of keys (each under arch's prefix) is refused as ErrBadModel in an
// error naming the key: the keys llama.cpp requires.
func checkRequired(t *testing.T, header func(mut func(map[string]any)) map[string]any, arch string, keys ...string) {
	t.Helper()
	cases := make([]keyCase, len(keys))
	for i, k := range keys {
		cases[i] = keyCase{"without " + k, arch + "." + k, nil, ErrBadModel}
	}
	checkKeyErrors(t, header, cases)
}

// setKey sets key to v in the header m, or leaves the key out when v is
// nil.
func setKey(m map[string]any, key string, v any) {
	if v == nil {
		delete(m, key)
	} else {
		m[key] = v
	}
}

// failIf is msg when bad holds, else "": a check's verdict.
func failIf(bad bool, msg string) string {
	if bad {
		return msg
	}
	return ""
}

func base(arch string) map[string]any {
	return map[string]any{
		"general.architecture":                     arch,
		arch + ".embedding_length":                 uint32(256),
		arch + ".block_count":                      uint32(26),
		arch + ".feed_forward_length":              uint32(768),
		arch + ".attention.head_count":             uint32(4),
		arch + ".attention.head_count_kv":          uint32(2),
		arch + ".context_length":                   uint32(2048),
		arch + ".attention.layer_norm_rms_epsilon": float32(1e-6),
		arch + ".rope.freq_base":                   float32(10000),
		arch + ".attn_logit_softcapping":           float32(50),
		arch + ".final_logit_softcapping":          float32(30),
		arch + ".attention.sliding_window":         uint32(64),
	}
}

// archMeta is a header of architecture arch: keys, each under the
// architecture's prefix, edited by edit.
func archMeta(arch string, keys map[string]any, edit func(m map[string]any)) map[string]any {
	m := map[string]any{"general.architecture": arch}
	for k, v := range keys {
		m[arch+"."+k] = v
	}
	edit(m)
	return m
}

// decoderKeys are the sizes and routing a mixture-of-experts decoder's
// header states, by what they mean; 0 (false) leaves the key out.
type decoderKeys struct {
	Embd, Blocks, FFN, Heads, HeadsKV, KeyLen, ValueLen, Context, RopeDim int
	RMSEps, RopeBase                                                      float32

	DenseLead, Experts, ExpertsUsed, ExpertFFN, SharedFFN, SharedCount int
	ExpertScale                                                        float32
	ExpertNorm                                                         bool
	Gating, Groups, GroupsUsed                                         int

	// DeepSeek's latent attention and YaRN scaling.
	Vocab, QLoraRank, KVLoraRank, KeyLenMLA, ValueLenMLA int
	YarnFactor, YarnLogMul                               float32
	YarnContext                                          int
}

// with is more and d's keys under the names llama.cpp reads them by (no
// architecture prefix: archMeta's keys).
func (d decoderKeys) with(more map[string]any) map[string]any {
	m := map[string]any{}
	maps.Copy(m, more)
	for k, v := range map[string]int{
		"embedding_length": d.Embd, "block_count": d.Blocks, "feed_forward_length": d.FFN,
		"attention.head_count": d.Heads, "attention.head_count_kv": d.HeadsKV,
		"attention.key_length": d.KeyLen, "attention.value_length": d.ValueLen,
		"context_length": d.Context, "rope.dimension_count": d.RopeDim,
		"leading_dense_block_count": d.DenseLead, "expert_count": d.Experts, "expert_used_count": d.ExpertsUsed,
		"expert_feed_forward_length": d.ExpertFFN, "expert_shared_feed_forward_length": d.SharedFFN,
		"expert_shared_count": d.SharedCount, "expert_gating_func": d.Gating,
		"expert_group_count": d.Groups, "expert_group_used_count": d.GroupsUsed,
		"vocab_size": d.Vocab, "attention.q_lora_rank": d.QLoraRank, "attention.kv_lora_rank": d.KVLoraRank,
		"attention.key_length_mla": d.KeyLenMLA, "attention.value_length_mla": d.ValueLenMLA,
		"rope.scaling.original_context_length": d.YarnContext,
	} {
		if v != 0 {
			m[k] = uint32(v)
		}
	}
	for k, v := range map[string]float32{
		"attention.layer_norm_rms_epsilon": d.RMSEps, "rope.freq_base": d.RopeBase, "expert_weights_scale": d.ExpertScale,
		"rope.scaling.factor": d.YarnFactor, "rope.scaling.yarn_log_multiplier": d.YarnLogMul,
	} {
		if v != 0 {
			m[k] = v
		}
	}
	if d.ExpertNorm {
		m["expert_weights_norm"] = true
	}
	if d.YarnFactor != 0 {
		m["rope.scaling.type"] = "yarn"
	}
	return m
}

// headerOf is a header builder for checkKeyErrors: arch's keys (each
// under its prefix), edited by mut when it is not nil.
func headerOf(arch string, keys map[string]any) func(mut func(map[string]any)) map[string]any {
	return func(mut func(map[string]any)) map[string]any {
		return archMeta(arch, keys, func(m map[string]any) {
			if mut != nil {
				mut(m)
			}
		})
	}
}

// keysOver is baseHeaderOf for arch over its keys, as a function of the
// keys set over them.
func keysOver(arch string, keys map[string]any) func(over map[string]any) func(mut func(map[string]any)) map[string]any {
	return func(over map[string]any) func(mut func(map[string]any)) map[string]any {
		m := maps.Clone(keys)
		maps.Copy(m, over)
		return baseHeaderOf(arch, m)
	}
}

// baseHeaderOf is headerOf for base's header of arch: its keys drop left
// out, then keys set (each under arch's prefix).
func baseHeaderOf[V any](arch string, keys map[string]V, drop ...string) func(mut func(map[string]any)) map[string]any {
	return func(mut func(map[string]any)) map[string]any {
		m := base(arch)
		for _, k := range drop {
			delete(m, arch+"."+k)
		}
		for k, v := range keys {
			m[arch+"."+k] = v
		}
		if mut != nil {
			mut(m)
		}
		return m
	}
}

func TestConfigFromGGUF(t *testing.T) {
	cases := []struct {
		arch  string
		check func(c Config) bool
	}{
		{"llama", func(c Config) bool {
			return !c.RopeNeox && c.HeadDimK == 64 && c.RopeDim == 64 && c.KQScale == 0.125 && c.Window == 0 && !c.GELU
		}},
		{"qwen2", func(c Config) bool { return c.RopeNeox && c.QKVBias }},
		{"gemma2", func(c Config) bool {
			return c.RopeNeox && c.GELU && c.PostNorms && c.Window == 64 && c.AttnSoftcap == 50 &&
				c.FinalSoftcap == 30 && c.EmbedScale == 16 && c.QueryScale == 0.125 && c.KQScale == 1 &&
				c.WindowedLayer(0) && !c.WindowedLayer(1)
		}},
		// llama.cpp's rope types: ernie4_5 NORM, seed_oss NEOX; neither
		// reads a window or an attention scale.
		{"ernie4_5", func(c Config) bool { return !c.RopeNeox && c.KQScale == 0.125 && c.Window == 0 && !c.PostNorms }},
		{"seed_oss", func(c Config) bool { return c.RopeNeox && c.KQScale == 0.125 && c.Window == 0 && !c.PostNorms }},
	}
	for _, c := range cases {
		cfg, err := ConfigFromGGUF(parse(t, base(c.arch)))
		if err != nil {
			t.Fatalf("%s: %v", c.arch, err)
		}
		if !c.check(cfg) {
			t.Errorf("%s: config %+v", c.arch, cfg)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		mut  func(map[string]any)
		want error
	}{
		{"unknown arch", func(m map[string]any) { m["general.architecture"] = "rwkv5" }, ErrUnsupportedArch},
		{"no arch", func(m map[string]any) { delete(m, "general.architecture") }, ErrBadModel},
		{"no embedding", func(m map[string]any) { delete(m, "llama.embedding_length") }, ErrBadModel},
		{"zero heads", func(m map[string]any) { m["llama.attention.head_count"] = uint32(0) }, ErrBadModel},
		{"kv heads not dividing", func(m map[string]any) { m["llama.attention.head_count_kv"] = uint32(3) }, ErrBadModel},
		{"per-layer heads", func(m map[string]any) { m["llama.attention.head_count"] = []int32{4, 4} }, ErrBadModel},
		{"odd rope dim", func(m map[string]any) { m["llama.rope.dimension_count"] = uint32(63) }, ErrBadModel},
		{"su scaling", func(m map[string]any) { m["llama.rope.scaling.type"] = "su" }, ErrUnsupportedArch},
		{"yarn log multiplier NaN", func(m map[string]any) {
			m["llama.rope.scaling.type"], m["llama.rope.scaling.yarn_log_multiplier"] = "yarn", float32(math.NaN())
		}, ErrBadModel},
		{"yarn ext factor past 1", func(m map[string]any) {
			m["llama.rope.scaling.type"], m["llama.rope.scaling.yarn_ext_factor"] = "yarn", float32(2)
		}, ErrBadModel},
		{"yarn beta a string", func(m map[string]any) {
			m["llama.rope.scaling.type"], m["llama.rope.scaling.yarn_beta_fast"] = "yarn", "32"
		}, ErrBadModel},
		{"nan eps", func(m map[string]any) { m["llama.attention.layer_norm_rms_epsilon"] = float32(math.NaN()) }, ErrBadModel},
		{"pooling past rank", func(m map[string]any) { m["llama.pooling_type"] = uint32(5) }, ErrBadModel},
		{"pooling a string", func(m map[string]any) { m["llama.pooling_type"] = "mean" }, ErrBadModel},
	}
	for _, c := range cases {
		m := base("llama")
		c.mut(m)
		if _, err := ConfigFromGGUF(parse(t, m)); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}

// pooling_type is read as llama.cpp numbers it; absent is none.
func TestConfigPooling(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want Pooling
	}{{nil, PoolingNone}, {uint32(0), PoolingNone}, {uint32(1), PoolingMean}, {uint32(2), PoolingCLS}, {uint32(3), PoolingLast}, {uint32(4), PoolingRank}} {
		m := base("qwen3")
		if tc.v != nil {
			m["qwen3.pooling_type"] = tc.v
		}
		c, err := ConfigFromGGUF(parse(t, m))
		if err != nil || c.Pooling != tc.want {
			t.Errorf("pooling_type %v: %v, %v; want %v", tc.v, c.Pooling, err, tc.want)
		}
	}
	if s := Pooling(9).String(); s != "Pooling(9)" {
		t.Errorf("Pooling(9) prints %q", s)
	}
}

func TestConfigNewArchs(t *testing.T) {
	with := func(arch string, edit func(m map[string]any)) map[string]any {
		m := base(arch)
		if edit != nil {
			edit(m)
		}
		return m
	}
	windowed := func(c Config) []int {
		var ls []int
		for il := range c.Layers {
			if c.WindowedLayer(il) {
				continue
			}
			ls = append(ls, il)
		}
		return ls
	}
	cases := []struct {
		name  string
		kv    map[string]any
		check func(c Config) string
	}{
		{"qwen3", with("qwen3", nil), func(c Config) string {
			return failIf(!c.RopeNeox || !c.QKNorm || c.QKVBias || c.KQScale != 0.125 || c.QueryScale != 0 || c.Window != 0, "flags")
		}},
		{"gemma3 default pattern", with("gemma3", nil), func(c Config) string {
			if fmt.Sprint(windowed(c)) != "[5 11 17 23]" {
				return fmt.Sprint("global layers ", windowed(c))
			}
			return failIf(c.RopeBaseSWA != 10000 || c.RopeScaleSWA != 1 || c.QueryScale != 0.125 || c.KQScale != 1 ||
				c.FinalSoftcap != 0 || c.AttnSoftcap != 0 || c.EmbedScale != 16 || !c.QKNorm || !c.PostNorms || !c.GELU, "gemma3 values")
		}},
		{"gemma3 scaled global rope", with("gemma3", func(m map[string]any) {
			m["gemma3.rope.scaling.type"] = "linear"
			m["gemma3.rope.scaling.factor"] = float32(8)
			m["gemma3.rope.freq_base"] = float32(1e6)
			m["gemma3.rope.freq_base_swa"] = float32(5000)
		}), func(c Config) string {
			return failIf(c.RopeScale != 8 || c.RopeBase != 1e6 || c.RopeScaleSWA != 1 || c.RopeBaseSWA != 5000, "per-layer rope")
		}},
		{"gemma3 pattern key", with("gemma3", func(m map[string]any) { m["gemma3.attention.sliding_window_pattern"] = uint32(4) }),
			func(c Config) string {
				return failIf(fmt.Sprint(windowed(c)) != "[3 7 11 15 19 23]", fmt.Sprint("global layers ", windowed(c)))
			}},
		{"gemma3 pattern array", with("gemma3", func(m map[string]any) {
			flags := make([]bool, 26)
			flags[1], flags[2] = true, true
			m["gemma3.attention.sliding_window_pattern"] = flags
		}), func(c Config) string {
			return failIf(!c.WindowedLayer(1) || !c.WindowedLayer(2) || c.WindowedLayer(0) || c.WindowedLayer(3), "per-layer flags")
		}},
		{"gemma3 pattern 0: all windowed", with("gemma3", func(m map[string]any) { m["gemma3.attention.sliding_window_pattern"] = uint32(0) }),
			func(c Config) string {
				return failIf(len(windowed(c)) != 0, fmt.Sprint("global layers ", windowed(c)))
			}},
		{"gemma3 without window", with("gemma3", func(m map[string]any) { delete(m, "gemma3.attention.sliding_window") }),
			func(c Config) string {
				return failIf(c.Window != 0 || c.FinalSoftcap != 30 || c.WindowedLayer(0), "no window: no SWA, final softcap 30")
			}},
		{"gemma3 27B query scale", with("gemma3", func(m map[string]any) {
			m["gemma3.block_count"] = uint32(62)
			m["gemma3.attention.key_length"] = uint32(128)
			m["gemma3.attention.value_length"] = uint32(128)
		}), func(c Config) string {
			return failIf(c.QueryScale != 0.125 || c.HeadDimK != 128, "27B scales by n_embd/n_head")
		}},
		{"phi3", with("phi3", func(m map[string]any) {
			m["phi3.rope.scaling.attn_factor"] = float32(1.19)
			m["phi3.rope.scaling.original_context_length"] = uint32(4096)
			m["phi3.rope.scaling.type"] = "longrope"
		}), func(c Config) string {
			return failIf(c.Window != 0 || c.WindowedLayer(0) || c.QueryScale != 0.125 || c.KQScale != 1 ||
				c.RopeAttnFactor != 1.19 || c.RopeOrigContext != 4096 || c.RopeScale != 1 || !c.RopeNeox, "phi3 values")
		}},
		{"qwen3moe", with("qwen3moe", func(m map[string]any) {
			m["qwen3moe.expert_count"] = uint32(128)
			m["qwen3moe.expert_used_count"] = uint32(8)
			m["qwen3moe.expert_feed_forward_length"] = uint32(96)
		}), func(c Config) string {
			return failIf(c.Experts != 128 || c.ExpertsUsed != 8 || c.ExpertFFN != 96 || !c.ExpertNorm || !c.QKNorm, "expert values")
		}},
		{"qwen3moe default expert width", with("qwen3moe", func(m map[string]any) {
			m["qwen3moe.expert_count"] = uint32(16)
			m["qwen3moe.expert_used_count"] = uint32(4)
		}), func(c Config) string {
			return failIf(c.ExpertFFN != 768/4, fmt.Sprint("expert width ", c.ExpertFFN))
		}},
		{"qwen3moe expert width 0", with("qwen3moe", func(m map[string]any) {
			m["qwen3moe.expert_count"] = uint32(16)
			m["qwen3moe.expert_used_count"] = uint32(4)
			m["qwen3moe.expert_feed_forward_length"] = uint32(0)
		}), func(c Config) string {
			return failIf(c.ExpertFFN != 768/4, fmt.Sprint("expert width ", c.ExpertFFN))
		}},
	}
	for _, tc := range cases {
		c, err := ConfigFromGGUF(parse(t, tc.kv))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if msg := tc.check(c); msg != "" {
			t.Errorf("%s: %s: %+v", tc.name, msg, c)
		}
	}
}

func TestConfigNewArchErrors(t *testing.T) {
	moe := func(edit func(m map[string]any)) map[string]any {
		m := base("qwen3moe")
		m["qwen3moe.expert_count"] = uint32(8)
		m["qwen3moe.expert_used_count"] = uint32(2)
		m["qwen3moe.expert_feed_forward_length"] = uint32(64)
		edit(m)
		return m
	}
	cases := []struct {
		name    string
		kv      map[string]any
		want    error
		mention string
	}{
		{"experts in llama", func() map[string]any { m := base("llama"); m["llama.expert_count"] = uint32(8); return m }(), ErrUnsupportedArch, "expert_count"},
		{"expert_count missing", moe(func(m map[string]any) { delete(m, "qwen3moe.expert_count") }), ErrBadModel, "expert_count"},
		{"expert_used_count 0", moe(func(m map[string]any) { m["qwen3moe.expert_used_count"] = uint32(0) }), ErrBadModel, "expert_used_count"},
		{"more used than experts", moe(func(m map[string]any) { m["qwen3moe.expert_used_count"] = uint32(9) }), ErrBadModel, "expert_used_count"},
		{"expert_count huge", moe(func(m map[string]any) { m["qwen3moe.expert_count"] = uint32(1 << 20) }), ErrBadModel, "expert_count"},
		{"no expert width", moe(func(m map[string]any) {
			delete(m, "qwen3moe.expert_feed_forward_length")
			delete(m, "qwen3moe.feed_forward_length")
		}), ErrBadModel, "expert_feed_forward_length"},
		{"gemma3 pattern of wrong length", func() map[string]any {
			m := base("gemma3")
			m["gemma3.attention.sliding_window_pattern"] = []bool{true, false}
			return m
		}(), ErrBadModel, "sliding_window_pattern"},
		{"gemma3 pattern a string", func() map[string]any {
			m := base("gemma3")
			m["gemma3.attention.sliding_window_pattern"] = "6"
			return m
		}(), ErrBadModel, "sliding_window_pattern"},
		{"gemma3 swa base NaN", func() map[string]any {
			m := base("gemma3")
			m["gemma3.rope.freq_base_swa"] = float32(math.NaN())
			return m
		}(), ErrBadModel, "rope.freq_base_swa"},
		{"attn factor 0", func() map[string]any { m := base("phi3"); m["phi3.rope.scaling.attn_factor"] = float32(0); return m }(), ErrBadModel, "attn_factor"},
		{"unknown arch names the supported ones", func() map[string]any { m := base("llama"); m["general.architecture"] = "rwkv5"; return m }(),
			ErrUnsupportedArch, "llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3"},
	}
	for _, tc := range cases {
		_, err := ConfigFromGGUF(parse(t, tc.kv))
		if !errors.Is(err, tc.want) || !strings.Contains(fmt.Sprint(err), tc.mention) {
			t.Errorf("%s: err = %v, want %v mentioning %q", tc.name, err, tc.want, tc.mention)
		}
	}
}

// The encoders' keys: the LayerNorm epsilon is required, attention.causal
// says whether attention sees the tokens after (the converter writes
// false; absent, causal, as llama.cpp takes it), and nomic-bert must name
// its pooling.
func TestConfigEncoders(t *testing.T) {
	enc := func(arch string, edit func(m map[string]any)) map[string]any {
		m := base(arch)
		delete(m, arch+".attention.layer_norm_rms_epsilon")
		m[arch+".attention.layer_norm_epsilon"] = float32(1e-12)
		m[arch+".attention.causal"] = false
		m[arch+".pooling_type"] = uint32(1)
		edit(m)
		return m
	}
	keep := func(map[string]any) {}
	for _, arch := range []string{"bert", "nomic-bert", "jina-bert-v3"} {
		c, err := ConfigFromGGUF(parse(t, enc(arch, keep)))
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		if !c.Encoder || !c.NonCausal || c.NormEps != 1e-12 || c.Pooling != PoolingMean || c.AbsPositions != (arch == "bert") || c.RopeNeox != (arch != "bert") {
			t.Errorf("%s: %+v", arch, c)
		}
		c, err = ConfigFromGGUF(parse(t, enc(arch, func(m map[string]any) { m[arch+".attention.causal"] = true })))
		if err != nil || c.NonCausal {
			t.Errorf("%s with causal attention: non-causal %v, %v", arch, c.NonCausal, err)
		}
		// Absent, causal: llama-bench d32676d77 prints "causal attn = 1"
		// for such a file.
		c, err = ConfigFromGGUF(parse(t, enc(arch, func(m map[string]any) { delete(m, arch+".attention.causal") })))
		if err != nil || c.NonCausal {
			t.Errorf("%s without attention.causal: non-causal %v, %v", arch, c.NonCausal, err)
		}
	}
	for _, tc := range []struct {
		name    string
		kv      map[string]any
		mention string
	}{
		{"no epsilon", enc("bert", func(m map[string]any) { delete(m, "bert.attention.layer_norm_epsilon") }), "bert.attention.layer_norm_epsilon"},
		{"NaN epsilon", enc("bert", func(m map[string]any) { m["bert.attention.layer_norm_epsilon"] = float32(math.NaN()) }), "layer_norm_epsilon"},
		{"causal a number", enc("bert", func(m map[string]any) { m["bert.attention.causal"] = uint32(0) }), "bert.attention.causal"},
		{"nomic-bert without pooling", enc("nomic-bert", func(m map[string]any) { delete(m, "nomic-bert.pooling_type") }), "nomic-bert.pooling_type"},
		{"jina-bert-v3 without epsilon", enc("jina-bert-v3", func(m map[string]any) { delete(m, "jina-bert-v3.attention.layer_norm_epsilon") }), "jina-bert-v3.attention.layer_norm_epsilon"},
	} {
		_, err := ConfigFromGGUF(parse(t, tc.kv))
		if !errors.Is(err, ErrBadModel) || !strings.Contains(fmt.Sprint(err), tc.mention) {
			t.Errorf("%s: err = %v, want ErrBadModel mentioning %q", tc.name, err, tc.mention)
		}
	}
	// jina-bert-v3's pooling is optional, as bert's (llama.cpp reads it so).
	if c, err := ConfigFromGGUF(parse(t, enc("jina-bert-v3", func(m map[string]any) { delete(m, "jina-bert-v3.pooling_type") }))); err != nil || c.Pooling != PoolingNone {
		t.Errorf("jina-bert-v3 without pooling: pooling %v, %v", c.Pooling, err)
	}
}

// eurobert, neo-bert and llama-embed are a decoder's RMSNorm blocks made
// embedders: no head, attention over the whole text when attention.causal
// is false (as eurobert's and neo-bert's converters write it; absent,
// causal, as llama-bench d32676d77 takes it, and llama-embed's converter
// writes no such key), NEOX RoPE for eurobert and NORM for the others,
// the RMS epsilon required as a decoder's.
func TestConfigBidirectional(t *testing.T) {
	for _, arch := range []string{"eurobert", "neo-bert", "llama-embed"} {
		for _, tc := range []struct {
			causal    any // attention.causal, or nil for none
			nonCausal bool
		}{{false, true}, {nil, false}, {true, false}} {
			m := base(arch)
			if tc.causal != nil {
				m[arch+".attention.causal"] = tc.causal
			}
			c, err := ConfigFromGGUF(parse(t, m))
			if err != nil {
				t.Fatalf("%s, causal %v: %v", arch, tc.causal, err)
			}
			if !c.NoHead || c.Encoder || c.NonCausal != tc.nonCausal || c.RopeNeox != (arch == "eurobert") || c.LayerNorm {
				t.Errorf("%s, causal %v: %+v", arch, tc.causal, c)
			}
		}
		m := base(arch)
		delete(m, arch+".attention.layer_norm_rms_epsilon")
		if _, err := ConfigFromGGUF(parse(t, m)); !errors.Is(err, ErrBadModel) || !strings.Contains(fmt.Sprint(err), "layer_norm_rms_epsilon") {
			t.Errorf("%s without its RMS epsilon: err = %v", arch, err)
		}
	}
}

// Granite's multipliers land in the Config, rope.scaling.finetuned false
// turns RoPE off in every layer, and smollm3 leaves every fourth layer
// unrotated, as llama.cpp's graphs do.
func TestConfigGraniteSmolLM3(t *testing.T) {
	granite := func(arch string) map[string]any {
		m := base(arch)
		m[arch+".embedding_scale"] = float32(12)
		m[arch+".residual_scale"] = float32(0.22)
		m[arch+".attention.scale"] = float32(0.0078125)
		m[arch+".logit_scale"] = float32(8)
		return m
	}
	unrotated := func(c Config) []int {
		var ls []int
		for il := range c.Layers {
			if !c.RopeLayer(il) {
				ls = append(ls, il)
			}
		}
		return ls
	}
	noRope := granite("granite")
	noRope["granite.rope.scaling.finetuned"] = false
	moe := granite("granitemoe")
	// expert_feed_forward_length, which the converter does not write, is
	// not what sizes the experts: feed_forward_length (768) is, as in
	// llama.cpp.
	moe["granitemoe.expert_count"], moe["granitemoe.expert_used_count"], moe["granitemoe.expert_feed_forward_length"] = uint32(32), uint32(8), uint32(512)
	// MiniCPM: without the keys, llama.cpp's defaults (embedding 12,
	// residual 1.4/sqrt(26), logits divided by 256/2304); with them, the
	// file's; attention.scale and rope.scaling.finetuned are not read.
	minicpmBare := base("minicpm")
	minicpmBare["minicpm.embedding_length"] = uint32(2304)
	minicpm := granite("minicpm")
	minicpm["minicpm.rope.scaling.finetuned"] = false
	for _, tc := range []struct {
		name      string
		kv        map[string]any
		unrotated string
		check     func(c Config) bool
	}{
		{"minicpm without its multipliers", minicpmBare, "[]", func(c Config) bool {
			return c.EmbedScale == 12 && c.ResidualScale == float32(1.4/math.Sqrt(26)) && c.LogitScale == float32(256.0/2304) && c.KQScale == invSqrt(576)
		}},
		{"minicpm", minicpm, "[]", func(c Config) bool {
			return c.EmbedScale == 12 && c.ResidualScale == 0.22 && c.LogitScale == 8 && c.KQScale == invSqrt(64)
		}},
		{"granite", granite("granite"), "[]", func(c Config) bool {
			return c.EmbedScale == 12 && c.ResidualScale == 0.22 && c.KQScale == 0.0078125 && c.LogitScale == 8 && c.Experts == 0
		}},
		{"granite without RoPE", noRope, fmt.Sprint(func() []int {
			ls := make([]int, 26)
			for i := range ls {
				ls[i] = i
			}
			return ls
		}()), func(c Config) bool { return c.LogitScale == 8 }},
		{"granitemoe", moe, "[]", func(c Config) bool {
			return c.Experts == 32 && c.ExpertsUsed == 8 && c.ExpertFFN == 768 && c.ExpertNorm && c.ResidualScale == 0.22
		}},
		{"smollm3", base("smollm3"), "[3 7 11 15 19 23]", func(c Config) bool {
			return !c.RopeNeox && c.KQScale == invSqrt(64) && c.EmbedScale == 0 && c.LogitScale == 0
		}},
	} {
		c, err := ConfigFromGGUF(parse(t, tc.kv))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := fmt.Sprint(unrotated(c)); got != tc.unrotated {
			t.Errorf("%s: unrotated layers %s, want %s", tc.name, got, tc.unrotated)
		}
		if !tc.check(c) {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}

// EXAONE 4.0 as llama.cpp loads it: no pre-norms, per-head Q/K norms,
// post-norms, NEOX; the hybrid attention only at 64 layers (the 32B):
// layers 0–2 of every four windowed and rotated, the fourth global and
// unrotated, the window attention.sliding_window or 4096; at any other
// depth (the 1.2B's 30) no window, every layer rotated, whatever the
// file's window says.
func TestConfigExaone4(t *testing.T) {
	deep := func(window bool) map[string]any {
		m := base("exaone4")
		m["exaone4.block_count"] = uint32(64)
		if !window {
			delete(m, "exaone4.attention.sliding_window")
		}
		return m
	}
	var globals []int
	for il := 3; il < 64; il += 4 {
		globals = append(globals, il)
	}
	for _, tc := range []struct {
		name    string
		kv      map[string]any
		window  int
		globals []int // the layers neither windowed nor rotated
	}{
		{"30 layers, a window stated", func() map[string]any {
			m := base("exaone4")
			m["exaone4.block_count"] = uint32(30)
			return m
		}(), 0, nil},
		{"64 layers", deep(true), 64, globals},
		{"64 layers, no window stated", deep(false), 4096, globals},
	} {
		c, err := ConfigFromGGUF(parse(t, tc.kv))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !c.RopeNeox || !c.QKNorm || c.QKNormFull || !c.PostNorms || !c.NoPreNorm || c.KQScale != 0.125 {
			t.Errorf("%s: flags %+v", tc.name, c)
		}
		if c.Window != tc.window {
			t.Errorf("%s: window %d, want %d", tc.name, c.Window, tc.window)
		}
		var windowed, unrotated, full []int
		for il := range c.Layers {
			if c.WindowedLayer(il) {
				windowed = append(windowed, il)
			} else {
				full = append(full, il)
			}
			if !c.RopeLayer(il) {
				unrotated = append(unrotated, il)
			}
		}
		if tc.window == 0 {
			full = nil
			if len(windowed) != 0 {
				t.Errorf("%s: windowed layers %v, want none", tc.name, windowed)
			}
		} else if len(windowed) != 48 {
			t.Errorf("%s: %d windowed layers, want 48", tc.name, len(windowed))
		}
		if !slices.Equal(full, tc.globals) || !slices.Equal(unrotated, tc.globals) {
			t.Errorf("%s: global layers %v and unrotated %v, want %v", tc.name, full, unrotated, tc.globals)
		}
	}
}

// YaRN's keys and llama.cpp's defaults land in the Config, and its
// attention factor is llama.cpp's: get_mscale(factor) over the 1 +
// 0.1·ln(factor) ggml multiplies by again, times LongRoPE's factor.
func TestConfigYarn(t *testing.T) {
	m := base("qwen3")
	m["qwen3.rope.scaling.type"] = "yarn"
	m["qwen3.rope.scaling.factor"] = float32(4)
	m["qwen3.rope.scaling.original_context_length"] = uint32(32768)
	c := mustConfig(t, m)
	if c.RopeScale != 4 || c.YarnExt != 1 || c.YarnBetaFast != 32 || c.YarnBetaSlow != 1 || c.RopeOrigContext != 32768 {
		t.Fatalf("%+v", c)
	}
	f := float32(4)
	want := (0.1*float32(math.Log(float64(f))) + 1) * (1 / (1 + 0.1*float32(math.Log(float64(f)))))
	if got := c.RopeMScale(); got != want || math.Abs(float64(got)-1) > 1e-6 {
		t.Errorf("RopeMScale %v, want %v (about 1)", got, want)
	}
	// Mistral's log multiplier (mscale_all_dim): get_mscale(f, 1) over
	// get_mscale(f, 1), then the cancellation.
	m["qwen3.rope.scaling.yarn_log_multiplier"] = float32(1)
	c = mustConfig(t, m)
	if got, want := c.RopeMScale(), (1+0.1*float32(math.Log(4)))/(1+0.1*float32(math.Log(4)))*(1/(1+0.1*float32(math.Log(4)))); got != want {
		t.Errorf("with a log multiplier: RopeMScale %v, want %v", got, want)
	}
	delete(m, "qwen3.rope.scaling.yarn_log_multiplier")
	m["qwen3.rope.scaling.yarn_ext_factor"] = float32(0.5)
	m["qwen3.rope.scaling.yarn_beta_fast"] = float32(8)
	if c, err := ConfigFromGGUF(parse(t, m)); err != nil || c.YarnExt != 0.5 || c.YarnBetaFast != 8 {
		t.Errorf("ext %v, beta fast %v: %v", c.YarnExt, c.YarnBetaFast, err)
	}
}
