package llm

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/model"
)

// ErrOutOfMemoryBudget is returned by Load (and reported by Plan) when the
// model cannot run within the memory limit even after every degradation
// allowed. The message says what would fit.
var ErrOutOfMemoryBudget = errors.New("llm: out of memory budget")

// WeightsMode is how the model's weights are kept in memory.
type WeightsMode int

const (
	// WeightsAuto lets the memory plan choose: resident when the whole
	// model fits, streaming otherwise.
	WeightsAuto WeightsMode = iota
	// WeightsResident maps the file and keeps every weight page in memory
	// once read: the fastest mode.
	WeightsResident
	// WeightsStreaming keeps part of the weights resident and reads the
	// rest from disk on every token, so models larger than RAM still run.
	WeightsStreaming
)

func (w WeightsMode) String() string {
	switch w {
	case WeightsAuto:
		return "auto"
	case WeightsResident:
		return "resident"
	case WeightsStreaming:
		return "streaming"
	}
	return fmt.Sprintf("WeightsMode(%d)", int(w))
}

// WithWeights chooses how weights are kept in memory (default WeightsAuto).
func WithWeights(w WeightsMode) Option {
	return modelOption(func(s *settings) {
		if w < WeightsAuto || w > WeightsStreaming {
			s.fail("weights mode %d not supported", int(w))
			return
		}
		s.weights = w
	})
}

// WithStrictMemory makes Load refuse with ErrOutOfMemoryBudget instead of
// degrading (INT8 KV, INT4 KV, shorter context, streaming) when the request does not
// fit the memory limit.
func WithStrictMemory() Option {
	return modelOption(func(s *settings) { s.strict = true })
}

// Component is one part of a memory plan.
type Component struct {
	Name  string
	Bytes int64
	Note  string
}

// MemoryPlan is the memory a model and one session will use, predicted from
// the GGUF metadata alone, and the configuration chosen to fit the limit.
type MemoryPlan struct {
	Fits        bool
	Limit       int64  // bytes planned against
	LimitSource string // where the limit came from
	Context     int    // chosen context size
	KVType      KVType // chosen KV type
	Weights     WeightsMode
	Batch       int
	Threads     int
	// ResidentWeights is the part of the weights kept in memory; with
	// streaming weights the rest is read from disk on every token.
	ResidentWeights int64
	FileBytes       int64
	// InitialKV is the KV cache a session holds when it starts: 256 cells
	// that grow on demand towards Context (whose full size is the "kv
	// cache" component), or all of it with WithKVPreallocate.
	InitialKV  int64
	Components []Component
	Total      int64 // predicted peak: the sum of Components
	// Steps lists the degradations applied to the request, in order.
	Steps []string
	// Reason says why the plan does not fit and what would, when !Fits.
	Reason string
}

// String formats the plan as a table for people.
func (p MemoryPlan) String() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, c := range p.Components {
		fmt.Fprintf(tw, "%s\t%s\t %s\t\n", c.Name, fmtBytes(c.Bytes), c.Note)
	}
	fmt.Fprintf(tw, "total (predicted peak)\t%s\t\t\n", fmtBytes(p.Total))
	fmt.Fprintf(tw, "limit\t%s\t %s\t\n", fmtBytes(p.Limit), p.LimitSource)
	tw.Flush()
	verdict := "fits"
	if !p.Fits {
		verdict = "DOES NOT FIT: " + p.Reason
	}
	fmt.Fprintf(&b, "context %d, KV %v, weights %v (%s resident of %s), batch %d, threads %d: %s\n",
		p.Context, p.KVType, p.Weights, fmtBytes(p.ResidentWeights), fmtBytes(p.FileBytes), p.Batch, p.Threads, verdict)
	for _, s := range p.Steps {
		fmt.Fprintf(&b, "  degraded: %s\n", s)
	}
	return b.String()
}

