package ops

import "math"

// Expf is e^x in float32 to within 2 ulp (TestExpf measures it against
// math.Exp) for x in [-87.3, 88]; below, it returns about 2^-126 and
// above, about e^88 — saturated, never 0 or +Inf, which the activations
// below do not need. It is written to be vectorised: no branch and no
// table, only multiplies, adds and integer operations on the bits, so an
// assembly version computes the same steps lane by lane (and a pure-Go
// twin stays this function).
//
// x = n·ln2 + r with n the nearest integer to x·log2(e) and |r| ≤ ln2/2;
// e^r comes from its Taylor polynomial to degree 7 (truncation error
// below 6e-9 relative) and 2^n from the exponent bits.
func Expf(x float32) float32 {
	return expScale(expReduce(x))
}

// Expf's body is in two parts, each under the compiler's inlining budget
// (the whole is over it), so that siluMulFastGo's loop runs it without a
// call.

const (
	expLog2e = 1.44269504088896341
	// Adding 1.5·2^23 rounds a float32 below 2^22 to an integer, which
	// then sits in the low bits of the sum's mantissa.
	expShifter = 12582912
)

// expReduce clamps x and splits it as x = n·ln2 + r: t holds n in its low
// mantissa bits (see expScale) and r is the remainder, |r| ≤ ln2/2.
func expReduce(x float32) (t, r float32) {
	const (
		// ln2 split in two so that n·ln2Hi is exact for |n| ≤ 128.
		ln2Hi = 0.693359375
		ln2Lo = -2.12194440e-4
	)
	// Comparisons, not min and max, which cost more for floats (signed
	// zeros and NaN); a NaN passes through both and comes out NaN.
	if x < -87.3 {
		x = -87.3
	}
	if x > 88 {
		x = 88
	}
	t = float32(x*expLog2e) + expShifter
	n := t - expShifter
	return t, x - n*ln2Hi - n*ln2Lo
}

// expScale returns e^r·2^n for expReduce's t and r.
func expScale(t, r float32) float32 {
	p := ((((((r*(1.0/5040)+1.0/720)*r+1.0/120)*r+1.0/24)*r+1.0/6)*r+0.5)*r+1)*r + 1
	// 2^n: n+127 in the exponent bits. t's low mantissa bits hold n + 2^22.
	return p * math.Float32frombits((math.Float32bits(t)-math.Float32bits(expShifter)+127)<<23)
}

// SiLUMulFast writes silu(g)·u into g, silu(x) = x/(1+e^-x), with Expf in
// place of math.Exp: within a few ulp of SiLUMul and about 1.5× as fast in
// pure Go; a vector kernel does 8 or 16 elements per step. It is the pure-Go
// twin of any such kernel: an assembly version goes behind this name
// (siluMulFast in act_fast_<arch>.go), tested against siluMulFastGo.
func SiLUMulFast(g, u []float32) { siluMulFastGo(g, u) }

// siluMulFastGo is v/(1+Expf(-v))·u element by element (TestSiLUMulFast
// checks it against Expf bit for bit).
func siluMulFastGo(g, u []float32) {
	u = u[:len(g)]
	for i, v := range g {
		g[i] = v / (1 + expScale(expReduce(-v))) * u[i]
	}
}

// SiLUFast writes silu(x) = x/(1+e^-x) into x with Expf's exponential,
// as SiLUMulFast does without the product (a Mamba-2 convolution's
// output, thousands of channels a token).
func SiLUFast(x []float32) {
	for i, v := range x {
		x[i] = v / (1 + expScale(expReduce(-v)))
	}
}

// OAI SwiGLU's constants, fixed in llama.cpp's graph for gpt-oss.
const (
	oaiAlpha = 1.702
	oaiLimit = 7
)

// SwiGLUOAIMul writes gpt-oss's clamped SwiGLU into g: with x = min(g, 7)
// and y = u clamped to [-7, 7], x·σ(1.702·x)·(y + 1), in ggml_swiglu_oai's
// order of operations (x / (1 + e^(1.702·(−x))), then the product), with
// Expf for the exponential.
func SwiGLUOAIMul(g, u []float32) {
	u = u[:len(g)]
	for i, v := range g {
		x := min(v, oaiLimit)
		y := max(min(u[i], oaiLimit), -oaiLimit)
		g[i] = x / (1 + Expf(oaiAlpha*(-x))) * (y + 1)
	}
}
