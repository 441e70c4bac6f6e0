package model

import (
	"reflect"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
)

// zeroed names the perturbations that turn one feature off by setting
// its Config field to the zero value (false, 0 or nil), each beside the
// field: the reference tests pick them, as those of perturbed, by name
// (mustMoveAll), so a perturbation reads the same in every test.
var zeroed = map[string]string{
	"no embedding scale":              "EmbedScale",
	"no residual scale":               "ResidualScale",
	"no logit scale":                  "LogitScale",
	"no logit multiplier":             "LogitMul",
	"no query scale":                  "QueryScale",
	"every layer rotated":             "NoRopeEvery",
	"unrotated layers last":           "NoRopeLead",
	"per-head Q/K norms":              "QKNormFull",
	"Q/K norms before RoPE":           "QKNormAfterRope",
	"NORM pairs":                      "RopeNeox",
	"no sections":                     "RopeSections",
	"linear, not YaRN":                "YarnExt",
	"no temperature":                  "AttnTempScale",
	"no log multiplier":               "YarnLogMul",
	"mscale of 1":                     "YarnMScaleAll",
	"no sinks":                        "Sinks",
	"no output gate":                  "AttnOutGate",
	"sigmoid output gate":             "GateSoftplus",
	"no post norms":                   "PostNorms",
	"no V norm":                       "VNorm",
	"RMSNorm, not LayerNorm":          "LayerNorm",
	"not parallel":                    "Parallel",
	"causal":                          "NonCausal",
	"no window":                       "Window",
	"global layers last":              "SWALayers",
	"no sparsity":                     "SparseLayers",
	"no KV sharing":                   "KVFrom",
	"plain SwiGLU":                    "SwiGLUOAI",
	"SwiGLU, not GeGLU":               "GELU",
	"GELU, not ReLU²":                 "ReLU2",
	"GELU, not xIELU":                 "XIELU",
	"SwiGLU experts":                  "ReGLU",
	"no selection bias":               "ExpertSelBias",
	"no renormalisation":              "ExpertNorm",
	"shared expert ungated":           "SharedGate",
	"no expert scale":                 "ExpertScale",
	"no group limit":                  "ExpertGroups",
	"router reads the experts' input": "RouterPreAttn",
	"RMS Q/K norms":                   "QKLayerNorm",
	"sequential without ffn_norm":     "OptionalFFNNorm",
	"rotated":                         "AbsPositions",
	"sequential residual":             "ParallelNorms",
	"SiLU, not ReLU²":                 "GatedReLU2",
	"no clamp":                        "ClampKQV",
	"no rescale":                      "RescaleEvery",
	"sliding, not chunked":            "Chunked",
	"no Q/K unit norms":               "QKUnitNorm",
	"temperature on every layer":      "AttnTempNoPE",
	"no temperature offset":           "AttnTempOffset",
	"experts' outputs weighted":       "ExpertInputWeighted",
	"no adjugate experts":             "ChunkFFN",
	"no value scale":                  "AttnOutScale",
	"shared sum not halved":           "SharedSumScale",
	"global layers rotated":           "NoRopeGlobal",
	"stack run once":                  "Loops",
	"no norm between runs":            "LoopNorm",
	"no embedding skip":               "EmbedSkip",
	"no query gains":                  "QHeadGain",
}

// perturbed names the perturbations that are not one field zeroed.
var perturbed = map[string]func(c *Config){
	"default kq scale":       func(c *Config) { c.KQScale = invSqrt(c.HeadDimK) },
	"every dim rotated":      func(c *Config) { c.RopeDim = c.HeadDimK },
	"NEOX pairs":             func(c *Config) { c.RopeNeox = true },
	"bidirectional":          func(c *Config) { c.NonCausal = true },
	"one RoPE base":          func(c *Config) { c.RopeBaseSWA = c.RopeBase },
	"one RoPE scale":         func(c *Config) { c.RopeScaleSWA = c.RopeScale },
	"Q/K norms after RoPE":   func(c *Config) { c.QKNormAfterRope = true },
	"one rotated width":      func(c *Config) { c.RopeDimSWA = c.RopeDim },
	"other section layout":   func(c *Config) { c.RopeInterleaved = !c.RopeInterleaved },
	"unrotated layers first": func(c *Config) { c.NoRopeLead = true },
	"renormalised":           func(c *Config) { c.ExpertNorm = true },
	"adjugate scale 1":       func(c *Config) { c.GroupScale = 1 },
	"groups twice as large":  func(c *Config) { c.GroupExperts *= 2 },
	"norm between runs":      func(c *Config) { c.LoopNorm = true },
	// Only bitnet's files choose between the two: over other models it
	// changes nothing, so that applicable passes it over there.
	"ReLU², not SiLU": func(c *Config) {
		if c.Arch == "bitnet" && !c.ReGLU {
			c.GatedReLU2 = true
		}
	},
	"sigmoid gating": func(c *Config) { c.ExpertGating = GatingSigmoid },
	// Over a model without experts it changes nothing, so that applicable
	// passes it over there.
	"softmax gating": func(c *Config) {
		if c.ExpertGating != 0 {
			c.ExpertGating = GatingSoftmax
		}
	},
	// As softmax gating: nothing over a model without xIELU.
	"layer 0's xIELU everywhere": func(c *Config) {
		if c.XIELU != nil {
			c.XIELU = slices.Repeat(c.XIELU[:1], len(c.XIELU))
		}
	},
	// The NextN block, the last, which the model leaves out, run as one
	// layer more.
	"NextN block run": func(c *Config) { c.Layers++ },
}

// perturbation is the change to a Config that zeroed or perturbed names
// name; a name neither has, or both, or a field Config lacks, is a broken
// test.
func perturbation(t *testing.T, name string) func(c *Config) {
	t.Helper()
	field, isZeroed := zeroed[name]
	perturb, isPerturbed := perturbed[name]
	if isZeroed == isPerturbed {
		t.Fatalf("%q: not one perturbation of zeroed and perturbed", name)
	}
	if isPerturbed {
		return perturb
	}
	if _, ok := reflect.TypeFor[Config]().FieldByName(field); !ok {
		t.Fatalf("%q: Config has no field %s to zero", name, field)
	}
	return func(c *Config) { reflect.ValueOf(c).Elem().FieldByName(field).SetZero() }
}

// applicable is those of names whose perturbation changes c: what a test
// run over many architectures can perturb in the one at hand.
func applicable(t *testing.T, c Config, names ...string) []string {
	t.Helper()
	return slices.DeleteFunc(slices.Clone(names), func(name string) bool {
		p := c
		perturbation(t, name)(&p)
		return reflect.DeepEqual(p, c)
	})
}

// mustMoveAll is mustMove for each perturbation named: the reference of
// m's Config changed by it (its hidden states for a model without a
// head, its logits otherwise) must differ from want by at least least; a
// perturbation that leaves the Config as it was is a broken test.
func mustMoveAll(t *testing.T, m *Model, f *gguf.File, data []byte, toks []int32, want [][]float64, least float64, names ...string) {
	t.Helper()
	if perturbationsSkipped {
		return
	}
	for _, name := range names {
		c := m.Config
		perturbation(t, name)(&c)
		if reflect.DeepEqual(c, m.Config) {
			t.Fatalf("%s: nothing perturbed", name)
		}
		ref := &refDecoder{refEncoder: refEncoder{t: t, f: f, data: data, c: &c, round16: true}}
		other := ref.logits
		if m.NoHead {
			other = ref.hidden
		}
		mustMove(t, name, other(toks), want, least)
	}
}
