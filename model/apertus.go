package model

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/ops"
)

// apertusHparams: Swiss AI's Apertus as llama.cpp's apertus graph runs
// it — llama's layers with per-head Q and K norms before NEOX RoPE and a
// feed-forward without a gate, down(xIELU(up·x)), whose four parameters
// each layer has its own of.
func apertusHparams(c *Config, m *meta) {
	m.xielu(c)
}

// xieluKeys are the xIELU parameters' keys: global, without the
// architecture's prefix, as llama-arch.cpp names them.
var xieluKeys = [4]string{"xielu.alpha_n", "xielu.alpha_p", "xielu.beta", "xielu.eps"}

// xielu reads xieluKeys into c.XIELU, one activation a layer: each key is
// required and holds one number for every layer or one a layer (block
// count of them), as llama.cpp's get_key_or_arr reads it; the values
// must be finite.
func (m *meta) xielu(c *Config) {
	var v [4][]float32
	for k, key := range xieluKeys {
		raw, present := m.get(key)
		if !present {
			return
		}
		if x, ok := m.f.Float(key); ok {
			v[k] = []float32{float32(x)}
		} else if xs, ok := m.f.Float32s(key); ok && len(xs) == c.Layers {
			v[k] = xs
		} else {
			m.fail("%s is %s, want a number or one for each of %d layers", key, describe(raw), c.Layers)
			return
		}
		for _, x := range v[k] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				m.err = fmt.Errorf("model: %s holds %v, want finite numbers: %w", key, x, ErrBadModel)
				return
			}
		}
	}
	at := func(k, il int) float32 { return v[k][min(il, len(v[k])-1)] }
	c.XIELU = make([]ops.XIELU, c.Layers)
	for il := range c.XIELU {
		c.XIELU[il] = ops.NewXIELU(at(0, il), at(1, il), at(2, il), at(3, il))
	}
}
