package ssm

import "math"

// SelectiveChannel advances one Mamba-1 channel's state by a token and
// returns its output before the skip: for each state element i (len(B)
// of them, each with its own decay A[i]),
//
//	s[i] = in[i]·exp(dt·A[i]) + B[i]·(x·dt)
//	y = Σ s[i]·C[i]
//
// as ggml_ssm_scan runs a Mamba-1 model (A of d_state a channel, one
// channel a head): the decay's exponent is rounded to float32, every
// product and sum too, the sum in order of i. in is the state before the
// token: s itself, or another copy of the same size (the first token of
// a pass reads the previous checkpoint's slot). Pure Go: ggml's loop
// takes an exponential per element, which no vector kernel here has.
func SelectiveChannel(s, in, A, B, C []float32, x, dt float32) float32 {
	n := len(B)
	s, in, A, C = s[:n], in[:n], A[:n], C[:n]
	xdt := x * dt
	var y float32
	for i := range n {
		v := float32(in[i]*float32(math.Exp(float64(dt*A[i])))) + float32(B[i]*xdt)
		y += float32(v * C[i])
		s[i] = v
	}
	return y
}
