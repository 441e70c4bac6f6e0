// Command benchvs runs this library's examples/bench and llama.cpp's
// llama-bench on the same GGUF files, alternating the two engines round by
// round, and prints both engines' median speeds, their ratio, and the
// median of the rounds' own ratios:
//
//	go build -o /tmp/bench ./examples/bench
//	go run ./internal/cmd/benchvs -bench /tmp/bench -llama ../shared/tools/llama-bench \
//	        -t 2 -p 512 -n 128 -r 3 /tmp/tl-q4_0.gguf /tmp/tl-q4_k_m.gguf
//
// scripts/bench-vs-llama.sh builds the bench binary and calls this. Each
// round runs every test once in each engine (each engine warms up on its
// own, as llama-bench does); odd rounds start with ours, even rounds with
// llama.cpp, so neither always runs on a warmer machine. The two engines
// of a round run within seconds of each other, so the round's ratio sees
// one machine, while on a VM whose bandwidth swings between rounds the
// ratio of the two medians can set one engine's fast rounds against the
// other's slow ones (seven rounds of which ours led six gave a ratio of
// medians of 0.95×); the table gives both, and how many rounds ours led.
// The decode bound
// is file bytes ÷ read bandwidth: -bw gives the bandwidth in GB/s, or it is
// measured here with 2 threads over 1 GiB (best of 5), as
// `go test -bench MemoryRead ./internal/ops/` does.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lowmem/llm/internal/cmdline"
	"github.com/lowmem/llm/internal/ops"
)

