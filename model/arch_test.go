package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/tensor"
)

func TestEveryArchHasATinySpec(t *testing.T) {
	var archs []string
	for _, s := range testutil.TinySpecs() {
		archs = append(archs, s.Arch)
	}
	for _, a := range Supported() {
		if !slices.Contains(archs, a) {
			t.Errorf("architecture %s has no synthetic model in testutil.TinySpecs", a)
		}
	}
}

// prompt is a prompt longer than TinyGemma3's window of 16.
func prompt(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(1 + (i*37+11)%300)
	}
	return p
}

// forwardAll runs tokens through a fresh state in chunks of batch and
// returns every position's logits.
func forwardAll(t *testing.T, m *Model, pool *ops.Pool, tokens []int32, batch, cells int) []float32 {
	t.Helper()
	all, err := runChunks(m, pool, tokens, batch, cells)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// newState is m's state with an F16 cache of cells positions, for batches
// of up to batch tokens, on pool.
func newState(t *testing.T, m *Model, pool *ops.Pool, batch, cells int) *State {
	t.Helper()
	st, err := m.NewState(ops.NewExec(pool), StateOptions{Batch: batch, Cache: kv.F16, Cells: cells})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// runChunks is forwardAll for goroutines other than the test's. An
// embedding model has no logits: it returns the hidden states, of the
// whole text in one pass when its attention sees the whole text, else
// batch tokens a pass (llama-embed without attention.causal).
func runChunks(m *Model, pool *ops.Pool, tokens []int32, batch, cells int) ([]float32, error) {
	if m.NonCausal {
		batch = len(tokens)
	}
	st, err := m.NewState(ops.NewExec(pool), StateOptions{Batch: batch, Cache: kv.F16, Cells: cells})
	if err != nil {
		return nil, err
	}
	if m.EmbeddingOnly() {
		hidden := make([]float32, len(tokens)*m.Embd)
		for i := 0; i < len(tokens); i += batch {
			end := min(len(tokens), i+batch)
			if err := st.Hidden(tokens[i:end], i, hidden[i*m.Embd:end*m.Embd]); err != nil {
				return nil, err
			}
		}
		return hidden, nil
	}
	all := make([]float32, 0, len(tokens)*m.Vocab)
	for i := 0; i < len(tokens); i += batch {
		chunk := tokens[i:min(len(tokens), i+batch)]
		out := make([]float32, len(chunk)*m.Vocab)
		if len(chunk) == 1 {
			out = out[:m.Vocab]
		}
		if err := st.Forward(chunk, i, out); err != nil {
			return nil, err
		}
		all = append(all, out...)
	}
	if st.Arena().Overflows() != 0 {
		return nil, fmt.Errorf("the arena overflowed %d times: ScratchBytes is too small", st.Arena().Overflows())
	}
	return all, nil
}

// A batch and one token at a time compute the same logits, for every
// architecture, and the arena holds exactly what ScratchBytes says. The
// weights are F32: with quantized activations, the kernels of batches
// (GEMM) and of single tokens (row kernels) round differently in the last
// bit, which now and then moves an activation's 8-bit quant by one and the
// logits of the tiny models by 0.1 or more (qwen3, gemma3), hiding what
// the test is about, the batched attention.
func TestBatchMatchesSingle(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	for _, spec := range testutil.TinySpecs() {
		spec.WeightType = quant.F32
		t.Run(spec.Variant(), func(t *testing.T) {
			m, _, _ := loadSpec(t, spec)
			toks := prompt(40)
			if m.NonCausal {
				checkScratchBytes(t, m, pool, toks)
				t.Skip("an embedder's attention sees the whole text: one token at a time is another computation (TestEncoderMatchesReference checks its batches)")
			}
			batch := forwardAll(t, m, pool, toks, 40, 64)
			single := forwardAll(t, m, pool, toks, 1, 64)
			var worst float64
			for i := range batch {
				if math.IsNaN(float64(batch[i])) {
					t.Fatalf("logit %d is NaN", i)
				}
				worst = max(worst, math.Abs(float64(batch[i]-single[i])))
			}
			tol := 1e-4
			if spec.AltUp > 0 && puregoBuild {
				// The pure-Go F32 tiles sum a batch's rows in another order
				// than one row's, and Gemma 3n's logits go through six
				// more products a layer and AltUp's magnitude matching: 6e-4
				// measured (the assembly kernels stay within 1e-4).
				tol = 1e-3
			}
			if worst > tol {
				t.Errorf("batched and single logits differ by up to %g", worst)
			}
			checkScratchBytes(t, m, pool, toks)
		})
	}
	// The arena of the quantized models, whose activation rows differ.
	for _, spec := range testutil.TinySpecs() {
		t.Run(spec.Variant()+"/q8_0", func(t *testing.T) {
			m, _, _ := loadSpec(t, spec)
			toks := prompt(40)
			checkScratchBytes(t, m, pool, toks)
		})
	}
}

// Hidden writes what Forward's output matrix multiplies: the logits of
// the head over Hidden's rows (the output matrix, phi2's bias, the final
// soft cap) are Forward's logits to the bit, for every architecture and
// token.
func TestHiddenIsWhatTheOutputMultiplies(t *testing.T) {
	forEachTiny(t, func(t *testing.T, m *Model, pool *ops.Pool) {
		if m.EmbeddingOnly() {
			t.Skip("an embedding model has no output matrix (TestEncoderMatchesReference, TestDecoderMatchesReference check its hidden states)")
		}
		toks := prompt(24)
		n := len(toks)
		want := forwardAll(t, m, pool, toks, n, 64)
		st := newState(t, m, pool, n, 64)
		hidden := make([]float32, n*m.Embd)
		if err := st.Hidden(toks, 0, hidden); err != nil {
			t.Fatal(err)
		}
		if err := st.Hidden(toks, 0, hidden[1:]); err == nil {
			t.Error("Hidden took a buffer of the wrong size")
		}
		got := make([]float32, n*m.Vocab)
		if err := st.head(st.acts(hidden, m.Embd, n), got); err != nil {
			t.Fatal(err)
		}
		if i, ok := sameLogitBits(got, want); !ok {
			t.Errorf("token %d, logit %d: %v from the hidden state, %v from Forward", i/m.Vocab, i%m.Vocab, got[i], want[i])
		}
	})
}

// forEachTiny runs test on every architecture's tiny model (testutil.TinySpecs,
// loaded by loadSpec) in a subtest named for the architecture, the
// subtests sharing one pool of two workers.
func forEachTiny(t *testing.T, test func(t *testing.T, m *Model, pool *ops.Pool)) {
	t.Helper()
	pool := ops.NewPool(2)
	defer pool.Close()
	for _, spec := range testutil.TinySpecs() {
		t.Run(spec.Variant(), func(t *testing.T) {
			m, _, _ := loadSpec(t, spec)
			test(t, m, pool)
		})
	}
}

// checkScratchBytes runs toks as one batch and checks that the arena's high
// water is what ScratchBytes promised for that batch.
func checkScratchBytes(t *testing.T, m *Model, pool *ops.Pool, toks []int32) {
	t.Helper()
	st, err := m.NewState(ops.NewExec(pool), StateOptions{Batch: len(toks), Cache: kv.F16, Cells: 64})
	if err != nil {
		t.Fatal(err)
	}
	if m.EmbeddingOnly() {
		err = st.Hidden(toks, 0, make([]float32, len(toks)*m.Embd))
	} else {
		err = st.Forward(toks, 0, make([]float32, m.Vocab))
	}
	if err != nil {
		t.Fatal(err)
	}
	if hw, want := st.Arena().HighWater(), m.ScratchBytes(len(toks)); hw != want {
		t.Errorf("a full batch takes %d arena bytes, ScratchBytes says %d", hw, want)
	}
}

// A decode step allocates nothing, for every architecture; an encoder's
// pass over a whole text neither.
func TestDecodeAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	forEachTiny(t, func(t *testing.T, m *Model, pool *ops.Pool) {
		for _, labels := range []bool{false, true} {
			e := ops.NewExec(pool)
			e.SetProfileLabels(labels) // pprof phase labels cost nothing either
			st, err := m.NewState(e, StateOptions{Batch: 8, Cache: kv.F16, Cells: 256})
			if err != nil {
				t.Fatal(err)
			}
			out := make([]float32, m.Vocab)
			pos := 0
			step := func() {
				if err := st.Forward([]int32{int32(3 + pos%200)}, pos, out); err != nil {
					t.Fatal(err)
				}
				pos++
			}
			if m.EmbeddingOnly() {
				toks, hidden := prompt(8), make([]float32, 8*m.Embd)
				step = func() {
					if err := st.Hidden(toks, 0, hidden); err != nil {
						t.Fatal(err)
					}
				}
			}
			step()
			if n := testing.AllocsPerRun(50, step); n != 0 {
				t.Errorf("labels %v: a decode step allocates %.1f times, want 0", labels, n)
			}
		}
	})
}

// A decode step makes one product per group of matrices sharing an input:
// per block Q/K/V (one product), the output projection with its residual
// add, gate/up with the activation, and down with its residual add — or,
// with experts, the router, one gated product for up to eight of the
// chosen experts and one down product for up to sixteen (and the shared
// expert's two) — plus the output matrix; a
// Mamba-2 block's ssm_in and ssm_out count as Q/K/V and the output
// projection. An encoder's one-token pass
// makes the same four per block (up or gate/up, down) and no output.
// (Counted as products, not as the pool's jobs: whether a small product
// runs on the caller alone depends on the kernels' tile sizes, which
// differ between builds.)
func TestDecodeDispatches(t *testing.T) {
	forEachTiny(t, func(t *testing.T, m *Model, pool *ops.Pool) {
		e := ops.NewExec(pool)
		st, err := m.NewState(e, StateOptions{Batch: 8, Cache: kv.F16, Cells: 64})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, m.Vocab)
		step := st.Forward
		pos, outputs := 1, 1
		if m.EmbeddingOnly() {
			out, step, pos, outputs = out[:m.Embd], st.Hidden, 0, 0
		}
		if err := step([]int32{5}, 0, out); err != nil {
			t.Fatal(err)
		}
		before := e.Products()
		if err := step([]int32{6}, pos, out); err != nil {
			t.Fatal(err)
		}
		got := e.Products() - before
		c := &m.Config
		attn := 2 // Q/K/V, output projection
		if c.mla() {
			// Q with the compressed KV, attn_k_b and attn_v_b four
			// heads a product each, the output projection; attn_q_b.
			attn = 2 + 2*((c.Heads+3)/4)
			if c.QLoraRank > 0 {
				attn++
			}
		}
		dense, experts := attn+2, 0 // gate/up, down
		if c.SingleOp {
			dense = 2 // nemotron_h: one operator's two products
		}
		if c.ParallelSSM {
			dense += 2 // falcon-h1: the Mamba-2 mixer's ssm_in and ssm_out
		}
		if c.Experts > 0 {
			// The router; the token's experts' gate/up pairs (with the
			// activation, unless biases come before it) eight a product,
			// and their down projections sixteen a product.
			experts = attn + 1 + (c.ExpertsUsed+ops.MaxParts/2-1)/(ops.MaxParts/2) + (c.ExpertsUsed+ops.MaxParts-1)/ops.MaxParts
			if c.SharedFFN > 0 {
				experts += 2 // the shared expert's gate/up and down
			}
			if c.ChunkFFN > 0 {
				experts += 2 // grovemoe: the adjugate experts' gate/up pairs, then their downs
			}
			if c.SingleOp {
				// nemotron_h_moe: the router, the gate-less experts' ups and
				// their downs as many a dispatch as one takes, the shared
				// expert's up and down; no attention.
				experts = 1 + 2*((c.ExpertsUsed+ops.MaxParts-1)/ops.MaxParts) + 2
			}
		}
		if c.AltUp > 0 {
			// LAuReL's two, the per-layer input's gate and projection;
			// the per-layer projection and AltUp's into and out of the
			// extra streams.
			dense += 4
			outputs += 1 + 2*(c.AltUp-1)
		}
		if c.HeadDimSWA > 0 && c.PerLayerEmbd > 0 {
			// Gemma 4's per-layer input: its gate and projection, and
			// the per-layer projection once.
			dense += 2
			outputs++
		}
		want := uint64(outputs)
		for li := range c.Layers * c.loops() {
			il := li % c.Layers // a looped stack's blocks run once a run (nanbeige)
			if c.ExpertLayer(il) {
				want += uint64(experts)
				if m.Blocks[il].PostDenseNorm != nil {
					want += 2 // Gemma 4 26B-A4B: the dense gate/up and down beside the experts
				}
			} else {
				want += uint64(dense)
			}
			switch {
			case c.droppedLayer(il):
				want -= uint64(dense) // deci: a layer without a feed-forward computes nothing
			case c.attnFree(il):
				want -= uint64(attn) // deci: no attention
			case c.outputOnly(il):
				want-- // deci: attn_output alone
			}
			if c.Mamba1 && c.mixerOnly(il) {
				want += 2 // jamba: a Mamba-1 layer's ssm_x and ssm_dt beside ssm_in and ssm_out
			}
			if c.KDA && c.ConvLayer(il) {
				// A Kimi Delta Attention layer instead of attention: q, k,
				// v and β in one product, the decay's and the output
				// gate's low-rank pairs, attn_output.
				want += 6 - uint64(attn)
			}
			if c.RWKV7 {
				// r, k, v, output; the decay's, rate's and gate's pairs,
				// and after layer 0 the value mix's; the channel mix's
				// key and value, or ARWKV-7's feed-forward (gate/up,
				// down); none of attention.
				want += 14 - uint64(dense)
				if il == 0 {
					want -= 2
				}
				if m.Blocks[il].TMG1 == nil {
					want -= 2 // an ARWKV-7 block without the gate
				}
			}
			if c.RWKV6 {
				// r, k, v, gate, output; the mixes' first matrix and its
				// five second ones, one product each; the decay's pair;
				// the channel mix's key, value and receptance, or QRWKV's
				// feed-forward (gate/up, down).
				want += 16 - uint64(dense)
				if c.QRWKV {
					want--
				}
			}
		}
		if got != want {
			t.Errorf("a decode step made %d products, want %d (%d per dense block, %d per expert block and the output)", got, want, dense, experts)
		}
	})
}

