package model

// This file is the gated short convolution of LFM2's conv layers and the
// state it carries between passes, as llama.cpp's build_shortconv_block
// and ggml_ssm_conv compute it: in_proj makes three chunks of Embd, B, C
// and x; bx = B·x; each channel of bx goes through a causal depthwise
// convolution of ConvKernel taps over time, the first ConvKernel-1 of which
// reach back into earlier passes; y = C·conv(bx); out_proj(y) joins the
// residual stream. A conv layer keeps no keys or values: what it carries
// is its last ConvKernel-1 positions' bx (the conv state), which cannot be
// rebuilt from the KV cache. So the state also keeps checkpoints, the whole
// conv state after some passes, and a rewind (Truncate) goes back to the
// newest checkpoint at or before its target, from where the caller
// evaluates the known tokens again (recurrent.go).

// convTask runs the convolution of one conv layer over a pass, a range of
// channels per work item: each channel's window moves through the pass's
// tokens in order, which is all that is sequential.
type convTask struct {
	s   *State
	n   int       // tokens
	bcx []float32 // n rows of B, C, x (3·Embd each)
	y   []float32 // n rows of Embd: C·conv(B·x)
	src []float32 // the layer's ConvKernel-1 rows of Embd, oldest first
	dst []float32 // where the pass leaves them (src itself or a free slot)
	w   []float32 // ConvKernel taps per channel, oldest first
}

// Do convolves channels [lo,hi) (window.push).
func (k *convTask) Do(_, lo, hi int) {
	E := k.s.m.Embd
	win := window{L: k.s.m.ConvKernel}
	for ch := lo; ch < hi; ch++ {
		win.load(k.src, E, ch)
		w := k.w[ch*win.L : (ch+1)*win.L]
		for t := range k.n {
			win.restart(k.s.texts, t)
			row := k.bcx[t*3*E:]
			k.y[t*E+ch] = row[E+ch] * win.push(row[ch]*row[2*E+ch], w)
		}
		win.store(k.dst, E, ch)
	}
}

// window is one channel's inputs to a causal convolution of L taps: the
// last L-1, oldest first, and room for the newest.
type window struct {
	v [maxConvKernel]float32
	L int
}

// load takes channel ch's window from a state of L-1 rows of stride
// floats, oldest first.
func (w *window) load(state []float32, stride, ch int) {
	for j := 0; j < w.L-1; j++ {
		w.v[j] = state[j*stride+ch]
	}
}

// store puts the window into a state laid out as load's.
func (w *window) store(state []float32, stride, ch int) {
	for j := 0; j < w.L-1; j++ {
		state[j*stride+ch] = w.v[j]
	}
}

// restart empties the window at token t when t starts a packed pass's
// next text (texts nil: an unpacked pass).
func (w *window) restart(texts []textSpan, t int) {
	if texts != nil && int(texts[t].from) == t {
		clear(w.v[:w.L-1])
	}
}

// push adds input x and returns the convolution Σ taps[j]·window[j]: in
// ggml's order (oldest first, float32), each product rounded before it is
// added, so no platform fuses them differently.
func (w *window) push(x float32, taps []float32) float32 {
	L := w.L
	w.v[L-1] = x
	var sum float32
	for j, tap := range taps[:L] {
		sum += float32(w.v[j] * tap)
	}
	copy(w.v[:L-1], w.v[1:L])
	return sum
}

// convParallelMin is the shortest pass whose convolution goes to the
// thread pool; one token's is a few thousand multiplications.
const convParallelMin = 8

// shortConv runs conv layer il's in_proj and convolution of a into p.att
// (Embd floats a token), carrying the layer's conv state on.
func (s *State) shortConv(il int, L *Layer, a acts, p *pass) error {
	c := &s.m.Config
	E := c.Embd
	s.e.Phase(phQKV)
	if err := s.mul(L.ConvIn, a, p.qkv, 3*E); err != nil {
		return err
	}
	s.e.Phase(phConv)
	src, dst := s.conv.layer(c.recurrentIndex(il), (c.ConvKernel-1)*E)
	s.ct = convTask{s: s, n: a.n, bcx: p.qkv, y: p.att, src: src, dst: dst, w: L.ConvW}
	if a.n >= convParallelMin {
		s.e.For(E, 64, &s.ct)
	} else {
		s.ct.Do(0, 0, E)
	}
	s.ct = convTask{}
	return nil
}
