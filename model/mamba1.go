package model

import (
	"fmt"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/ssm"
)

// This file is a Mamba-1 layer (jamba's recurrent layers) as llama.cpp's
// build_mamba_layer, ggml_ssm_conv and ggml_ssm_scan compute it. ssm_in
// makes, per token, x and z (SSMInner each, x first). x goes through the
// causal depthwise convolution of SSMConv taps plus its bias, then SiLU.
// ssm_x makes from it the time step's rank (SSMDtRank floats), B and C
// (SSMState each), each RMS-normalised when the model says so (jamba's
// ssm_dt_norm, ssm_b_norm, ssm_c_norm); ssm_dt and its bias widen the
// rank to one time step a channel. The scan then runs per channel d:
//
//	dt' = softplus(dt[d])
//	state[d][s] = state[d][s]·exp(dt'·A[d][s]) + B[s]·(x[d]·dt')
//	y[d] = Σ_s state[d][s]·C[s] + x[d]·D[d]
//
// A is what the file holds, -exp(A_log) (the converter's), so negative.
// y·SiLU(z) goes to ssm_out. The state carried from pass to pass is the
// last SSMConv-1 positions' x before the convolution, then the scan's
// SSMInner × SSMState floats, in the recurrent slots as Mamba-2's.

// mamba1Row is the floats a token of a Mamba-1 pass takes in the qkv
// scratch: x and z (ssm_in), the time step's rank, B and C (ssm_x), and
// the widened time steps (ssm_dt).
func mamba1Row(c *Config) int { return 3*c.SSMInner + c.SSMDtRank + 2*c.SSMState }

// mamba1ScanTask runs one Mamba-1 layer's scan over a pass, a range of
// channels per work item, each channel's state through the tokens in
// order.
type mamba1ScanTask struct {
	s      *State
	L      *Layer
	n      int
	rows   []float32 // n rows of mamba1Row floats: x (convolved), z, dt rank, B, C, dt
	stride int
	y      []float32 // n rows of SSMInner: the scan's output plus the skip
	src    []float32 // the layer's scan state: SSMInner × SSMState
	dst    []float32 // where the pass leaves it (src itself or a free slot)
}

// Do scans channels [lo,hi) with ssm.Softplus and ssm.SelectiveScan,
// mamba1Block channels a call, each block's state through the tokens in order: the
// first token from src into dst, the rest in place; a new text of the
// pass starts from the empty state.
func (k *mamba1ScanTask) Do(_, lo, hi int) {
	c := &k.s.m.Config
	I, N, R := c.SSMInner, c.SSMState, c.SSMDtRank
	texts := k.s.texts
	var dt [mamba1Block]float32
	for b0 := lo; b0 < hi; b0 += mamba1Block {
		b1 := min(b0+mamba1Block, hi)
		in, st := k.src[b0*N:b1*N], k.dst[b0*N:b1*N]
		A, dtB, D := k.L.SSMA[b0*N:b1*N], k.L.SSMDtB[b0:b1], k.L.SSMD[b0:b1]
		for t := range k.n {
			if texts != nil && int(texts[t].from) == t {
				clear(st)
				in = st
			}
			row := k.rows[t*k.stride:]
			B := row[2*I+R : 2*I+R+N]
			C := row[2*I+R+N : 2*I+R+2*N]
			ssm.Softplus(dt[:b1-b0], row[2*I+R+2*N+b0:2*I+R+2*N+b1], dtB)
			ssm.SelectiveScan(st, in, A, B, C, row[b0:b1], dt[:b1-b0], D, k.y[t*I+b0:t*I+b1])
			in = st
		}
	}
}

// mamba1Block is the most channels mamba1ScanTask hands the scan at once:
// their time steps live on the stack, and their state (Falcon-Mamba's
// 64 × 16 floats) stays in the L1 cache through the pass's tokens.
const mamba1Block = 64