// HeapBytes is exactly the floats of every copied vector, plus the expert
// headers.
func TestHeapBytes(t *testing.T) {
	for _, spec := range testutil.TinySpecs() {
		t.Run(spec.Variant(), func(t *testing.T) {
			m, f, _ := loadSpec(t, spec)
			n := len(m.OutNorm) + len(m.OutNormB) + len(m.OutB) + len(m.RopeFreqs) + len(m.RopeLong) + len(m.RopeShort) + len(m.EmbedNorm) + len(m.EmbedNormB) + len(m.TypeEmbed) + len(m.PerLayerProjNorm)
			for _, L := range m.Blocks {
				for _, v := range [][]float32{L.AttnNorm, L.Bq, L.Bk, L.Bv, L.QNorm, L.KNorm, L.PostAttnNorm, L.FFNNorm, L.PostFFNNorm,
					L.Bqkv, L.Bo, L.BUp, L.BDown, L.AttnNormB, L.FFNNormB, L.AttnOutNorm, L.AttnOutNormB, L.LayerOutNorm, L.LayerOutNormB,
					L.Sinks, L.BRouter, L.BGateExps, L.BUpExps, L.BDownExps, L.ExpProbsB, L.ConvW,
					L.PLNorm, L.LaurelNorm, L.AltRouter, L.AltRouterNorm, L.AltPredict, L.AltCorrect, L.AltCorrectScale,
					L.ConvB, L.SSMDtB, L.SSMA, L.SSMD, L.SSMNorm, L.SSMDtNorm, L.SSMBNorm, L.SSMCNorm, L.QANorm, L.KVANorm, L.OutScale, L.ShGateInp,
					L.TMW0, L.TMA0, L.TMV0, L.TMLerp, L.TMKK, L.TMKA, L.TMRK, L.TMLn, L.TMLnB, L.CMLerpK, L.TMLerpX, L.TMFirst, L.CMLerpR, L.QNormB, L.KNormB, L.AttnNorm2, L.AttnNorm2B,
					L.AttnSubNorm, L.FFNSubNorm, L.ScaleQ, L.ScaleK, L.ScaleV, L.ScaleO, L.ScaleGate, L.ScaleUp, L.ScaleDown,
					L.RouterScale, L.ExpOutScale, L.PreExpNorm, L.PostDenseNorm, L.PostExpNorm, L.SkipScale, L.QGain} {
					n += len(v)
				}
			}
			want := int64(4 * n)
			// One Expert, and a Matrix and a Tensor for each of its
			// matrices, for every expert loaded.
			for _, L := range m.Blocks {
				mats := 0 // a gate-less expert (nemotron_h_moe) has two
				for _, x := range L.Experts[:min(1, len(L.Experts))] {
					for _, w := range []*ops.Matrix{x.Gate, x.Up, x.Down} {
						if w != nil {
							mats++
						}
					}
				}
				headers := unsafe.Sizeof(Expert{}) + uintptr(mats)*(unsafe.Sizeof(ops.Matrix{})+unsafe.Sizeof(tensor.Tensor{}))
				want += int64(len(L.Experts)) * int64(headers)
				if L.WkBMade != nil {
					want += int64(len(L.WkBMade.T.Data)) // an older deepseek2 file's attn_k_b
				}
			}
			// Gemma 3n's AltUp projections: a Matrix, a Tensor and a
			// pointer each.
			want += int64(len(m.AltUpProj)+len(m.AltUpUnembd)) * int64(unsafe.Sizeof(ops.Matrix{})+unsafe.Sizeof(tensor.Tensor{})+unsafe.Sizeof(&ops.Matrix{}))
			got, err := HeapBytes(f)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("HeapBytes %d, want %d", got, want)
			}
		})
	}
}

