package model

import (
	"bytes"
	"errors"
	"math"
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
		{"unknown arch", func(m map[string]any) { m["general.architecture"] = "mamba" }, ErrUnsupportedArch},
		{"no arch", func(m map[string]any) { delete(m, "general.architecture") }, ErrBadModel},
		{"no embedding", func(m map[string]any) { delete(m, "llama.embedding_length") }, ErrBadModel},
		{"zero heads", func(m map[string]any) { m["llama.attention.head_count"] = uint32(0) }, ErrBadModel},
		{"kv heads not dividing", func(m map[string]any) { m["llama.attention.head_count_kv"] = uint32(3) }, ErrBadModel},
		{"per-layer heads", func(m map[string]any) { m["llama.attention.head_count"] = []int32{4, 4} }, ErrBadModel},
		{"odd rope dim", func(m map[string]any) { m["llama.rope.dimension_count"] = uint32(63) }, ErrBadModel},
		{"yarn", func(m map[string]any) { m["llama.rope.scaling.type"] = "yarn" }, ErrUnsupportedArch},
		{"nan eps", func(m map[string]any) { m["llama.attention.layer_norm_rms_epsilon"] = float32(math.NaN()) }, ErrBadModel},
	}
	for _, c := range cases {
		m := base("llama")
		c.mut(m)
		if _, err := ConfigFromGGUF(parse(t, m)); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}
