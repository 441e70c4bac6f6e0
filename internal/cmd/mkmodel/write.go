package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// chunkBytes is about how much tensor data one generation step makes:
// large enough that writes are efficient, small enough that a few chunks
// in flight cost little memory.
const chunkBytes = 4 << 20

// model is a file to write: its shape, type, seed and tensors.
type model struct {
	shape   shape
	ft      fileType
	seed    uint64
	tensors []tensorPlan
	workers int // goroutines generating data; 0 = GOMAXPROCS
}

func newModel(s shape, ft fileType, seed uint64) (*model, error) {
	ts, err := plan(s, ft)
	if err != nil {
		return nil, err
	}
	return &model{shape: s, ft: ft, seed: seed, tensors: ts}, nil
}

// params is the number of weights in the file.
func (m *model) params() int64 {
	var n int64
	for _, t := range m.tensors {
		p := int64(1)
		for _, d := range t.Dims {
			p *= d
		}
		n += p
	}
	return n
}

// writeTo writes the GGUF file to w and returns its size.
func (m *model) writeTo(w io.Writer) (int64, error) {
	newVocab := testutil.SPMVocab
	if m.shape.encoder() {
		newVocab = testutil.WPMVocabOf
	}
	vocab, err := newVocab(m.shape.Vocab)
	if err != nil {
		return 0, err
	}
	if err := vocab.SetControl(m.shape.ControlTokens); err != nil {
		return 0, err
	}
	g := gguf.NewWriter()
	m.addKV(g, vocab)
	for i := range m.tensors {
		t := &m.tensors[i]
		if err := g.AddTensorFunc(t.Name, t.Type, t.Dims, func(w io.Writer) error { return m.writeTensor(w, t) }); err != nil {
			return 0, err
		}
	}
	return g.WriteTo(w)
}

