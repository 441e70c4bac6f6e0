package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/lowmem/llm"
)

// lookupPromptHalf is the -lookup test's prompt: this many random tokens,
// written twice, so that prompt lookup has a repeat to find in the input
// (a random-weight model's output is no text: what it repeats is its own
// loops and the prompt's tokens).
const lookupPromptHalf = 64

// costSteps is how many decode steps and verification passes the cost
// model times, alternately.
const costSteps = 16

// lookupResult is the -lookup test: greedy generation without and with
// prompt-lookup speculation of up to Draft tokens, over the same prompt,
// and the cost model — one decode step against one verification pass of
// Draft+1 tokens with every row of logits.
type lookupResult struct {
	Draft      int     `json:"draft"`
	DraftModel string  `json:"draft_model,omitempty"` // -md: the drafts were its`
	Plain      *stats  `json:"plain"`
	Spec       *stats  `json:"speculative"`
	Drafted    float64 `json:"drafted_per_run"`
	Accepted   float64 `json:"accepted_per_run"`
	Same       bool    `json:"same_text"` // the speculative runs generated the plain runs' text
	Step       float64 `json:"decode_step_seconds"`
	Verify     float64 `json:"verify_pass_seconds"` // median over costSteps
}

// lookupTest runs the -lookup test of n generated tokens.
func (b *bencher) lookupTest(ctx context.Context, n int) (*lookupResult, error) {
	half := make([]int32, lookupPromptHalf)
	for i := range half {
		half[i] = b.token()
	}
	prompt := append(slices.Clone(half), half...)
	r := &lookupResult{Draft: b.c.lookup, Same: true}
	gen := func(s *llm.Session, opts ...llm.GenerateOption) (string, llm.Usage, error) {
		s.Reset()
		if _, err := s.Eval(ctx, prompt); err != nil {
			return "", llm.Usage{}, err
		}
		text, err := s.Generate(ctx, "", append([]llm.GenerateOption{llm.MaxTokens(n), llm.Temperature(0)}, opts...)...)
		return text, s.Usage(), err
	}
	spec, ss := llm.WithSpeculation(llm.PromptLookup{Draft: b.c.lookup}), b.s
	if b.ds != nil {
		spec, ss = llm.WithDrafting(llm.Drafting{Draft: b.c.lookup}), b.ds
		r.DraftModel = filepath.Base(b.c.draft)
	}
	var plainTPS, specTPS []float64
	var want string
	for rep := -1; rep < b.c.reps; rep++ {
		if rep < 0 && !b.c.warmup {
			continue
		}
		text, u, err := gen(b.s)
		if err != nil {
			return nil, err
		}
		want = text
		stext, su, err := gen(ss, spec)
		if err != nil {
			return nil, err
		}
		if rep < 0 {
			continue // warm-up
		}
		r.Same = r.Same && stext == want
		plainTPS = append(plainTPS, float64(u.GeneratedTokens)/u.GenerateTime.Seconds())
		specTPS = append(specTPS, float64(su.GeneratedTokens)/su.GenerateTime.Seconds())
		r.Drafted += float64(su.DraftTokens) / float64(b.c.reps)
		r.Accepted += float64(su.AcceptedTokens) / float64(b.c.reps)
		if b.c.progress != nil {
			fmt.Fprintf(b.c.progress, "lookup run %d: plain %.2f t/s; speculative %.2f t/s, %d drafted, %d accepted\n",
				rep+1, plainTPS[len(plainTPS)-1], specTPS[len(specTPS)-1], su.DraftTokens, su.AcceptedTokens)
		}
	}
	r.Plain, r.Spec = newStats(n, plainTPS), newStats(n, specTPS)
	var err error
	r.Step, r.Verify, err = b.costModel(ctx, prompt)
	return r, err
}

// costModel times, after prompt, costSteps decode steps (Eval of one
// token), then as many passes of Draft+1 tokens with every row's logits
// (EvalAll, as a verification pass computes them), each from the same
// point, and returns the median of each. The garbage collector runs before
// each timed call, so that EvalAll's new slice of logits (which a
// verification pass does not allocate) costs only its zeroing.
func (b *bencher) costModel(ctx context.Context, prompt []int32) (step, verify float64, err error) {
	k := b.c.lookup + 1
	if len(prompt)+k > b.s.Context() {
		return 0, 0, nil
	}
	rows := make([]int32, k)
	time1 := func(toks []int32, eval func(context.Context, []int32) ([]float32, error)) (float64, error) {
		b.s.Reset()
		if _, err := b.s.Eval(ctx, prompt); err != nil {
			return 0, err
		}
		for i := range toks {
			toks[i] = b.token()
		}
		runtime.GC()
		start := time.Now()
		_, err := eval(ctx, toks)
		return time.Since(start).Seconds(), err
	}
	var steps, passes []float64
	for range costSteps {
		t, err := time1(rows[:1], b.s.Eval)
		if err != nil {
			return 0, 0, err
		}
		steps = append(steps, t)
	}
	for range costSteps {
		t, err := time1(rows, b.s.EvalAll)
		if err != nil {
			return 0, 0, err
		}
		passes = append(passes, t)
	}
	return median(steps), median(passes), nil
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	x = slices.Clone(x)
	slices.Sort(x)
	return x[len(x)/2]
}

// printLookup prints the -lookup test's rows and what they mean.
func printLookup(w io.Writer, res result, l *lookupResult) {
	printRow(w, res, "tg", l.Plain)
	how := "lookup"
	if l.DraftModel != "" {
		how = "draft"
	}
	printRow(w, res, fmt.Sprintf("%s%d tg", how, l.Draft), l.Spec)
	same := "the same text"
	if !l.Same {
		same = "a different text (batched passes round otherwise on this CPU, and a near tie went the other way)"
	}
	if l.DraftModel != "" {
		how += " (" + l.DraftModel + ")"
	}
	fmt.Fprintf(w, "\n%s: greedy after %d random tokens written twice; a speculative run drafted %.1f tokens and kept %.1f (%.0f%%), %s\n",
		how, lookupPromptHalf, l.Drafted, l.Accepted, 100*l.Accepted/max(l.Drafted, 1), same)
	fmt.Fprintf(w, "cost model: decode step %.3f ms, verification pass of %d tokens %.3f ms (%.2f× a step; median of %d each)\n",
		1e3*l.Step, l.Draft+1, 1e3*l.Verify, l.Verify/max(l.Step, 1e-12), costSteps)
}
