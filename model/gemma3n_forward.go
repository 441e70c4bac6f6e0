package model

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/arena"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/quant"
)

// phAltUp is the time Gemma 3n's AltUp, LAuReL and per-layer inputs take
// outside their matrix products.
var phAltUp = ops.NewPhase("altup")

// altupPass holds a Gemma 3n pass's own arena buffers: the AltUp streams
// and their predictions (stream k of n tokens at k·n·Embd), the per-layer
// inputs and the projection they are made with (Layers×PerLayerEmbd a
// token), LAuReL's output, the attention-and-LAuReL sum the feed-forward
// adds to, and an inner buffer (LAuReL's rank, or the per-layer gate).
type altupPass struct {
	st, pr   []float32
	ple, plp []float32
	lo, al   []float32
	mid      []float32
}

// altupWidths are the floats a token takes in each altupPass buffer, in
// the order takeAltup takes them.
func altupWidths(c *Config) [7]int {
	k, e, pl := c.AltUp*c.Embd, c.Embd, c.Layers*c.PerLayerEmbd
	return [7]int{k, k, pl, pl, e, e, max(c.LaurelRank, c.PerLayerEmbd)}
}

// altupScratchBytes is what takeAltup takes from the arena for batch
// tokens.
func altupScratchBytes(c *Config, batch int) int {
	n := 0
	for _, w := range altupWidths(c) {
		n += roundUp(4*batch*w, allocAlign)
	}
	return n
}

// takeAltup takes a pass's altupPass buffers for n tokens from ar.
func takeAltup(ar *arena.Arena, c *Config, n int) altupPass {
	w := altupWidths(c)
	return altupPass{st: ar.Float32s(n * w[0]), pr: ar.Float32s(n * w[1]),
		ple: ar.Float32s(n * w[2]), plp: ar.Float32s(n * w[3]),
		lo: ar.Float32s(n * w[4]), al: ar.Float32s(n * w[5]), mid: ar.Float32s(n * w[6])}
}

// altupBlocks runs Gemma 3n's blocks over the pass p begun by begin (the
// scaled token embeddings in p.x), as llama.cpp's gemma3n-iswa graph: the
// per-layer inputs, the AltUp streams made from the embedding, each block
// predicting, running its active stream and correcting, and the streams
// merged back into one. It returns the merged stream and a scratch
// buffer, as blocks does.
func (s *State) altupBlocks(tokens []int32, p *pass) (x, xn []float32, err error) {
	m := s.m
	c := &m.Config
	n, E, K := p.n, c.Embd, c.AltUp
	ap := &p.alt
	x0 := s.acts(p.x, E, n)
	if err := s.perLayerInputs(tokens, x0, ap); err != nil {
		return nil, nil, err
	}
	copy(ap.stream(0, n, E), p.x[:n*E])
	for k := 1; k < K; k++ {
		sk := ap.stream(k, n, E)
		if err := s.mul(m.AltUpProj[k-1], x0, sk, E); err != nil {
			return nil, nil, err
		}
		s.e.Phase(phAltUp)
		matchMagnitude(sk, p.x, n, E)
	}

	var shared [maxShared]projection
	if err := s.forLayers(func(il int, L *Layer) error { return s.altupLayer(il, L, p, &shared) }); err != nil {
		return nil, nil, err
	}

	// The streams merged: each extra one projected back and given the
	// active stream's magnitude, then the mean of stream 0 and those.
	act := ap.stream(c.AltUpActive, n, E)
	out := p.x[:n*E]
	copy(out, ap.stream(0, n, E))
	for k := 1; k < K; k++ {
		u := ap.pred(k, n, E)
		if err := s.mul(m.AltUpUnembd[k-1], s.acts(ap.stream(k, n, E), E, n), u, E); err != nil {
			return nil, nil, err
		}
		s.e.Phase(phAltUp)
		matchMagnitude(u, act, n, E)
		ops.Add(out, u)
	}
	ops.Scale(out, 1/float32(K))
	return out, p.xn, nil
}

// stream and pred are stream k's rows and its prediction's, n tokens of
// e floats.
func (ap *altupPass) stream(k, n, e int) []float32 { return ap.st[k*n*e : (k+1)*n*e] }
func (ap *altupPass) pred(k, n, e int) []float32   { return ap.pr[k*n*e : (k+1)*n*e] }

