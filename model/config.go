package model

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/lowmem/llm/internal/gguf"
)

// ErrUnsupportedArch is returned for a GGUF file whose general.architecture
// this package cannot run. llm.ErrUnsupportedArch is the same value.
var ErrUnsupportedArch = errors.New("unsupported architecture")

// ErrBadModel is returned for a file that is not a valid model: a malformed
// GGUF file, a missing tensor, a shape that disagrees with the metadata.
// It is the same value as gguf.ErrBadFile and llm.ErrBadModel.
var ErrBadModel = gguf.ErrBadFile

// Config is everything the forward pass needs to know about a model,
// read from GGUF metadata. Nothing is hard-coded per model.
type Config struct {
	Arch     string // general.architecture: "llama", "qwen2", "gemma2"
	Name     string // general.name, if present
	FileType uint32 // general.file_type (llama_ftype), if present

	Vocab    int // rows of token_embd
	Embd     int // embedding_length
	Layers   int // block_count
	Heads    int // attention.head_count
	HeadsKV  int // attention.head_count_kv
	HeadDimK int // attention.key_length, default Embd/Heads
	HeadDimV int // attention.value_length, default Embd/Heads
	FFN      int // feed_forward_length
	Context  int // context_length the model was trained with

	RMSEps    float32
	RopeDim   int
	RopeBase  float32
	RopeNeox  bool    // rotate (i, i+d/2) pairs rather than (2i, 2i+1)
	RopeScale float32 // linear rope scaling factor (1 = none)

	AttnSoftcap  float32 // gemma2: cap·tanh(kq/cap) before softmax; 0 = none
	FinalSoftcap float32 // gemma2: applied to the logits; 0 = none
	Window       int     // sliding window of the windowed layers; 0 = none
	EmbedScale   float32 // multiply embeddings by this (gemma2: sqrt(Embd)); 0 = none
	QueryScale   float32 // scale Q before K·Q (gemma2); 0 = none
	KQScale      float32 // scale of K·Q inside the softmax
	PostNorms    bool    // gemma2: post_attention_norm and post_ffw_norm
	GELU         bool    // GeGLU (gemma) instead of SwiGLU
	QKVBias      bool    // qwen2: q/k/v projections have biases
}

// archRopeNeox says which architectures use the NEOX rotation, as
// llama.cpp's llama_model_rope_type does.
var archRopeNeox = map[string]bool{
	"llama":  false,
	"qwen2":  true,
	"gemma2": true,
}

// Supported lists the architectures this package can run.
func Supported() []string { return []string{"llama", "qwen2", "gemma2"} }

// WindowedLayer reports whether layer il uses the sliding window.
func (c *Config) WindowedLayer(il int) bool {
	// Gemma-2 alternates: even layers are local (windowed), odd global.
	return c.Window > 0 && il%2 == 0
}

// Bounds on metadata values. They are far above any released model; what
// they guard against is a file whose sizes overflow the products computed
// from them (KV cache, scratch) or ask for absurd allocations.
const (
	maxCount      = 1 << 24 // any count or length: layers, heads, widths, context
	maxHeadDim    = 1 << 16 // attention.key_length, attention.value_length
	maxAttnWidth  = 1 << 20 // head_count × head size
	maxKVPerToken = 1 << 32 // KV elements one token adds over all layers
)