func main() {
	cmdline.Exit("benchvs", run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	bench, llama string
	threads      int
	pp, tg       int
	rounds       int
	bw           float64 // GB/s; 0 = measure
	json         bool
	extra        []string // more flags for our bench
	llamaExtra   []string // more flags for llama-bench
	files        []string
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := cmdline.FlagSet("benchvs", stderr)
	fs.StringVar(&c.bench, "bench", "", "this library's bench binary (go build -o … ./examples/bench)")
	fs.StringVar(&c.llama, "llama", "../shared/tools/llama-bench", "llama.cpp's llama-bench")
	fs.IntVar(&c.threads, "t", 2, "threads, both engines")
	fs.IntVar(&c.pp, "p", 512, "prompt tokens (pp test; 0 = skip)")
	fs.IntVar(&c.tg, "n", 128, "generated tokens (tg test; 0 = skip)")
	fs.IntVar(&c.rounds, "r", 3, "rounds; medians are taken over them")
	fs.Float64Var(&c.bw, "bw", 0, "read bandwidth in GB/s for the decode bound (0 = measure)")
	fs.BoolVar(&c.json, "json", false, "print JSON instead of a table")
	extra := fs.String("bench-flags", "", "extra flags for our bench, space-separated (e.g. \"-kv int8\")")
	llamaExtra := fs.String("llama-flags", "", "extra flags for llama-bench, space-separated (e.g. \"-embd 1\" beside -bench-flags -embd)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.files = fs.Args()
	c.extra = strings.Fields(*extra)
	c.llamaExtra = strings.Fields(*llamaExtra)
	switch {
	case c.bench == "":
		return c, errors.New("-bench is required")
	case len(c.files) == 0:
		return c, errors.New("no GGUF files given")
	case c.rounds < 1 || c.threads < 1 || c.pp < 0 || c.tg < 0 || c.pp+c.tg == 0:
		return c, errors.New("want -r ≥ 1, -t ≥ 1, -p and -n ≥ 0, not both 0")
	}
	return c, nil
}

// speeds are one engine's runs of one file.
type speeds struct{ PP, TG []float64 }

// paired compares the two engines round by round: the median of the
// rounds' ratios ours ÷ llama.cpp, and in how many of the Rounds ours was
// faster.
type paired struct {
	Ratio  float64 `json:"median_ratio"`
	Led    int     `json:"rounds_ours_faster"`
	Rounds int     `json:"rounds"`
}

// pair pairs ours[i] with llama[i], the runs of round i; rounds where
// either engine has no figure are left out.
func pair(ours, llama []float64) paired {
	var p paired
	var rs []float64
	for i := range min(len(ours), len(llama)) {
		if ours[i] <= 0 || llama[i] <= 0 {
			continue
		}
		rs = append(rs, ours[i]/llama[i])
		if ours[i] > llama[i] {
			p.Led++
		}
	}
	p.Ratio, p.Rounds = median(rs), len(rs)
	return p
}

// Row is one file's result.
type Row struct {
	File       string  `json:"file"`
	Bytes      int64   `json:"bytes"`
	PPOurs     float64 `json:"pp_ours"`
	PPLlama    float64 `json:"pp_llama"`
	TGOurs     float64 `json:"tg_ours"`
	TGLlama    float64 `json:"tg_llama"`
	BoundTPS   float64 `json:"tg_bound"` // bandwidth ÷ file bytes
	PPPaired   paired  `json:"pp_paired"`
	TGPaired   paired  `json:"tg_paired"`
	OursRuns   speeds  `json:"ours_runs"`
	LlamaRuns  speeds  `json:"llama_runs"`
	LlamaBuild string  `json:"llama_build"`
}

// Report is what -json prints.
type Report struct {
	CPU        string  `json:"cpu"`
	Threads    int     `json:"threads"`
	PP         int     `json:"pp"`
	TG         int     `json:"tg"`
	Rounds     int     `json:"rounds"`
	Bandwidth  float64 `json:"bandwidth_gbs"`
	BWMeasured bool    `json:"bandwidth_measured"`
	Rows       []Row   `json:"rows"`
	Started    string  `json:"started"`
}

func run(args []string, stdout, stderr io.Writer) error {
	c, err := parse(args, stderr)
	if err != nil {
		return err
	}
	rep := Report{CPU: cpuModel(), Threads: c.threads, PP: c.pp, TG: c.tg, Rounds: c.rounds,
		Bandwidth: c.bw, Started: time.Now().UTC().Format(time.RFC3339)}
	if rep.Bandwidth == 0 {
		rep.Bandwidth, rep.BWMeasured = measureBandwidth(c.threads), true
		fmt.Fprintf(stderr, "read bandwidth, %d threads: %.1f GB/s\n", c.threads, rep.Bandwidth)
	}
	for _, f := range c.files {
		st, err := os.Stat(f)
		if err != nil {
			return err
		}
		row := Row{File: filepath.Base(f), Bytes: st.Size(), BoundTPS: rep.Bandwidth * 1e9 / float64(st.Size())}
		for r := range c.rounds {
			engines := []func() error{
				func() error { return c.runOurs(f, &row.OursRuns) },
				func() error { return c.runLlama(f, &row.LlamaRuns, &row.LlamaBuild) },
			}
			if r%2 == 1 {
				slices.Reverse(engines)
			}
			for _, e := range engines {
				if err := e(); err != nil {
					return fmt.Errorf("%s: %w", f, err)
				}
			}
			fmt.Fprintf(stderr, "%s round %d: ours pp %v tg %v | llama.cpp pp %v tg %v\n", row.File, r+1,
				last(row.OursRuns.PP), last(row.OursRuns.TG), last(row.LlamaRuns.PP), last(row.LlamaRuns.TG))
		}
		row.PPOurs, row.PPLlama = median(row.OursRuns.PP), median(row.LlamaRuns.PP)
		row.TGOurs, row.TGLlama = median(row.OursRuns.TG), median(row.LlamaRuns.TG)
		row.PPPaired, row.TGPaired = pair(row.OursRuns.PP, row.LlamaRuns.PP), pair(row.OursRuns.TG, row.LlamaRuns.TG)
		rep.Rows = append(rep.Rows, row)
	}
	if c.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printTable(stdout, rep)
	return nil
}

func (c *config) runOurs(file string, s *speeds) error {
	args := append([]string{"-m", file, "-t", strconv.Itoa(c.threads), "-p", strconv.Itoa(c.pp),
		"-n", strconv.Itoa(c.tg), "-r", "1", "-json"}, c.extra...)
	out, err := command(c.bench, args...)
	if err != nil {
		return err
	}
	var res struct {
		PP *struct{ TPS float64 } `json:"pp"`
		TG *struct{ TPS float64 } `json:"tg"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return fmt.Errorf("bench output: %w", err)
	}
	if res.PP != nil {
		s.PP = append(s.PP, res.PP.TPS)
	}
	if res.TG != nil {
		s.TG = append(s.TG, res.TG.TPS)
	}
	return nil
}

func (c *config) runLlama(file string, s *speeds, build *string) error {
	args := append([]string{"-m", file, "-t", strconv.Itoa(c.threads), "-p", strconv.Itoa(c.pp),
		"-n", strconv.Itoa(c.tg), "-r", "1", "-o", "json"}, c.llamaExtra...)
	out, err := command(c.llama, args...)
	if err != nil {
		return err
	}
	var res []struct {
		Build  string  `json:"build_commit"`
		NP     int     `json:"n_prompt"`
		NG     int     `json:"n_gen"`
		AvgTPS float64 `json:"avg_ts"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return fmt.Errorf("llama-bench output: %w", err)
	}
	for _, r := range res {
		*build = r.Build
		switch {
		case r.NP > 0 && r.NG == 0:
			s.PP = append(s.PP, r.AvgTPS)
		case r.NG > 0 && r.NP == 0:
			s.TG = append(s.TG, r.AvgTPS)
		}
	}
	return nil
}

func command(name string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tail := stderr.String()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return nil, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail)
	}
	return stdout.Bytes(), nil
}

