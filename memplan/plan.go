package memplan

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/model"
)

// ErrOutOfBudget: the model cannot run within the memory limit even after
// every degradation allowed, or a session's KV cache cannot be reserved
// within what the plan leaves for it. llm.ErrOutOfMemoryBudget is the same
// value.
var ErrOutOfBudget = errors.New("memplan: out of memory budget")

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

// String returns "auto", "resident" or "streaming".
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

// Component is one part of a memory plan.
type Component struct {
	Name  string // e.g. "weights", "kv cache"
	Bytes int64  // predicted bytes
	Note  string // how the bytes are made up, for people
}

// Names of the plan's KV components.
const (
	// KVComponent is the KV cache of a session at the full context (of
	// every session, with Request.Sessions).
	KVComponent = "kv cache"
	// KVResizeComponent is the old layer a growing KV cache holds while
	// it copies that layer to its new storage.
	KVResizeComponent = "kv resize"
)

// Plan is the memory a model and one session will use, predicted from the
// GGUF metadata alone, and the configuration chosen to fit the limit.
type Plan struct {
	Fits        bool
	Limit       int64       // bytes planned against
	LimitSource string      // where the limit came from
	Context     int         // chosen context size
	KVType      kv.Type     // chosen KV type
	Weights     WeightsMode // chosen weights mode (never WeightsAuto)
	Batch       int         // prompt tokens per forward pass
	Threads     int         // compute threads
	Sessions    int         // sessions planned for at once (Request.Sessions, at least 1)
	// ResidentWeights is the part of the weights kept in memory; with
	// streaming weights the rest is read from disk on every token.
	ResidentWeights int64
	FileBytes       int64 // size of the GGUF file
	// InitialKV is the KV cache a session holds when it starts: 256 cells
	// that grow on demand towards Context (whose full size is the "kv
	// cache" component), or all of it with preallocation.
	InitialKV  int64
	Components []Component
	Total      int64 // predicted peak: the sum of Components
	// Steps lists the degradations applied to the request, in order.
	Steps []string
	// Reason says why the plan does not fit and what would, when !Fits.
	Reason string
}

// String formats the plan as a table for people.
func (p Plan) String() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, c := range p.Components {
		fmt.Fprintf(tw, "%s\t%s\t %s\t\n", c.Name, FormatBytes(c.Bytes), c.Note)
	}
	fmt.Fprintf(tw, "total (predicted peak)\t%s\t\t\n", FormatBytes(p.Total))
	fmt.Fprintf(tw, "limit\t%s\t %s\t\n", FormatBytes(p.Limit), p.LimitSource)
	tw.Flush()
	verdict := "fits"
	if !p.Fits {
		verdict = "DOES NOT FIT: " + p.Reason
	}
	sessions := ""
	if p.Sessions > 1 {
		sessions = fmt.Sprintf(", %d sessions", p.Sessions)
	}
	fmt.Fprintf(&b, "context %d, KV %v, weights %v (%s resident of %s), batch %d, threads %d%s: %s\n",
		p.Context, p.KVType, p.Weights, FormatBytes(p.ResidentWeights), FormatBytes(p.FileBytes), p.Batch, p.Threads, sessions, verdict)
	for _, s := range p.Steps {
		fmt.Fprintf(&b, "  degraded: %s\n", s)
	}
	return b.String()
}

// KVLimit is the memory the plan leaves for the KV caches of all sessions:
// its limit minus every component that is not the KV cache. A session's
// cache grows while the caches together stay within it (see KVBudget).
func (p Plan) KVLimit() int64 {
	other := p.Total
	for _, c := range p.Components {
		if c.Name == KVComponent || c.Name == KVResizeComponent {
			other -= c.Bytes
		}
	}
	return p.Limit - other
}

// Clone returns a copy of p that shares no slices with it.
func (p Plan) Clone() Plan {
	p.Components = append([]Component(nil), p.Components...)
	p.Steps = append([]string(nil), p.Steps...)
	return p
}

