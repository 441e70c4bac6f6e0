// Command generate streams a continuation of a prompt from a GGUF model.
//
//	go run ./examples/generate -m model.gguf -p "Once upon a time" -n 64
//
// -m is a GGUF file or ollama:NAME[:TAG]. Without -m it builds a small
// random-weight model in a temporary directory, so the command works on a
// fresh machine; its output is meaningless text.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/examples/internal/cli"
	"github.com/lowmem/llm/internal/cmdline"
	"github.com/lowmem/llm/mem"
)

func main() {
	cmdline.Exit("generate", run())
}

func run() error {
	var mf cli.ModelFlags
	mf.Register(flag.CommandLine)
	prompt := flag.String("p", "Once upon a time", "prompt")
	n := flag.Int("n", 64, "tokens to generate")
	temp := flag.Float64("temp", 0, "sampling temperature (0 = greedy)")
	topK := flag.Int("top-k", 40, "top-k (0 = off)")
	topP := flag.Float64("top-p", 0.95, "top-p (1 = off)")
	minP := flag.Float64("min-p", 0.05, "min-p (0 = off)")
	repeat := flag.Float64("repeat-penalty", 1, "repeat penalty (1 = off)")
	seed := flag.Uint64("seed", 1, "sampling seed")
	showIDs := flag.Bool("ids", false, "print token ids after the text")
	var jf cli.JSONFlags
	jf.Register(flag.CommandLine)
	flag.CommandLine.Parse(cli.LoRAArgs(os.Args[1:])) // ExitOnError: exits on a bad flag

	m, done, err := mf.Load(os.Stderr)
	if err != nil {
		return err
	}
	defer done()
	info := m.Info()
	fmt.Fprintf(os.Stderr, "model: %s %s, %d layers, %.0fM parameters, %d threads, context %d\n",
		info.Architecture, info.FileType, info.Layers, float64(info.Parameters)/1e6, info.Threads, info.Context)

	s, err := m.NewSession()
	if err != nil {
		return err
	}
	defer s.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	promptIDs, err := m.Tokenize(*prompt)
	if err != nil {
		return err
	}
	start := time.Now()
	if _, err := s.Eval(ctx, promptIDs); err != nil {
		return err
	}
	promptTime := time.Since(start)
	fmt.Print(*prompt)

	var ids []int32
	genStart := time.Now()
	opts := []llm.GenerateOption{llm.MaxTokens(*n), llm.Temperature(float32(*temp)),
		llm.TopK(*topK), llm.TopP(float32(*topP)), llm.MinP(float32(*minP)),
		llm.RepeatPenalty(float32(*repeat)), llm.Seed(*seed)}
	jsonOpts, err := jf.Options()
	if err != nil {
		return err
	}
	opts = append(opts, jsonOpts...)
	for tok, err := range s.Stream(ctx, "", opts...) {
		if err != nil {
			if errors.Is(err, llm.ErrContextFull) {
				fmt.Fprintln(os.Stderr, "\n[context full]")
				break
			}
			return err
		}
		if tok.ID >= 0 {
			ids = append(ids, tok.ID)
		}
		fmt.Print(tok.Text)
	}
	genTime := time.Since(genStart)
	fmt.Println()
	if *showIDs {
		fmt.Fprintln(os.Stderr, "ids:", ids)
	}
	usage, _ := mem.ReadRSS()
	fmt.Fprintf(os.Stderr, "prompt: %d tokens, %.1f tok/s | generated: %d tokens, %.1f tok/s | peak RSS %.1f MiB\n",
		len(promptIDs), float64(len(promptIDs))/promptTime.Seconds(),
		len(ids), float64(len(ids))/genTime.Seconds(), float64(usage.Peak)/(1<<20))
	return nil
}
