package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/quant"
)

// refEncoder is an encoder's forward pass written from the math of
// llama.cpp's llm_build_bert, in float64, reading the weights from the
// file: nothing of the package's forward code. round16 rounds where the
// computation this package does (and llama.cpp's, with its F16 GELU table
// and F16 keys and values) rounds to F16: GELU's input and output, the
// query, keys and values, and the attention weights; without it, the
// pure math.
type refEncoder struct {
	t       *testing.T
	f       *gguf.File
	data    []byte
	c       *Config
	round16 bool
	// dequantized holds the tensors read so far: the references read a
	// layer's weights once per token, and dequantizing them again each
	// time was most of their cost (under the race detector most of the
	// model package's).
	dequantized map[string][]float64
	// perturb, when not empty, changes the experts' routing from
	// llama.cpp's (nomic-bert-moe): "renorm" renormalises the chosen
	// weights, "top1" takes one expert fewer, "sigmoid" gates by each
	// logit's sigmoid; or jina-bert-v2's attention and feed-forward:
	// "noalibi" drops the ALiBi bias, "base" takes every head's slope
	// from the head count rather than its power of 2 below, "signed"
	// biases by slope·(key − query position) (the causal form), "noqknorm"
	// skips the Q and K LayerNorms, "swapglu" activates the up half
	// instead of the gate, "silu" gates by SiLU. The package's states must
	// then differ.
	perturb string
}

// tensor is the named tensor's values, row after row: a copy the caller
// may change.
func (r *refEncoder) tensor(name string) []float64 {
	r.t.Helper()
	if v, ok := r.dequantized[name]; ok {
		return slices.Clone(v)
	}
	v := r.read(name)
	if v != nil {
		if r.dequantized == nil {
			r.dequantized = map[string][]float64{}
		}
		r.dequantized[name] = v
	}
	return slices.Clone(v)
}

// read dequantizes the named tensor; nil if the file has none.
func (r *refEncoder) read(name string) []float64 {
	ti, ok := r.f.Tensor(name)
	if !ok {
		return nil
	}
	n := 1
	for _, d := range ti.Dims {
		n *= int(d)
	}
	out := make([]float32, n)
	if err := quant.Dequantize(ti.Type, out, r.data[ti.Offset:ti.Offset+ti.Size]); err != nil {
		r.t.Fatal(err)
	}
	v := make([]float64, n)
	for i, x := range out {
		v[i] = float64(x)
	}
	return v
}

// linear is w·x (+ b): w has rows of len(x).
func linear(w, b, x []float64) []float64 {
	out := make([]float64, len(w)/len(x))
	for r := range out {
		var s float64
		for i, xi := range x {
			s += w[r*len(x)+i] * xi
		}
		if b != nil {
			s += b[r]
		}
		out[r] = s
	}
	return out
}

// meanDev64 is x's mean and the sum of its squared deviations from it.
func meanDev64(x []float64) (mean, ss float64) {
	for _, e := range x {
		mean += e
	}
	mean /= float64(len(x))
	for _, e := range x {
		ss += (e - mean) * (e - mean)
	}
	return mean, ss
}

func layerNorm64(x, w, b []float64, eps float64) []float64 {
	mean, v := meanDev64(x)
	s := 1 / math.Sqrt(v/float64(len(x))+eps)
	out := make([]float64, len(x))
	for i, e := range x {
		out[i] = (e - mean) * s * w[i]
		if b != nil { // cohere2's has no bias
			out[i] += b[i]
		}
	}
	return out
}

func (r *refEncoder) r16(x float64) float64 {
	if !r.round16 {
		return x
	}
	return float64(quant.FP16ToFP32(quant.FP32ToFP16(float32(x))))
}

func (r *refEncoder) gelu(x float64) float64 {
	if r.round16 && (x <= -10 || x >= 10) {
		return max(x, 0)
	}
	x = r.r16(x)
	return r.r16(0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*x*(1+0.044715*x*x))))
}

// rope rotates each head of v by pos·base^(-2i/d): NEOX pairs (i, i+d/2)
// when neox, else NORM pairs (2i, 2i+1).
func rope(v []float64, heads, d int, pos int, base float64, neox bool) {
	for h := range heads {
		x := v[h*d : (h+1)*d]
		for i := range d / 2 {
			th := float64(pos) * math.Pow(base, -2*float64(i)/float64(d))
			j, k := 2*i, 2*i+1
			if neox {
				j, k = i, i+d/2
			}
			a, b := x[j], x[k]
			x[j] = a*math.Cos(th) - b*math.Sin(th)
			x[k] = a*math.Sin(th) + b*math.Cos(th)
		}
	}
}

