package ssm

// WKV6Head advances one RWKV-6 head's state by a token and writes the
// head's outputs, as llama.cpp's rwkv_wkv6 (the state's rows by key): with
// N = len(r), for each row i and column j of the N×N state,
//
//	st[i][j] = in[i][j]·w[i] + k[i]·v[j]
//	y[j]     = Σ_i (k[i]·v[j]·u[i] + in[i][j])·r[i]
//
// in is the state before the token: st itself or another copy of its
// size. Every product and sum is rounded to float32 and y sums over i in
// order, whatever the CPU, so every kernel gives wkv6HeadGo's bits. The
// kernels take N a multiple of 8 (AVX2) or 16 (AVX-512, NEON); any other
// N runs the twin.
func WKV6Head(st, in, r, w, k, v, u, y []float32) {
	n := len(r)
	if n == 0 {
		return
	}
	checkHead(n, st, in, w, k, v, u, y)
	wkv6At(level, st[:n*n], in[:n*n], r, w[:n], k[:n], v[:n], u[:n], y[:n])
}

// GLAHead advances one head's state by a token as llama.cpp's
// gated_linear_attn (QRWKV6; the state's rows by key) and writes the
// head's outputs, reading r scaled by scale against the state after the
// token's update: with N = len(r),
//
//	st[i][j] = in[i][j]·w[i] + k[i]·v[j]
//	y[j]     = Σ_i st[i][j]·(r[i]·scale)
//
// in, the rounding, the order and the kernels are as WKV6Head's, with
// glaHeadGo the twin.
func GLAHead(st, in, r, w, k, v []float32, scale float32, y []float32) {
	n := len(r)
	if n == 0 {
		return
	}
	checkHead(n, st, in, w, k, v, y)
	glaAt(level, st[:n*n], in[:n*n], r, w[:n], k[:n], v[:n], scale, y[:n])
}

// checkHead indexes the last element each kernel touches of a head of
// size n, so that a short argument panics here, in Go, rather than being
// read or written past: st and in n×n, the vectors n.
func checkHead(n int, st, in []float32, vecs ...[]float32) {
	_, _ = st[n*n-1], in[n*n-1]
	for _, v := range vecs {
		_ = v[n-1]
	}
}

// wkv6HeadGo is the twin of every WKV6Head kernel. Its conversions keep
// each product rounded before its sum, so that no compiler fuses them
// into a multiply-add the kernels do not do.
func wkv6HeadGo(st, in, r, w, k, v, u, y []float32) {
	N := len(r)
	clear(y)
	for i := range N {
		si, so := in[i*N:(i+1)*N], st[i*N:(i+1)*N]
		ki, ri, ui, wi := k[i], r[i], u[i], w[i]
		for j := range N {
			kv := float32(ki * v[j])
			y[j] += float32((float32(kv*ui) + si[j]) * ri)
			so[j] = float32(si[j]*wi) + kv
		}
	}
}

// glaHeadGo is the twin of every GLAHead kernel, its conversions
// wkv6HeadGo's.
func glaHeadGo(st, in, r, w, k, v []float32, scale float32, y []float32) {
	N := len(r)
	clear(y)
	for i := range N {
		si, so := in[i*N:(i+1)*N], st[i*N:(i+1)*N]
		ki, ri, wi := k[i], r[i]*scale, w[i]
		for j := range N {
			sv := float32(si[j]*wi) + float32(ki*v[j])
			so[j] = sv
			y[j] += float32(sv * ri)
		}
	}
}