// refRoute is route the obvious way, in float64: softmax or sigmoid,
// sort by probability plus bias (the key in float32, as route adds it),
// take k.
func refRoute(logits, bias []float32, k int, g Gating, norm bool) ([]int32, []float64) {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = math.Max(mx, float64(v))
	}
	p := make([]float64, len(logits))
	key := make([]float64, len(logits))
	var sum float64
	for i, v := range logits {
		p[i] = math.Exp(float64(v) - mx)
		sum += p[i]
	}
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
		if g == GatingSigmoid {
			p[i] = 1 / (1 + math.Exp(-float64(logits[i])))
			key[i] = float64(float32(p[i]) + bias[i])
		} else {
			p[i] /= sum
			key[i] = p[i]
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return key[idx[a]] > key[idx[b]] })
	ids := make([]int32, k)
	w := make([]float64, k)
	var tot float64
	for s := range k {
		ids[s], w[s] = int32(idx[s]), p[idx[s]]
		tot += w[s]
	}
	if norm {
		for s := range w {
			w[s] /= tot
		}
	}
	return ids, w
}

// TestRoute: softmax routing, and sigmoid routing with a selection bias
// (lfm2moe) that reorders the choice, against refRoute.
func TestRoute(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 400 {
		nx := 1 + r.IntN(130)
		k := 1 + r.IntN(min(nx, 9))
		logits := make([]float32, nx)
		for i := range logits {
			logits[i] = float32(r.NormFloat64() * 3)
		}
		g, bias := GatingSoftmax, []float32(nil)
		if trial >= 200 {
			g, bias = GatingSigmoid, make([]float32, nx)
			for i := range bias {
				bias[i] = float32(r.NormFloat64() * 0.3)
			}
		}
		if trial%5 == 0 && nx > 2 { // ties go to the lower id
			logits[nx-1] = logits[0]
			if bias != nil {
				bias[nx-1] = bias[0]
			}
		}
		norm := trial%2 == 0
		wantIDs, wantW := refRoute(logits, bias, k, g, norm)
		p := append([]float32(nil), logits...)
		ids, w := make([]int32, k), make([]float32, k)
		route(p, bias, ids, w, g, norm, groupLimit{})
		if !slices.Equal(ids, wantIDs) {
			t.Fatalf("trial %d (%d experts, top %d, gating %d): ids %v, want %v", trial, nx, k, g, ids, wantIDs)
		}
		var sum float64
		for s := range k {
			sum += float64(w[s])
			if math.Abs(float64(w[s])-wantW[s]) > 1e-6 {
				t.Fatalf("trial %d: weight %d = %v, want %v", trial, s, w[s], wantW[s])
			}
		}
		if norm && math.Abs(sum-1) > 1e-6 {
			t.Fatalf("trial %d: normalised weights sum to %v", trial, sum)
		}
	}
	// NaN logits choose some experts rather than fail.
	for _, g := range []Gating{GatingSoftmax, GatingSigmoid, GatingSoftmaxWeight} {
		p := []float32{float32(math.NaN()), float32(math.NaN()), float32(math.NaN())}
		ids, w := make([]int32, 2), make([]float32, 2)
		route(p, nil, ids, w, g, true, groupLimit{})
		if ids[0] == ids[1] || ids[0] < 0 || ids[1] < 0 {
			t.Errorf("gating %d: NaN logits routed to %v", g, ids)
		}
	}
	// Sigmoid probabilities all 0 in float32: a tie, to the lower ids;
	// the sum is clamped as llama.cpp clamps it, so the weights stay
	// finite.
	p := []float32{-200, -300, -250}
	ids, w := make([]int32, 2), make([]float32, 2)
	route(p, nil, ids, w, GatingSigmoid, true, groupLimit{})
	if ids[0] != 0 || ids[1] != 1 || w[0] != 0 || w[1] != 0 {
		t.Errorf("vanishing sigmoid probabilities: ids %v weights %v, want [0 1] [0 0]", ids, w)
	}
}