func last(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", xs[len(xs)-1])
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func printTable(w io.Writer, r Report) {
	how := "measured"
	if !r.BWMeasured {
		how = "given"
	}
	fmt.Fprintf(w, "%s, %d threads, medians of %d alternating rounds (after the ratio of the medians, the median of the rounds' ratios and how many rounds ours led); read bandwidth %.1f GB/s (%s)\n\n",
		r.CPU, r.Threads, r.Rounds, r.Bandwidth, how)
	build := ""
	if len(r.Rows) > 0 {
		build = " " + r.Rows[0].LlamaBuild
	}
	fmt.Fprintf(w, "| file | size | pp%d ours / llama.cpp%s | tg%d ours / llama.cpp%s | tg ours / bound |\n", r.PP, build, r.TG, build)
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, x := range r.Rows {
		pp, tg := "-", "-"
		if r.PP > 0 {
			pp = fmt.Sprintf("%.1f / %.1f (%s; %s)", x.PPOurs, x.PPLlama, ratio(x.PPOurs, x.PPLlama), x.PPPaired)
		}
		if r.TG > 0 {
			tg = fmt.Sprintf("%.1f / %.1f (%s; %s)", x.TGOurs, x.TGLlama, ratio(x.TGOurs, x.TGLlama), x.TGPaired)
		}
		bound := "-"
		if r.TG > 0 && x.BoundTPS > 0 {
			bound = fmt.Sprintf("%.0f %% of %.1f", 100*x.TGOurs/x.BoundTPS, x.BoundTPS)
		}
		fmt.Fprintf(w, "| %s | %.2f GiB | %s | %s | %s |\n", x.File, float64(x.Bytes)/(1<<30), pp, tg, bound)
	}
}

// measureBandwidth is the best of 5 passes over 1 GiB on threads workers,
// in GB/s.
func measureBandwidth(threads int) float64 {
	// Every page written, so that reads come from memory, not the shared
	// zero page; with a float32 one, as a byte there would be a subnormal
	// (a slow path for Intel's FMAs).
	buf := make([]byte, 1<<30)
	for i := 0; i < len(buf); i += 4096 {
		binary.LittleEndian.PutUint32(buf[i:], math.Float32bits(1))
	}
	p := ops.NewPool(threads)
	defer p.Close()
	bw, err := ops.ReadBandwidth(p, buf, 5)
	if err != nil {
		return 0
	}
	return bw / 1e9
}

// cpuModel is the "model name" line of /proc/cpuinfo, or GOARCH.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

// String is how the table shows p: "rounds 1.06×, 6 of 7 ahead".
func (p paired) String() string {
	if p.Rounds == 0 {
		return "no paired rounds"
	}
	return fmt.Sprintf("rounds %.2f×, %d of %d ahead", p.Ratio, p.Led, p.Rounds)
}
