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
// With -json it prints one JSON object instead of the table:
//
//	{"model":"x.gguf","threads":2,"pp":{"n":512,"tps":…,"sd":…},"tg":{"n":128,"tps":…,"sd":…},"peak_rss_bytes":…}
//
// With -profile FILE it writes a CPU profile of the measured runs (FILE.pp
// and FILE.tg when both tests run) with the library's phase labels turned
// on, and prints the CPU time of each phase of the forward pass —
// matmul:qkv, attention, matmul:gate/up, wait/idle … — per token (with
// -json, as "pp_phases" and "tg_phases"). The profile adds a little work
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
	"flag"
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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
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
	prealloc bool
	json     bool
	warmup   bool
	seed     uint64
	verbose  bool
	progress io.Writer // per-run lines with -v
	profile  string    // CPU profile of the measured runs, by phase
}

// errUsage reports bad flags; the flag package has already printed why.
var errUsage = errors.New("bad flags (see -h)")

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.model, "m", "", "GGUF model file (required)")
	fs.IntVar(&c.threads, "t", 0, "threads (0 = GOMAXPROCS)")
	fs.IntVar(&c.pp, "p", 512, "prompt tokens for the pp test (0 = skip)")
	fs.IntVar(&c.tg, "n", 128, "generated tokens for the tg test (0 = skip)")
	fs.IntVar(&c.reps, "r", 3, "repetitions of each test")
	fs.IntVar(&c.ctx, "c", 0, "context size (0 = max(p+n, 512))")
	fs.IntVar(&c.batch, "b", 0, "batch size for prompt processing (0 = the library's default, 512)")
	kv := fs.String("kv", "f16", "KV cache type: f16 or int8")
	mem := fs.String("mem", "", "memory limit for the planner, e.g. 6G, 512M (default: detected)")
	weights := fs.String("weights", "auto", "weights: auto, resident or streaming")
	fs.BoolVar(&c.prealloc, "prealloc", false, "reserve and touch the whole KV cache at session start (llm.WithKVPreallocate)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object instead of the table")
	fs.BoolVar(&c.warmup, "warmup", true, "run each test once before measuring")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the random prompt tokens")
	fs.BoolVar(&c.verbose, "v", false, "print each run's time on stderr")
	fs.StringVar(&c.profile, "profile", "", "write a CPU profile of the measured runs to `FILE` (FILE.pp and FILE.tg when both tests run) and print CPU time by phase of the forward pass")
	if err := fs.Parse(args); err != nil {
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
	case c.ctx < 0 || c.batch < 0:
		return c, fmt.Errorf("-c %d -b %d: want 0 or more", c.ctx, c.batch)
	}
	if c.ctx == 0 {
		c.ctx = max(c.pp+c.tg, 512)
	}
	if need := max(c.pp, c.tg); c.ctx < need {
		return c, fmt.Errorf("-c %d is smaller than the %d tokens a test needs", c.ctx, need)
	}
	switch *kv {
	case "f16":
		c.kv = llm.KVF16
	case "int8":
		c.kv = llm.KVInt8
	default:
		return c, fmt.Errorf("-kv %q: want f16 or int8", *kv)
	}
	switch *weights {
	case "auto":
		c.weights = llm.WeightsAuto
	case "resident":
		c.weights = llm.WeightsResident
	case "streaming":
		c.weights = llm.WeightsStreaming
	default:
		return c, fmt.Errorf("-weights %q: want auto, resident or streaming", *weights)
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
	PlanTotal int64    `json:"plan_total_bytes"`
	PlanLimit int64    `json:"plan_limit_bytes"`
	Weights   string   `json:"weights"`
	Degraded  []string `json:"degraded"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	opts := []llm.Option{llm.WithContextSize(c.ctx), llm.WithKVType(c.kv), llm.WithWeights(c.weights)}
	if c.threads > 0 {
		opts = append(opts, llm.WithThreads(c.threads))
	}
	if c.batch > 0 {
		opts = append(opts, llm.WithBatchSize(c.batch))
	}
	if c.memory > 0 {
		opts = append(opts, llm.WithMemoryLimit(c.memory))
	}
	if c.prealloc {
		opts = append(opts, llm.WithKVPreallocate())
	}
	if c.profile != "" {
		// Sessions read it when they are made.
		if err := os.Setenv(profileLabelsEnv, "1"); err != nil {
			return err
		}
	}
	start := time.Now()
	m, err := llm.Load(c.model, opts...)
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

	info := m.Info()
	res := result{
		Model: filepath.Base(c.model), Threads: info.Threads, Arch: info.Architecture,
		Type: info.FileType, Params: info.Parameters, FileBytes: info.FileBytes,
		Context: s.Context(), Batch: c.batch, Reps: c.reps,
		LoadSeconds: loadTime.Seconds(),
	}
	plan := m.Plan()
	res.KVType, res.Weights, res.PlanTotal, res.PlanLimit = plan.KVType.String(), plan.Weights.String(), plan.Total, plan.Limit
	res.Degraded = append([]string{}, plan.Steps...)
	b := &bencher{c: c, s: s, m: m, vocab: info.VocabSize, rng: rand.New(rand.NewPCG(c.seed, 0))}
	if !c.json {
		printHeader(stdout)
	}
	if c.pp > 0 {
		runs, err := b.measure(ctx, "pp", c.pp, b.prompt)
		if err != nil {
			return fmt.Errorf("pp%d: %w", c.pp, err)
		}
		res.PP = newStats(c.pp, runs)
		if !c.json {
			printRow(stdout, res, "pp", res.PP)
		}
		if res.PPPhases, err = b.breakdown("pp", c.pp); err != nil {
			return err
		}
	}
	if c.tg > 0 {
		runs, err := b.measure(ctx, "tg", c.tg, b.generate)
		if err != nil {
			return fmt.Errorf("tg%d: %w", c.tg, err)
		}
		res.TG = newStats(c.tg, runs)
		if !c.json {
			printRow(stdout, res, "tg", res.TG)
		}
		if res.TGPhases, err = b.breakdown("tg", c.tg); err != nil {
			return err
		}
	}
	usage, err := llm.ReadMemoryUsage()
	if err != nil {
		return fmt.Errorf("peak RSS: %w", err)
	}
	res.PeakRSS = usage.PeakRSS
	res.LoadAvg = loadAvg()
	if c.json {
		enc := json.NewEncoder(stdout)
		return enc.Encode(res)
	}
	fmt.Fprintf(stdout, "\npeak RSS %s (%d bytes); context %d, kv %s, weights %s, load %.1fs, load average %.2f %.2f %.2f\n",
		humanBytes(res.PeakRSS), res.PeakRSS, res.Context, res.KVType, res.Weights, res.LoadSeconds,
		res.LoadAvg[0], res.LoadAvg[1], res.LoadAvg[2])
	fmt.Fprintf(stdout, "memory plan: predicted peak %s (%d bytes) of limit %s\n", humanBytes(res.PlanTotal), res.PlanTotal, humanBytes(res.PlanLimit))
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

// bencher runs the tests on one session.
type bencher struct {
	c     config
	s     *llm.Session
	m     *llm.Model
	vocab int
	rng   *rand.Rand
	toks  []int32
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
	var prof *profiler
	if b.c.profile != "" {
		var err error
		if prof, err = startProfile(b.c.profilePath(name)); err != nil {
			return nil, fmt.Errorf("-profile: %w", err)
		}
	}
	var runs []float64
	for r := range b.c.reps {
		b.s.Reset()
		start := time.Now()
		if err := test(ctx, n); err != nil {
			if prof != nil {
				prof.stop()
			}
			return nil, err
		}
		el := time.Since(start)
		tps := float64(n) / el.Seconds()
		runs = append(runs, tps)
		if b.c.progress != nil {
			fmt.Fprintf(b.c.progress, "%s%d run %d: %.3fs, %.2f t/s\n", name, n, r+1, el.Seconds(), tps)
		}
	}
	if prof != nil {
		if err := prof.stop(); err != nil {
			return nil, fmt.Errorf("-profile: %w", err)
		}
	}
	return runs, nil
}

// breakdown reads the profile of test's measured runs (n tokens each), if
// one was written.
func (b *bencher) breakdown(test string, n int) ([]phaseShare, error) {
	if b.c.profile == "" {
		return nil, nil
	}
	ps, err := phaseBreakdown(b.c.profilePath(test), n*b.c.reps)
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
	_, err := b.s.Eval(ctx, b.toks)
	return err
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
		r.Model, humanBytes(r.FileBytes), humanCount(r.Params), r.Threads, r.KVType,
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

// humanCount formats a parameter count: 8.03 B, 1.44 M.
func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f B", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f K", float64(n)/1e3)
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