// perLayerInputs writes each token's per-layer inputs into ap.ple:
// its row of per_layer_token_embd scaled by sqrt(PerLayerEmbd), plus the
// scaled token embedding x0 projected by per_layer_model_proj, scaled by
// 1/sqrt(Embd) and normalised per layer, the sum scaled by 1/sqrt(2).
func (s *State) perLayerInputs(tokens []int32, x0 acts, ap *altupPass) error {
	m := s.m
	c := &m.Config
	A, w := c.PerLayerEmbd, c.Layers*c.PerLayerEmbd
	if err := s.mul(m.PerLayerProj, x0, ap.plp, w); err != nil {
		return err
	}
	s.e.Phase(phAltUp)
	embScale := float32(math.Sqrt(float64(A)))
	projScale := 1 / float32(math.Sqrt(float64(c.Embd)))
	half := 1 / float32(math.Sqrt(2))
	pe := m.PerLayerEmbed
	for t, tok := range tokens {
		row, proj := ap.ple[t*w:(t+1)*w], ap.plp[t*w:(t+1)*w]
		if err := quant.Dequantize(pe.Type, row, pe.Row(int(tok))); err != nil {
			return fmt.Errorf("model: per-layer embedding of token %d: %w", tok, err)
		}
		ops.Scale(proj, projScale)
		for l := 0; l < w; l += A {
			pl, r := proj[l:l+A], row[l:l+A]
			ops.RMSNorm(pl, pl, m.PerLayerProjNorm, c.RMSEps)
			for i := range r {
				r[i] = (r[i]*embScale + pl[i]) * half
			}
		}
	}
	return nil
}

// matchMagnitude scales each of the n rows (e floats) of x to the
// Euclidean norm of the same row of ref: x·|ref|/|x|.
func matchMagnitude(x, ref []float32, n, e int) {
	for t := range n {
		xr, rr := x[t*e:(t+1)*e], ref[t*e:(t+1)*e]
		want, have := magnitude(rr), magnitude(xr)
		for i := range xr {
			xr[i] = xr[i] * want / have
		}
	}
}

// magnitude is sqrt(Σ x²), summed in float64 and rounded to float32 as
// ggml's sum_rows and sqrt do.
func magnitude(x []float32) float32 {
	var ss float64
	for _, v := range x {
		ss += float64(v * v)
	}
	return float32(math.Sqrt(float64(float32(ss))))
}

// altupLayer runs Gemma 3n block il over the pass's streams in place.
func (s *State) altupLayer(il int, L *Layer, p *pass, shared *[maxShared]projection) error {
	m := s.m
	c := &m.Config
	n, E, K := p.n, c.Embd, c.AltUp
	ap := &p.alt
	s.e.Phase(phAltUp)
	s.altupPredict(L, ap, p.xn, n)

	// The active prediction runs the block: LAuReL beside attention, then
	// the feed-forward.
	active := ap.pred(c.AltUpActive, n, E)
	s.e.Phase(phNorm)
	s.norm(p.xn, active, L.AttnNorm, n)
	xa := s.acts(p.xn, E, n)
	if err := s.mul(L.LaurelL, xa, ap.mid, c.LaurelRank); err != nil {
		return err
	}
	if err := s.mul(L.LaurelR, s.acts(ap.mid, c.LaurelRank, n), ap.lo, E); err != nil {
		return err
	}
	s.e.Phase(phNorm)
	s.norm(ap.lo, ap.lo, L.LaurelNorm, n)
	ops.Add(ap.lo[:n*E], p.xn[:n*E])

	if err := s.qkv(il, L, xa, p, shared); err != nil {
		return err
	}
	s.e.Phase(phAttention)
	qDim, kDim, vDim := c.Heads*c.HeadDimK, c.HeadsKV*c.HeadDimK, c.HeadsKV*c.HeadDimV
	if err := s.attention(il, p.pos0, n, p.qkv, qDim+kDim+vDim, p.att, nil); err != nil {
		return err
	}
	al := ap.al[:n*E]
	copy(al, active)
	s.e.Phase(phO)
	if err := s.residual(L.Wo, s.acts(p.att, c.Heads*c.HeadDimV, n), nil, p.tmp, al, L.PostAttnNorm); err != nil {
		return err
	}
	ops.Add(al, ap.lo[:n*E])
	ops.Scale(al, 1/float32(math.Sqrt(2)))
	s.e.Phase(phNorm)
	s.norm(p.xn, al, L.FFNNorm, n)
	if err := s.ffn(L, s.acts(p.xn, E, n), p.gu, p.tmp, al, il < c.SparseLayers); err != nil {
		return err
	}

	s.e.Phase(phAltUp)
	s.altupCorrect(L, ap, p.xn, n)

	// The corrected active stream, scaled by altup_correct_scale, makes
	// the per-layer input's term, which is added to every stream but the
	// first.
	first := p.xn[:n*E]
	copy(first, ap.stream(c.AltUpActive, n, E))
	for t := range n {
		row := first[t*E : (t+1)*E]
		for i, w := range L.AltCorrectScale {
			row[i] *= w
		}
	}
	if err := s.perLayerInput(il, L, first, p.tmp, ap, n); err != nil {
		return err
	}
	for k := 1; k < K; k++ {
		ops.Add(ap.stream(k, n, E), p.tmp[:n*E])
	}
	return nil
}