// addKV writes the metadata llama.cpp's converter writes for the shape's
// architecture.
func (m *model) addKV(g *gguf.Writer, vocab *testutil.Vocab) {
	s := m.shape
	a := s.Arch + "."
	g.AddKV("general.architecture", s.Arch)
	g.AddKV("general.name", fmt.Sprintf("%s %s (mkmodel, random weights, seed %d)", s.Name, m.ft.Name, m.seed))
	g.AddKV(a+"vocab_size", uint32(s.Vocab))
	h := testutil.Hparams{Context: s.Context, Embd: s.Embd, Layers: s.Layers + s.NextN, FFN: s.FFN,
		Heads: s.Heads, HeadsKV: s.HeadsKV, RMSEps: s.RMSEps, RopeBase: s.RopeBase, NormEps: s.NormEps}
	if s.mixersOnly() {
		h.Heads, h.FFN = 0, 0 // the converter's unused 0s
	}
	testutil.AddHparams(g, s.Arch, h)
	if s.PerLayer != nil {
		s.PerLayer.AddTo(g, s.Arch)
	}
	switch {
	case s.Arch == "arwkv7":
		testutil.AddARWKV7KV(g, s.Arch, *s.RWKV7)
	case s.RWKV7 != nil:
		testutil.AddRWKV7KV(g, s.Arch, *s.RWKV7, rwkvNormEps)
	case s.Arch == "rwkv6qwen2":
		testutil.AddRWKV6Qwen2KV(g, s.Arch, *s.RWKV6)
	case s.RWKV6 != nil:
		testutil.AddRWKV6KV(g, s.Arch, *s.RWKV6, rwkvNormEps)
	}
	if s.Mamba1 != nil {
		conv := s.convFlags()
		if s.Arch == "mamba" {
			testutil.AddMambaKV(g, s.Arch, *s.Mamba1, s.DtBCNorm)
		} else {
			testutil.AddJambaKV(g, s.Arch, s.HeadsKV, conv, *s.Mamba1, s.Experts, s.ExpertsUsed)
		}
	} else if s.Arch == "mamba2" {
		testutil.AddSSMSizes(g, s.Arch, *s.SSM)
	} else if s.Pattern != "" {
		s.addNemotronHKV(g)
	} else if s.qwen35() {
		sections := s.ropeDim()
		if s.Arch == "qwen3next" {
			sections = 0 // plain NEOX RoPE
		}
		testutil.AddQwen35KV(g, s.Arch, *s.SSM, s.recurrentFlags(), s.NextN, sections)
	} else if k := s.KDA; k != nil {
		testutil.AddKimiLinearKV(g, s.Arch, s.HeadsKV, s.convFlags(), k.Conv, k.HeadDim)
	} else if s.ConvLayers != nil {
		conv := s.convFlags()
		if s.SSM != nil {
			testutil.AddSSMLayers(g, s.Arch, s.HeadsKV, conv, *s.SSM)
		} else {
			testutil.AddConvLayers(g, s.Arch, s.HeadsKV, conv, s.ConvKernel)
		}
	}
	if s.HeadDim != 0 {
		g.AddKV(a+"attention.key_length", uint32(s.headDim()))
		g.AddKV(a+"attention.value_length", uint32(s.headDim()))
	}
	if s.Arch != "gemma2" && !s.mixersOnly() && !s.rwkv() && !s.encoder() {
		g.AddKV(a+"rope.dimension_count", uint32(s.ropeDim()))
	}
	if s.Pooling != 0 {
		g.AddKV(a+"pooling_type", s.Pooling)
	}
	if s.Arch == "eurobert" || s.Arch == "neo-bert" {
		g.AddKV(a+"attention.causal", false) // as their converters write it
	}
	if s.RopeLin != 0 {
		g.AddKV(a+"rope.scaling.type", "linear")
		g.AddKV(a+"rope.scaling.factor", s.RopeLin)
	}
	if s.Window != 0 && s.Gemma3n == nil && s.Gemma4 == nil { // AddGemma3nKV and AddGemma4KV write it
		g.AddKV(a+"attention.sliding_window", uint32(s.Window))
	}
	if s.SWAPattern > 0 {
		g.AddKV(a+"attention.sliding_window_pattern", uint32(s.SWAPattern))
	}
	if s.Arch == "gemma2" {
		g.AddKV(a+"attn_logit_softcapping", s.AttnSoftcap)
		g.AddKV(a+"final_logit_softcapping", s.FinalSoftcap)
	}
	if r := s.LongRope; r != nil {
		g.AddKV(a+"rope.scaling.original_context_length", uint32(r.OrigContext))
		g.AddKV(a+"rope.scaling.attn_factor", r.attnFactor(s.Context))
	}
	if s.Dense > 0 {
		// llama.cpp sizes dense_2 and dense_3 by these keys.
		g.AddKV(a+"dense_2_feat_in", uint32(s.Embd))
		g.AddKV(a+"dense_2_feat_out", uint32(s.Dense))
		g.AddKV(a+"dense_3_feat_in", uint32(s.Dense))
		g.AddKV(a+"dense_3_feat_out", uint32(s.Embd))
	}
	if gs := s.Granite; gs != nil && s.Arch == "minicpm" {
		// MiniCPM's converter writes no attention.scale, and llama.cpp
		// takes its LongRoPE factors only under rope.scaling.type longrope.
		testutil.AddMiniCPMScales(g, s.Arch, gs.Embedding, gs.Residual, gs.Logit)
		if s.LongRope != nil {
			g.AddKV(a+"rope.scaling.type", "longrope")
		}
	} else if gs != nil {
		testutil.AddGraniteScales(g, s.Arch, gs.Embedding, gs.Residual, gs.Attention, gs.Logit)
	}
	if y := s.Yarn; y != nil {
		y.AddTo(g, s.Arch)
	}
	testutil.AddVisionLanguageKV(g, s.Arch, s.RopeSections, s.Deepstack)
	switch {
	case s.Arch == "jamba": // AddJambaKV: no expert width (llama.cpp sizes them by feed_forward_length)
	case s.Arch == "granitehybrid":
		// The converter writes expert_count (0 for the dense models) and
		// no expert width: llama.cpp sizes the experts by
		// feed_forward_length.
		g.AddKV(a+"expert_count", uint32(s.Experts))
		if s.Experts > 0 {
			g.AddKV(a+"expert_used_count", uint32(s.ExpertsUsed))
		}
	case s.MoEEvery > 0:
		// nomic-bert-moe: no expert width (the experts are FFN wide).
		g.AddKV(a+"expert_count", uint32(s.Experts))
		g.AddKV(a+"moe_every_n_layers", uint32(s.MoEEvery))
		g.AddKV(a+"expert_used_count", uint32(s.ExpertsUsed))
	case s.Experts > 0:
		g.AddKV(a+"expert_count", uint32(s.Experts))
		g.AddKV(a+"expert_used_count", uint32(s.ExpertsUsed))
		g.AddKV(a+"expert_feed_forward_length", uint32(s.ExpertFFN))
	}
	if s.Gemma4 != nil {
		s.addGemma4KV(g)
	}
	if n := s.Gemma3n; n != nil {
		testutil.AddGemma3nKV(g, s.Layers, s.Window, n.AltUp, n.PerLayer, n.SharedKV, testutil.Gemma3nPattern(s.Layers))
		g.AddKV(a+"rope.freq_base_swa", float32(10000))
	}
	if s.SharedFFN > 0 {
		g.AddKV(a+"expert_shared_feed_forward_length", uint32(s.SharedFFN))
	}
	if gr := s.Grove; gr != nil {
		gr.AddKV(g, s.Arch)
	}
	if s.Arch == "lfm2moe" {
		g.AddKV(a+"leading_dense_block_count", uint32(s.DenseLead))
		g.AddKV(a+"expert_gating_func", uint32(2)) // sigmoid
	}
	if s.Arch == "ernie4_5-moe" {
		g.AddKV(a+"leading_dense_block_count", uint32(s.DenseLead))
		g.AddKV(a+"interleave_moe_layer_step", uint32(1)) // moe_layer_interval
	}
	if s.Arch == "llama4" {
		g.AddKV(a+"interleave_moe_layer_step", uint32(s.MoEStep))
	}
	if s.Arch == "smallthinker" || s.Arch == "minimax-m2" {
		// sigmoid: smallthinker's moe_primary_router_apply_softmax false,
		// minimax-m2's scoring_func
		g.AddKV(a+"expert_gating_func", uint32(2))
	}
	if s.Arch == "falcon-h1" {
		testutil.AddSSMSizes(g, s.Arch, *s.SSM)
	}
	if d := s.DeepSeek2; d != nil {
		if s.Arch != "minicpm3" { // which has no experts
			g.AddKV(a+"leading_dense_block_count", uint32(s.DenseLead))
		}
		d.AddTo(g, s.Arch)
	}
	if r := s.Routing; r != nil {
		g.AddKV(a+"leading_dense_block_count", uint32(s.DenseLead))
		r.AddTo(g, s.Arch)
		if l := s.Laguna; l != nil {
			l.AddTo(g, s.Layers, s.Heads, s.Window != 0)
		}
		if s.NextN > 0 {
			g.AddKV(a+"nextn_predict_layers", uint32(s.NextN))
		}
	}
	s.addDenseArchKV(g)
	if s.Mimo2 != nil {
		s.addMimo2KV(g)
	}
	if s.ModernBert != nil {
		s.addModernBertKV(g)
	}
	g.AddKV("general.file_type", m.ft.Ftype)
	if m.ft.Base != quant.F16 {
		g.AddKV("general.quantization_version", uint32(2))
	}
	if s.encoder() {
		vocab.AddWPMTo(g, 2)
	} else {
		vocab.AddTo(g)
	}
	if s.AddEOS {
		g.AddKV("tokenizer.ggml.add_eos_token", true)
	}
}

