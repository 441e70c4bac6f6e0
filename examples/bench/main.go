// Command bench measures prompt processing and generation speed of a GGUF
// model, like llama.cpp's llama-bench:
//
//	go run ./examples/bench -m model.gguf -t 2 -p 512 -n 128 -r 3
//
// pp512 evaluates 512 random tokens in one Eval call on an empty session
// (the library splits it into batches of -b); tg128 evaluates 128 tokens
// one at a time on an empty session, starting with BOS, as llama-bench
// does. Each test runs once to warm up, then -r times; speeds are tokens
// per second, mean ± sample standard deviation over the runs. Peak RSS is
// the process's high-water mark, mapped weights included.
//
// With -embd the pp test embeds its tokens (Session.EmbedTokens: the
// hidden states pooled as the file says, no output matrix), as
// llama-bench -embd 1 does; it takes -n 0. -texts K splits them into K
// texts of p/K tokens embedded in one Session.EmbedBatch call, which packs
// them into shared forward passes (-pack=false: one EmbedTokens call a
// text, the way short texts were embedded before EmbedBatch).
//
// With -pg the tg test runs on top of the pp test's prompt, in the same
// session (a prompt, then its reply): -p 6000 -n 64 -pg measures
// generation with 6000 tokens in the context, the cache grown to hold them.
// -c declares the session's context (default max(p+n, 512)); the cache
// starts small and grows as tokens arrive, taking memory from resident
// weights when it must.
//
// With -lookup K the tg test generates greedily (Session.Generate,
// temperature 0) after a prompt of 64 random tokens written twice, -r
// times without and with prompt-lookup speculation of up to K drafts
// (llm.WithSpeculation; with -md FILE, by the draft model FILE instead,
// llm.WithDraftModel, a session of it loaded with the same options), and
// reports both speeds (tokens over
// Usage.GenerateTime), the tokens drafted and kept a run, whether the
// texts were the same, and the cost model: the median time of a decode
// step (Eval of one token) against that of a verification pass of K+1
// tokens with every row's logits (EvalAll). A random-weight model's
// output is no text: what it repeats, and so the acceptance, says little
// of a real model's.
//
// With -json it prints one JSON object instead of the table:
//
//	{"model":"x.gguf","threads":2,"pp":{"n":512,"tps":…,"sd":…},"tg":{"n":128,"tps":…,"sd":…},"peak_rss_bytes":…,
//	 "residency":{"blocks":42,"streamed_end":3,"disk_bytes_per_token":…,"stall_seconds":…,…},"plan_peak_bytes":…}
//
// With -profile FILE it writes a CPU profile of the measured runs (FILE.pp
// and FILE.tg when both tests run) with the library's phase labels turned
// on, and prints the CPU time of each phase of the forward pass —
// matmul:qkv, attention, matmul:gate/up, wait/idle … — per token (with
// -json, as "pp_phases" and "tg_phases"; with -pg, of the last run's prompt
// and generation). The profile adds a little work
// of its own; the shares are what it is for, not the speed of that run:
//
//	go run ./examples/bench -m model.gguf -t 2 -p 0 -n 128 -profile /tmp/tg.prof
//	go tool pprof -tags /tmp/tg.prof    # the same split; -tagfocus=phase=… to dig in
//
// No model at hand? internal/cmd/mkmodel writes a random-weight file of a
// real model's shape:
//
//	go run ./internal/cmd/mkmodel -shape tinyllama-1.1b -type q4_0 -o /tmp/tinyllama-q4_0.gguf
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/examples/internal/cli"
	"github.com/lowmem/llm/internal/cmdline"
	"github.com/lowmem/llm/mem"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	cmdline.Exit("bench", err)
}

// config is the parsed command line.
type config struct {
	model    string
	threads  int
	pp, tg   int
	reps     int
	ctx      int
	batch    int
	kv       llm.KVType
	memory   int64
	weights  llm.WeightsMode
	repack   bool
	reads    int
	pg       bool
	prealloc bool
	json     bool
	warmup   bool
	seed     uint64
	verbose  bool
	progress io.Writer // per-run lines with -v
	profile  string    // CPU profile of the measured runs, by phase
	embd     bool      // the pp test embeds (pooled hidden states, no logits)
	texts    int       // -embd: the pp test's tokens are this many texts
	pack     bool      // -texts: one EmbedBatch call (else an EmbedTokens call a text)
	lookup   int       // the tg test generates greedily, with and without this many prompt-lookup drafts
	draft    string    // -lookup's drafts come from this draft model instead
	lora     cli.LoRAFlags
}

