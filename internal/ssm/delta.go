package ssm

// DeltaHead advances one value head of a gated delta-net layer (Qwen 3.5's
// linear attention) by a token and writes the head's output, as ggml's
// gated_delta_net computes it. The state is len(v) rows of len(k) floats,
// row j the value element j's weights over the key elements (ggml's
// transposed layout, so every step below walks a row in order):
//
//	s[j] = in[j]·decay
//	d_j  = (v[j] - s[j]·k)·beta
//	s[j] = s[j] + k·d_j
//	y[j] = (s[j]·q)·scale
//
// in is the state before the token: s itself, or another copy of the same
// size (the first token of a pass reads the previous checkpoint's slot and
// writes a free one). q and k are the head's L2-normalised query and key.
// Every product and sum is rounded to float32 (no fused multiply-adds),
// each dot product summed in four partial sums, so every platform gives
// the same bits; ggml sums in another order, within the reference test's
// tolerance.
func DeltaHead(s, in, q, k, v, y []float32, decay, beta, scale float32) {
	n := len(k)
	if len(v) == 0 || n == 0 {
		return
	}
	// Index the last element touched, so a short argument panics here.
	_, _, _, _ = s[len(v)*n-1], in[len(v)*n-1], q[n-1], y[len(v)-1]
	for j, vj := range v {
		row, old := s[j*n:(j+1)*n:(j+1)*n], in[j*n:(j+1)*n:(j+1)*n]
		d := (vj - stepDot(row, old, k, k, decay, 0)) * beta
		y[j] = stepDot(row, row, k, q, 1, d) * scale
	}
}

// stepDot writes src·m + a·add into row (m 1 or add 0 leave the other
// term's bits as they are) and returns row's dot with w, in four partial
// sums (element i into sum i mod 4, then (0+1)+(2+3), then the tail),
// which breaks the chain of dependent adds a single sum makes.
func stepDot(row, src, a, w []float32, m, add float32) float32 {
	n := len(row)
	src, a, w = src[:n], a[:n], w[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		x0 := float32(src[i]*m) + float32(a[i]*add)
		x1 := float32(src[i+1]*m) + float32(a[i+1]*add)
		x2 := float32(src[i+2]*m) + float32(a[i+2]*add)
		x3 := float32(src[i+3]*m) + float32(a[i+3]*add)
		row[i], row[i+1], row[i+2], row[i+3] = x0, x1, x2, x3
		s0 += float32(x0 * w[i])
		s1 += float32(x1 * w[i+1])
		s2 += float32(x2 * w[i+2])
		s3 += float32(x3 * w[i+3])
	}
	sum := (s0 + s1) + (s2 + s3)
	for ; i < n; i++ {
		x := float32(src[i]*m) + float32(a[i]*add)
		row[i] = x
		sum += float32(x * w[i])
	}
	return sum
}