// mamba1 runs Mamba-1 layer il's ssm_in, convolution, ssm_x, norms,
// ssm_dt, scan and gate of a into p.att (SSMInner floats a token),
// carrying the layer's conv and scan state on; ssm_out is the caller's.
func (s *State) mamba1(il int, L *Layer, a acts, p *pass) error {
	c := &s.m.Config
	I, N, R, n := c.SSMInner, c.SSMState, c.SSMDtRank, a.n
	w := mamba1Row(c)
	s.e.Phase(phQKV)
	if err := s.mul(L.ConvIn, a, p.qkv, w); err != nil {
		return err
	}
	s.e.Phase(phConv)
	convRows := (c.SSMConv - 1) * I
	src, dst := s.conv.layer(c.recurrentIndex(il), recurrentFloats(c))
	s.convolve(ssmConvTask{s: s, n: n, rows: p.qkv, stride: w, src: src[:convRows], dst: dst[:convRows], w: L.ConvW, b: L.ConvB, width: I})
	// ssm_x and ssm_dt read their inputs as whole rows: x, then the
	// time step's rank, copied out of the pass's rows into p.att, which
	// the scan's output overwrites only after.
	s.e.Phase(phQKV)
	for t := range n {
		copy(p.att[t*I:(t+1)*I], p.qkv[t*w:t*w+I])
	}
	if err := s.mul(L.SSMX, s.acts(p.att, I, n), p.qkv[2*I:], w); err != nil {
		return err
	}
	for t := range n {
		dbc := p.qkv[t*w+2*I : t*w+2*I+R+2*N]
		if c.SSMDtBCNorm {
			ops.RMSNorm(dbc[:R], dbc[:R], L.SSMDtNorm, c.RMSEps)
			ops.RMSNorm(dbc[R:R+N], dbc[R:R+N], L.SSMBNorm, c.RMSEps)
			ops.RMSNorm(dbc[R+N:], dbc[R+N:], L.SSMCNorm, c.RMSEps)
		}
		copy(p.att[t*R:(t+1)*R], dbc[:R])
	}
	if err := s.mul(L.SSMDt, s.acts(p.att, R, n), p.qkv[2*I+R+2*N:], w); err != nil {
		return err
	}
	s.e.Phase(phScan)
	s.s1 = mamba1ScanTask{s: s, L: L, n: n, rows: p.qkv, stride: w, y: p.att, src: src[convRows:], dst: dst[convRows:]}
	s.e.For(I, 64, &s.s1)
	s.s1 = mamba1ScanTask{}
	for t := range n {
		z := p.qkv[t*w+I : t*w+2*I]
		y := p.att[t*I : (t+1)*I]
		s.act(z, y)
		copy(y, z)
	}
	return nil
}

// mamba1Sizes reads a Mamba-1 layer's sizes, all required as llama.cpp
// requires them: ssm.conv_kernel (at least 2), ssm.inner_size (2 ×
// embedding_length, the only expansion llama.cpp runs), ssm.state_size
// and ssm.time_step_rank (the time step's rank, at most the inner size:
// the pass keeps a token's rank where its inner width fits), the state
// within maxSSMLayerFloats.
func (m *meta) mamba1Sizes(c *Config) {
	c.Mamba1 = true
	c.SSMConv = m.num("ssm.conv_kernel", maxConvKernel, -1, false)
	c.SSMInner = m.num("ssm.inner_size", maxCount, -1, false)
	c.SSMState = m.num("ssm.state_size", maxCount, -1, false)
	c.SSMDtRank = m.num("ssm.time_step_rank", maxCount, -1, false)
	k := m.key
	switch {
	case m.err != nil:
	case c.SSMConv < 2:
		m.fail("%s = %d, want at least 2", k("ssm.conv_kernel"), c.SSMConv)
	case c.SSMInner != 2*c.Embd:
		m.fail("%s = %d, want 2 × %s = %d (llama.cpp runs an expansion of 2 only)", k("ssm.inner_size"), c.SSMInner, k("embedding_length"), 2*c.Embd)
	case c.SSMDtRank > c.SSMInner:
		m.fail("%s = %d is more than %s = %d", k("ssm.time_step_rank"), c.SSMDtRank, k("ssm.inner_size"), c.SSMInner)
	case int64(c.SSMInner)*int64(c.SSMState) > maxSSMLayerFloats:
		m.fail("%s = %d × %s = %d is a state of more than %d floats a layer", k("ssm.inner_size"), c.SSMInner, k("ssm.state_size"), c.SSMState, maxSSMLayerFloats)
	}
}

// jambaHparams: AI21's Jamba as llama.cpp's jamba graph runs it. Layers
// with attention.head_count_kv 0 are Mamba-1 layers (mamba1Sizes) whose
// time step's rank, B and C are RMS-normalised with weights; the others
// attend without RoPE. Every layer then runs ffn_norm and a SwiGLU
// feed-forward: expert_count experts of width feed_forward_length,
// expert_used_count a token, softmax-routed and not renormalised, in the
// blocks that have a router (ffn_gate_inp), as llama.cpp decides block by
// block; a dense one in the others. attention.layer_norm_rms_epsilon is
// required, as llama.cpp requires it.
func jambaHparams(c *Config, m *meta) {
	c.NoRopeEvery = 1
	m.mamba1Sizes(c)
	c.SSMDtBCNorm = true
	m.require(true, "attention.layer_norm_rms_epsilon")
	n, _ := m.f.Uint(m.key("expert_count"))
	if m.err != nil || n == 0 {
		return
	}
	c.Experts = m.num("expert_count", maxExperts, -1, false)
	c.ExpertsUsed = m.num("expert_used_count", maxExperts, -1, false)
	if m.err == nil && c.ExpertsUsed > c.Experts {
		m.fail("%s = %d is more than %s = %d", m.key("expert_used_count"), c.ExpertsUsed, m.key("expert_count"), c.Experts)
	}
	c.ExpertFFN = c.FFN
	c.MoELayers = make([]bool, c.Layers)
	for il := range c.MoELayers {
		_, c.MoELayers[il] = m.f.Tensor(fmt.Sprintf("blk.%d.ffn_gate_inp.weight", il))
	}
}

