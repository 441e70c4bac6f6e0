package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// shape holds the hyper-parameters of a model, as its GGUF metadata
// states them.
type shape struct {
	Name    string
	Arch    string // general.architecture: llama, qwen2 or gemma2
	Vocab   int
	Embd    int
	Layers  int
	Heads   int
	HeadsKV int
	HeadDim int // attention.key_length and value_length; 0 = Embd/Heads
	FFN     int
	Context int

	RopeBase float32
	RMSEps   float32

	QKVBias    bool // qwen2: attn_q/k/v have biases
	TiedOutput bool // no output.weight: token_embd is the LM head

	// Llama 3.1 rope scaling, stored as the rope_freqs.weight tensor.
	Llama3Rope *llama3Rope

	// gemma2
	Window       int
	AttnSoftcap  float32
	FinalSoftcap float32
}

// llama3Rope is the rope_scaling block of a Llama 3.1 config.json.
type llama3Rope struct {
	Factor, LowFreqFactor, HighFreqFactor float64
	OriginalContext                       int
}

// headDim is the size of one attention head.
func (s shape) headDim() int {
	if s.HeadDim != 0 {
		return s.HeadDim
	}
	return s.Embd / s.Heads
}

// shapes are the models mkmodel can imitate, from their config.json.
var shapes = []shape{
	{
		// A very small llama whose row lengths are multiples of 256, so
		// every type (the K-quants too) applies without fallbacks.
		Name: "tiny", Arch: "llama", Vocab: 512, Embd: 256, Layers: 2,
		Heads: 4, HeadsKV: 2, FFN: 512, Context: 512,
		RopeBase: 10000, RMSEps: 1e-5,
	},
	{
		Name: "tinyllama-1.1b", Arch: "llama", Vocab: 32000, Embd: 2048, Layers: 22,
		Heads: 32, HeadsKV: 4, FFN: 5632, Context: 2048,
		RopeBase: 10000, RMSEps: 1e-5,
	},
	{
		Name: "llama-3.1-8b", Arch: "llama", Vocab: 128256, Embd: 4096, Layers: 32,
		Heads: 32, HeadsKV: 8, FFN: 14336, Context: 131072,
		RopeBase: 500000, RMSEps: 1e-5,
		Llama3Rope: &llama3Rope{Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalContext: 8192},
	},
	{
		Name: "qwen2.5-7b", Arch: "qwen2", Vocab: 152064, Embd: 3584, Layers: 28,
		Heads: 28, HeadsKV: 4, FFN: 18944, Context: 32768,
		RopeBase: 1000000, RMSEps: 1e-6, QKVBias: true,
	},
	{
		Name: "gemma-2-9b", Arch: "gemma2", Vocab: 256000, Embd: 3584, Layers: 42,
		Heads: 16, HeadsKV: 8, HeadDim: 256, FFN: 14336, Context: 8192,
		RopeBase: 10000, RMSEps: 1e-6, TiedOutput: true,
		Window: 4096, AttnSoftcap: 50, FinalSoftcap: 30,
	},
}

// shapeNames lists the names -shape accepts.
func shapeNames() []string {
	var names []string
	for _, s := range shapes {
		names = append(names, s.Name)
	}
	return names
}

// lookupShape returns the shape called name.
func lookupShape(name string) (shape, error) {
	i := slices.IndexFunc(shapes, func(s shape) bool { return s.Name == name })
	if i < 0 {
		return shape{}, fmt.Errorf("unknown shape %q (known: %s)", name, strings.Join(shapeNames(), ", "))
	}
	return shapes[i], nil
}

// ropeFactors computes the rope_freqs.weight tensor as llama.cpp's
// converter does for Llama 3 rope scaling: per rotated pair, the factor its
// frequency is divided by (1 for short wavelengths, Factor for long ones,
// a smooth blend in between). The arithmetic is float32, as in the
// converter's torch tensors.
func ropeFactors(r *llama3Rope, base float32, dim int) []float32 {
	lowWavelen := float64(r.OriginalContext) / r.LowFreqFactor
	highWavelen := float64(r.OriginalContext) / r.HighFreqFactor
	out := make([]float32, dim/2)
	for i := range out {
		exp := float32(2*i) / float32(dim)
		freq := 1 / float32(math.Pow(float64(base), float64(exp)))
		wavelen := float32(2*math.Pi) / freq
		switch {
		case float64(wavelen) < highWavelen:
			out[i] = 1
		case float64(wavelen) > lowWavelen:
			out[i] = float32(r.Factor)
		default:
			smooth := (float32(r.OriginalContext)/wavelen - float32(r.LowFreqFactor)) /
				float32(r.HighFreqFactor-r.LowFreqFactor)
			out[i] = 1 / ((1-smooth)/float32(r.Factor) + smooth)
		}
	}
	return out
}