// errUsage reports bad flags; the flag package has already printed why.
var errUsage = errors.New("bad flags (see -h)")

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := cmdline.FlagSet("bench", stderr)
	fs.StringVar(&c.model, "m", "", "GGUF model file (required)")
	c.lora.Register(fs)
	fs.IntVar(&c.threads, "t", 0, "threads (0 = GOMAXPROCS)")
	fs.IntVar(&c.pp, "p", 512, "prompt tokens for the pp test (0 = skip)")
	fs.IntVar(&c.tg, "n", 128, "generated tokens for the tg test (0 = skip)")
	fs.IntVar(&c.reps, "r", 3, "repetitions of each test")
	fs.IntVar(&c.ctx, "c", 0, "context size (0 = max(p+n, 512))")
	fs.IntVar(&c.batch, "b", 0, "batch size for prompt processing (0 = the library's default, 512)")
	kv := fs.String("kv", "f16", "KV cache type: f16, int8 or int4")
	mem := fs.String("mem", "", "memory limit for the planner, e.g. 6G, 512M, all of it for the model (default: detected, less what the process already uses)")
	weights := fs.String("weights", "auto", "weights: auto, resident or streaming")
	fs.BoolVar(&c.repack, "repack", true, "let the plan hold weights in the X8 layout (llm.WithRepack): a resident model's repacked at load, a streamed mixture-of-experts model's experts as its expert cache reads them, when it holds them all; -repack=false keeps the file's layout")
	fs.IntVar(&c.reads, "disk-reads", 0, "reads of weight blocks from disk in flight (0 = the library's default)")
	fs.BoolVar(&c.pg, "pg", false, "run the tg test on top of the pp test's prompt, in the same session")
	fs.BoolVar(&c.prealloc, "prealloc", false, "reserve and touch the whole KV cache at session start (llm.WithKVPreallocate)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object instead of the table")
	fs.BoolVar(&c.warmup, "warmup", true, "run each test once before measuring")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the random prompt tokens")
	fs.BoolVar(&c.verbose, "v", false, "print each run's time on stderr")
	fs.BoolVar(&c.embd, "embd", false, "the pp test computes an embedding (Session.EmbedTokens) instead of logits, as llama-bench -embd 1; needs -n 0")
	fs.IntVar(&c.texts, "texts", 1, "with -embd: the pp test's tokens are this many texts of p/texts tokens, embedded together")
	fs.BoolVar(&c.pack, "pack", true, "with -texts: embed the texts in one Session.EmbedBatch call, packed into shared passes (false: an EmbedTokens call a text)")
	fs.IntVar(&c.lookup, "lookup", 0, "the tg test generates greedily after 64 random tokens written twice, without and with prompt-lookup speculation of up to this many drafts (llm.WithSpeculation), and times a decode step against a verification pass (0 = off)")
	fs.StringVar(&c.draft, "md", "", "with -lookup K, the speculative runs draft up to K tokens with this draft model (llm.WithDraftModel, PMin 0) instead of prompt lookup")
	fs.StringVar(&c.profile, "profile", "", "write a CPU profile of the measured runs to `FILE` (FILE.pp and FILE.tg when both tests run) and print CPU time by phase of the forward pass")
	if err := fs.Parse(cli.LoRAArgs(args)); err != nil {
		return c, errUsage
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case c.model == "":
		return c, errors.New("-m model.gguf is required")
	case c.threads < 0:
		return c, fmt.Errorf("-t %d: want 0 or more", c.threads)
	case c.pp < 0 || c.tg < 0:
		return c, fmt.Errorf("-p %d -n %d: want 0 or more", c.pp, c.tg)
	case c.pp == 0 && c.tg == 0:
		return c, errors.New("-p 0 and -n 0: nothing to measure")
	case c.reps < 1:
		return c, fmt.Errorf("-r %d: want at least 1", c.reps)
	case c.ctx < 0 || c.batch < 0 || c.reads < 0:
		return c, fmt.Errorf("-c %d -b %d -disk-reads %d: want 0 or more", c.ctx, c.batch, c.reads)
	case c.pg && (c.pp == 0 || c.tg == 0):
		return c, errors.New("-pg needs both -p and -n")
	case c.embd && (c.tg > 0 || c.pp == 0):
		return c, errors.New("-embd measures the pp test only: give -p and -n 0")
	case c.lookup < 0 || c.lookup > llm.MaxDraft || c.lookup > 0 && (c.tg == 0 || c.pg || c.embd):
		return c, fmt.Errorf("-lookup %d: want 0 to %d, with -n and without -pg or -embd", c.lookup, llm.MaxDraft)
	case c.draft != "" && c.lookup == 0:
		return c, errors.New("-md needs -lookup K, the most tokens it drafts a step")
	case c.texts < 1 || c.texts > 1 && (!c.embd || c.pp%c.texts != 0):
		return c, fmt.Errorf("-texts %d: want 1, or with -embd a divisor of -p %d", c.texts, c.pp)
	}
	need := max(c.pp, c.tg)
	switch {
	case c.pg:
		need = c.pp + c.tg
	case c.lookup > 0:
		need = max(c.pp, 2*lookupPromptHalf+c.tg)
	}
	if c.ctx == 0 {
		c.ctx = max(c.pp+c.tg, need, 512)
	}
	if c.ctx < need {
		return c, fmt.Errorf("-c %d is smaller than the %d tokens a test needs", c.ctx, need)
	}
	var err error
	if c.kv, err = cli.ParseKV(*kv); err != nil {
		return c, err
	}
	if c.weights, err = cli.ParseWeights(*weights); err != nil {
		return c, err
	}
	if *mem != "" {
		n, err := cli.ParseBytes(*mem)
		if err != nil {
			return c, fmt.Errorf("-mem %q: %w", *mem, err)
		}
		c.memory = n
	}
	if c.verbose {
		c.progress = stderr
	}
	return c, nil
}

