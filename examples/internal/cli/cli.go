// Package cli holds what the example commands share: the flags that load a
// model (-m as a path or ollama:NAME[:TAG], context, threads, KV type,
// memory), the flags that ask for JSON output (-json, -json-schema), and
// the small synthetic model they fall back to without -m.
//
//	var mf cli.ModelFlags
//	mf.Register(flag.CommandLine)
//	flag.Parse()
//	m, done, err := mf.Load(os.Stderr) // llm.Load with the flags' options
//	defer done()
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/cmdline"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
)

// ModelFlags are the flags that choose and load a model.
type ModelFlags struct {
	Path     string    // -m: a GGUF file or ollama:NAME[:TAG]
	Context  int       // -c
	Threads  int       // -t
	Batch    int       // -b
	KV       string    // -kv: f16, int8 or int4
	Mem      string    // -mem: e.g. 6G
	Weights  string    // -weights: auto, resident or streaming
	Strict   bool      // -strict
	Template string    // -template: a file holding a Jinja chat template
	LoRA     LoRAFlags // -lora, -lora-scaled: adapters, in order
}

// Register adds the flags to fs.
func (m *ModelFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&m.Path, "m", "", "GGUF model: a file, or ollama:NAME[:TAG] from a local Ollama store (default: a tiny random-weight model)")
	fs.IntVar(&m.Context, "c", 0, "context size in tokens (0 = the model's)")
	fs.IntVar(&m.Threads, "t", 0, "threads (0 = GOMAXPROCS)")
	fs.IntVar(&m.Batch, "b", 0, "prompt tokens per forward pass (0 = 512)")
	fs.StringVar(&m.KV, "kv", "f16", "KV cache type: f16, int8 or int4")
	fs.StringVar(&m.Mem, "mem", "", "memory limit, e.g. 6G or 512M, all of it for the model (default or 0: detected from the cgroup and MemAvailable, less what the process already uses)")
	fs.StringVar(&m.Weights, "weights", "auto", "weights: auto, resident or streaming")
	fs.BoolVar(&m.Strict, "strict", false, "refuse instead of degrading when the model does not fit the memory limit")
	fs.StringVar(&m.Template, "template", "", "file with a Jinja chat template to use instead of the model's")
	m.LoRA.Register(fs)
}

// FlagSet is the flag set of a command that reports on stderr and returns
// parse errors, so that its run function can be tested; the model flags
// are registered in it.
func (m *ModelFlags) FlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := cmdline.FlagSet(name, stderr)
	m.Register(fs)
	return fs
}

// Options turns the flags into Load options.
func (m *ModelFlags) Options() ([]llm.Option, error) {
	var opts []llm.Option
	if m.Context < 0 || m.Threads < 0 || m.Batch < 0 {
		return nil, fmt.Errorf("-c %d, -t %d, -b %d: want 0 or more", m.Context, m.Threads, m.Batch)
	}
	if m.Context > 0 {
		opts = append(opts, llm.WithContextSize(m.Context))
	}
	if m.Threads > 0 {
		opts = append(opts, llm.WithThreads(m.Threads))
	}
	if m.Batch > 0 {
		opts = append(opts, llm.WithBatchSize(m.Batch))
	}
	kvt, err := ParseKV(m.KV)
	if err != nil {
		return nil, err
	}
	if kvt != llm.KVF16 {
		opts = append(opts, llm.WithKVType(kvt))
	}
	w, err := ParseWeights(m.Weights)
	if err != nil {
		return nil, err
	}
	if w != llm.WeightsAuto {
		opts = append(opts, llm.WithWeights(w))
	}
	if m.Mem != "" && m.Mem != "0" { // 0 detects, as an unset limit does
		n, err := ParseBytes(m.Mem)
		if err != nil {
			return nil, fmt.Errorf("-mem %q: %w", m.Mem, err)
		}
		opts = append(opts, llm.WithMemoryLimit(n))
	}
	if m.Strict {
		opts = append(opts, llm.WithStrictMemory())
	}
	if m.Template != "" {
		src, err := os.ReadFile(m.Template)
		if err != nil {
			return nil, fmt.Errorf("-template: %w", err)
		}
		opts = append(opts, llm.WithChatTemplate(string(src)))
	}
	return append(opts, m.LoRA.Options()...), nil
}

// Synthetic, when -m was not given, writes a tiny random-weight chat model
// (testutil.TinyChat) to a temporary directory and points Path at it, so
// that a command runs on a fresh machine; it says so on w. The returned
// function removes the file.
func (m *ModelFlags) Synthetic(w io.Writer) (remove func(), err error) {
	if m.Path != "" {
		return func() {}, nil
	}
	dir, err := os.MkdirTemp("", "llm-example-")
	if err != nil {
		return nil, err
	}
	m.Path = filepath.Join(dir, "synthetic.gguf")
	if err := testutil.WriteModelFile(m.Path, testutil.TinyChat()); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	fmt.Fprintln(w, "No -m given: using a tiny synthetic model with RANDOM weights, so its replies are gibberish.")
	fmt.Fprintln(w, "Real models are GGUF files, e.g. https://huggingface.co/<org>/<model>-GGUF/resolve/main/<file>.gguf,")
	fmt.Fprintln(w, "or -m ollama:NAME[:TAG] for a model a local Ollama has already downloaded.")
	return func() { os.RemoveAll(dir) }, nil
}

// Load loads the model the flags choose, or the synthetic one (see
// Synthetic, which reports on w), with the flags' options followed by
// extra. done closes the model and removes a synthetic file.
func (m *ModelFlags) Load(w io.Writer, extra ...llm.Option) (_ *llm.Model, done func(), err error) {
	opts, err := m.Options()
	if err != nil {
		return nil, nil, err
	}
	remove, err := m.Synthetic(w)
	if err != nil {
		return nil, nil, err
	}
	model, err := llm.Load(m.Path, append(opts, extra...)...)
	if err != nil {
		remove()
		return nil, nil, err
	}
	return model, func() { model.Close(); remove() }, nil
}

// ParseKV reads a -kv value: f16 (or empty), int8 or int4.
func ParseKV(s string) (llm.KVType, error) { return parseFlag("-kv", s, llm.KVF16, kv.ParseType) }

// ParseWeights reads a -weights value: auto (or empty), resident or
// streaming.
func ParseWeights(s string) (llm.WeightsMode, error) {
	return parseFlag("-weights", s, llm.WeightsAuto, memplan.ParseWeightsMode)
}

// parseFlag reads flag's value s with parse, the empty string as def.
func parseFlag[T any](flag, s string, def T, parse func(string) (T, error)) (T, error) {
	if s == "" {
		return def, nil
	}
	v, err := parse(s)
	if err != nil {
		return v, fmt.Errorf("%s: %w", flag, err)
	}
	return v, nil
}

// ParseBytes reads a size such as 6G, 6GiB, 512M, 1.5g or 1000000 (bytes).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := 1.0
	if t != "" {
		if i := strings.IndexByte("KMGT", t[len(t)-1]); i >= 0 {
			mult = math.Pow(1024, float64(i+1))
			t = t[:len(t)-1]
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || f*mult >= math.MaxInt64 {
		return 0, errors.New("want a positive size like 6G, 512M or a number of bytes")
	}
	return int64(f * mult), nil
}
