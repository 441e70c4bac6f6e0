package ssm

import "github.com/lowmem/llm/internal/cpu"

// level is the kernel ScanHead runs, chosen once from the CPU (and
// LLM_CPU): on amd64 AVX-512 or AVX2 assembly (kernels_amd64.s), on arm64
// NEON (kernels_neon_arm64.s), else the twin.
var level = cpu.Max()

// ScanHead advances one head's state by a token and writes its outputs:
// for each of the head's channels p (len(x) of them, each a row of
// len(B) floats in s and in),
//
//	s[p] = in[p]·dA + B·(x[p]·dt)
//	y[p] = Σ s[p]·C + x[p]·d
//
// in is the state before the token: s itself, or another copy of the same
// size (the first token of a pass reads the previous checkpoint's slot and
// writes a free one). Every product and sum is rounded to float32; the sum
// over the state runs in the order of scanRowGo, whatever the CPU.
func ScanHead(s, in, B, C, x, y []float32, dA, dt, d float32) {
	scan(false, s, in, B, C, x, y, dA, dt, d)
}

// ScanHeadStream is ScanHead for a state written out of place that is
// too large for the caches: where the kernel can (s aligned to its vector
// and rows of a multiple of 16 floats), its stores of s bypass the caches,
// which saves reading every line of s before overwriting it (on amd64;
// arm64 runs ScanHead's kernel). The same bits as ScanHead.
func ScanHeadStream(s, in, B, C, x, y []float32, dA, dt, d float32) {
	scan(true, s, in, B, C, x, y, dA, dt, d)
}

// scan checks ScanHead's arguments and runs the kernel.
func scan(stream bool, s, in, B, C, x, y []float32, dA, dt, d float32) {
	n, rows := len(B), len(x)
	if rows == 0 {
		return
	}
	// Index the last element each kernel touches, so that a short argument
	// panics here, in Go, rather than being read or written past.
	_ = y[rows-1]
	if n > 0 {
		_, _, _ = s[rows*n-1], in[rows*n-1], C[n-1]
	}
	scanHeadAt(level, stream, s[:rows*n], in[:rows*n], B, C[:n], x, y[:rows], dA, dt, d)
}

// scanHeadGo is the twin of every kernel: ScanHead, a channel at a time.
func scanHeadGo(s, in, B, C, x, y []float32, dA, dt, d float32) {
	n := len(B)
	for p, xv := range x {
		y[p] = scanRowGo(s[p*n:(p+1)*n], in[p*n:(p+1)*n], B, C, dA, xv*dt) + float32(xv*d)
	}
}

// lanes is the partial sums of a row: the lanes of an AVX-512 register,
// two AVX2 ones or four NEON ones.
const lanes = 16

// scanRowGo advances one channel's state by a token, s = in·dA + B·xdt,
// and returns its sum against C: element i of the blocks of 16 into
// partial sum i mod 16, the sums folded by halves (fold), then the tail
// past the blocks summed in order and added; every product and sum rounded
// to float32.
func scanRowGo(s, in, B, C []float32, dA, xdt float32) float32 {
	n := len(s)
	in, B, C = in[:n], B[:n], C[:n]
	var acc [lanes]float32
	i := 0
	for ; i+lanes <= n; i += lanes {
		for j := range lanes {
			v := float32(in[i+j]*dA) + float32(B[i+j]*xdt)
			acc[j] += float32(v * C[i+j])
			s[i+j] = v
		}
	}
	var tail float32
	for ; i < n; i++ {
		v := float32(in[i]*dA) + float32(B[i]*xdt)
		tail += float32(v * C[i])
		s[i] = v
	}
	return fold(&acc) + tail
}

// fold sums a row's partial sums by halves, as the kernels reduce their
// vectors: j + j+8, then j + j+4, j + j+2, and 0 + 1.
func fold(acc *[lanes]float32) float32 {
	for w := lanes / 2; w >= 2; w /= 2 {
		for j := range w {
			acc[j] += acc[j+w]
		}
	}
	return acc[0] + acc[1]
}