// stats are the speeds of one test's runs.
type stats struct {
	N    int       `json:"n"`
	TPS  float64   `json:"tps"` // mean tokens per second
	SD   float64   `json:"sd"`  // sample standard deviation of the runs
	Runs []float64 `json:"runs_tps"`
}

func newStats(n int, runs []float64) *stats {
	s := &stats{N: n, Runs: runs}
	for _, r := range runs {
		s.TPS += r
	}
	s.TPS /= float64(len(runs))
	if len(runs) > 1 {
		var v float64
		for _, r := range runs {
			v += (r - s.TPS) * (r - s.TPS)
		}
		s.SD = math.Sqrt(v / float64(len(runs)-1))
	}
	return s
}

// result is what -json prints.
type result struct {
	Model   string `json:"model"`
	Threads int    `json:"threads"`
	PP      *stats `json:"pp,omitempty"`
	TG      *stats `json:"tg,omitempty"`
	// Lookup is the -lookup test, which replaces the tg test.
	Lookup *lookupResult `json:"lookup,omitempty"`
	// CPU time by phase of the forward pass, with -profile.
	PPPhases    []phaseShare `json:"pp_phases,omitempty"`
	TGPhases    []phaseShare `json:"tg_phases,omitempty"`
	PeakRSS     int64        `json:"peak_rss_bytes"`
	Arch        string       `json:"arch"`
	Type        string       `json:"type"`
	Params      int64        `json:"params"`
	FileBytes   int64        `json:"file_bytes"`
	Context     int          `json:"context"`
	Batch       int          `json:"batch,omitempty"`
	KVType      string       `json:"kv_type"`
	Reps        int          `json:"reps"`
	LoadSeconds float64      `json:"load_seconds"`
	LoadAvg     [3]float64   `json:"load_avg"` // of the machine when the runs ended (Linux)
	// The memory plan Load made: its predicted peak (mapped weight pages
	// included) and the configuration it chose.
	PlanTotal int64 `json:"plan_total_bytes"`
	PlanLimit int64 `json:"plan_limit_bytes"`
	// Kernels is the kernel variant chosen per weight type (Info.Kernels).
	Kernels string `json:"kernels"`
	Weights string `json:"weights"`
	// Repacked is the weight bytes held repacked (MemoryPlan.Repacked).
	Repacked int64    `json:"repacked_bytes"`
	Degraded []string `json:"degraded"`
	// PlanPeak is the plan's predicted peak for a session that held as
	// many tokens as the longest test (MemoryPlan.PeakAt): what a measured
	// peak under a memory limit compares with.
	PlanPeak  int64     `json:"plan_peak_bytes"`
	PG        bool      `json:"pg,omitempty"`
	Residency residency `json:"residency"`
}