// dequantRows returns the rows of a matrix as float64.
func dequantRows(t *testing.T, w *ops.Matrix) [][]float64 {
	t.Helper()
	rows := make([][]float64, w.Rows)
	buf := make([]float32, w.Cols)
	for r := range rows {
		if err := quant.Dequantize(w.T.Type, buf, w.T.Row(r)); err != nil {
			t.Fatal(err)
		}
		rows[r] = make([]float64, w.Cols)
		for i, v := range buf {
			rows[r][i] = float64(v)
		}
	}
	return rows
}

func matvec(rows [][]float64, x []float64) []float64 {
	y := make([]float64, len(rows))
	for r, row := range rows {
		for i, v := range row {
			y[r] += v * x[i]
		}
	}
	return y
}

// The expert block against a straightforward reference, in float64 from
// the dequantized weights: the router's softmax and top-k pick the same
// experts, and the weighted sum of the chosen experts' SwiGLU outputs is
// the block's output. With F32 experts the activations stay F32;
// MXFP4 experts (gpt-oss's) take Q8_0 activations, which the reference
// quantizes too (the input, and the SwiGLU output before the down
// projection). Either way the reference is exact up to float32.
func TestExpertsMatchReference(t *testing.T) {
	for _, experts := range []quant.Type{quant.F32, quant.MXFP4} {
		t.Run(experts.String(), func(t *testing.T) { checkExperts(t, experts) })
	}
}

