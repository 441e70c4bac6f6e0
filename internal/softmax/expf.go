package softmax

import "math"

// The float32 exponential of the softmax. llama.cpp's CPU softmax takes a
// float32 approximation of exp too (ggml_v_expf), not a correctly rounded
// one; this one is written so that its SIMD twins (kv's softmax kernels,
// 16 lanes to a 512-bit register) compute every lane with the same float32
// operations in the same order and get the same bits, where a float64
// exponential costs twice the lanes and four times the operations.

// Constants of Expf: ln2 split in two (expLn2Hi has few enough bits that
// n·expLn2Hi is exact for every n Expf meets), log2(e), the cut below
// which the result would not be a normal float32, and 1/k! for the degree
// 7 polynomial of exp on [-ln2/2, ln2/2] (truncation error below 2⁻²⁷
// relative there).
const (
	expLog2e  float32 = 1.44269504088896341
	expLn2Hi  float32 = 0.693359375
	expLn2Lo  float32 = -2.12194440e-4
	ExpfFloor float32 = -87.33654 // ln of the smallest normal float32, rounded up
)

// expCoef are 1/7! … 1/0!, highest degree first (Horner's order).
var expCoef = [8]float32{1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1, 1}

// Expf returns e^x for x <= 0 within 2 float32 ulps of the exact value
// (TestExpfAccuracy), 0 below ExpfFloor (where e^x is not a normal float32)
// and NaN for NaN. It reduces x = n·ln2 + r with n = round-to-even(x·log2e),
// evaluates the polynomial at r by Horner's rule, every product and sum
// rounded to float32 (no fused multiply-add: the explicit conversions keep
// the compiler from fusing them on arm64), and scales by 2ⁿ.
func Expf(x float32) float32 {
	if x != x {
		return x
	}
	if x < ExpfFloor {
		return 0
	}
	n := float32(math.RoundToEven(float64(float32(x * expLog2e))))
	r := float32(x - float32(n*expLn2Hi))
	r = float32(r - float32(n*expLn2Lo))
	p := expCoef[0]
	for _, c := range expCoef[1:] {
		p = float32(float32(p*r) + c)
	}
	return float32(p * math.Float32frombits(uint32(int32(n)+127)<<23))
}