// residency is where the model's blocks were and what reading them from
// disk cost.
type residency struct {
	Blocks        int     `json:"blocks"`
	StreamedStart int     `json:"streamed_start"` // blocks read from disk after Load
	StreamedEnd   int     `json:"streamed_end"`   // and after the tests
	Evictions     int64   `json:"evictions"`      // blocks that left memory
	Restores      int64   `json:"restores"`       // blocks that came back
	BytesRead     int64   `json:"bytes_read"`     // from disk, over the whole run
	Direct        bool    `json:"direct_io"`
	TGBytes       float64 `json:"disk_bytes_per_token"` // in the measured tg runs
	TGStall       float64 `json:"stall_seconds"`        // waiting for reads, in the measured tg runs
	// Experts: a mixture-of-experts model whose experts are read from
	// disk into a cache (omitted otherwise). Counts are over the measured
	// tg runs.
	Experts *expertStats `json:"experts,omitempty"`
}

// expertStats is the expert cache's work in the measured tg runs.
type expertStats struct {
	Slots         int     `json:"slots"`           // experts the cache holds
	SlotBytes     int64   `json:"slot_bytes"`      // its memory
	Requests      int64   `json:"requests"`        // experts the tokens used
	HitRate       float64 `json:"hit_rate"`        // share found in the cache
	BytesPerToken float64 `json:"bytes_per_token"` // read from disk for experts
	Stall         float64 `json:"stall_seconds"`   // waiting for expert reads
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	opts := []llm.Option{llm.WithContextSize(c.ctx), llm.WithKVType(c.kv), llm.WithWeights(c.weights), llm.WithRepack(c.repack)}
	// Flags left at zero keep the library's defaults.
	for _, o := range []struct {
		set bool
		opt llm.Option
	}{
		{c.threads > 0, llm.WithThreads(c.threads)},
		{c.batch > 0, llm.WithBatchSize(c.batch)},
		{c.memory > 0, llm.WithMemoryLimit(c.memory)},
		{c.prealloc, llm.WithKVPreallocate()},
		{c.reads > 0, llm.WithDiskReads(c.reads)},
	} {
		if o.set {
			opts = append(opts, o.opt)
		}
	}
	if c.profile != "" {
		// Sessions read it when they are made.
		if err := os.Setenv(profileLabelsEnv, "1"); err != nil {
			return err
		}
	}
	start := time.Now()
	m, err := llm.Load(c.model, append(opts[:len(opts):len(opts)], c.lora.Options()...)...)
	if err != nil {
		return err
	}
	defer m.Close()
	loadTime := time.Since(start)
	s, err := m.NewSession()
	if err != nil {
		return err
	}
	defer s.Close()
	var ds *llm.Session // with -md, a session drafting with the draft model
	if c.draft != "" {
		d, err := llm.Load(c.draft, opts...)
		if err != nil {
			return fmt.Errorf("-md: %w", err)
		}
		defer d.Close()
		if ds, err = m.NewSession(llm.WithDraftModel(d)); err != nil {
			return fmt.Errorf("-md: %w", err)
		}
		defer ds.Close()
	}

	info := m.Info()
	res := result{
		Model: filepath.Base(c.model), Threads: info.Threads, Arch: info.Architecture,
		Type: info.FileType, Params: info.Parameters, FileBytes: info.FileBytes,
		Context: s.Context(), Batch: c.batch, Reps: c.reps,
		LoadSeconds: loadTime.Seconds(), Kernels: info.Kernels,
	}
	plan := m.Plan()
	res.KVType, res.Weights, res.PlanTotal, res.PlanLimit = plan.KVType.String(), plan.Weights.String(), plan.Total, plan.Limit
	res.Degraded = append([]string{}, plan.Steps...)
	res.Repacked = plan.Repacked
	longest := max(c.pp, c.tg)
	if c.pg {
		longest = c.pp + c.tg
	}
	res.PlanPeak, res.PG = plan.PeakAt(longest), c.pg
	rs := m.Residency()
	res.Residency = residency{Blocks: rs.Blocks, StreamedStart: rs.OnDisk}
	b := &bencher{c: c, s: s, ds: ds, m: m, vocab: info.VocabSize, rng: rand.New(rand.NewPCG(c.seed, 0))}
	if !c.json {
		printHeader(stdout)
	}
	if c.pg {
		pp, tg, err := b.measurePG(ctx)
		if err != nil {
			return fmt.Errorf("pp%d+tg%d: %w", c.pp, c.tg, err)
		}
		res.PP, res.TG = newStats(c.pp, pp), newStats(c.tg, tg)
		if res.PPPhases, err = b.breakdown("pp", c.pp); err != nil {
			return err
		}
		if res.TGPhases, err = b.breakdown("tg", c.tg); err != nil {
			return err
		}
		if !c.json {
			printRow(stdout, res, "pp", res.PP)
			printRow(stdout, res, "tg", res.TG)
		}
	} else {
		// test measures one test of n tokens, prints its row and splits its
		// time by phase.
		test := func(name string, n int, step func(context.Context, int) error) (*stats, []phaseShare, error) {
			runs, err := b.measure(ctx, name, n, step)
			if err != nil {
				return nil, nil, fmt.Errorf("%s%d: %w", name, n, err)
			}
			st := newStats(n, runs)
			if !c.json {
				printRow(stdout, res, name, st)
			}
			phases, err := b.breakdown(name, n*c.reps)
			return st, phases, err
		}
		if c.pp > 0 {
			if res.PP, res.PPPhases, err = test("pp", c.pp, b.prompt); err != nil {
				return err
			}
		}
		if c.tg > 0 && c.lookup > 0 {
			if res.Lookup, err = b.lookupTest(ctx, c.tg); err != nil {
				return fmt.Errorf("lookup tg%d: %w", c.tg, err)
			}
			if !c.json {
				printLookup(stdout, res, res.Lookup)
			}
		} else if c.tg > 0 {
			b.tgRead = true
			if res.TG, res.TGPhases, err = test("tg", c.tg, b.generate); err != nil {
				return err
			}
		}
	}
	rs = m.Residency()
	res.Residency.StreamedEnd, res.Residency.Evictions, res.Residency.Restores = rs.OnDisk, rs.Evictions, rs.Restores
	res.Residency.BytesRead, res.Residency.Direct = rs.BytesRead, rs.Direct
	if b.tgTokens > 0 {
		res.Residency.TGBytes = float64(b.tgBytes) / float64(b.tgTokens)
		res.Residency.TGStall = b.tgStall.Seconds()
		if x := b.tgRes.Experts; x.Slots > 0 {
			res.Residency.Experts = &expertStats{Slots: x.Slots, SlotBytes: x.SlotBytes, Requests: x.Requests,
				HitRate: x.HitRate(), BytesPerToken: float64(x.BytesRead) / float64(b.tgTokens), Stall: x.Stall.Seconds()}
		}
	}
	usage, err := mem.ReadRSS()
	if err != nil {
		return fmt.Errorf("peak RSS: %w", err)
	}
	res.PeakRSS = usage.Peak
	res.LoadAvg = loadAvg()
	if c.json {
		enc := json.NewEncoder(stdout)
		return enc.Encode(res)
	}
	fmt.Fprintf(stdout, "\npeak RSS %s (%d bytes); context %d, kv %s, weights %s, load %.1fs, load average %.2f %.2f %.2f\n",
		humanBytes(res.PeakRSS), res.PeakRSS, res.Context, res.KVType, res.Weights, res.LoadSeconds,
		res.LoadAvg[0], res.LoadAvg[1], res.LoadAvg[2])
	if res.Repacked > 0 {
		fmt.Fprintf(stdout, "weights repacked at load (X8 layout): %s (%d bytes)\n", humanBytes(res.Repacked), res.Repacked)
	}
	fmt.Fprintf(stdout, "memory plan: predicted peak %s (%d bytes) of limit %s; for %d tokens %s (%d bytes)\n",
		humanBytes(res.PlanTotal), res.PlanTotal, humanBytes(res.PlanLimit), longest, humanBytes(res.PlanPeak), res.PlanPeak)
	if r := res.Residency; r.StreamedStart > 0 || r.StreamedEnd > 0 || r.Evictions > 0 {
		fmt.Fprintf(stdout, "blocks read from disk: %d of %d after Load, %d at the end (%d left memory, %d came back); %.0f MB read per generated token, %.2fs waiting\n",
			r.StreamedStart, r.Blocks, r.StreamedEnd, r.Evictions, r.Restores, r.TGBytes/1e6, r.TGStall)
	}
	if x := res.Residency.Experts; x != nil {
		fmt.Fprintf(stdout, "expert cache: %d experts (%s); %.1f%% of %d requests hit; %.0f MB read per generated token, %.2fs waiting\n",
			x.Slots, humanBytes(x.SlotBytes), 100*x.HitRate, x.Requests, x.BytesPerToken/1e6, x.Stall)
	}
	fmt.Fprintf(stdout, "kernels: %s\n", res.Kernels)
	for _, d := range res.Degraded {
		fmt.Fprintf(stdout, "  degraded: %s\n", d)
	}
	for _, t := range []struct {
		name string
		ps   []phaseShare
	}{{"pp", res.PPPhases}, {"tg", res.TGPhases}} {
		if t.ps != nil {
			printBreakdown(stdout, t.name, c.profilePath(t.name), t.ps)
		}
	}
	return nil
}

