package memplan

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/lowmem/llm/expertcache"
	"github.com/lowmem/llm/internal/enum"
	"github.com/lowmem/llm/internal/jsonprefix"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/sampler"
)

// ErrOutOfBudget: the model cannot run within the memory limit even after
// every degradation allowed, or a session's KV cache cannot be reserved
// within what the plan leaves for it. llm.ErrOutOfMemoryBudget is the same
// value.
var ErrOutOfBudget = errors.New("memplan: out of memory budget")

// ErrInvalid: a name ParseWeightsMode does not know.
var ErrInvalid = errors.New("memplan: invalid argument")

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
func (w WeightsMode) String() string { return enum.Name(w, weightsModeNames[:], "WeightsMode") }

var weightsModeNames = [...]string{WeightsAuto: "auto", WeightsResident: "resident", WeightsStreaming: "streaming"}

// ParseWeightsMode is the WeightsMode String names s ("auto", "resident"
// or "streaming"), for flags and configuration files; another name is an
// error wrapping ErrInvalid.
func ParseWeightsMode(s string) (WeightsMode, error) {
	return enum.Parse[WeightsMode](s, weightsModeNames[:], "weights mode", ErrInvalid)
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
	Context     int         // chosen context size (at most the trained context of learned positions: bert)
	KVType      kv.Type     // chosen KV type
	Weights     WeightsMode // chosen weights mode (never WeightsAuto)
	Batch       int         // prompt tokens per forward pass (a non-causal encoder's whole context)
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
	// Residency is how the blocks and the KV caches share memory while the
	// model runs: with streaming weights, which blocks are read from disk
	// at each context length (Residency.Schedule). It is filled for
	// resident plans too, for the blocks memory pressure may move to disk.
	Residency Residency
	// Repacked is the bytes of the weight matrices held in the X8 layout
	// (Request.Repack): repacked at load into anonymous memory (the
	// "repacked weights" component), their mapped pages released. 0 when
	// the plan keeps every weight in the file's layout.
	Repacked int64
	// RepackExperts: the expert cache of a streamed mixture-of-experts
	// model holds its experts in the X8 layout, repacked as they are read
	// (Request.Repack, on a CPU with X8 kernels for them, when its budget
	// holds every expert so: Shape.RepackedExperts).
	RepackExperts bool
	// KVNoRecent: sessions' INT4 caches keep no F16 copies of their newest
	// positions (Request.KVNoRecent, or Make's choice: see Steps).
	KVNoRecent bool
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

// Schedule lists the steps at which one session's KV cache grows as it
// fills the context from empty, up to tokens (0: the whole context), with
// the blocks read from disk at each (Residency.Schedule) and the predicted
// total memory.
func (p Plan) Schedule(tokens int) []Point {
	return p.Residency.Schedule(p.Limit-p.Residency.Pool, tokens)
}

// PeakAt is the predicted peak memory of the model and one session that
// held up to tokens tokens: what a measured peak compares with.
func (p Plan) PeakAt(tokens int) int64 {
	return p.Residency.PeakAt(p.Limit-p.Residency.Pool, tokens)
}

// Clone returns a copy of p that shares no slices with it.
func (p Plan) Clone() Plan {
	p.Components = append([]Component(nil), p.Components...)
	p.Steps = append([]string(nil), p.Steps...)
	p.Residency = p.Residency.Clone()
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
	// KVNoRecent: an INT4 cache keeps no F16 copies of its newest
	// positions (kv.Config.Recent 0). Make sets it itself when those
	// copies would move a block of streamed weights to disk.
	KVNoRecent bool
	// Sessions is how many sessions run at once (a server's parallel
	// slots); each has its own KV cache, activations and session memory,
	// so those components count this many times. 0 means 1.
	Sessions int
	// Repack lets a plan whose weights stay resident for the model's whole
	// life (WeightsResident, chosen or asked for) hold the matrices of the
	// types with an X8 layout (quant.X8) in it (see Plan.Repacked): one copy, in anonymous memory
	// instead of the page cache. Its blocks then never move to disk. A
	// mixture-of-experts model whose experts are read from disk holds
	// them in that layout in its expert cache (Plan.RepackExperts).
	Repack bool
	// AdapterBytes is the memory of the LoRA adapters applied (their
	// factors in the types they are held in: model.AdapterHeader.Bytes),
	// AdapterRank their widest rank, whose products each session keeps
	// for a batch, and AdapterXRowBytes and AdapterURowBytes the widest
	// rows of a token's activations and of those products converted for
	// the factors (model.AdapterHeader's XRowBytes and URowBytes), which
	// each session keeps too.
	AdapterBytes                       int64
	AdapterRank                        int
	AdapterXRowBytes, AdapterURowBytes int
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

// DiskBuffers is how many blocks a model whose weights partly stay on
// disk holds in memory at once for the blocks it reads: one in use, one
// being read.
const DiskBuffers = 2

// Names of the plan's weight components.
const (
	// WeightsComponent is the weights kept in memory: the mapped file
	// pages, all of them or (streaming) the fixed part and the blocks
	// resident at the full context.
	WeightsComponent = "weights"
	// BuffersComponent is the read buffers of blocks read from disk.
	BuffersComponent = "read buffers"
	// ExpertsComponent is the expert cache of a mixture-of-experts model
	// whose experts are read from disk.
	ExpertsComponent = "expert cache"
	// RepackedComponent is the weights held in the X8 layout, anonymous
	// memory (Plan.Repacked); the "weights" component lacks their pages.
	RepackedComponent = "repacked weights"
	// LoRAComponent is the LoRA adapters' factors (Request.AdapterBytes).
	LoRAComponent = "lora adapters"
)

// others lists the memory of a configuration that is neither weights nor
// KV cache: it does not change while the model runs.
func (s *Shape) others(r Request, ctx int) []Component {
	c := &s.Config
	heap := int64(s.Vocab)*perTokenBytes + s.VocabBytes + int64(s.Merges)*perMergeBytes
	heap += s.HeapBytes // norms, biases and other vectors copied to float32
	// Logits, and their copy a penalised or constrained sampler works on;
	// the sampler's buffers and a JSON filter's tables.
	session := 2*int64(s.Vocab)*4 + sampler.Bytes(s.Vocab) + jsonprefix.FilterBytes(s.Vocab)
	note := "logits (twice), sampler, JSON filter, token history, attention scores, packed prefill panels"
	if c.EmbeddingOnly() {
		// No generation: no sampler, no JSON filter, no copy of the
		// logits a sequence keeps (unused).
		session = int64(s.Vocab) * 4
		note = "logits slice, token history, attention scores, packed prefill panels"
	}
	session += int64(ctx)*4 + int64(r.Threads)*4*int64(model.AttnScratchFloats(c, ctx))
	// Prefill's packed activation panels (ops, quant.GemmScratchBytes).
	session += int64(quant.GemmScratchBytes(s.MaxXRow))
	if cb := model.ConvStateBytes(c); cb > 0 {
		// lfm2's conv layers, granitehybrid's Mamba-2 layers: their state
		// and its rewind checkpoints.
		session += cb
		note += ", conv state and checkpoints"
	}
	batch := s.batch(r, ctx)
	var lora []Component
	if r.AdapterBytes > 0 {
		lora = []Component{{LoRAComponent, r.AdapterBytes, "LoRA adapters' lora_a and lora_b, in their files' types"}}
		session += model.AdapterScratchBytes(batch, r.AdapterRank, r.AdapterXRowBytes, r.AdapterURowBytes)
		note += ", the adapters' rank-wide products and converted activations"
	}
	return perSession(append([]Component{
		{"activations", int64(model.ScratchBytes(c, s.MaxXRow, batch)), fmt.Sprintf("arena for a %d-token batch", batch)},
		{"session", session, note},
		{"model heap", heap, "tokenizer, norms"},
		{"runtime", runtimeBytes, "Go runtime, binary, stacks"},
		{"page tables", s.pageTableBytes(), "the kernel's map of the file and the heap, charged to the cgroup"},
	}, lora...), r.Sessions)
}

// batch is the tokens of one forward pass a session of the request takes
// at context ctx: the request's batch, or the whole context for a model
// whose attention is not causal (model.Config.NonCausal), which evaluates
// a text in one pass (internal/engine gives its sessions that batch).
func (s *Shape) batch(r Request, ctx int) int {
	if s.Config.NonCausal {
		return ctx
	}
	return min(r.Batch, ctx)
}

// pageTableBytes is what the kernel's page tables take for the memory
// the process touches: 8 bytes a 4 KiB page of the file (mapped, read
// into buffers or repacked) and of 1 GiB of anonymous memory beside it
// (KV caches, arena, heap). A cgroup charges them with the rest; without
// them a plan filled to its limit met it at run time (Gemma-2-9B's
// 6000-token prompt under 6 GiB). It is an estimate, not a bound: KV
// caches past 1 GiB, or IQ3_S's repacked layout (a quarter more than the
// file), take 2 MiB of page tables a GiB beyond it.
func (s *Shape) pageTableBytes() int64 {
	const anon = 1 << 30
	return roundTo((s.FileBytes+anon)/512, pageRound)
}

// perSession counts the components every session has of its own (KV
// cache, KV resize, activations, session) n times, for a plan of n
// sessions at once (Request.Sessions).
func perSession(cs []Component, n int) []Component {
	if n <= 1 {
		return cs
	}
	for i := range cs {
		switch cs[i].Name {
		case KVComponent, KVResizeComponent, "activations", "session":
			cs[i].Note = fmt.Sprintf("%d sessions × %s: %s", n, FormatBytes(cs[i].Bytes), cs[i].Note)
			cs[i].Bytes *= int64(n)
		}
	}
	return cs
}

// residency is how the blocks and KV caches of a configuration share the
// limit (see Residency).
func (s *Shape) residency(r Request, limit int64, ctx int, kvt kv.Type) Residency {
	n := len(s.BlockRanges)
	res := Residency{Pool: limit - total(s.others(r, ctx)) - s.FixedWeights(), Buffers: s.ReadBuffers(),
		Blocks: make([]int64, n), Order: DiskOrder(n), KV: s.kvConfig(r, kvt, ctx), Batch: s.batch(r, ctx)}
	for il := range n {
		res.Blocks[il] = s.BlockMemory(il)
	}
	return res
}

// components lists the memory of a configuration: with streaming weights,
// the blocks that must be read from disk at the full context are (the
// residency's OnDisk), and the rest stay resident. It returns the
// residency and whether the configuration fits its pool.
func (s *Shape) components(r Request, limit int64, ctx int, kvt kv.Type, w WeightsMode) ([]Component, Residency, bool) {
	kvc := s.kvConfig(r, kvt, ctx)
	res := s.residency(r, limit, ctx, kvt)
	cs := perSession(kvGrowthComponents([]Component{
		{WeightsComponent, s.ResidentWeights(), "mapped file pages (page cache)"},
		{KVComponent, kv.Bytes(kvc), fmt.Sprintf("%d cells × %d layers, %v", ctx, kvc.Layers, kvt)},
	}, kvc, r.KVPreallocate), r.Sessions)
	cs = append(cs, s.others(r, ctx)...)
	if w != WeightsStreaming {
		return cs, res, true
	}
	var kvFull int64
	for _, c := range cs {
		if c.Name == KVComponent || c.Name == KVResizeComponent {
			kvFull += c.Bytes
		}
	}
	if s.Experts() > 0 {
		return s.expertComponents(cs, res, kvFull, r.Repack)
	}
	n, ok := res.OnDisk(kvFull)
	var buffers int64
	if n > 0 {
		buffers = res.Buffers
	}
	cs[0].Bytes = s.FixedWeights() + res.Weights(n) - buffers
	cs[0].Note = fmt.Sprintf("mapped: embedding, output and %d of %d blocks at the full context; the rest read from disk", len(res.Order)-n, len(res.Order))
	if n == 0 {
		cs[0].Note = fmt.Sprintf("mapped: all %d blocks stay resident even at the full context", len(res.Order))
	}
	cs = slices.Insert(cs, 1, Component{BuffersComponent, buffers,
		fmt.Sprintf("%d blocks being read from disk (direct I/O), while any is", DiskBuffers)})
	return cs, res, ok
}

// expertComponents is the streaming plan of a mixture-of-experts model:
// every block's attention, router and norms stay resident, and the
// experts are read from disk into an expert cache (package expertcache)
// that takes what the pool leaves beside them and the KV caches at the
// full context. No block moves: the cache's budget is the experts' share.
func (s *Shape) expertComponents(cs []Component, res Residency, kvFull int64, repack bool) ([]Component, Residency, bool) {
	var dense int64
	for il, b := range res.Blocks {
		dense += max(b-s.ExpertBytes[il], 0)
	}
	budget := res.Pool - dense - kvFull
	ok := budget >= s.ExpertFloor
	budget = max(budget, s.ExpertFloor)
	cs[0].Bytes = s.FixedWeights() + dense
	cs[0].Note = fmt.Sprintf("mapped: everything but the experts of %d blocks", len(res.Blocks))
	// The cache takes no more than holds what it can (every expert, when
	// the pool is large): its sizing's footprint, not the budget, is what
	// it will use.
	held, layout, all := budget, "", false
	if sz, err := expertcache.Size(s.expertLayout, budget, expertcache.WithRepack(repack)); err == nil {
		held, all = sz.Bytes(), sz.Slots == sz.Experts
		if sz.Repacked {
			layout = ", repacked as read"
		}
	}
	what := fmt.Sprintf("the experts used most (%s of %s%s); the others read from disk (direct I/O)", FormatBytes(held), FormatBytes(s.Experts()), layout)
	if all {
		what = fmt.Sprintf("every expert (%s%s), read from disk as first used (direct I/O)", FormatBytes(s.Experts()), layout)
	}
	cs = slices.Insert(cs, 1, Component{ExpertsComponent, held, what})
	// The caches may take what is left beside the resident part and the
	// expert cache; no block leaves memory.
	res.Pool -= dense + held
	res.Blocks, res.Order = nil, nil
	res.Experts = budget
	if all {
		res.Experts = held // the same cache (expertcache.Size holds every expert in its footprint)
	}
	return cs, res, ok
}

func total(cs []Component) int64 {
	var t int64
	for _, c := range cs {
		t += c.Bytes
	}
	return t
}

// Make chooses a configuration of the model s describes that fits the
// request's limit, degrading in the documented order: F16 KV → INT8 KV →
// INT4 KV → streaming weights (WeightsAuto only: blocks leave memory as
// the KV cache grows; INT4 caches then go without F16 copies of recent
// positions if those would put a block more on disk at the start) →
// shorter context → refuse. A plan that does not fit
// is returned with Fits false, its Reason set, and a nil error; the error
// is for a limit that cannot be detected.
func Make(s *Shape, r Request) (Plan, error) {
	p, err := choose(s, r)
	if q, ok := p.withoutRecent(s, r); ok {
		p = q
	}
	if err == nil && r.Repack && p.Fits && p.Weights == WeightsResident && len(s.Repack) > 0 {
		if q := p.repack(s); q.Total <= q.Limit {
			p = q
		}
	}
	return p, err
}

// withoutRecent is the plan for r with INT4 caches that keep no F16 copies
// of their newest positions, when p streams weights and those copies
// would cost a block at the start: a block read from disk on every token
// costs more than the copies' accuracy is worth (on the 8B under 3.5 GB
// the 16.5 MB of copies moved a 12th block to disk, and decoding slowed by
// 8–15 %).
func (p Plan) withoutRecent(s *Shape, r Request) (Plan, bool) {
	if !p.Fits || p.KVType != kv.Int4 || p.Weights != WeightsStreaming || r.KVNoRecent || s.Experts() > 0 ||
		s.kvConfig(r, kv.Int4, p.Context).Recent == 0 {
		return p, false
	}
	r.KVNoRecent = true
	q, err := choose(s, r)
	if err != nil || !q.Fits || q.Context != p.Context || q.KVType != kv.Int4 || q.Weights != WeightsStreaming {
		return p, false
	}
	with, _ := p.Residency.OnDisk(p.InitialKV)
	without, _ := q.Residency.OnDisk(q.InitialKV)
	if without >= with {
		return p, false
	}
	q.Steps = append(q.Steps, fmt.Sprintf("INT4 KV without F16 copies of the newest positions (they would move a block to disk: %d blocks read from disk at the start, not %d)", without, with))
	return q, true
}

// kvConfig is the KV cache configuration of a session the request plans
// for: the one the session's State will allocate.
func (s *Shape) kvConfig(r Request, kvt kv.Type, ctx int) kv.Config {
	return s.Config.StateKVConfig(model.StateOptions{Batch: s.batch(r, ctx), Cache: kvt, Cells: ctx, NoRecent: r.KVNoRecent})
}

// repack is the plan p with the matrices s.Repack holds in the X8 layout:
// each repacked into an anonymous buffer of its own (whole pages,
// mem.AllocAligned) and the whole pages of its range released from the
// mapping (mem.Mapping.Release keeps pages it shares with neighbours).
func (p Plan) repack(s *Shape) Plan {
	p = p.Clone()
	var bytes, anon, released int64
	for _, r := range s.Repack {
		bytes += r.Len
		anon += roundTo(r.X8, mem.DirectAlign)
		start, end := roundTo(r.Off, pageRound), (r.Off+r.Len)&^(pageRound-1)
		if r.Off+r.Len == s.FileBytes {
			end = roundTo(s.FileBytes, pageRound)
		}
		released += max(end-start, 0)
	}
	p.Components[0].Bytes -= released
	p.Components[0].Note += fmt.Sprintf("; %s of it repacked", FormatBytes(bytes))
	p.Components = slices.Insert(p.Components, 1, Component{RepackedComponent, anon,
		fmt.Sprintf("%d matrices, 8 rows interleaved (anonymous memory; their mapped pages released)", len(s.Repack))})
	p.Total += anon - released
	p.ResidentWeights += anon - released
	// Keep Schedule and PeakAt in step with Total.
	p.Residency.Pool -= anon - released
	p.Repacked = bytes
	return p
}

// choose is Make without repacking.
func choose(s *Shape, r Request) (Plan, error) {
	ctx := r.Context
	if ctx == 0 {
		ctx = s.Config.Context
	}
	if lim := s.Config.PositionLimit(); lim > 0 {
		ctx = min(ctx, lim)
	}
	p := Plan{Context: ctx, KVType: r.KVType, Weights: r.Weights, Batch: s.batch(r, ctx),
		Threads: r.Threads, Sessions: max(r.Sessions, 1), FileBytes: s.FileBytes, KVNoRecent: r.KVNoRecent}
	if r.Limit > 0 {
		p.Limit, p.LimitSource = r.Limit, "WithMemoryLimit"
	} else {
		lim, err := mem.DetectLimit()
		if err != nil {
			return p, fmt.Errorf("memplan: detecting the memory limit: %w (set WithMemoryLimit)", err)
		}
		p.Limit, p.LimitSource = lim.Available, lim.Source
	}
	mode := r.Weights
	if mode == WeightsAuto {
		mode = WeightsResident
	}
	apply := func(ctx int, kvt kv.Type, w WeightsMode) bool {
		cs, res, ok := s.components(r, p.Limit, ctx, kvt, w)
		p.Context, p.KVType, p.Weights, p.Batch = ctx, kvt, w, s.batch(r, ctx)
		p.Components, p.Total, p.ResidentWeights, p.Residency = cs, total(cs), cs[0].Bytes, res
		p.RepackExperts = res.Experts > 0 && s.RepackedExperts(res.Experts, r.Repack)
		p.InitialKV = kv.Bytes(initialKV(s.kvConfig(r, kvt, ctx), r.KVPreallocate))
		return ok && p.Total <= p.Limit
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
		p.Steps = append(p.Steps, stepInt8)
		if apply(ctx, kvt, mode) {
			p.Fits = true
			return p, nil
		}
	}
	if kvt == kv.Int8 && kv.Int4.HeadDims(s.Config.HeadDimK, s.Config.HeadDimV) {
		kvt = kv.Int4
		p.Steps = append(p.Steps, stepInt4)
		if apply(ctx, kvt, mode) {
			p.Fits = true
			return p, nil
		}
	}
	if mode == WeightsResident && r.Weights == WeightsAuto {
		// The whole context, the weights making room as the KV cache
		// grows: a long context costs nothing until it is used.
		mode = WeightsStreaming
		streaming := "weights resident → streaming (blocks leave memory as the KV cache grows)"
		p.Steps = append(p.Steps, streaming)
		if apply(ctx, kvt, mode) {
			// The weights are read from disk either way: a KV cache of the
			// requested type (or INT8 rather than INT4) is kept when it fits
			// and costs at most a 32nd of the limit more at the full
			// context — the megabytes a mixture-of-experts model's small
			// cache takes from its expert cache — so that a model too large
			// to hold does not lose KV precision for nothing. A long
			// context's cache, whose bytes the blocks then need, stays
			// degraded.
			degraded := p.Clone()
			for _, t := range kvRestores(r.KVType, kvt) {
				if apply(ctx, t, mode) && p.kvBytes()-degraded.kvBytes() <= p.Limit/32 {
					p.Fits, p.Steps = true, append(kvSteps(r.KVType, t), streaming)
					return p, nil
				}
			}
			p, p.Fits = degraded, true
			return p, nil
		}
	}
	// Shorter context, down to minKeepContext (or the request if smaller).
	floor := min(ctx, minKeepContext)
	c, ok := largestFit((ctx-1)/contextStep*contextStep, max(floor, 1), contextStep, func(c int) bool { return apply(c, kvt, mode) })
	if ok {
		apply(c, kvt, mode)
		p.Steps = append(p.Steps, fmt.Sprintf("context %d → %d", ctx, c))
		p.Fits = true
		return p, nil
	}
	apply(floor, kvt, mode)
	p.Reason = fmt.Sprintf("the smallest configuration tried (context %d, KV %v, weights %v) needs %s, the limit is %s",
		floor, kvt, mode, FormatBytes(p.Total), FormatBytes(p.Limit))
	return p, nil
}

// kvRestores lists the KV types to try again, best first, when a plan
// that streams its weights anyway was degraded from want to got: want, and
// INT8 when INT4 was reached from F16.
func kvRestores(want, got kv.Type) []kv.Type {
	switch {
	case want == got:
		return nil
	case want == kv.F16 && got == kv.Int4:
		return []kv.Type{kv.F16, kv.Int8}
	}
	return []kv.Type{want}
}

// The Steps of the KV cache's degradations, which choose records as it
// takes them and kvSteps again when it takes some back.
const (
	stepInt8 = "KV cache F16 → INT8"
	stepInt4 = "KV cache INT8 → INT4"
)

// kvSteps are the Steps of degrading the KV cache from type from to type to.
func kvSteps(from, to kv.Type) []string {
	var steps []string
	if from == kv.F16 && to != kv.F16 {
		steps = append(steps, stepInt8)
	}
	if from != kv.Int4 && to == kv.Int4 {
		steps = append(steps, stepInt4)
	}
	return steps
}

// kvBytes is a plan's KV cache at the full context.
func (p Plan) kvBytes() int64 {
	for _, c := range p.Components {
		if c.Name == KVComponent {
			return c.Bytes
		}
	}
	return 0
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