// convFlags marks the ConvLayers among the Layers.
func (s shape) convFlags() []bool {
	conv := make([]bool, s.Layers)
	for l := range conv {
		conv[l] = s.convLayer(l)
	}
	return conv
}

// recurrentFlags is a qwen35's attention.recurrent_layers, one flag a
// block (NextN blocks attend), or nil when its delta-net layers are those
// full_attention_interval 4 makes, which the converter writes instead.
func (s shape) recurrentFlags() []bool {
	flags := make([]bool, s.Layers+s.NextN)
	interval := true
	for l := range s.Layers {
		flags[l] = s.convLayer(l)
		interval = interval && flags[l] == ((l+1)%4 != 0)
	}
	if interval {
		return nil
	}
	return flags
}

// writeTensor writes the data of t.
func (m *model) writeTensor(w io.Writer, t *tensorPlan) error {
	stream := m.seed ^ testutil.NameHash(t.Name)
	if len(t.Dims) == 1 {
		return writeVector(w, t, m.shape, stream)
	}
	if t.Type == quant.F32 {
		return writeF32Matrix(w, t, stream)
	}
	p, err := newBlockParams(t.Type, 1/math.Sqrt(float64(t.Dims[0])))
	if err != nil {
		return err
	}
	rowBytes, err := t.Type.RowBytes(t.Dims[0])
	if err != nil {
		return err
	}
	rows := int64(1)
	for _, d := range t.Dims[1:] { // 3-D expert tensors: every expert's rows
		rows *= d
	}
	rowsPer := max(1, chunkBytes/rowBytes)
	nChunks := int((rows + rowsPer - 1) / rowsPer)
	// Chunk c holds rows [c·rowsPer, …) and is drawn from the stream
	// (stream, c), so the bytes do not depend on how many goroutines make
	// them.
	fill := func(buf []byte, c int) []byte {
		n := min(rowsPer, rows-int64(c)*rowsPer)
		buf = buf[:n*rowBytes]
		fillBlocks(t.Type, buf, rand.NewPCG(stream, uint64(c)), p)
		return buf
	}
	workers := m.workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, nChunks)
	bufBytes := min(rowsPer, rows) * rowBytes
	if workers <= 1 {
		buf := make([]byte, bufBytes)
		for c := range nChunks {
			if _, err := w.Write(fill(buf, c)); err != nil {
				return err
			}
		}
		return nil
	}
	return parallelChunks(w, nChunks, workers, int(bufBytes), fill)
}