// bencher runs the tests on one session (and -lookup's with -md on a
// second, ds, which drafts with the draft model).
type bencher struct {
	c     config
	s     *llm.Session
	ds    *llm.Session
	m     *llm.Model
	vocab int
	rng   *rand.Rand
	toks  []int32
	// Disk reads of the measured tg runs.
	tgRead   bool
	tgBytes  int64
	tgStall  time.Duration
	tgTokens int
	// tgRes.Experts sums the expert cache's counters over the tg runs.
	tgRes llm.ResidencyStats
}

// timed runs test and returns its speed, counting its disk reads as tg's
// when it is a measured tg run.
func (b *bencher) timed(ctx context.Context, n int, test func(context.Context, int) error, tg bool) (float64, time.Duration, error) {
	r0 := b.m.Residency()
	start := time.Now()
	if err := test(ctx, n); err != nil {
		return 0, 0, err
	}
	el := time.Since(start)
	if tg {
		r1 := b.m.Residency()
		b.tgBytes += r1.BytesRead - r0.BytesRead
		b.tgStall += r1.Stall - r0.Stall
		b.tgTokens += n
		d := r1.Experts.Sub(r0.Experts)
		x := &b.tgRes.Experts
		x.Slots, x.SlotBytes = d.Slots, d.SlotBytes
		x.Requests += d.Requests
		x.Hits += d.Hits
		x.BytesRead += d.BytesRead
		x.Stall += d.Stall
	}
	return float64(n) / el.Seconds(), el, nil
}