// ConfigFromGGUF reads the model configuration from GGUF metadata and
// checks it for consistency. It does not look at tensors; Check does.
// Errors wrap ErrBadModel and name the key at fault, or ErrUnsupportedArch
// for a valid configuration this package does not run (an unknown
// architecture, rope scaling other than linear, per-layer sizes,
// mixture-of-experts).
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	var c Config
	archV, ok := f.Get("general.architecture")
	if !ok {
		return c, fmt.Errorf("model: general.architecture missing: %w", ErrBadModel)
	}
	arch, ok := archV.(string)
	if !ok {
		return c, fmt.Errorf("model: general.architecture is %s, want a string: %w", describe(archV), ErrBadModel)
	}
	c.Arch = arch
	neox, ok := archRopeNeox[arch]
	if !ok {
		return c, fmt.Errorf("model: architecture %q (supported: %v): %w", arch, Supported(), ErrUnsupportedArch)
	}
	c.RopeNeox = neox
	c.Name, _ = f.String("general.name")
	if ft, ok := f.Uint("general.file_type"); ok {
		c.FileType = uint32(ft)
	}
	key := func(k string) string { return arch + "." + k }
	has := func(k string) bool { _, ok := f.Get(key(k)); return ok }

	var err error
	// num reads a positive integer of at most limit; def < 0 makes the key
	// required. llama.cpp lets some keys hold one value per layer: such an
	// array is accepted when every layer has the same value.
	num := func(k string, limit, def int, perLayer bool) int {
		if err != nil {
			return 0
		}
		name := key(k)
		raw, present := f.Get(name)
		if !present {
			if def < 0 {
				err = fmt.Errorf("model: %s missing: %w", name, ErrBadModel)
			}
			return def
		}
		var v uint64
		if u, ok := f.Uint(name); ok {
			v = u
		} else if xs, ok := f.Int32s(name); ok && perLayer && len(xs) > 0 {
			if len(xs) != c.Layers {
				err = fmt.Errorf("model: %s has %d per-layer values for %d layers (block_count): %w", name, len(xs), c.Layers, ErrBadModel)
				return 0
			}
			for _, x := range xs {
				if x != xs[0] {
					err = fmt.Errorf("model: %s differs between layers (%d and %d): models with per-layer sizes are not supported: %w",
						name, xs[0], x, ErrUnsupportedArch)
					return 0
				}
			}
			if xs[0] < 0 {
				err = fmt.Errorf("model: %s = %d out of range [1, %d]: %w", name, xs[0], limit, ErrBadModel)
				return 0
			}
			v = uint64(xs[0])
		} else {
			err = fmt.Errorf("model: %s is %s, want a non-negative integer: %w", name, describe(raw), ErrBadModel)
			return 0
		}
		if v == 0 || v > uint64(limit) {
			err = fmt.Errorf("model: %s = %d out of range [1, %d]: %w", name, v, limit, ErrBadModel)
			return 0
		}
		return int(v)
	}
	// real reads a float; present values must be numbers.
	real := func(k string, def float32) float32 {
		if err != nil {
			return 0
		}
		raw, present := f.Get(key(k))
		if !present {
			return def
		}
		v, ok := f.Float(key(k))
		if !ok {
			err = fmt.Errorf("model: %s is %s, want a number: %w", key(k), describe(raw), ErrBadModel)
			return 0
		}
		return float32(v)
	}

	c.Layers = num("block_count", maxCount, -1, false)
	c.Embd = num("embedding_length", maxCount, -1, false)
	c.FFN = num("feed_forward_length", maxCount, -1, true)
	c.Heads = num("attention.head_count", maxCount, -1, true)
	c.Context = num("context_length", maxCount, 2048, false)
	c.HeadsKV = num("attention.head_count_kv", maxCount, c.Heads, true)
	if err != nil {
		return c, err
	}
	if n, ok := f.Uint(key("expert_count")); ok && n > 0 {
		return c, fmt.Errorf("model: %s = %d: mixture-of-experts models are not supported: %w", key("expert_count"), n, ErrUnsupportedArch)
	}
	if c.Heads%c.HeadsKV != 0 {
		return c, fmt.Errorf("model: %s = %d does not divide %s = %d: %w",
			key("attention.head_count_kv"), c.HeadsKV, key("attention.head_count"), c.Heads, ErrBadModel)
	}
	if (!has("attention.key_length") || !has("attention.value_length")) && c.Embd%c.Heads != 0 {
		return c, fmt.Errorf("model: %s = %d is not a multiple of %s = %d, and %s or %s is not set: %w",
			key("embedding_length"), c.Embd, key("attention.head_count"), c.Heads,
			key("attention.key_length"), key("attention.value_length"), ErrBadModel)
	}
	c.HeadDimK = num("attention.key_length", maxHeadDim, c.Embd/c.Heads, false)
	c.HeadDimV = num("attention.value_length", maxHeadDim, c.Embd/c.Heads, false)
	if err != nil {
		return c, err
	}
	for _, d := range []struct {
		k string
		n int
	}{{"attention.key_length", c.HeadDimK}, {"attention.value_length", c.HeadDimV}} {
		if w := int64(c.Heads) * int64(d.n); w > maxAttnWidth {
			return c, fmt.Errorf("model: %s = %d × %s = %d is %d, more than %d: %w",
				key("attention.head_count"), c.Heads, key(d.k), d.n, w, maxAttnWidth, ErrBadModel)
		}
	}
	if n := int64(c.Layers) * int64(c.HeadsKV) * int64(c.HeadDimK+c.HeadDimV); n > maxKVPerToken {
		return c, fmt.Errorf("model: %s = %d × %s = %d × (key + value length %d) is %d KV elements per token, more than %d: %w",
			key("block_count"), c.Layers, key("attention.head_count_kv"), c.HeadsKV, c.HeadDimK+c.HeadDimV, n, int64(maxKVPerToken), ErrBadModel)
	}
	c.RopeDim = num("rope.dimension_count", maxHeadDim, c.HeadDimK, false)
	if err != nil {
		return c, err
	}
	if c.RopeDim > c.HeadDimK || c.RopeDim%2 != 0 {
		return c, fmt.Errorf("model: %s = %d must be even and at most the head size %d: %w",
			key("rope.dimension_count"), c.RopeDim, c.HeadDimK, ErrBadModel)
	}

	c.RMSEps = real("attention.layer_norm_rms_epsilon", 1e-5)
	c.RopeBase = real("rope.freq_base", 10000)
	if err != nil {
		return c, err
	}
	if !positive(c.RMSEps) {
		return c, fmt.Errorf("model: %s = %v, want a finite number above 0: %w", key("attention.layer_norm_rms_epsilon"), c.RMSEps, ErrBadModel)
	}
	if !positive(c.RopeBase) {
		return c, fmt.Errorf("model: %s = %v, want a finite number above 0: %w", key("rope.freq_base"), c.RopeBase, ErrBadModel)
	}
	// As in llama.cpp, scaling is linear unless the type says otherwise,
	// and a factor of 0 (or none) means no scaling.
	c.RopeScale = 1
	scaling := "linear"
	if v, ok := f.Get(key("rope.scaling.type")); ok {
		if scaling, ok = v.(string); !ok {
			return c, fmt.Errorf("model: %s is %s, want a string: %w", key("rope.scaling.type"), describe(v), ErrBadModel)
		}
	}
	switch scaling {
	case "none", "":
	case "linear":
		factorKey := "rope.scaling.factor"
		if !has(factorKey) {
			factorKey = "rope.scale_linear"
		}
		factor := real(factorKey, 0)
		if err != nil {
			return c, err
		}
		if factor != 0 {
			if !positive(factor) {
				return c, fmt.Errorf("model: %s = %v, want a finite number above 0: %w", key(factorKey), factor, ErrBadModel)
			}
			c.RopeScale = factor
		}
	default:
		return c, fmt.Errorf("model: %s %q is not supported (linear only): %w", key("rope.scaling.type"), scaling, ErrUnsupportedArch)
	}
	c.KQScale = 1 / float32(math.Sqrt(float64(c.HeadDimK)))

	switch arch {
	case "qwen2":
		c.QKVBias = true
	case "gemma2":
		c.PostNorms = true
		c.GELU = true
		c.AttnSoftcap = real("attn_logit_softcapping", 0)
		c.FinalSoftcap = real("final_logit_softcapping", 0)
		c.Window = num("attention.sliding_window", maxCount, 0, false)
		if err != nil {
			return c, err
		}
		for _, s := range []struct {
			k string
			v float32
		}{{"attn_logit_softcapping", c.AttnSoftcap}, {"final_logit_softcapping", c.FinalSoftcap}} {
			if s.v != 0 && !positive(s.v) {
				return c, fmt.Errorf("model: %s = %v, want 0 (none) or a finite number above 0: %w", key(s.k), s.v, ErrBadModel)
			}
		}
		c.EmbedScale = float32(math.Sqrt(float64(c.Embd)))
		// llama.cpp picks Gemma-2's query scale by model size: the 27B
		// model (46 layers) scales by n_embd/n_head, the others by the
		// head dimension; the attention itself is then unscaled.
		if c.Layers == 46 {
			c.QueryScale = 1 / float32(math.Sqrt(float64(max(c.Embd/c.Heads, 1))))
		} else {
			c.QueryScale = 1 / float32(math.Sqrt(float64(c.HeadDimK)))
		}
		c.KQScale = 1
	}
	return c, err
}

// positive reports whether x is finite and above 0.
func positive(x float32) bool { return x > 0 && !math.IsInf(float64(x), 1) }

// describe names a metadata value's type for an error, without printing a
// possibly huge array.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("the string %q", x)
	case bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32, float64:
		return fmt.Sprintf("%T %v", v, v)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		return fmt.Sprintf("an array of %d (%T)", rv.Len(), v)
	}
	return fmt.Sprintf("%T", v)
}
