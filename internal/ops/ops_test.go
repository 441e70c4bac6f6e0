package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/quant"
)

func TestRMSNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 173)
	w := make([]float32, len(x))
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
		w[i] = float32(1 + r.NormFloat64()*0.1)
	}
	out := make([]float32, len(x))
	RMSNorm(out, x, w, 1e-5)
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	scale := 1 / math.Sqrt(ss/float64(len(x))+1e-5)
	for i := range x {
		want := float64(x[i]) * scale * float64(w[i])
		if math.Abs(float64(out[i])-want) > 1e-5*math.Abs(want)+1e-6 {
			t.Fatalf("element %d: %v, want %v", i, out[i], want)
		}
	}
}

// TestRope checks both pair layouts against the textbook rotation by
// pos·base^(-2i/d).
func TestRope(t *testing.T) {
	const dim, heads, pos = 64, 3, 37
	for _, neox := range []bool{false, true} {
		r := &Rope{Dim: dim, Neox: neox, Base: 10000}
		cs := make([]float32, dim)
		r.Angles(pos, cs)
		x := make([]float32, heads*dim)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		got := append([]float32(nil), x...)
		r.Apply(got, heads, dim, cs)
		for h := 0; h < heads; h++ {
			for i := 0; i < dim/2; i++ {
				theta := pos * math.Pow(10000, -2*float64(i)/dim)
				a, b := 2*i, 2*i+1
				if neox {
					a, b = i, i+dim/2
				}
				x0, x1 := float64(x[h*dim+a]), float64(x[h*dim+b])
				w0 := x0*math.Cos(theta) - x1*math.Sin(theta)
				w1 := x0*math.Sin(theta) + x1*math.Cos(theta)
				if math.Abs(float64(got[h*dim+a])-w0) > 2e-4 || math.Abs(float64(got[h*dim+b])-w1) > 2e-4 {
					t.Fatalf("neox=%v head %d pair %d: (%v, %v), want (%v, %v)", neox, h, i, got[h*dim+a], got[h*dim+b], w0, w1)
				}
			}
		}
	}
}

func TestActivations(t *testing.T) {
	g := []float32{-20, -1, 0, 0.5, 3, 20}
	u := []float32{2, 2, 2, 2, 2, 2}
	s := append([]float32(nil), g...)
	SiLUMul(s, u)
	ge := append([]float32(nil), g...)
	GELUMul(ge, u)
	for i, v := range g {
		silu := float64(v) / (1 + math.Exp(-float64(v))) * 2
		if math.Abs(float64(s[i])-silu) > 1e-5*math.Max(1, math.Abs(silu)) {
			t.Errorf("silu(%v)·2 = %v, want %v", v, s[i], silu)
		}
		x := float64(v)
		gelu := 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*x*(1+0.044715*x*x))) * 2
		// Inside (-10, 10) the result is rounded through F16, as ggml does.
		if math.Abs(float64(ge[i])-gelu) > 2e-3*math.Max(1, math.Abs(gelu)) {
			t.Errorf("gelu(%v)·2 = %v, want %v", v, ge[i], gelu)
		}
	}
}

// LayerNorm against the textbook formula in float64, in place too.
func TestLayerNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, 173)
	w := make([]float32, len(x))
	b := make([]float32, len(x))
	for i := range x {
		x[i] = float32(5 + r.NormFloat64()*3) // an offset the mean must remove
		w[i] = float32(1 + r.NormFloat64()*0.1)
		b[i] = float32(r.NormFloat64() * 0.1)
	}
	var mean, v float64
	for _, e := range x {
		mean += float64(e)
	}
	mean /= float64(len(x))
	for _, e := range x {
		v += (float64(e) - mean) * (float64(e) - mean)
	}
	scale := 1 / math.Sqrt(v/float64(len(x))+1e-12)
	out := make([]float32, len(x))
	LayerNorm(out, x, w, b, 1e-12)
	for i := range x {
		want := (float64(x[i])-mean)*scale*float64(w[i]) + float64(b[i])
		if math.Abs(float64(out[i])-want) > 1e-5*math.Abs(want)+1e-6 {
			t.Fatalf("element %d: %v, want %v", i, out[i], want)
		}
	}
	LayerNorm(x, x, w, b, 1e-12)
	for i := range out {
		if out[i] != x[i] {
			t.Fatalf("element %d: %v in place, %v into another slice", i, x[i], out[i])
		}
	}
}

func TestGELU(t *testing.T) {
	x := []float32{-20, -1, 0, 0.5, 3, 20}
	g := append([]float32(nil), x...)
	GELU(g)
	m := append([]float32(nil), x...)
	GELUMul(m, []float32{1, 1, 1, 1, 1, 1})
	for i := range x {
		if g[i] != m[i] {
			t.Errorf("gelu(%v) = %v, GELUMul by 1 gives %v", x[i], g[i], m[i])
		}
	}
}

// GELU's table gives, for every input, the bits the direct computation
// did: the input rounded to a half, the tanh approximation, the result
// rounded to a half (and 0 or the input outside (-10, 10)).
func TestGELUTableIsDirect(t *testing.T) {
	direct := func(v float32) float32 {
		switch {
		case v <= -10:
			return 0
		case v >= 10:
			return v
		}
		h := quant.FP16ToFP32(quant.FP32ToFP16(v))
		return quant.FP16ToFP32(quant.FP32ToFP16(geluF32(h)))
	}
	r := rand.New(rand.NewPCG(3, 4))
	inputs := []float32{-10, 10, -9.999, 9.999, 0, float32(math.Copysign(0, -1)), 65504, -65504, float32(math.Inf(1)), float32(math.NaN())}
	for h := 0; h < 1<<16; h++ {
		inputs = append(inputs, quant.FP16ToFP32(uint16(h)))
	}
	for range 100000 {
		inputs = append(inputs, float32(r.NormFloat64()*4))
	}
	got := append([]float32(nil), inputs...)
	GELU(got)
	for i, v := range inputs {
		want := direct(v)
		if math.Float32bits(got[i]) != math.Float32bits(want) && !(got[i] != got[i] && want != want) {
			t.Fatalf("gelu(%v) = %v from the table, %v computed", v, got[i], want)
		}
	}
}
