package model

import (
	"errors"
	"fmt"
	"math"

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

// ConfigFromGGUF reads the model configuration from GGUF metadata and
// checks it for consistency. It does not look at tensor data.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	var c Config
	arch, ok := f.String("general.architecture")
	if !ok {
		return c, fmt.Errorf("model: general.architecture missing: %w", ErrBadModel)
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

	var err error
	req := func(key string) int {
		if err != nil {
			return 0
		}
		v, ok := f.Uint(arch + "." + key)
		if !ok {
			if _, present := f.Get(arch + "." + key); present {
				err = fmt.Errorf("model: %s.%s is not a single non-negative integer (per-layer values are not supported): %w", arch, key, ErrBadModel)
			} else {
				err = fmt.Errorf("model: %s.%s missing: %w", arch, key, ErrBadModel)
			}
			return 0
		}
		if v == 0 || v > 1<<24 {
			err = fmt.Errorf("model: %s.%s = %d out of range: %w", arch, key, v, ErrBadModel)
			return 0
		}
		return int(v)
	}
	opt := func(key string, def int) int {
		if _, present := f.Get(arch + "." + key); !present {
			return def
		}
		return req(key)
	}
	optF := func(key string, def float32) float32 {
		v, ok := f.Float(arch + "." + key)
		if !ok {
			return def
		}
		return float32(v)
	}

	c.Embd = req("embedding_length")
	c.Layers = req("block_count")
	c.FFN = req("feed_forward_length")
	c.Heads = req("attention.head_count")
	c.Context = opt("context_length", 2048)
	c.HeadsKV = opt("attention.head_count_kv", c.Heads)
	if err != nil {
		return c, err
	}
	c.HeadDimK = opt("attention.key_length", c.Embd/c.Heads)
	c.HeadDimV = opt("attention.value_length", c.Embd/c.Heads)
	c.RopeDim = opt("rope.dimension_count", c.HeadDimK)
	if err != nil {
		return c, err
	}
	if c.HeadsKV > c.Heads || c.Heads%c.HeadsKV != 0 {
		return c, fmt.Errorf("model: head_count %d is not a multiple of head_count_kv %d: %w", c.Heads, c.HeadsKV, ErrBadModel)
	}
	if c.HeadDimK == 0 || c.HeadDimV == 0 || c.RopeDim > c.HeadDimK || c.RopeDim%2 != 0 {
		return c, fmt.Errorf("model: head dims k=%d v=%d rope=%d inconsistent: %w", c.HeadDimK, c.HeadDimV, c.RopeDim, ErrBadModel)
	}
	c.RMSEps = optF("attention.layer_norm_rms_epsilon", 1e-5)
	c.RopeBase = optF("rope.freq_base", 10000)
	c.RopeScale = 1
	if st, ok := f.String(arch + ".rope.scaling.type"); ok && st != "none" {
		if st != "linear" {
			return c, fmt.Errorf("model: rope scaling %q is not supported (linear only): %w", st, ErrUnsupportedArch)
		}
		c.RopeScale = optF("rope.scaling.factor", 1)
		if !(c.RopeScale > 0) {
			return c, fmt.Errorf("model: rope.scaling.factor %v: %w", c.RopeScale, ErrBadModel)
		}
	}
	if !(c.RMSEps > 0) || !(c.RopeBase > 0) {
		return c, fmt.Errorf("model: rms eps %v or rope base %v not positive: %w", c.RMSEps, c.RopeBase, ErrBadModel)
	}
	c.KQScale = 1 / float32(math.Sqrt(float64(c.HeadDimK)))

	switch arch {
	case "qwen2":
		c.QKVBias = true
	case "gemma2":
		c.PostNorms = true
		c.GELU = true
		c.AttnSoftcap = optF("attn_logit_softcapping", 0)
		c.FinalSoftcap = optF("final_logit_softcapping", 0)
		c.Window = opt("attention.sliding_window", 0)
		c.EmbedScale = float32(math.Sqrt(float64(c.Embd)))
		// llama.cpp picks Gemma-2's query scale by model size: the 27B
		// model (46 layers) scales by n_embd/n_head, the others by the
		// head dimension; the attention itself is then unscaled.
		if c.Layers == 46 {
			c.QueryScale = 1 / float32(math.Sqrt(float64(c.Embd/c.Heads)))
		} else {
			c.QueryScale = 1 / float32(math.Sqrt(float64(c.HeadDimK)))
		}
		c.KQScale = 1
	}
	return c, err
}