func checkExperts(t *testing.T, experts quant.Type) {
	spec := testutil.TinyQwen3MoE()
	spec.WeightType = quant.F32
	spec.ExpertType = experts
	spec.Experts, spec.ExpertsUsed = 16, 4
	pool := ops.NewPool(2)
	defer pool.Close()
	m, _, _ := loadSpec(t, spec)
	const n = 12
	st := newState(t, m, pool, n, 64)
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, n*m.Embd)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	// act is what the expert matrices see of an activation: itself, or
	// its Q8_0 round trip.
	act := func(v []float64) []float64 {
		if experts == quant.F32 {
			return v
		}
		f := make([]float32, len(v))
		for i := range v {
			f[i] = float32(v[i])
		}
		q := make([]byte, len(v)/quant.QK*quant.Q8_0.BlockBytes())
		if err := quant.QuantizeRow(quant.Q8_0, q, f); err != nil {
			t.Fatal(err)
		}
		if err := quant.Dequantize(quant.Q8_0, f, q); err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(v))
		for i := range f {
			out[i] = float64(f[i])
		}
		return out
	}
	// The pass's scratch, as Forward sets it up.
	st.ar.Reset()
	for i := range st.q {
		st.q[i] = qslot{buf: st.ar.Bytes(n * m.maxXRowBytes())}
	}
	st.moe.take(st.ar, &m.Config, m.maxXRowBytes(), n)
	out := make([]float32, n*m.Embd)
	for il := range m.Blocks {
		L := &m.Blocks[il]
		if got := L.Experts[0].Gate.T.Type; got != experts {
			t.Fatalf("layer %d: experts of type %v, want %v", il, got, experts)
		}
		a := st.acts(x, m.Embd, n)
		if err := st.experts(il, L, a, a, out); err != nil {
			t.Fatal(err)
		}
		router := dequantRows(t, L.Router)
		for tk := range n {
			xt := make([]float64, m.Embd)
			for i := range xt {
				xt[i] = float64(x[tk*m.Embd+i])
			}
			logits := matvec(router, xt)
			lf := make([]float32, len(logits))
			for i, v := range logits {
				lf[i] = float32(v)
			}
			ids, w := refRoute(lf, nil, m.ExpertsUsed, GatingSoftmax, true)
			got := st.moe.ids[tk*m.ExpertsUsed : (tk+1)*m.ExpertsUsed]
			if !slices.Equal(got, ids) {
				t.Fatalf("layer %d token %d: routed to %v, reference %v", il, tk, got, ids)
			}
			want := make([]float64, m.Embd)
			xq := act(xt)
			for s, e := range ids {
				ex := &L.Experts[e]
				g := matvec(dequantRows(t, ex.Gate), xq)
				u := matvec(dequantRows(t, ex.Up), xq)
				for i := range g {
					g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
				}
				y := matvec(dequantRows(t, ex.Down), act(g))
				for i := range want {
					want[i] += w[s] * y[i]
				}
			}
			for i := range want {
				if d := math.Abs(float64(out[tk*m.Embd+i]) - want[i]); d > 1e-4*(1+math.Abs(want[i])) {
					t.Fatalf("layer %d token %d output %d = %v, reference %v (off by %.3g)", il, tk, i, out[tk*m.Embd+i], want[i], d)
				}
			}
		}
	}
}

