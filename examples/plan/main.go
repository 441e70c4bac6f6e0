// Command plan predicts the memory a GGUF model needs, before loading it,
// and shows what the library would degrade to within a memory limit.
//
//	go run ./examples/plan -m model.gguf -c 8192 -mem 6G
//	go run ./examples/plan -m model.gguf -c 8192 -mem 6G -json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/examples/internal/cli"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "plan:", err)
		os.Exit(1)
	}
}

func run() error {
	path := flag.String("m", "", "GGUF model file (required)")
	ctx := flag.Int("c", 0, "context size (0 = the model's)")
	memFlag := flag.String("mem", "", "memory limit, e.g. 6G (default: detected from cgroup / MemAvailable)")
	kvType := flag.String("kv", "f16", "KV cache type: f16 or int8")
	threads := flag.Int("t", 0, "threads (0 = GOMAXPROCS)")
	batch := flag.Int("b", 0, "batch size (0 = 512)")
	weights := flag.String("weights", "auto", "weights: auto, resident or streaming")
	strict := flag.Bool("strict", false, "refuse instead of degrading")
	asJSON := flag.Bool("json", false, "print one JSON object")
	flag.Parse()
	if *path == "" {
		flag.Usage()
		return fmt.Errorf("-m is required")
	}
	var limit int64
	if *memFlag != "" && *memFlag != "0" {
		n, err := cli.ParseBytes(*memFlag)
		if err != nil {
			return fmt.Errorf("-mem %q: %w", *memFlag, err)
		}
		limit = n
	}
	opts := []llm.Option{llm.WithMemoryLimit(limit)}
	if *ctx > 0 {
		opts = append(opts, llm.WithContextSize(*ctx))
	}
	if *threads > 0 {
		opts = append(opts, llm.WithThreads(*threads))
	}
	if *batch > 0 {
		opts = append(opts, llm.WithBatchSize(*batch))
	}
	switch *kvType {
	case "f16":
	case "int8":
		opts = append(opts, llm.WithKVType(llm.KVInt8))
	default:
		return fmt.Errorf("-kv %q: want f16 or int8", *kvType)
	}
	switch *weights {
	case "auto":
	case "resident":
		opts = append(opts, llm.WithWeights(llm.WeightsResident))
	case "streaming":
		opts = append(opts, llm.WithWeights(llm.WeightsStreaming))
	default:
		return fmt.Errorf("-weights %q: want auto, resident or streaming", *weights)
	}
	if *strict {
		opts = append(opts, llm.WithStrictMemory())
	}
	p, err := llm.Plan(*path, opts...)
	if err != nil {
		return err
	}
	if *asJSON {
		comps := map[string]int64{}
		for _, c := range p.Components {
			comps[strings.ReplaceAll(c.Name, " ", "_")] = c.Bytes
		}
		out := map[string]any{
			"model": *path, "fits": p.Fits, "total_bytes": p.Total,
			"limit_bytes": p.Limit, "limit_source": p.LimitSource,
			"context": p.Context, "kv_type": p.KVType.String(), "weights": p.Weights.String(),
			"resident_weight_bytes": p.ResidentWeights, "file_bytes": p.FileBytes,
			"batch": p.Batch, "threads": p.Threads,
			"components": comps, "degraded": p.Steps, "reason": p.Reason,
		}
		if p.Steps == nil {
			out["degraded"] = []string{}
		}
		enc := json.NewEncoder(os.Stdout)
		return enc.Encode(out)
	}
	fmt.Print(p)
	if !p.Fits {
		os.Exit(2)
	}
	return nil
}
