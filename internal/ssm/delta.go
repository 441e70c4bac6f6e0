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
// Both passes over the state are ScanHead's (its assembly, or its twin),
// so every product and sum is rounded to float32 (no fused multiply-adds)
// and each dot product summed in ScanHead's order, the same bits on every
// platform; ggml sums in another order, within the reference test's
// tolerance. The first pass decays the rows and dots them with k (ScanHead
// with B = C = k and no input), the second adds k·d_j to row j and dots
// it with q (B = k, x = d, C = q), deltaRows rows at a time.
func DeltaHead(s, in, q, k, v, y []float32, decay, beta, scale float32) {
	deltaHead(s, in, q, k, v, y, decay, nil, beta, scale)
}

// DeltaHeadDiag is DeltaHead with a decay per key element (Kimi Delta
// Attention's diagonal gate, as ggml's delta net takes a gate of S_k
// values a head): every row's element i is multiplied by decay[i]
// (len(k) of them) instead of one number for the whole state,
//
//	s[j] = in[j]∘decay
//
// the rest as DeltaHead. The decay is a pass of its own in Go before
// ScanHead's two (the first then decays by 1, exactly).
func DeltaHeadDiag(s, in, q, k, v, y, decay []float32, beta, scale float32) {
	if len(k) > 0 {
		_ = decay[len(k)-1]
	}
	deltaHead(s, in, q, k, v, y, 1, decay, beta, scale)
}

// deltaHead is DeltaHead and DeltaHeadDiag: the rows decayed by decay, or
// by diag element by element when diag is not nil.
func deltaHead(s, in, q, k, v, y []float32, decay float32, diag []float32, beta, scale float32) {
	n, rows := len(k), len(v)
	if rows == 0 || n == 0 {
		return
	}
	// Index the last element touched, so a short argument panics here.
	_, _, _, _ = s[rows*n-1], in[rows*n-1], q[n-1], y[rows-1]
	var zero, d [deltaRows]float32
	for r0 := 0; r0 < rows; r0 += deltaRows {
		m := min(deltaRows, rows-r0)
		st, yy := s[r0*n:(r0+m)*n], y[r0:r0+m]
		from := in[r0*n : (r0+m)*n]
		if diag != nil {
			// Decay element by element first; ScanHead then only dots.
			for j := range m {
				row, src := st[j*n:(j+1)*n], from[j*n:(j+1)*n]
				for i, g := range diag[:n] {
					row[i] = src[i] * g
				}
			}
			from = st
		}
		ScanHead(st, from, k, k, zero[:m], yy, decay, 0, 0)
		for j := range m {
			d[j] = (v[r0+j] - yy[j]) * beta
		}
		ScanHead(st, st, k, q, d[:m], yy, 1, 1, 0)
		for j := range m {
			yy[j] *= scale
		}
	}
}

// deltaRows is how many rows of a head DeltaHead takes a pass (the value
// head size of every Qwen 3.5 model, 128): its scratch lives on the stack.
const deltaRows = 128
