package ssm

import (
	"math"

	"github.com/lowmem/llm/internal/softmax"
)

// Softplus sets dst[i] to the softplus of x[i] + bias[i], a Mamba-1 block's
// time steps: the sum itself above 20 (as ggml, where log(1+eˣ) is x in
// float32), else log(1 + Expf(sum)) with 1 + Expf rounded to float32 and
// the logarithm logf's, so that the kernels give the same bits. NaN gives
// NaN. dst, x and bias are of one length.
func Softplus(dst, x, bias []float32) {
	n := len(dst)
	if n == 0 {
		return
	}
	_, _ = x[n-1], bias[n-1]
	softplusAt(level, dst, x[:n], bias[:n])
}

// softplusGo is the twin of every Softplus kernel.
func softplusGo(dst, x, bias []float32) {
	for i := range dst {
		dst[i] = softplus(x[i] + bias[i])
	}
}

// softplus is one time step of softplusGo.
func softplus(v float32) float32 {
	if v > 20 {
		return v
	}
	return logf(1 + softmax.Expf(v))
}

// Constants of logf: sqrt(2) rounded to float32 (where the mantissa is
// halved), and the coefficients of the degree 8 polynomial p(f) with
// log(1+f) ≈ f − f²/2 + f³·p(f) on [√½−1, √2−1] (Cephes' logf, within an
// ulp or so), highest degree first.
const logSqrt2 float32 = 1.41421356

var logCoef = [9]float32{
	7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
	-1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
}

// logf is the natural logarithm of y, for y >= 1 (every 1 + Expf) and
// NaN (which it returns). It splits y = m·2ᵏ with m in [√½, √2) by its
// bits, evaluates log m = f − f²/2 + f³·p(f), f = m − 1, by Horner's rule,
// and adds k·ln2 in Expf's two parts; every product and sum rounded to
// float32, no fused multiply-adds, in the order the kernels take.
func logf(y float32) float32 {
	b := math.Float32bits(y)
	k := float32(int32(b>>23) - 127)
	m := math.Float32frombits(b&0x7fffff | 0x3f800000)
	if m >= logSqrt2 {
		m = float32(m * 0.5)
		k = float32(k + 1)
	}
	f := float32(m - 1)
	z := float32(f * f)
	p := logCoef[0]
	for _, c := range logCoef[1:] {
		p = float32(float32(p*f) + c)
	}
	p = float32(float32(p*f) * z)
	p = float32(p + float32(k*expLn2Lo))
	p = float32(p - float32(z*0.5))
	r := float32(f + p)
	r = float32(r + float32(k*expLn2Hi))
	// y − y is 0, or NaN for NaN, which the bits above would lose.
	return float32(r + float32(y-y))
}

// Expf's two parts of ln2, which logf adds too.
const (
	expLn2Hi float32 = 0.693359375
	expLn2Lo float32 = -2.12194440e-4
)