// attendHead64 adds to out one query head's attention over keys ks and
// values vs (each row's head at offset off, len(q) wide): the softmax of
// the products times scale, each weight rounded by r16, weighting the
// values.
// sink, when not nil, is gpt-oss's attention sink: a score without a
// value that joins the maximum and the sum.
func attendHead64(out, q []float64, ks, vs [][]float64, off int, scale float64, sink *float64, r16 func(float64) float64) {
	attendBiased64(out, q, ks, vs, off, scale, sink, nil, r16)
}

// attendBiased64 is attendHead64 with bias(s), when bias is not nil,
// added to the scaled score of key s (ALiBi).
func attendBiased64(out, q []float64, ks, vs [][]float64, off int, scale float64, sink *float64, bias func(s int) float64, r16 func(float64) float64) {
	attendSplit64(out[:len(q)], q, ks, vs, off, off, scale, sink, bias, r16)
}

// attendSplit64 is attendBiased64 for keys at koff and values at voff of
// their rows, the values len(out) wide (mimo2's narrower than its keys).
func attendSplit64(out, q []float64, ks, vs [][]float64, koff, voff int, scale float64, sink *float64, bias func(s int) float64, r16 func(float64) float64) {
	w := make([]float64, len(ks))
	mx := math.Inf(-1)
	if sink != nil {
		mx = *sink
	}
	for s := range ks {
		var d float64
		for i := range q {
			d += q[i] * ks[s][koff+i]
		}
		w[s] = d * scale
		if bias != nil {
			w[s] += bias(s)
		}
		mx = max(mx, w[s])
	}
	var sum float64
	for s := range w {
		w[s] = math.Exp(w[s] - mx)
		sum += w[s]
	}
	if sink != nil {
		sum += math.Exp(*sink - mx)
	}
	for s := range w {
		a := r16(w[s] / sum)
		for i := range out {
			out[i] += a * vs[s][voff+i]
		}
	}
}