func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Plan predicts the memory a model and one session will use with these
// options, and the configuration Load would choose, without loading the
// weights (only the file's header is read). A plan that does not fit is
// returned with Fits false and a nil error; Load would return
// ErrOutOfMemoryBudget for it.
func Plan(path string, opts ...Option) (MemoryPlan, error) {
	set, err := buildSettings(opts)
	if err != nil {
		return MemoryPlan{}, err
	}
	shape, err := readShape(path)
	if err != nil {
		return MemoryPlan{}, fmt.Errorf("llm: plan %s: %w", path, err)
	}
	return planFor(shape, set)
}

// shape is what planning needs from a GGUF file.
type shape struct {
	cfg        model.Config
	vocab      int
	fileBytes  int64
	headerEnd  int64   // start of tensor data
	layerBytes []int64 // tensor bytes of each block
	embedBytes int64   // token_embd
	embedRow   int64   // bytes of one token_embd row
	outBytes   int64   // output.weight (0 when tied)
	otherBytes int64   // every other tensor (norms, rope_freqs)
	maxXRow    int     // widest quantized activation row
	vocabBytes int64   // bytes of token strings
	merges     int
	kvPrealloc bool // the sessions reserve their whole KV cache up front
}

func readShape(path string) (*shape, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	g, err := gguf.Read(f, st.Size())
	if err != nil {
		return nil, err
	}
	return shapeOf(g, st.Size())
}

func shapeOf(g *gguf.File, size int64) (*shape, error) {
	// Check, not just the configuration: every size below is trusted only
	// once the tensors agree with the metadata.
	cfg, err := model.Check(g)
	if err != nil {
		return nil, err
	}
	s := &shape{cfg: cfg, fileBytes: size, headerEnd: g.DataOffset, layerBytes: make([]int64, cfg.Layers)}
	for _, t := range g.Tensors {
		if len(t.Dims) == 2 {
			if rb, err := t.Type.VecDotType().RowBytes(t.Dims[0]); err == nil {
				s.maxXRow = max(s.maxXRow, int(rb))
			}
		}
		var il int
		switch {
		case t.Name == "token_embd.weight":
			s.embedBytes = t.Size
			if len(t.Dims) == 2 && t.Dims[1] > 0 {
				s.vocab = int(t.Dims[1])
				s.embedRow = t.Size / t.Dims[1]
			}
		case t.Name == "output.weight":
			s.outBytes = t.Size
		case strings.HasPrefix(t.Name, "blk.") && scanLayer(t.Name, &il) && il < cfg.Layers:
			s.layerBytes[il] += t.Size
		default:
			s.otherBytes += t.Size
		}
	}
	if s.vocab == 0 {
		return nil, fmt.Errorf("model: token_embd.weight missing: %w", ErrBadModel)
	}
	toks, _ := g.Strings("tokenizer.ggml.tokens")
	for _, t := range toks {
		s.vocabBytes += int64(len(t))
	}
	merges, _ := g.Strings("tokenizer.ggml.merges")
	s.merges = len(merges)
	return s, nil
}

// scanLayer parses the block number of a tensor named "blk.<i>.*".
func scanLayer(name string, il *int) bool {
	_, err := fmt.Sscanf(name, "blk.%d.", il)
	return err == nil && *il >= 0 // "blk.-1.x" parses, but is no block
}

// Fixed costs measured on this implementation (see docs/ARCHITECTURE.md,
// "Memory plan"): the Go runtime, binary and goroutines; per-token heap of
// the tokenizer; per-merge heap of a BPE tokenizer.
const (
	runtimeBytes    = 24 << 20
	perTokenBytes   = 96
	perMergeBytes   = 88
	streamBuffers   = 2 // layers held in memory at once while streaming
	minKeepContext  = 2048
	contextStep     = 256
	pageRound       = 4096
	embedRowsPerRun = 4096 // distinct tokens a session is assumed to touch
)

// kvBytes mirrors kv.New's allocation exactly.
func kvBytes(c *model.Config, t KVType, cells int) int64 {
	row := 2 * int64(c.HeadDimK+c.HeadDimV)
	switch t {
	case KVInt8:
		row = int64(c.HeadDimK+c.HeadDimV) + 8
	case KVInt4:
		// q4_0 blocks: 18 bytes per 32 elements (a 2-byte scale and 16 of codes).
		row = int64(c.HeadDimK/32+c.HeadDimV/32) * 18
	}
	var total int64
	for il := 0; il < c.Layers; il++ {
		n := int64(cells)
		if c.WindowedLayer(il) {
			n = min(n, int64(c.Window))
		}
		total += int64(c.HeadsKV) * n * row
	}
	return total
}

