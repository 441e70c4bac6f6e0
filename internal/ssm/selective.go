package ssm

import "github.com/lowmem/llm/internal/softmax"

// SelectiveScan advances a block of Mamba-1 channels by a token and writes
// their outputs: for each channel p (len(x) of them, each a row of len(B)
// floats in s, in and A, every state element i with its own decay
// A[p][i]),
//
//	s[p][i] = in[p][i]·exp(dt[p]·A[p][i]) + B[i]·(x[p]·dt[p])
//	y[p] = Σ_i s[p][i]·C[i] + x[p]·D[p]
//
// as ggml_ssm_scan runs a Mamba-1 model (A of d_state a channel, one
// channel a head), dt being the time step after its softplus. in is the
// state before the token: s itself, or another copy of the same size (the
// first token of a pass reads the previous checkpoint's slot).
//
// The exponential is softmax.Expf: 0 where dt·A is below
// softmax.ExpfFloor, NaN for NaN. A is negative in every converted model;
// for a positive dt·A Expf stays within 2 ulps up to 88.37 (1.2 measured
// every 97th float32), gives +Inf a little past it and past 88.7 bits of
// no meaning, the same on every kernel. Every product and sum is rounded to float32 and
// the sum over the state runs in selectiveRowGo's order, so every kernel
// gives the same bits; -tags purego runs the twin.
func SelectiveScan(s, in, A, B, C, x, dt, D, y []float32) {
	n, rows := len(B), len(x)
	if rows == 0 {
		return
	}
	// Index the last element each kernel touches, so that a short argument
	// panics here, in Go, rather than being read or written past.
	_, _, _ = dt[rows-1], D[rows-1], y[rows-1]
	if n > 0 {
		_, _, _, _ = s[rows*n-1], in[rows*n-1], A[rows*n-1], C[n-1]
	}
	selectiveAt(level, s[:rows*n], in[:rows*n], A[:rows*n], B, C[:n], x, dt[:rows], D[:rows], y[:rows])
}

// selectiveGo is the twin of every SelectiveScan kernel: a channel at a
// time.
func selectiveGo(s, in, A, B, C, x, dt, D, y []float32) {
	n := len(B)
	for p, xv := range x {
		r := p * n
		sum := selectiveRowGo(s[r:r+n], in[r:r+n], A[r:r+n], B, C, dt[p], xv*dt[p])
		y[p] = sum + float32(xv*D[p])
	}
}

// selectiveRowGo advances one channel's state by a token, s = in·Expf(dt·A)
// + B·xdt, and returns its sum against C in scanRowGo's order: element i
// of the blocks of 16 into partial sum i mod 16, the sums folded (fold),
// then the tail past the blocks summed in order and added; every product
// and sum rounded to float32.
func selectiveRowGo(s, in, A, B, C []float32, dt, xdt float32) float32 {
	n := len(s)
	in, A, B, C = in[:n], A[:n], B[:n], C[:n]
	var acc [lanes]float32
	i := 0
	for ; i+lanes <= n; i += lanes {
		for j := range lanes {
			v := float32(in[i+j]*softmax.Expf(dt*A[i+j])) + float32(B[i+j]*xdt)
			acc[j] += float32(v * C[i+j])
			s[i+j] = v
		}
	}
	var tail float32
	for ; i < n; i++ {
		v := float32(in[i]*softmax.Expf(dt*A[i])) + float32(B[i]*xdt)
		tail += float32(v * C[i])
		s[i] = v
	}
	return fold(&acc) + tail
}