// hidden is every token's last-block output.
func (r *refEncoder) hidden(tokens []int32) [][]float64 {
	c := r.c
	E, n, hd := c.Embd, len(tokens), c.HeadDimK
	emb, types, pos := r.tensor("token_embd.weight"), r.tensor("token_types.weight"), r.tensor("position_embd.weight")
	x := make([][]float64, n)
	for t, tok := range tokens {
		x[t] = make([]float64, E)
		for i := range E {
			x[t][i] = emb[int(tok)*E+i] + types[i]
			if pos != nil {
				x[t][i] += pos[t*E+i]
			}
		}
		x[t] = layerNorm64(x[t], r.tensor("token_embd_norm.weight"), r.tensor("token_embd_norm.bias"), float64(c.NormEps))
	}
	jina := c.Arch == "jina-bert-v2"
	kvr16 := r.r16
	if jina {
		// ALiBi attention reads the pass's float32 projections: no F16
		// cache between.
		kvr16 = func(x float64) float64 { return x }
	}
	for il := range c.Layers {
		p := func(s string) []float64 { return r.tensor(fmt.Sprintf("blk.%d.%s", il, s)) }
		qs, ks, vs := make([][]float64, n), make([][]float64, n), make([][]float64, n)
		in := make([][]float64, n)
		for t := range n {
			in[t] = slices.Clone(x[t])
		}
		for t := range n {
			if w := p("attn_qkv.weight"); w != nil {
				all := linear(w, p("attn_qkv.bias"), x[t])
				qs[t], ks[t], vs[t] = all[:E], all[E:2*E], all[2*E:]
			} else {
				qs[t] = linear(p("attn_q.weight"), p("attn_q.bias"), x[t])
				ks[t] = linear(p("attn_k.weight"), p("attn_k.bias"), x[t])
				vs[t] = linear(p("attn_v.weight"), p("attn_v.bias"), x[t])
			}
			if qn := p("attn_q_norm.weight"); qn != nil && r.perturb != "noqknorm" {
				qs[t] = layerNorm64(qs[t], qn, p("attn_q_norm.bias"), float64(c.NormEps))
				ks[t] = layerNorm64(ks[t], p("attn_k_norm.weight"), p("attn_k_norm.bias"), float64(c.NormEps))
			}
			if !c.AbsPositions && !jina {
				rope(qs[t], c.Heads, hd, t, float64(c.RopeBase), c.RopeNeox)
				rope(ks[t], c.Heads, hd, t, float64(c.RopeBase), c.RopeNeox)
			}
			for i := range qs[t] {
				qs[t][i], ks[t][i], vs[t][i] = kvr16(qs[t][i]), kvr16(ks[t][i]), kvr16(vs[t][i])
			}
		}
		for t := range n {
			att := make([]float64, E)
			seen := n // every token sees every token, unless the file says causal
			if !c.NonCausal {
				seen = t + 1
			}
			for h := range c.Heads {
				var bias func(s int) float64
				if jina && r.perturb != "noalibi" {
					slope := r.alibiSlope(h)
					bias = func(s int) float64 { return -slope * math.Abs(float64(t-s)) }
					if r.perturb == "signed" {
						bias = func(s int) float64 { return slope * float64(s-t) }
					}
				}
				attendBiased64(att[h*hd:(h+1)*hd], qs[t][h*hd:(h+1)*hd], ks[:seen], vs[:seen], h*hd, 1/math.Sqrt(float64(hd)), nil, bias, kvr16)
			}
			o := linear(p("attn_output.weight"), p("attn_output.bias"), att)
			for i := range o {
				o[i] += x[t][i]
			}
			y := layerNorm64(o, p("attn_output_norm.weight"), p("attn_output_norm.bias"), float64(c.NormEps))
			if n2 := p("attn_norm_2.weight"); n2 != nil {
				for i := range y {
					y[i] += in[t][i]
				}
				y = layerNorm64(y, n2, p("attn_norm_2.bias"), float64(c.NormEps))
			}
			if router := p("ffn_gate_inp.weight"); router != nil {
				f := r.experts(router, p("ffn_up_exps.weight"), p("ffn_down_exps.weight"), y)
				for i := range f {
					f[i] += y[i]
				}
				x[t] = layerNorm64(f, p("layer_output_norm.weight"), p("layer_output_norm.bias"), float64(c.NormEps))
				continue
			}
			up := linear(p("ffn_up.weight"), p("ffn_up.bias"), y)
			if jina {
				up = r.geglu(up, p("ffn_gate.weight"), y)
			} else if g := p("ffn_gate.weight"); g != nil {
				gate := linear(g, nil, y)
				for i := range up {
					up[i] *= gate[i] / (1 + math.Exp(-gate[i]))
				}
			} else {
				for i := range up {
					up[i] = r.gelu(up[i])
				}
			}
			f := linear(p("ffn_down.weight"), p("ffn_down.bias"), up)
			for i := range f {
				f[i] += y[i]
			}
			x[t] = layerNorm64(f, p("layer_output_norm.weight"), p("layer_output_norm.bias"), float64(c.NormEps))
		}
	}
	return x
}

// alibiSlope is head h's ALiBi slope for jina-bert-v2's maximum bias 8,
// as ggml's soft_max takes it: with n the largest power of 2 not above
// the head count, m0^(h+1) for the first n heads (m0 = 2^(-8/n)) and
// the odd powers of m1 = 2^(-4/n) for the rest.
func (r *refEncoder) alibiSlope(h int) float64 {
	heads := r.c.Heads
	n := 1 << int(math.Floor(math.Log2(float64(heads))))
	if r.perturb == "base" {
		n = heads
	}
	if h < n {
		return math.Pow(2, -8*float64(h+1)/float64(n))
	}
	return math.Pow(2, -4*float64(2*(h-n)+1)/float64(n))
}

// geglu is jina-bert-v2's gated feed-forward input: GELU(gate) ⊙ up, the
// gate ffn_gate·y when the block has ffn_gate (gate nil: the first half
// of the fused up, the up its second half).
func (r *refEncoder) geglu(up, gate, y []float64) []float64 {
	var g []float64
	if gate != nil {
		g = linear(gate, nil, y)
	} else {
		g, up = up[:len(up)/2], up[len(up)/2:]
	}
	if r.perturb == "swapglu" {
		g, up = up, g
	}
	out := make([]float64, len(up))
	for i := range out {
		a := r.gelu(g[i])
		if r.perturb == "silu" {
			a = g[i] / (1 + math.Exp(-g[i]))
		}
		out[i] = a * up[i]
	}
	return out
}