// components lists the memory of a configuration.
func (s *shape) components(ctx int, kvt KVType, w WeightsMode, batch, threads int, resident int64) []Component {
	c := &s.cfg
	heap := int64(s.vocab)*perTokenBytes + s.vocabBytes + int64(s.merges)*perMergeBytes
	heap += int64(c.Layers) * int64(c.Embd) * 4 * 4 // norm weights copied to float32
	// Each worker scores a whole GQA group of query heads at once.
	group := int64(c.Heads / max(c.HeadsKV, 1))
	session := int64(s.vocab)*4 + int64(ctx)*4 + int64(threads)*int64(ctx)*4*group
	weightsNote := "mapped file pages (page cache)"
	if w == WeightsStreaming {
		weightsNote = fmt.Sprintf("resident part + %d layer buffers; the rest streams from disk", streamBuffers)
	}
	return kvGrowthComponents([]Component{
		{"weights", resident, weightsNote},
		{kvComponent, kvBytes(c, kvt, ctx), fmt.Sprintf("%d cells × %d layers, %v", ctx, c.Layers, kvt)},
		{"activations", int64(model.ScratchBytes(c, s.maxXRow, batch)), fmt.Sprintf("arena for a %d-token batch", batch)},
		{"session", session, "logits, token history, attention scores"},
		{"model heap", heap, "tokenizer, norms"},
		{"runtime", runtimeBytes, "Go runtime, binary, stacks"},
	}, c, kvt, ctx, s.kvPrealloc)
}

// residentWeights is the page cache a resident model fills: the whole file
// except the embedding rows no token touches (when the embedding is not
// also the output matrix).
func (s *shape) residentWeights() int64 {
	if s.outBytes == 0 {
		return s.fileBytes
	}
	touched := min(s.embedBytes, int64(embedRowsPerRun)*roundTo(s.embedRow, pageRound))
	return s.fileBytes - s.embedBytes + touched
}

func roundTo(n, a int64) int64 { return (n + a - 1) / a * a }

// minStreamingWeights is the least weight memory streaming can run in: the
// header, output and embedding working set, and the layer buffers.
func (s *shape) minStreamingWeights() int64 {
	var maxLayer int64
	for _, b := range s.layerBytes {
		maxLayer = max(maxLayer, b)
	}
	return s.residentWeights() - sum(s.layerBytes) + streamBuffers*maxLayer
}

func sum(xs []int64) int64 {
	var t int64
	for _, x := range xs {
		t += x
	}
	return t
}

func total(cs []Component) int64 {
	var t int64
	for _, c := range cs {
		t += c.Bytes
	}
	return t
}