// countingExperts is an ExpertSource over the mapped experts that checks
// the protocol: Expert only for announced experts, Release after Fetch.
type countingExperts struct {
	MappedExperts
	t         *testing.T
	announced map[int][]int32
	fetches   int
	served    int
}

func (c *countingExperts) Fetch(il int, ids []int32) {
	if _, open := c.announced[il]; open {
		c.t.Errorf("layer %d fetched twice without release", il)
	}
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		c.t.Errorf("layer %d: ids %v are not distinct and ascending", il, ids)
	}
	c.announced[il] = slices.Clone(ids)
	c.fetches++
}

func (c *countingExperts) Expert(il, e int) *Expert {
	if !slices.Contains(c.announced[il], int32(e)) {
		c.t.Errorf("layer %d expert %d served without being announced", il, e)
	}
	c.served++
	return c.MappedExperts.Expert(il, e)
}

func (c *countingExperts) Release(il int) {
	if _, open := c.announced[il]; !open {
		c.t.Errorf("layer %d released without fetch", il)
	}
	delete(c.announced, il)
}

// Forward takes every expert from Model.ExpertSource when it is set, with
// the same result as without one.
func TestExpertSource(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	m, _, _ := loadSpec(t, testutil.TinyQwen3MoE())
	toks := prompt(20)
	want := forwardAll(t, m, pool, toks, 8, 64)
	src := &countingExperts{MappedExperts: MappedExperts{M: m}, t: t, announced: map[int][]int32{}}
	m.ExpertSource = src
	got := forwardAll(t, m, pool, toks, 8, 64)
	m.ExpertSource = nil
	if !slices.Equal(got, want) {
		t.Error("logits differ with the mapped ExpertSource")
	}
	passes := 3 // 20 tokens in batches of 8
	if src.fetches != passes*m.Layers || len(src.announced) != 0 || src.served < src.fetches*m.ExpertsUsed {
		t.Errorf("%d fetches, %d experts served, %d still announced; want %d fetches, all released",
			src.fetches, src.served, len(src.announced), passes*m.Layers)
	}
	// Each expert's ranges are its own slice of the 3-D tensors, in order.
	for il, L := range m.Blocks {
		for k := range 3 {
			for e := 1; e < len(L.Experts); e++ {
				a, b := L.Experts[e-1].Ranges[k], L.Experts[e].Ranges[k]
				if a.Len <= 0 || b.Off != a.Off+a.Len || b.Len != a.Len {
					t.Fatalf("layer %d matrix %d: expert %d range %+v does not follow %+v", il, k, e, b, a)
				}
			}
			if x := L.Experts[0].Ranges[k]; x.Off < L.Start || x.Off+x.Len*int64(len(L.Experts)) > L.End {
				t.Fatalf("layer %d matrix %d: experts outside the layer's range", il, k)
			}
		}
	}
}

