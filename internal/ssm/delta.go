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
// Every product and sum is rounded to float32.
func DeltaHead(s, in, q, k, v, y []float32, decay, beta, scale float32) {
	n := len(k)
	if len(v) == 0 || n == 0 {
		return
	}
	// Index the last element touched, so a short argument panics here.
	_, _, _, _ = s[len(v)*n-1], in[len(v)*n-1], q[n-1], y[len(v)-1]
	for j, vj := range v {
		row, old := s[j*n:(j+1)*n:(j+1)*n], in[j*n:(j+1)*n:(j+1)*n]
		var sk float32
		for i, x := range old {
			x *= decay
			row[i] = x
			sk += x * k[i]
		}
		d := (vj - sk) * beta
		var o float32
		for i, x := range row {
			x += k[i] * d
			row[i] = x
			o += x * q[i]
		}
		y[j] = o * scale
	}
}
