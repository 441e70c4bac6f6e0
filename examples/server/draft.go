package main

import (
	"flag"
	"fmt"
	"log/slog"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/examples/internal/cli"
	"github.com/lowmem/llm/memplan"
)

// draftFlags choose a draft model, llama-server's names beside the
// short ones (the flag package takes one dash or two).
type draftFlags struct {
	path string  // -md, -model-draft
	ctx  int     // -cd, -ctx-size-draft
	mem  string  // -mem-draft
	pMin float64 // -draft-p-min
}

func (d *draftFlags) register(fs *flag.FlagSet) {
	const model = "a draft model for speculative decoding: a small GGUF of the model's vocabulary (llama-server's --model-draft)"
	fs.StringVar(&d.path, "md", "", model)
	fs.StringVar(&d.path, "model-draft", "", model)
	const ctx = "the draft's context (0 = -c, else the draft file's): no drafting past it"
	fs.IntVar(&d.ctx, "cd", 0, ctx)
	fs.IntVar(&d.ctx, "ctx-size-draft", 0, ctx)
	fs.StringVar(&d.mem, "mem-draft", "", "memory limit of the draft model (weights, a KV cache and scratch a session); with -mem, the model gets -mem less the draft's plan (default: detected)")
	fs.Float64Var(&d.pMin, "draft-p-min", float64(llm.DefaultDrafting().PMin), "with -md, the draft's probability below which it stops drafting (a request's speculative.p_min)")
}

// given reports whether the command line set the flag name.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// load loads the draft model, planned for parallel sessions, with the
// model flags' threads and KV type, and returns the options that make the
// model's own plan leave the draft's memory alone: with -mem, a limit of
// -mem less the draft plan's total. Without -md it loads nothing.
func (d *draftFlags) load(mf *cli.ModelFlags, parallel int, log *slog.Logger) (*llm.Model, []llm.Option, error) {
	if d.path == "" {
		return nil, nil, nil
	}
	df := cli.ModelFlags{Path: d.path, Context: d.ctx, Threads: mf.Threads, Batch: mf.Batch, KV: mf.KV, Mem: d.mem}
	if df.Context == 0 {
		df.Context = mf.Context
	}
	opts, err := df.Options()
	if err != nil {
		return nil, nil, fmt.Errorf("draft model: %w", err)
	}
	m, err := llm.Load(d.path, append(opts, llm.WithSessions(parallel), llm.WithLogger(log))...)
	if err != nil {
		return nil, nil, fmt.Errorf("draft model: %w", err)
	}
	p := m.Plan()
	log.Info("draft model memory plan", "context", p.Context, "kv", p.KVType, "total", memplan.FormatBytes(p.Total), "limit", memplan.FormatBytes(p.Limit))
	if mf.Mem == "" || mf.Mem == "0" {
		return m, nil, nil
	}
	limit, err := cli.ParseBytes(mf.Mem)
	if err == nil && limit <= p.Total {
		err = fmt.Errorf("the draft model's plan takes %s of it", memplan.FormatBytes(p.Total))
	}
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("-mem %q: %w", mf.Mem, err)
	}
	return m, []llm.Option{llm.WithMemoryLimit(limit - p.Total)}, nil
}