// FormatBytes writes n in the largest binary unit below it ("1.50 GiB").
func FormatBytes(n int64) string {
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

// Request is what a plan is asked to fit: the configuration wanted, and
// what may be given up to fit the limit.
type Request struct {
	Context int         // tokens a session holds; 0 = the model's trained context
	KVType  kv.Type     // KV cache element type wanted
	Weights WeightsMode // WeightsAuto lets the plan choose
	Batch   int         // prompt tokens per forward pass
	Threads int         // compute threads (each has attention scratch)
	// Limit is the memory budget in bytes; 0 detects it (mem.DetectLimit).
	Limit int64
	// Strict refuses instead of degrading when the request does not fit.
	Strict bool
	// KVPreallocate: sessions reserve their whole KV cache when created
	// instead of starting small and growing.
	KVPreallocate bool
	// Sessions is how many sessions run at once (a server's parallel
	// slots); each has its own KV cache, activations and session memory,
	// so those components count this many times. 0 means 1.
	Sessions int
}

// Fixed costs measured on this implementation (see docs/ARCHITECTURE.md,
// "Memory plan"): the Go runtime, binary and goroutines; per-token heap of
// the tokenizer; per-merge heap of a BPE tokenizer.
const (
	runtimeBytes    = 24 << 20
	perTokenBytes   = 96
	perMergeBytes   = 88
	minKeepContext  = 2048
	contextStep     = 256
	pageRound       = 4096
	embedRowsPerRun = 4096 // distinct tokens a session is assumed to touch
)

// DiskBuffers is how many layers a model with streaming weights holds in
// memory at once for the layers it reads from disk.
const DiskBuffers = 2

// components lists the memory of a configuration.
func (s *Shape) components(r Request, ctx int, kvt kv.Type, w WeightsMode, resident int64) []Component {
	c := &s.Config
	heap := int64(s.Vocab)*perTokenBytes + s.VocabBytes + int64(s.Merges)*perMergeBytes
	heap += s.HeapBytes // norms, biases and other vectors copied to float32
	// Each worker scores a whole GQA group of query heads at once.
	group := int64(c.Heads / max(c.HeadsKV, 1))
	// Logits, and their copy a penalised sampler works on.
	session := 2*int64(s.Vocab)*4 + int64(ctx)*4 + int64(r.Threads)*int64(ctx)*4*group
	weightsNote := "mapped file pages (page cache)"
	if w == WeightsStreaming {
		weightsNote = fmt.Sprintf("resident part + %d layer buffers; the rest streams from disk", DiskBuffers)
	}
	batch := min(r.Batch, ctx)
	cs := kvGrowthComponents([]Component{
		{"weights", resident, weightsNote},
		{KVComponent, kv.Bytes(c.KVConfig(kvt, ctx)), fmt.Sprintf("%d cells × %d layers, %v", ctx, c.Layers, kvt)},
		{"activations", int64(model.ScratchBytes(c, s.MaxXRow, batch)), fmt.Sprintf("arena for a %d-token batch", batch)},
		{"session", session, "logits (twice), token history, attention scores"},
		{"model heap", heap, "tokenizer, norms"},
		{"runtime", runtimeBytes, "Go runtime, binary, stacks"},
	}, c.KVConfig(kvt, ctx), r.KVPreallocate)
	if n := int64(r.Sessions); n > 1 {
		for i := range cs {
			switch cs[i].Name {
			case KVComponent, KVResizeComponent, "activations", "session":
				cs[i].Note = fmt.Sprintf("%d sessions × %s: %s", n, FormatBytes(cs[i].Bytes), cs[i].Note)
				cs[i].Bytes *= n
			}
		}
	}
	return cs
}

func total(cs []Component) int64 {
	var t int64
	for _, c := range cs {
		t += c.Bytes
	}
	return t
}

// Make chooses a configuration of the model s describes that fits the
// request's limit, degrading in the documented order: F16 KV → INT8 KV → INT4 KV →
// shorter context → streaming weights (WeightsAuto only) → refuse. A plan
// that does not fit is returned with Fits false, its Reason set, and a nil
// error; the error is for a limit that cannot be detected.
func Make(s *Shape, r Request) (Plan, error) {
	ctx := r.Context
	if ctx == 0 {
		ctx = s.Config.Context
	}
	p := Plan{Context: ctx, KVType: r.KVType, Weights: r.Weights, Batch: min(r.Batch, ctx),
		Threads: r.Threads, Sessions: max(r.Sessions, 1), FileBytes: s.FileBytes}
	if r.Limit > 0 {
		p.Limit, p.LimitSource = r.Limit, "WithMemoryLimit"
	} else {
		lim, err := mem.DetectLimit()
		if err != nil {
			return p, fmt.Errorf("memplan: detecting the memory limit: %w (set WithMemoryLimit)", err)
		}
		p.Limit, p.LimitSource = lim.Available, lim.Source
	}
	eval := func(ctx int, kvt kv.Type, w WeightsMode) (int64, []Component, int64) {
		resident := s.ResidentWeights()
		if w == WeightsStreaming {
			// Everything the other components leave over holds weights; the
			// rest streams.
			base := s.components(r, ctx, kvt, w, 0)
			resident = min(resident, max(s.MinStreamingWeights(), p.Limit-total(base)))
		}
		cs := s.components(r, ctx, kvt, w, resident)
		return total(cs), cs, resident
	}
	mode := r.Weights
	if mode == WeightsAuto {
		mode = WeightsResident
	}
	apply := func(ctx int, kvt kv.Type, w WeightsMode) bool {
		t, cs, res := eval(ctx, kvt, w)
		p.Context, p.KVType, p.Weights, p.Batch = ctx, kvt, w, min(r.Batch, ctx)
		p.Total, p.Components, p.ResidentWeights = t, cs, res
		p.InitialKV = kv.Bytes(initialKV(s.Config.KVConfig(kvt, ctx), r.KVPreallocate))
		return t <= p.Limit
	}
	if apply(ctx, r.KVType, mode) {
		p.Fits = true
		return p, nil
	}
	if r.Strict {
		p.Reason = fmt.Sprintf("needs %s, limit %s (WithStrictMemory: no degradation)", FormatBytes(p.Total), FormatBytes(p.Limit))
		return p, nil
	}
	kvt := r.KVType
	if kvt == kv.F16 {
		kvt = kv.Int8
		p.Steps = append(p.Steps, "KV cache F16 → INT8")
		if apply(ctx, kvt, mode) {
			p.Fits = true
			return p, nil
		}
	}
	if kvt == kv.Int8 && kv.Int4.HeadDims(s.Config.HeadDimK, s.Config.HeadDimV) {
		kvt = kv.Int4
		p.Steps = append(p.Steps, "KV cache INT8 → INT4")
		if apply(ctx, kvt, mode) {
			p.Fits = true
			return p, nil
		}
	}
	// Shorter context, down to minKeepContext (or the request if smaller).
	floor := min(ctx, minKeepContext)
	// shorten fits the largest context from hi down to the floor.
	shorten := func(hi int, mode WeightsMode) bool {
		c, ok := largestFit(hi, max(floor, 1), contextStep, func(c int) bool { return apply(c, kvt, mode) })
		if !ok {
			return false
		}
		apply(c, kvt, mode)
		if c != ctx {
			p.Steps = append(p.Steps, fmt.Sprintf("context %d → %d", ctx, c))
		}
		p.Fits = true
		return true
	}
	if mode == WeightsResident {
		if shorten((ctx-1)/contextStep*contextStep, mode) {
			return p, nil
		}
		if r.Weights == WeightsAuto {
			p.Steps = append(p.Steps, "weights resident → streaming")
			mode = WeightsStreaming
			// Streaming frees weight memory: try the full context again first.
			if shorten(ctx, mode) {
				return p, nil
			}
		}
	} else if shorten(ctx, mode) {
		return p, nil
	}
	apply(floor, kvt, mode)
	p.Reason = fmt.Sprintf("the smallest configuration tried (context %d, KV %v, weights %v) needs %s, the limit is %s",
		floor, kvt, mode, FormatBytes(p.Total), FormatBytes(p.Limit))
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