// profiled runs run, under a CPU profile written to test's profile file
// when on and -profile asks for one; the profile is stopped whatever run
// returns.
func (b *bencher) profiled(test string, on bool, run func() error) error {
	if !on || b.c.profile == "" {
		return run()
	}
	prof, err := startProfile(b.c.profilePath(test))
	if err != nil {
		return fmt.Errorf("-profile: %w", err)
	}
	err = run()
	if perr := prof.stop(); err == nil && perr != nil {
		err = fmt.Errorf("-profile: %w", perr)
	}
	return err
}

// measurePG runs a prompt then generation on top of it, c.reps times
// (after a warm-up run), and returns the speeds of each part.
func (b *bencher) measurePG(ctx context.Context) (pp, tg []float64, err error) {
	if b.c.warmup {
		b.s.Reset()
		if err := b.prompt(ctx, b.c.pp); err != nil {
			return nil, nil, err
		}
		if err := b.generateOn(ctx, b.c.tg); err != nil {
			return nil, nil, err
		}
	}
	for r := range b.c.reps {
		b.s.Reset()
		// With -profile, the last run's two parts are profiled apart.
		last := r == b.c.reps-1
		var p, g float64
		var el, el2 time.Duration
		err := b.profiled("pp", last, func() (err error) {
			p, el, err = b.timed(ctx, b.c.pp, b.prompt, false)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		err = b.profiled("tg", last, func() (err error) {
			g, el2, err = b.timed(ctx, b.c.tg, b.generateOn, true)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		pp, tg = append(pp, p), append(tg, g)
		if b.c.progress != nil {
			fmt.Fprintf(b.c.progress, "pp%d run %d: %.3fs, %.2f t/s; then tg%d: %.3fs, %.2f t/s\n",
				b.c.pp, r+1, el.Seconds(), p, b.c.tg, el2.Seconds(), g)
		}
	}
	return pp, tg, nil
}

// measure runs test (after a warm-up run) c.reps times on an empty
// session and returns the speeds in tokens per second.
func (b *bencher) measure(ctx context.Context, name string, n int, test func(context.Context, int) error) ([]float64, error) {
	if b.c.warmup {
		b.s.Reset()
		if err := test(ctx, n); err != nil {
			return nil, err
		}
	}
	var runs []float64
	err := b.profiled(name, true, func() error {
		for r := range b.c.reps {
			b.s.Reset()
			tps, el, err := b.timed(ctx, n, test, b.tgRead)
			if err != nil {
				return err
			}
			runs = append(runs, tps)
			if b.c.progress != nil {
				fmt.Fprintf(b.c.progress, "%s%d run %d: %.3fs, %.2f t/s\n", name, n, r+1, el.Seconds(), tps)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// breakdown reads the profile of test's measured runs (tokens in all), if
// one was written.
func (b *bencher) breakdown(test string, tokens int) ([]phaseShare, error) {
	if b.c.profile == "" {
		return nil, nil
	}
	ps, err := phaseBreakdown(b.c.profilePath(test), tokens)
	if err != nil {
		return nil, fmt.Errorf("-profile: %w", err)
	}
	return ps, nil
}

// token returns a random token id other than BOS, as llama-bench feeds.
func (b *bencher) token() int32 {
	for {
		t := int32(b.rng.IntN(b.vocab))
		if t != b.m.BOS() || b.vocab == 1 {
			return t
		}
	}
}

// prompt evaluates n random tokens in one call.
func (b *bencher) prompt(ctx context.Context, n int) error {
	b.toks = b.toks[:0]
	for range n {
		b.toks = append(b.toks, b.token())
	}
	switch {
	case b.c.embd && b.c.texts > 1:
		k := len(b.toks) / b.c.texts
		lists := make([][]int32, b.c.texts)
		for i := range lists {
			lists[i] = b.toks[i*k : (i+1)*k]
		}
		if b.c.pack {
			_, err := b.s.EmbedBatch(ctx, lists)
			return err
		}
		for _, l := range lists {
			if _, err := b.s.EmbedTokens(ctx, l); err != nil {
				return err
			}
		}
		return nil
	case b.c.embd:
		_, err := b.s.EmbedTokens(ctx, b.toks)
		return err
	}
	_, err := b.s.Eval(ctx, b.toks)
	return err
}

// generateOn evaluates n random tokens one at a time after what the
// session holds.
func (b *bencher) generateOn(ctx context.Context, n int) error {
	var tok [1]int32
	for range n {
		tok[0] = b.token()
		if _, err := b.s.Eval(ctx, tok[:]); err != nil {
			return err
		}
	}
	return nil
}

// generate evaluates n tokens one at a time: BOS, then random tokens.
func (b *bencher) generate(ctx context.Context, n int) error {
	tok := [1]int32{b.m.BOS()}
	for range n {
		if _, err := b.s.Eval(ctx, tok[:]); err != nil {
			return err
		}
		tok[0] = b.token()
	}
	return nil
}

func printHeader(w io.Writer) {
	fmt.Fprintf(w, "| %-30s | %10s | %10s | %7s | %5s | %8s | %20s |\n", "model", "size", "params", "threads", "kv", "test", "t/s")
	fmt.Fprintf(w, "| %s | %s: | %s: | %s: | %s | %s: | %s: |\n",
		strings.Repeat("-", 30), strings.Repeat("-", 9), strings.Repeat("-", 9), strings.Repeat("-", 6),
		strings.Repeat("-", 5), strings.Repeat("-", 7), strings.Repeat("-", 19))
}

func printRow(w io.Writer, r result, test string, s *stats) {
	fmt.Fprintf(w, "| %-30s | %10s | %10s | %7d | %5s | %8s | %20s |\n",
		r.Model, humanBytes(r.FileBytes), cmdline.Count(r.Params, 2), r.Threads, r.KVType,
		fmt.Sprintf("%s%d", test, s.N), fmt.Sprintf("%.2f ± %.2f", s.TPS, s.SD))
}

// humanBytes formats a file size as llama-bench does: GiB, or MiB below
// one GiB.
func humanBytes(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
}

// loadAvg reads the 1, 5 and 15 minute load averages (zeros where
// /proc/loadavg does not exist), since on a shared machine they explain
// noisy numbers.
func loadAvg() [3]float64 {
	var l [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	for i, f := range strings.Fields(string(b)) {
		if i == 3 {
			break
		}
		l[i], _ = strconv.ParseFloat(f, 64)
	}
	return l
}