// planFor chooses a configuration that fits the limit, degrading in the
// documented order: F16 KV → INT8 KV → INT4 KV (when the head sizes allow
// it) → shorter context → streaming weights → refuse.
func planFor(s *shape, set settings) (MemoryPlan, error) {
	ctx := set.context
	if ctx == 0 {
		ctx = s.cfg.Context
	}
	s.kvPrealloc = set.kvPrealloc
	p := MemoryPlan{Context: ctx, KVType: set.kvType, Weights: set.weights, Batch: min(set.batch, ctx),
		Threads: set.threads, FileBytes: s.fileBytes}
	if set.memory > 0 {
		p.Limit, p.LimitSource = set.memory, "WithMemoryLimit"
	} else {
		lim, err := mem.DetectLimit()
		if err != nil {
			return p, fmt.Errorf("llm: detecting the memory limit: %w (set WithMemoryLimit)", err)
		}
		p.Limit, p.LimitSource = lim.Available, lim.Source
	}
	eval := func(ctx int, kvt KVType, w WeightsMode) (int64, []Component, int64) {
		var resident int64
		if w == WeightsStreaming {
			// Everything the other components leave over holds weights; the
			// rest streams.
			base := s.components(ctx, kvt, w, min(set.batch, ctx), set.threads, 0)
			resident = min(s.residentWeights(), max(s.minStreamingWeights(), p.Limit-total(base)))
		} else {
			resident = s.residentWeights()
		}
		cs := s.components(ctx, kvt, w, min(set.batch, ctx), set.threads, resident)
		return total(cs), cs, resident
	}
	mode := set.weights
	if mode == WeightsAuto {
		mode = WeightsResident
	}
	apply := func(ctx int, kvt KVType, w WeightsMode) bool {
		t, cs, res := eval(ctx, kvt, w)
		p.Context, p.KVType, p.Weights, p.Batch = ctx, kvt, w, min(set.batch, ctx)
		p.Total, p.Components, p.ResidentWeights = t, cs, res
		p.InitialKV = kvPlanInitial(&s.cfg, kvt, ctx, set.kvPrealloc)
		return t <= p.Limit
	}
	if apply(ctx, set.kvType, mode) {
		p.Fits = true
		return p, nil
	}
	if set.strict {
		p.Reason = fmt.Sprintf("needs %s, limit %s (WithStrictMemory: no degradation)", fmtBytes(p.Total), fmtBytes(p.Limit))
		return p, nil
	}
	kvt := set.kvType
	if kvt == KVF16 {
		kvt = KVInt8
		p.Steps = append(p.Steps, "KV cache F16 → INT8")
		if apply(ctx, kvt, mode) {
			p.Fits = true
			return p, nil
		}
	}
	if kvt == KVInt8 && kv.Int4.HeadDims(s.cfg.HeadDimK, s.cfg.HeadDimV) {
		kvt = KVInt4
		p.Steps = append(p.Steps, "KV cache INT8 → INT4")
		if apply(ctx, kvt, mode) {
			p.Fits = true
			return p, nil
		}
	}
	// Shorter context, down to minKeepContext (or the request if smaller).
	floor := min(ctx, minKeepContext)
	fitsAt := func(mode WeightsMode) func(int) bool {
		return func(c int) bool { return apply(c, kvt, mode) }
	}
	if mode == WeightsResident {
		if c, ok := largestFit((ctx-1)/contextStep*contextStep, max(floor, 1), contextStep, fitsAt(mode)); ok {
			apply(c, kvt, mode)
			p.Steps = append(p.Steps, fmt.Sprintf("context %d → %d", ctx, c))
			p.Fits = true
			return p, nil
		}
		if set.weights == WeightsAuto {
			p.Steps = append(p.Steps, "weights resident → streaming")
			mode = WeightsStreaming
			// Streaming frees weight memory: try the full context again first.
			if c, ok := largestFit(ctx, floor, contextStep, fitsAt(mode)); ok {
				apply(c, kvt, mode)
				if c != ctx {
					p.Steps = append(p.Steps, fmt.Sprintf("context %d → %d", ctx, c))
				}
				p.Fits = true
				return p, nil
			}
		}
	} else if c, ok := largestFit(ctx, floor, contextStep, fitsAt(mode)); ok {
		apply(c, kvt, mode)
		if c != ctx {
			p.Steps = append(p.Steps, fmt.Sprintf("context %d → %d", ctx, c))
		}
		p.Fits = true
		return p, nil
	}
	apply(floor, kvt, mode)
	p.Reason = fmt.Sprintf("the smallest configuration tried (context %d, KV %v, weights %v) needs %s, the limit is %s",
		floor, kvt, mode, fmtBytes(p.Total), fmtBytes(p.Limit))
	return p, nil
}

// largestFit returns the largest of hi, hi-step, hi-2·step, … not below lo
// for which fits is true, and false when there is none. fits must be
// monotone (true at c means true below c), as the memory of a plan is in
// its context; a binary search then costs a few dozen evaluations even for
// a context of millions of tokens, where walking down one step at a time
// would take tens of thousands.
func largestFit(hi, lo, step int, fits func(int) bool) (int, bool) {
	if hi < lo {
		return 0, false
	}
	n := (hi - lo) / step
	k := sort.Search(n+1, func(k int) bool { return fits(hi - k*step) })
	if k > n {
		return 0, false
	}
	return hi - k*step, true
}
