package model

import (
	"math"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/ssm"
)

// This file is a Mamba-2 layer of granitehybrid (Granite 4.0-H) as
// llama.cpp's build_mamba2_layer, ggml_ssm_conv and ggml_ssm_scan compute
// it. ssm_in makes, per token, z (SSMInner), x (SSMInner), B and C
// (SSMGroups × SSMState each) and dt (SSMHeads). x, B and C go through a
// causal depthwise convolution of SSMConv taps (plus its bias), then SiLU.
// The scan then runs per head h, with g = h's group:
//
//	dt' = softplus(dt[h] + dt_bias[h]), dA = exp(dt'·A[h])
//	state[h][p][s] = state[h][p][s]·dA + B[g][s]·(x[h][p]·dt')
//	y[h][p] = Σ_s state[h][p][s]·C[g][s] + x[h][p]·D[h]
//
// y is gated by SiLU(z), normalised per group of SSMInner/SSMGroups
// channels (RMSNorm with ssm_norm's weights), and ssm_out takes it back to
// Embd. What a layer carries from pass to pass is its last SSMConv-1
// positions' convolution inputs and the scan's state: both live in the
// State's recurrent slots (see recurrent.go), conv part first; a pass
// reads them from the current slot and writes them to another, so the
// slot it read stays as a checkpoint without a copy.

// ssmConvTask convolves one Mamba-2 layer's x, B and C over a pass, in
// place in the ssm_in rows, a range of channels per work item.
type ssmConvTask struct {
	s      *State
	n      int       // tokens
	rows   []float32 // n rows of ssm_in's output, stride floats each
	stride int
	src    []float32 // the layer's SSMConv-1 rows of conv inputs, oldest first
	dst    []float32 // where the pass leaves them (src itself or a free slot)
	w, b   []float32 // SSMConv taps per channel, oldest first; bias (nil: none)
	// off and width place the channels in a row: Mamba-2's x, B and C
	// after z, a delta-net layer's q, k and v first.
	off, width int
}

// Do convolves channels [lo,hi) as convTask does, then adds the bias and
// takes SiLU (ops.SiLUFast, a float32 exponential within 2 ulp: math.Exp's
// float64 one, element by element, was a tenth of a Mamba-2 prefill's CPU). Each channel's window keeps the raw inputs, so the output
// can overwrite the input it was computed from.
func (k *ssmConvTask) Do(_, lo, hi int) {
	if k.n == 1 && k.s.texts == nil {
		k.one(lo, hi)
	} else {
		k.each(lo, hi)
	}
}

// each is Do for a pass of any length, a channel's window at a time.
func (k *ssmConvTask) each(lo, hi int) {
	c := &k.s.m.Config
	W, off := k.width, k.off
	win := window{L: c.SSMConv}
	for ch := lo; ch < hi; ch++ {
		win.load(k.src, W, ch)
		w := k.w[ch*win.L : (ch+1)*win.L]
		for t := range k.n {
			win.restart(k.s.texts, t)
			v := &k.rows[t*k.stride+off+ch]
			sum := win.push(*v, w)
			if k.b != nil {
				sum += k.b[ch]
			}
			*v = sum
		}
		win.store(k.dst, W, ch)
	}
	for t := range k.n {
		ops.SiLUFast(k.rows[t*k.stride+off+lo : t*k.stride+off+hi])
	}
}

// one is Do for a decode step: each channel's taps over its state rows
// and the new input, summed in window.push's order (oldest first, each
// product rounded), the state shifted by one row in place or into dst,
// without a window, which cost a decode step a third more.
func (k *ssmConvTask) one(lo, hi int) {
	W, L := k.width, k.s.m.SSMConv
	row := k.rows[k.off : k.off+W]
	for ch := lo; ch < hi; ch++ {
		taps := k.w[ch*L : (ch+1)*L]
		x := row[ch]
		var sum float32
		for j := range L - 1 {
			sum += float32(k.src[j*W+ch] * taps[j])
		}
		sum += float32(x * taps[L-1])
		for j := range L - 2 {
			k.dst[j*W+ch] = k.src[(j+1)*W+ch]
		}
		k.dst[(L-2)*W+ch] = x
		if k.b != nil {
			sum += k.b[ch]
		}
		row[ch] = sum
	}
	ops.SiLUFast(row[lo:hi])
}

// convolve runs k over its channels. A decode step's thousands of
// channels (ssmConvTask.one) go to the pool too: alone on one thread they
// took about 2 % of a token.
func (s *State) convolve(k ssmConvTask) {
	s.sc = k
	if k.n >= convParallelMin || k.n == 1 {
		s.e.For(k.width, 64, &s.sc)
	} else {
		s.sc.Do(0, 0, k.width)
	}
	s.sc = ssmConvTask{}
}