// experts is nomic-bert-moe's expert feed-forward of y, as llama.cpp's
// build_moe_ffn runs it there: the softmax of the router's logits, the
// ExpertsUsed most probable experts (ties to the lower id), each
// down(GELU(up·y)) — no gate, no biases — weighted by its probability,
// not renormalised.
func (r *refEncoder) experts(router, up, down, y []float64) []float64 {
	c := r.c
	E, F, k := c.Embd, c.ExpertFFN, c.ExpertsUsed
	logits := linear(router, nil, y)
	probs := slices.Clone(logits)
	softmax64(probs)
	if r.perturb == "sigmoid" {
		for i, l := range logits {
			probs[i] = 1 / (1 + math.Exp(-l))
		}
	}
	if r.perturb == "top1" {
		k--
	}
	chosen, total := topKSum64(probs, k)
	out := make([]float64, E)
	for _, e := range chosen {
		h := linear(up[e*F*E:(e+1)*F*E], nil, y)
		for i := range h {
			h[i] = r.gelu(h[i])
		}
		d := linear(down[e*E*F:(e+1)*E*F], nil, h)
		w := probs[e]
		if r.perturb == "renorm" {
			w /= total
		}
		for i := range out {
			out[i] += w * d[i]
		}
	}
	return out
}

// encoderSpecs are the encoders of tinySpecs with F32 weights, so that
// only the arithmetic differs from the reference, and nomic-bert once
// more with every bias.
func encoderSpecs() []testutil.ModelSpec {
	var out []testutil.ModelSpec
	for _, s := range testutil.TinySpecs() {
		if s.Encoder() {
			s.WeightType = quant.F32
			out = append(out, s)
		}
	}
	nb := testutil.TinyNomicBert()
	nb.WeightType, nb.Biases = quant.F32, true
	jf := testutil.TinyJinaBertV2()
	jf.WeightType, jf.Jina = quant.F32, &testutil.JinaBertV2{Fused: true, Norm2: true}
	return append(out, nb, jf)
}

// An encoder's hidden states are those of the reference written from the
// math, within float32 rounding when the reference rounds as the cache and
// GELU do (nomic-bert's within 1e-6, bert's within an F16 step of a GELU
// output), and within what that F16 rounding adds when it does not. A
// causal pass, a missing bias or type embedding, a norm before instead of
// after the sum would be off by tenths: the states are of order 1.
func TestEncoderMatchesReference(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	for _, spec := range encoderSpecs() {
		name := spec.Arch
		if spec.Biases {
			name += "/biases"
		}
		if j := spec.Jina; j != nil && j.Fused {
			name += "/geglu-norm2"
		}
		t.Run(name, func(t *testing.T) {
			m, f, data := loadSpec(t, spec)
			toks := prompt(19)
			got := hiddenOf(t, m, pool, toks)
			for _, tc := range []struct {
				round16 bool
				tol     float64
			}{
				// GELU's F16 table makes an input a float32 ulp away from
				// the reference's land on the next F16 value now and then:
				// an F16 ulp of the activation, 5e-4 in bert's states.
				{true, 1e-3},
				// The F16 rounding itself: about 1e-3.
				{false, 5e-3},
			} {
				ref := &refEncoder{t: t, f: f, data: data, c: &m.Config, round16: tc.round16}
				worst := refDiff(got, ref.hidden(toks))
				if !(worst <= tc.tol) {
					t.Errorf("rounding as F16 %v: hidden states differ from the reference by up to %g (tolerance %g)", tc.round16, worst, tc.tol)
				}
				t.Logf("rounding as F16 %v: worst difference %.3g", tc.round16, worst)
			}
			// Attention over the whole text and the RoPE pairs (nomic-bert's,
			// jina-bert-v3's NEOX) are llama.cpp's: the reference of a Config
			// without them moves by tenths.
			want := (&refEncoder{t: t, f: f, data: data, c: &m.Config, round16: true}).hidden(toks)
			for _, name := range applicable(t, m.Config, "causal", "NORM pairs") {
				c := m.Config
				perturbation(t, name)(&c)
				mustMove(t, name, (&refEncoder{t: t, f: f, data: data, c: &c, round16: true}).hidden(toks), want, 0.05)
			}
			if m.ALiBi != nil {
				perturbs := []string{"noalibi", "base", "signed", "swapglu", "silu"}
				if spec.Jina.QKNorm {
					perturbs = append(perturbs, "noqknorm")
				}
				for _, perturb := range perturbs {
					ref := &refEncoder{t: t, f: f, data: data, c: &m.Config, round16: true, perturb: perturb}
					if worst := refDiff(got, ref.hidden(toks)); !(worst > 0.05) {
						t.Errorf("%s: hidden states within %g of the reference", perturb, worst)
					}
				}
			}
			if m.Experts == 0 {
				return
			}
			// One token takes the experts in one dispatch (expertsOne).
			one := prompt(1)
			ref := &refEncoder{t: t, f: f, data: data, c: &m.Config, round16: true}
			if worst := refDiff(hiddenOf(t, m, pool, one), ref.hidden(one)); !(worst <= 1e-3) {
				t.Errorf("one token: hidden states differ from the reference by up to %g", worst)
			}
			// The routing is llama.cpp's: another would be off by far more
			// than the tolerance.
			for _, perturb := range []string{"renorm", "top1", "sigmoid"} {
				ref := &refEncoder{t: t, f: f, data: data, c: &m.Config, round16: true, perturb: perturb}
				if worst := refDiff(got, ref.hidden(toks)); !(worst > 0.05) {
					t.Errorf("routing perturbed (%s): hidden states within %g of the reference", perturb, worst)
				}
			}
		})
	}
}