// perLayerInput writes into out (n rows of Embd) layer il's per-layer
// input term of src (n rows of Embd): GELU(inp_gate·src) times the
// layer's slice of the per-layer inputs (ap.ple), projected back by
// proj and normalised by post_norm (Gemma 3n, Gemma 4).
func (s *State) perLayerInput(il int, L *Layer, src, out []float32, ap *altupPass, n int) error {
	c := &s.m.Config
	E, A := c.Embd, c.PerLayerEmbd
	g := ap.mid[:n*A]
	if err := s.mul(L.InpGate, s.acts(src, E, n), g, A); err != nil {
		return err
	}
	s.e.Phase(phAltUp)
	ops.GELU(g)
	w := c.Layers * A
	for t := range n {
		gt, in := g[t*A:(t+1)*A], ap.ple[t*w+il*A:t*w+(il+1)*A]
		for i := range gt {
			gt[i] *= in[i]
		}
	}
	if err := s.mul(L.PLProj, s.acts(g, A, n), out, E); err != nil {
		return err
	}
	s.e.Phase(phNorm)
	s.norm(out, out, L.PLNorm, n)
	return nil
}

// altupModalities writes the router's view of x into mod (AltUp floats):
// tanh of the router applied to x normalised by altup_router_norm and
// scaled by 1/Embd. tmp holds Embd floats.
func altupModalities(c *Config, L *Layer, x, mod, tmp []float32) {
	E := c.Embd
	ops.RMSNorm(tmp, x, L.AltRouterNorm, c.RMSEps)
	ops.Scale(tmp[:E], 1/float32(E))
	for k := range mod {
		mod[k] = float32(math.Tanh(float64(dot32(L.AltRouter[k*E:(k+1)*E], tmp[:E]))))
	}
}

// altupPredict writes each stream's prediction into ap.pr: the stream
// plus the mix of all streams whose coefficients altup_predict_coef makes
// of the active stream's modalities. tmp holds a token's Embd floats.
func (s *State) altupPredict(L *Layer, ap *altupPass, tmp []float32, n int) {
	c := &s.m.Config
	E, K := c.Embd, c.AltUp
	var mod [maxAltUp]float32
	var coef [maxAltUp * maxAltUp]float32
	for t := range n {
		altupModalities(c, L, ap.stream(c.AltUpActive, n, E)[t*E:(t+1)*E], mod[:K], tmp)
		for j := range K * K {
			coef[j] = dot32(L.AltPredict[j*K:(j+1)*K], mod[:K])
		}
		for j := range K {
			out := ap.pred(j, n, E)[t*E : (t+1)*E]
			for i := range out {
				var v float32
				for k := range K {
					v += ap.st[k*n*E+t*E+i] * coef[j*K+k]
				}
				out[i] = v + ap.st[j*n*E+t*E+i]
			}
		}
	}
}

// altupCorrect writes the corrected streams into ap.st: each prediction
// plus the innovation (the block's output ap.al less the active
// prediction) times 1 + its coefficient, which altup_correct_coef makes of
// the block output's modalities. tmp holds a token's Embd floats.
func (s *State) altupCorrect(L *Layer, ap *altupPass, tmp []float32, n int) {
	c := &s.m.Config
	E, K := c.Embd, c.AltUp
	var mod, coef [maxAltUp]float32
	for t := range n {
		out := ap.al[t*E : (t+1)*E]
		altupModalities(c, L, out, mod[:K], tmp)
		for j := range K {
			coef[j] = dot32(L.AltCorrect[j*K:(j+1)*K], mod[:K]) + 1
		}
		act := ap.pred(c.AltUpActive, n, E)[t*E : (t+1)*E]
		for j := range K {
			pr, st := ap.pred(j, n, E)[t*E:(t+1)*E], ap.stream(j, n, E)[t*E:(t+1)*E]
			for i := range st {
				st[i] = (out[i]-act[i])*coef[j] + pr[i]
			}
		}
	}
}

// gatedProducts is mulGated, except that with sparse the gate is cut
// (sparsify) before the activation, which needs each whole gate row: the
// gate and up products then run in one dispatch and the activation after.
func (s *State) gatedProducts(a acts, gate, up projection, gu []float32, stride int, sparse bool) error {
	if !sparse {
		return s.mulGated(a, gate, up, gu, stride)
	}
	s.gp = [maxShared]projection{gate, up}
	if err := s.mulShared(a, s.gp[:2], gu, stride); err != nil {
		return err
	}
	F := s.m.FFN
	for t := range a.n {
		row := gu[t*stride : t*stride+2*F]
		sparsify(row[:F], s.m.SparseStd)
		s.act(row[:F], row[F:])
	}
	return nil
}

// sparsify keeps of g what lies above its mean plus k standard deviations
// (the unbiased estimate), less that cut, and zeroes the rest: llama.cpp's
// gaussian_topk, with the sums in float64 rounded to float32.
func sparsify(g []float32, k float32) {
	var sum float64
	for _, v := range g {
		sum += float64(v)
	}
	mean := float32(sum / float64(len(g)))
	var ss float64
	for _, v := range g {
		d := v - mean
		ss += float64(d * d)
	}
	std := float32(math.Sqrt(float64(float32(ss) * (1 / float32(len(g)-1)))))
	cut := mean + std*k
	for i, v := range g {
		g[i] = max(v-cut, 0)
	}
}