// ssmScanTask runs one Mamba-2 layer's scan over a pass, a range of heads
// per work item: each head's state moves through the pass's tokens in
// order, which is all that is sequential.
type ssmScanTask struct {
	s      *State
	L      *Layer
	n      int
	rows   []float32 // ssm_in's rows, convolved: z, x, B, C, dt
	stride int
	y      []float32 // n rows of SSMInner: the gated output
	src    []float32 // the layer's scan state: heads × head size × SSMState
	dst    []float32 // where the pass leaves it (src itself or a free slot)
	stream bool      // the first token's stores to dst bypass the caches
}

// Do scans heads [lo,hi), a head and token at a time (ssm.ScanHead, in
// assembly where there is some): the first token from src into dst, the
// rest in place in dst (the first streaming, for a state past the
// caches). Every product and sum is rounded to float32 (the
// state's decay, then its input, as ggml) and the sums run in the Go
// twin's order, so every platform and kernel gives the same bits.
func (k *ssmScanTask) Do(_, lo, hi int) {
	c := &k.s.m.Config
	H, N, I := c.SSMHeads, c.SSMState, c.SSMInner
	P := I / H
	perGroup := H / c.SSMGroups
	texts := k.s.texts
	for h := lo; h < hi; h++ {
		g := h / perGroup
		in, st := k.src[h*P*N:(h+1)*P*N], k.dst[h*P*N:(h+1)*P*N]
		a, d := k.L.SSMA[h], k.L.SSMD[h]
		scan := ssm.ScanHead
		if k.stream {
			scan = ssm.ScanHeadStream
		}
		for t := range k.n {
			if texts != nil && int(texts[t].from) == t {
				clear(st)
				in = st
			}
			row := k.rows[t*k.stride:]
			x := row[I+h*P : I+(h+1)*P]
			B := row[2*I+g*N : 2*I+(g+1)*N]
			C := row[2*I+c.SSMGroups*N+g*N : 2*I+c.SSMGroups*N+(g+1)*N]
			dt := softplus(row[2*I+2*c.SSMGroups*N+h] + k.L.SSMDtB[h])
			dA := float32(math.Exp(float64(dt * a)))
			scan(st, in, B, C, x, k.y[t*I+h*P:t*I+(h+1)*P], dA, dt, d)
			in, scan = st, ssm.ScanHead
		}
	}
}

// softplus is ggml's: log(1+e^x), and x itself above 20.
func softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log(float64(1 + float32(math.Exp(float64(x))))))
}

// ssmParallelMin is the fewest heads × tokens whose scan goes to the
// thread pool.
const ssmParallelMin = 2

// mamba2 runs Mamba-2 layer il's ssm_in, convolution, scan, gate and
// grouped norm of a into p.att (SSMInner floats a token), carrying the
// layer's conv and scan state on; ssm_out is the caller's.
func (s *State) mamba2(il int, L *Layer, a acts, p *pass) error {
	c := &s.m.Config
	w := c.ssmInProj()
	s.e.Phase(phQKV)
	if err := s.mul(L.ConvIn, a, p.qkv, w); err != nil {
		return err
	}
	s.e.Phase(phConv)
	convRows := (c.SSMConv - 1) * c.ssmConvWidth()
	src, dst := s.conv.layer(c.recurrentIndex(il), recurrentFloats(c))
	s.convolve(ssmConvTask{s: s, n: a.n, rows: p.qkv, stride: w, src: src[:convRows], dst: dst[:convRows], w: L.ConvW, b: L.ConvB,
		off: c.SSMInner, width: c.ssmConvWidth()})
	s.e.Phase(phScan)
	s.ss = ssmScanTask{s: s, L: L, n: a.n, rows: p.qkv, stride: w, y: p.att, src: src[convRows:], dst: dst[convRows:], stream: s.conv.stream && s.conv.dst != s.conv.cur}
	if a.n*c.SSMHeads >= ssmParallelMin {
		s.e.For(c.SSMHeads, 1, &s.ss)
	} else {
		s.ss.Do(0, 0, c.SSMHeads)
	}
	s.ss = ssmScanTask{}
	// y·SiLU(z), then RMSNorm over each group of channels when the layer
	// has the gated norm.
	I := c.SSMInner
	gs := I / c.SSMGroups
	for t := range a.n {
		z := p.qkv[t*w : t*w+I]
		y := p.att[t*I : (t+1)*I]
		s.act(z, y)
		if L.SSMNorm == nil { // falcon-h1 without mamba_rms_norm
			copy(y, z)
			continue
		}
		for g := range c.SSMGroups {
			ops.RMSNorm(y[g*gs:(g+1)*gs], z[g*gs:(g+1)*gs], L.SSMNorm[g*gs:(g+1)*gs], c.RMSEps)
		}
	}
	return nil
}
