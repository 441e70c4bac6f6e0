// Command plan predicts the memory a GGUF model needs, before loading it,
// and shows what the library would degrade to within a memory limit, and
// which blocks stay in memory and which are read from disk as a session's
// KV cache fills the context:
//
//	go run ./examples/plan -m model.gguf -c 8192 -mem 6G
//	go run ./examples/plan -m model.gguf -c 8192 -mem 6G -json
//
// The residency table has a row per growth of the cache: the tokens that
// made it grow, its cells and bytes, the blocks resident and those read
// from disk from then on, the bytes a token reads from disk, and the
// predicted total.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/examples/internal/cli"
	"github.com/lowmem/llm/internal/cmdline"
	"github.com/lowmem/llm/memplan"
)

func main() {
	cmdline.Exit("plan", run())
}

func run() error {
	var mf cli.ModelFlags
	mf.Register(flag.CommandLine)
	asJSON := flag.Bool("json", false, "print one JSON object")
	flag.CommandLine.Parse(cli.LoRAArgs(os.Args[1:])) // ExitOnError: exits on a bad flag
	if mf.Path == "" {
		flag.Usage()
		return fmt.Errorf("-m is required")
	}
	opts, err := mf.Options()
	if err != nil {
		return err
	}
	p, err := llm.Plan(mf.Path, opts...)
	if err != nil {
		return err
	}
	if *asJSON {
		comps := map[string]int64{}
		for _, c := range p.Components {
			comps[strings.ReplaceAll(c.Name, " ", "_")] = c.Bytes
		}
		out := map[string]any{
			"model": mf.Path, "fits": p.Fits, "total_bytes": p.Total,
			"limit_bytes": p.Limit, "limit_source": p.LimitSource,
			"context": p.Context, "kv_type": p.KVType.String(), "weights": p.Weights.String(),
			"resident_weight_bytes": p.ResidentWeights, "file_bytes": p.FileBytes,
			"batch": p.Batch, "threads": p.Threads,
			"components": comps, "degraded": p.Steps, "reason": p.Reason,
		}
		if p.Steps == nil {
			out["degraded"] = []string{}
		}
		var sched []map[string]any
		for _, pt := range p.Schedule(0) {
			sched = append(sched, map[string]any{
				"tokens": pt.Tokens, "cells": pt.Cells, "kv_bytes": pt.KV, "resident_blocks": pt.Resident,
				"streamed_blocks": append([]int{}, pt.OnDisk...), "disk_bytes_per_token": pt.DiskBytes, "total_bytes": pt.Total,
			})
		}
		out["schedule"] = sched
		enc := json.NewEncoder(os.Stdout)
		return enc.Encode(out)
	}
	fmt.Print(p)
	if !p.Fits {
		os.Exit(2)
	}
	fmt.Println()
	printSchedule(os.Stdout, p)
	return nil
}

// printSchedule writes the residency table: how the blocks held in memory
// give way to the KV cache as a session fills its context.
func printSchedule(w io.Writer, p llm.MemoryPlan) {
	pts := p.Schedule(0)
	if len(pts) == 0 {
		return
	}
	blocks := pts[0].Resident + len(pts[0].OnDisk)
	fmt.Fprintf(w, "residency as one session fills its context (%s):\n", p.Residency.String())
	if blocks == 0 {
		// Experts read from disk: no block moves, the KV cache grows into
		// what the expert cache leaves.
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "tokens\tcells\tKV cache\ttotal\t\n")
		for _, pt := range pts {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t\n", pt.Tokens, pt.Cells, memplan.FormatBytes(pt.KV), memplan.FormatBytes(pt.Total))
		}
		tw.Flush()
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "tokens\tcells\tKV cache\tresident\tread from disk\tdisk / token\ttotal\t\n")
	for _, pt := range pts {
		streamed := "none"
		if len(pt.OnDisk) > 0 {
			streamed = fmt.Sprintf("%d: %s", len(pt.OnDisk), blockList(pt.OnDisk))
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%d of %d\t%s\t%s\t%s\t\n", pt.Tokens, pt.Cells, memplan.FormatBytes(pt.KV),
			pt.Resident, blocks, streamed, memplan.FormatBytes(pt.DiskBytes), memplan.FormatBytes(pt.Total))
	}
	tw.Flush()
}

// blockList writes block numbers compactly: "3 7 10-12".
func blockList(bs []int) string {
	var b strings.Builder
	for i := 0; i < len(bs); {
		j := i
		for j+1 < len(bs) && bs[j+1] == bs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", bs[i], bs[j])
		} else {
			fmt.Fprintf(&b, "%d", bs[i])
		}
		i = j + 1
	}
	return b.String()
}