// parallelChunks writes nChunks chunks in order while workers goroutines
// make them: worker k makes chunks k, k+workers, …, each into one of its
// two buffers, so it can work on the next while the last is written.
func parallelChunks(w io.Writer, nChunks, workers, bufBytes int, fill func([]byte, int) []byte) error {
	done := make(chan struct{})
	filled := make([]chan []byte, workers)
	free := make([]chan []byte, workers)
	for k := range workers {
		filled[k] = make(chan []byte, 2)
		free[k] = make(chan []byte, 2)
		free[k] <- make([]byte, bufBytes)
		free[k] <- make([]byte, bufBytes)
		go func() {
			for c := k; c < nChunks; c += workers {
				var buf []byte
				select {
				case buf = <-free[k]:
				case <-done:
					return
				}
				filled[k] <- fill(buf[:cap(buf)], c)
			}
		}()
	}
	defer close(done)
	for c := range nChunks {
		k := c % workers
		buf := <-filled[k]
		if _, err := w.Write(buf); err != nil {
			return err
		}
		free[k] <- buf
	}
	return nil
}

// writeVector writes a 1-D F32 tensor: norm weights near 1 (gemma2's are
// stored with the 1 added, like the converter stores them), biases near 0,
// a negative ssm_a, or the Llama 3 (Gemma 4) rope factors.
func writeVector(w io.Writer, t *tensorPlan, s shape, stream uint64) error {
	var vals []float32
	switch t.Kind {
	case kindRopeFreqs:
		if s.Gemma4 != nil {
			vals = s.gemma4RopeFreqs()
			break
		}
		vals = ropeFactors(s.Llama3Rope, s.RopeBase, s.headDim())
	case kindRopeLong, kindRopeShort:
		scale := float64(s.Context) / float64(s.LongRope.OrigContext)
		vals = longRopeFactors(int(t.Dims[0]), scale, t.Kind == kindRopeLong)
	default:
		r := rand.New(rand.NewPCG(stream, 0))
		mean, std := 1.0, 0.05
		if t.Kind == kindBias {
			mean, std = 0, 0.02
		}
		vals = make([]float32, t.Dims[0])
		for i := range vals {
			vals[i] = float32(mean + std*r.NormFloat64())
			if t.Kind == kindSSMA { // qwen35's 1-D ssm_a: -exp(A_log), as the 2-D one
				vals[i] = float32(-math.Exp(0.5 * r.NormFloat64()))
			}
		}
	}
	if int64(len(vals)) != t.Dims[0] {
		return fmt.Errorf("%d values for %d elements", len(vals), t.Dims[0])
	}
	buf := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	_, err := w.Write(buf)
	return err
}

// writeF32Matrix writes an F32 tensor of two or more dims (an expert
// router; rwkv7's four-dimensional mixes) of N(0, 1/fan-in) values, or
// its kind's.
func writeF32Matrix(w io.Writer, t *tensorPlan, stream uint64) error {
	r := rand.New(rand.NewPCG(stream, 0))
	std := 1 / math.Sqrt(float64(t.Dims[0]))
	value := func() float64 { return std * r.NormFloat64() }
	switch t.Kind {
	case kindF32Norm:
		value = func() float64 { return 1 + 0.05*r.NormFloat64() }
	case kindSSMA:
		value = func() float64 { return -math.Exp(0.5 * r.NormFloat64()) }
	}
	buf := make([]byte, 4*t.Dims[0])
	rows := int64(1)
	for _, d := range t.Dims[1:] {
		rows *= d
	}
	for range rows {
		for i := range t.Dims[0] {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(value())))
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}
