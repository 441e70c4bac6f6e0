package main

import (
	"flag"
	"fmt"
	"log/slog"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/examples/internal/cli"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/server"
)

// specFlags choose speculative decoding, llama-server's way: prompt
// lookup (-spec-type ngram) or a draft model (-md, which takes its place),
// both drafting -draft-min to -draft-max tokens a step; llama-server's
// long names beside the short ones (the flag package takes one dash or
// two).
type specFlags struct {
	typ      string // -spec-type
	draftMax int    // -draft-max
	draftMin int    // -draft-min
	ngram    int    // -spec-ngram-size-n

	path string  // -md, -model-draft
	ctx  int     // -cd, -ctx-size-draft
	mem  string  // -mem-draft
	pMin float64 // -draft-p-min
}

func (d *specFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.typ, "spec-type", "none", "speculative decoding: none, or ngram (prompt lookup, llama-server's ngram-simple)")
	fs.IntVar(&d.draftMax, "draft-max", 8, "the most tokens drafted a step (1-64; a request's speculative.n_max): with -spec-type ngram 8 by default (llama-server's older 16 costs several steps a pass on a CPU), with -md 3 (llama-server's)")
	fs.IntVar(&d.draftMin, "draft-min", 0, "with -spec-type ngram or -md, the fewest drafted tokens worth a verification pass (a request's speculative.n_min)")
	fs.IntVar(&d.ngram, "spec-ngram-size-n", 3, "with -spec-type ngram, how many last tokens must match earlier ones")
	const model = "a draft model for speculative decoding: a small GGUF of the model's vocabulary (llama-server's --model-draft)"
	fs.StringVar(&d.path, "md", "", model)
	fs.StringVar(&d.path, "model-draft", "", model)
	const ctx = "the draft's context (0 = -c, else the draft file's): no drafting past it"
	fs.IntVar(&d.ctx, "cd", 0, ctx)
	fs.IntVar(&d.ctx, "ctx-size-draft", 0, ctx)
	fs.StringVar(&d.mem, "mem-draft", "", "memory limit of the draft model (weights, a KV cache and scratch a session); with -mem, the model gets -mem less the draft's plan (default: detected)")
	fs.Float64Var(&d.pMin, "draft-p-min", float64(llm.DefaultDrafting().PMin), "with -md, the draft's probability below which it stops drafting (a request's speculative.p_min)")
}

// checkType refuses a -spec-type this server does not have, before
// anything loads.
func (d *specFlags) checkType() error {
	if d.typ != "none" && d.typ != "ngram" && d.typ != "ngram-simple" {
		return fmt.Errorf("-spec-type %q: want none or ngram", d.typ)
	}
	return nil
}

// speculate makes b draft with draft (loaded by load), or else by prompt
// lookup as -spec-type asks; -draft-max left unset is llama-server's
// default for a draft model.
func (d *specFlags) speculate(fs *flag.FlagSet, b *server.Model, draft *llm.Model) error {
	if draft != nil {
		if !given(fs, "draft-max") {
			d.draftMax = llm.DefaultDrafting().Draft
		}
		if d.draftMax < 1 {
			return fmt.Errorf("-draft-max %d: want 1 to %d with -md", d.draftMax, llm.MaxDraft)
		}
		dr := llm.Drafting{Draft: d.draftMax, MinDraft: d.draftMin, PMin: float32(d.pMin)}
		if err := b.Draft(draft, dr); err != nil {
			return fmt.Errorf("-draft-max %d -draft-min %d -draft-p-min %v: %w", d.draftMax, d.draftMin, d.pMin, err)
		}
	} else if d.typ != "none" {
		if d.draftMax < 1 {
			return fmt.Errorf("-draft-max %d: want 1 to %d with -spec-type %s", d.draftMax, llm.MaxDraft, d.typ)
		}
		if err := b.Speculate(llm.PromptLookup{Draft: d.draftMax, MinDraft: d.draftMin, NGram: d.ngram}); err != nil {
			return fmt.Errorf("-draft-max %d -draft-min %d -spec-ngram-size-n %d: %w", d.draftMax, d.draftMin, d.ngram, err)
		}
	}
	return nil
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
func (d *specFlags) load(mf *cli.ModelFlags, parallel int, log *slog.Logger) (*llm.Model, []llm.Option, error) {
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