// Streamed layers with fused matrices and experts give exactly the
// resident logits, reading everything from the slots, for every decoder
// of testutil's registry (a new architecture joins by being registered).
func TestDiskSourceNewArchs(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	for _, spec := range testutil.TinyDecoders() {
		t.Run(spec.Variant(), func(t *testing.T) {
			ref, _, _ := loadSpec(t, spec)
			want := greedyLogits(t, ref, pool, 6)
			m, f, data := loadSpec(t, spec)
			pristine := append([]byte(nil), data...)
			streamed := []int{0, len(m.Blocks) - 1}
			r := newMemReader(pristine, m, 2)
			src, err := NewDiskSource(m, f, r, nil)
			if err != nil {
				t.Fatal(err)
			}
			src.Switch(streamed, nil)
			for _, il := range streamed {
				for i := m.Blocks[il].Start; i < m.Blocks[il].End; i++ {
					data[i] = 0xAA
				}
			}
			m.Source = src
			sameLogits(t, "streamed", greedyLogits(t, m, pool, 6), want)
		})
	}
}

// Every worker's attention error comes back, not only the first worker's.
func TestAttentionErrorsAllReported(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	m, _, _ := loadSpec(t, testutil.TinyLlama())
	st := newState(t, m, pool, 8, 64)
	for i := range st.scratch {
		st.scratch[i] = st.scratch[i][:0] // too small for any attention
	}
	err := st.Forward(prompt(8), 0, make([]float32, m.Vocab))
	if !errors.Is(err, kv.ErrScratch) {
		t.Fatalf("error %v, want kv.ErrScratch", err)
	}
	// The caller runs whatever ranges a worker has not joined in time for,
	// so one or both goroutines may have failed: each one's error must be
	// in the result.
	failed := 0
	for _, e := range st.errs {
		if e != nil {
			failed++
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != failed || failed == 0 {
		t.Errorf("%d errors reported, want one from each of the %d failed workers: %v", n, failed, err)
	}
	// Both failed: both reported.
	st.errs[0], st.errs[1] = kv.ErrScratch, kv.ErrFull
	if err := st.workerErr(); !errors.Is(err, kv.ErrScratch) || !errors.Is(err, kv.ErrFull) {
		t.Errorf("two workers' errors: %v", err)
	}
}

// A quantized copy is reused only for the activations it was made from:
// new floats in the same buffer are a new acts value, quantized afresh.
func TestQuantizedActivationsNeverStale(t *testing.T) {
	pool := ops.NewPool(1)
	defer pool.Close()
	m, _, _ := loadSpec(t, testutil.TinyLlama())
	st := newState(t, m, pool, 2, 16)
	st.ar.Reset()
	for i := range st.q {
		st.q[i] = qslot{buf: st.ar.Bytes(2 * m.maxXRowBytes())}
	}
	buf := make([]float32, 2*m.Embd)
	fill := func(v float32) acts {
		for i := range buf {
			buf[i] = v * float32(i%7-3)
		}
		return st.acts(buf, m.Embd, 2)
	}
	quant := func(a acts) []byte {
		q, err := st.quantized(a, quant.Q8_0)
		if err != nil {
			t.Fatal(err)
		}
		return append([]byte(nil), q...)
	}
	a := fill(1)
	qa := quant(a)
	if !slices.Equal(quant(a), qa) {
		t.Fatal("the same activations quantized differently")
	}
	b := fill(2) // same buffer, new contents
	if slices.Equal(quant(b), qa) {
		t.Fatal("new activations in the same buffer reused the old quantization")
	}
	c := fill(1)
	if !slices.Equal(quant(c), qa) {
		t.Fatal("quantization of equal activations differs")
	}
}

func TestLongRopeFactorsByContext(t *testing.T) {
	pool := ops.NewPool(1)
	defer pool.Close()
	m, _, _ := loadSpec(t, testutil.TinyPhi3())
	if m.RopeLong == nil || m.RopeShort == nil || m.RopeOrigContext != 128 || m.RopeAttnFactor != 1.19 {
		t.Fatalf("LongRoPE not loaded: long %v short %v orig %d factor %v", m.RopeLong != nil, m.RopeShort != nil, m.RopeOrigContext, m.RopeAttnFactor)
	}
	for _, tc := range []struct {
		cells int
		want  []float32
	}{{128, m.RopeShort}, {129, m.RopeLong}, {1024, m.RopeLong}} {
		st, err := m.NewState(ops.NewExec(pool), StateOptions{Batch: 1, Cache: kv.F16, Cells: tc.cells})
		if err != nil {
			t.Fatal(err)
		}
		if &st.rope.Factors[0] != &tc.want[0] {
			t.Errorf("context %d: wrong LongRoPE factors", tc.cells)
		}
	}
	short := forwardAll(t, m, pool, prompt(12), 12, 128)
	long := forwardAll(t, m, pool, prompt(12), 12, 256)
	if slices.Equal(short, long) {
		t.Error("long and short factors give the same logits")
	}
}

// A context shift re-rotates each layer's keys with that layer's own RoPE.
// In a one-layer model the keys and values depend only on the tokens and
// their positions, so after dropping positions the next step's logits
// equal those of a cache filled with the kept tokens at their new
// positions, up to F16 rounding. The layer is a gemma3 windowed layer
// whose RoPE base (500) differs from the global one.
func TestShiftUsesTheLayersRope(t *testing.T) {
	pool := ops.NewPool(1)
	defer pool.Close()
	spec := testutil.TinyGemma3()
	spec.Layers, spec.SWAPattern, spec.SlidingWindow = 1, 2, 64
	spec.WeightType = quant.F32
	spec.RopeBaseSWA = 500
	m, _, _ := loadSpec(t, spec)
	if !m.WindowedLayer(0) || m.RopeBaseSWA != 500 || ropeTables(&m.Config) != 2 {
		t.Fatalf("layer 0 is not a windowed layer with its own RoPE: %+v", m.Config)
	}
	checkShiftMatchesFresh(t, m, pool)
}

// checkShiftMatchesFresh runs prompt(12) through m, a one-layer model
// (whose keys and values depend only on the tokens and their positions),
// drops positions 2–6 by a context shift and takes one more token: its
// logits must be those of a cache filled with the kept tokens at their
// new positions, up to F16 rounding (0.02).
func checkShiftMatchesFresh(t *testing.T, m *Model, pool *ops.Pool) {
	t.Helper()
	toks := prompt(12)
	const keep, drop = 2, 5
	next := int32(77)
	st := newState(t, m, pool, 12, 64)
	out := make([]float32, m.Vocab)
	if err := st.Forward(toks, 0, out); err != nil {
		t.Fatal(err)
	}
	if err := st.Shift(keep, drop); err != nil {
		t.Fatal(err)
	}
	if err := st.Forward([]int32{next}, len(toks)-drop, out); err != nil {
		t.Fatal(err)
	}
	kept := append(append([]int32(nil), toks[:keep]...), toks[keep+drop:]...)
	fresh := forwardAll(t, m, pool, append(kept, next), 12, 64)
	if worst := maxDiff(out, fresh[len(kept)*m.Vocab:]); worst > 0.02 {
		t.Errorf("after the shift the logits differ from a fresh cache's by up to %g", worst)
	}
}

func ExampleSupported() {
	fmt.Println(Supported())
	// Output: [llama qwen2 qwen3 qwen3moe gemma2 gemma3 phi3 granite granitemoe granitehybrid smollm3 mistral3 olmo2 ernie4_5 ernie4_5-moe seed_oss exaone4 glm4 gpt-oss lfm2 lfm2moe gemma3n gemma4 deepseek2 gemma-embedding bert nomic-bert modern-bert nomic-bert-moe jina-bert-v2 jina-bert-v3 eurobert neo-bert qwen35 qwen35moe qwen3next nemotron_h nemotron_h_moe qwen2vl qwen3vl qwen3vlmoe glm4moe bailingmoe2 cohere2 arcee apertus hunyuan-dense smallthinker falcon-h1 minicpm minicpm3 olmoe afmoe jamba mamba mamba2 rwkv7 exaone starcoder2 gemma nemotron stablelm phi2 gpt2 starcoder gptneox bitnet chatglm internlm2 olmo command-r falcon bloom mpt qwen2moe rwkv6 rwkv6qwen2 phimoe arwkv7 hunyuan-moe dots1 mellum maincoder minimax-m2 exaone-moe llama4 laguna mimo2 grovemoe kimi-linear plamo3 jais2 xverse orion refact baichuan codeshell bailingmoe cohere2moe mistral4 llama-embed nanbeige talkie deci openelm]
}

// Sessions of one model share its pool: their fused products (Q/K/V
// parts, gated gate/up, products with residual adds, experts) take turns
// on the workers and each gets exactly the logits it gets alone, every
// architecture. Run with -race: it is the concurrency test of the fused
// dispatches.
func TestConcurrentStatesShareThePool(t *testing.T) {
	forEachTiny(t, func(t *testing.T, m *Model, pool *ops.Pool) {
		toks := prompt(12)
		want := forwardAll(t, m, pool, toks, 4, 32)
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				for range 3 {
					got, err := runChunks(m, pool, toks, 4, 32)
					if err != nil {
						t.Error(err)
						return
					}
					if i, ok := sameLogitBits(got, want); !ok {
						t.Errorf("logit %d: %v alone, %v beside other sessions", i, want[i], got[i])
						return
					}
				}
			})
		}
		wg.Wait()
	})
}

// sameLogitBits reports the first logit that differs in any bit.
func sameLogitBits(a, b []float32) (int, bool) {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, false
		}
	}
	return 0, len(a) == len(b)
}