// mambaHparams: Mamba-1 models (state-spaces/mamba, Falcon-Mamba) as
// llama.cpp's mamba graph runs them: every block attn_norm, a Mamba-1
// layer (mamba1Sizes) and the residual sum, nothing else (Config.SingleOp
// with every layer recurrent); Falcon-Mamba's ssm.dt_b_c_rms normalises
// the time step's rank, B and C without weights. No layer attends: the KV
// cache keeps one placeholder layer of one head of placeholderHeadDim,
// which no layer reads (KVConfig), so that it still counts the positions
// a session holds, rewinds, shifts and saves.
func mambaHparams(c *Config, m *meta) {
	m.mamba1Sizes(c)
	c.SSMDtBCNorm = m.flag("ssm.dt_b_c_rms", false)
	mixersAlone(c, m)
}

// mixersAlone makes every block of a model without attention (mamba,
// mamba2) attn_norm, its recurrent mixer and the residual sum
// (Config.SingleOp, every layer recurrent, none rotated), with the KV
// cache's placeholder head (placeholderHeadDim) and the RMS epsilon
// required, as llama.cpp requires it.
func mixersAlone(c *Config, m *meta) {
	c.SingleOp, c.NoRopeEvery = true, 1
	c.HeadDimK, c.HeadDimV, c.RopeDim = placeholderHeadDim, placeholderHeadDim, placeholderHeadDim
	m.require(true, "attention.layer_norm_rms_epsilon")
	c.ConvLayers = make([]bool, c.Layers)
	for il := range c.ConvLayers {
		c.ConvLayers[il] = true
	}
}

// placeholderHeadDim is the head size of the KV cache's placeholder
// layer in a model without attention: the smallest every cache type
// stores (Int4's block).
const placeholderHeadDim = 32

// mamba1Tensors lists a Mamba-1 block's tensors, as llama.cpp's loader
// takes them: attn_norm; ssm_in; the kernel ssm_conv1d ([SSMConv,
// SSMInner]) and its bias; ssm_x; ssm_dt and its bias; A ([SSMState,
// SSMInner]) and D, without ".weight"; ssm_out; jamba's norms of the
// time step's rank, B and C and then its ffn_norm and feed-forward (a
// mamba block has neither: SingleOp).
func mamba1Tensors(a *Arch, c *Config, il int, has func(name string) bool) []blockTensor {
	e, I, N, R := c.Embd, c.SSMInner, c.SSMState, c.SSMDtRank
	ts := []blockTensor{
		vecTensor("attn_norm.weight", e, func(L *Layer) *[]float32 { return &L.AttnNorm }),
		matTensor("ssm_in.weight", e, 2*I, func(L *Layer) **ops.Matrix { return &L.ConvIn }),
		rowsTensor("ssm_conv1d.weight", c.SSMConv, I, func(L *Layer) *[]float32 { return &L.ConvW }),
		vecTensor("ssm_conv1d.bias", I, func(L *Layer) *[]float32 { return &L.ConvB }),
		matTensor("ssm_x.weight", I, R+2*N, func(L *Layer) **ops.Matrix { return &L.SSMX }),
		matTensor("ssm_dt.weight", R, I, func(L *Layer) **ops.Matrix { return &L.SSMDt }),
		vecTensor("ssm_dt.bias", I, func(L *Layer) *[]float32 { return &L.SSMDtB }),
		rowsTensor("ssm_a", N, I, func(L *Layer) *[]float32 { return &L.SSMA }),
		vecTensor("ssm_d", I, func(L *Layer) *[]float32 { return &L.SSMD }),
		matTensor("ssm_out.weight", I, e, func(L *Layer) **ops.Matrix { return &L.ConvOut }),
	}
	if c.SingleOp {
		return ts
	}
	return append(append(ts,
		vecTensor("ssm_dt_norm.weight", R, func(L *Layer) *[]float32 { return &L.SSMDtNorm }),
		vecTensor("ssm_b_norm.weight", N, func(L *Layer) *[]float32 { return &L.SSMBNorm }),
		vecTensor("ssm_c_norm.weight", N, func(L *Layer) *[]float32 { return &L.SSMCNorm }),
		vecTensor("ffn_norm.weight", e, func(L *Layer) *[]float32 { return &L.FFNNorm })),
		ffnTensors(a, c, il, has)...)
}