// A non-causal encoder takes a text in one pass from position 0, and an
// encoder has no logits.
func TestEncoderRefusals(t *testing.T) {
	pool := ops.NewPool(1)
	defer pool.Close()
	m, _, _ := loadSpec(t, testutil.TinyBert())
	if !m.Encoder || !m.NonCausal || m.Output != nil {
		t.Fatalf("bert: encoder %v, non-causal %v, output %v", m.Encoder, m.NonCausal, m.Output != nil)
	}
	st := newState(t, m, pool, 8, 32)
	err := st.Forward(prompt(4), 0, make([]float32, m.Vocab))
	if !errors.Is(err, ErrUnsupportedArch) || !strings.Contains(err.Error(), "use Embed") {
		t.Errorf("Forward on an encoder: %v", err)
	}
	hidden := make([]float32, 4*m.Embd)
	if err := st.Hidden(prompt(4), 0, hidden); err != nil {
		t.Fatal(err)
	}
	if err := st.Hidden(prompt(4), 4, hidden); !errors.Is(err, kv.ErrInvalid) || !strings.Contains(err.Error(), "one pass from position 0") {
		t.Errorf("a second chunk of a non-causal text: %v", err)
	}
	big := newState(t, m, pool, 8, 512)
	// Past bert's trained context, position_embd has no row.
	m.NonCausal = false
	defer func() { m.NonCausal = true }()
	for pos := 0; pos < m.Context; pos += 8 {
		if err := big.Hidden(prompt(8), pos, make([]float32, 8*m.Embd)); err != nil {
			t.Fatal(err)
		}
	}
	if err := big.Hidden(prompt(8), m.Context, make([]float32, 8*m.Embd)); !errors.Is(err, kv.ErrFull) || !strings.Contains(err.Error(), "position_embd has") {
		t.Errorf("positions past the trained context: %v", err)
	}
}

// Streamed blocks give an encoder exactly the resident hidden states.
func TestEncoderDiskSource(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	spec := testutil.TinyBert()
	ref, _, _ := loadSpec(t, spec)
	want, err := runChunks(ref, pool, prompt(12), 12, 32)
	if err != nil {
		t.Fatal(err)
	}
	m, f, data := loadSpec(t, spec)
	r := newMemReader(append([]byte(nil), data...), m, 2)
	src, err := NewDiskSource(m, f, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	streamed := []int{0, len(m.Blocks) - 1}
	src.Switch(streamed, nil)
	for _, il := range streamed {
		for i := m.Blocks[il].Start; i < m.Blocks[il].End; i++ {
			data[i] = 0xAA
		}
	}
	m.Source = src
	got, err := runChunks(m, pool, prompt(12), 12, 32)
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := sameLogitBits(got, want); !ok {
		t.Errorf("element %d: %v streamed, %v resident", i, got[i], want[i])
	}
}
