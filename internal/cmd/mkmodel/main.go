package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lowmem/llm/internal/cmdline"
	llm "github.com/lowmem/llm/model"
)

func main() {
	cmdline.Exit("mkmodel", run(os.Args[1:], os.Stdout, os.Stderr))
}

// named is what -shape and -type pick from: shapes and file types.
type named interface{ name() string }

// names lists the names of list's elements, the values its flag accepts.
func names[T named](list []T) []string {
	var ns []string
	for _, e := range list {
		ns = append(ns, e.name())
	}
	return ns
}

// lookup returns the element of list called name; kind ("shape", "type")
// names the flag's values in the error.
func lookup[T named](list []T, kind, name string) (T, error) {
	i := slices.IndexFunc(list, func(e T) bool { return e.name() == name })
	if i < 0 {
		var zero T
		return zero, fmt.Errorf("unknown %s %q (known: %s)", kind, name, strings.Join(names(list), ", "))
	}
	return list[i], nil
}

// errUsage reports bad flags; the flag package has already printed why.
var errUsage = errors.New("see -h for usage")

func run(args []string, stdout, stderr io.Writer) error {
	if shapesErr != nil {
		return shapesErr
	}
	fs := cmdline.FlagSet("mkmodel", stderr)
	shapeName := fs.String("shape", "", "model shape: "+strings.Join(names(shapes), ", "))
	typeName := fs.String("type", "q4_k_m", "weight type: "+strings.Join(names(fileTypes), ", "))
	out := fs.String("o", "", "output GGUF file (required)")
	seed := fs.Uint64("seed", 1, "random seed; the same seed gives the same file")
	list := fs.Bool("list", false, "list the shapes and exit")
	layers := fs.Int("layers", 0, "keep only the shape's first N blocks (0: all): its widths in a file the disk can hold (gpt-oss-20b is 42 GB in F16), for checking that llama.cpp loads a layout or comparing speed per block")
	experts := fs.Int("experts", 0, "keep only the first N routed experts of each block (0: all), at most N a token: a mixture-of-experts shape's widths in a file the disk can hold (qwen3.5-35b-a3b's 256 experts are 1.6 GB a block in F16)")
	vocab := fs.Int("vocab", 0, "a vocabulary of N tokens instead of the shape's (0: the shape's; at least 1024): token_embd and output shrink with it")
	imatrix := fs.String("imatrix", "", "also write an importance matrix of ones for the shape's matrices to this file, for llama-quantize --imatrix (IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M need one)")
	lora := fs.String("lora", "", "also write a LoRA adapter for the shape (random F16 factors of the blocks' attention and dense feed-forward matrices, alpha = rank) to this file, for -lora of the examples and llama.cpp's --lora")
	loraRank := fs.Int("lora-rank", 16, "the -lora adapter's rank")
	fuseQKV := fs.Bool("fuse-qkv", false, "write each block's attn_q, attn_k and attn_v (and their biases) as one attn_qkv, as convert_hf_to_gguf.py's --fuse-qkv does (refused for the architectures whose llama.cpp loader or graph cannot take it)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *list {
		for _, s := range shapes {
			fmt.Fprintf(stdout, "%-21s %-10s vocab %6d  embd %4d  layers %2d  heads %2d/%d  head dim %3d  ffn %5d  ctx %d\n",
				s.Name, s.Arch, s.Vocab, s.Embd, s.Layers, s.Heads, s.HeadsKV, s.headDim(), s.FFN, s.Context)
		}
		return nil
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *shapeName == "" || *out == "" {
		return fmt.Errorf("-shape and -o are required (shapes: %s)", strings.Join(names(shapes), ", "))
	}
	s, err := lookup(shapes, "shape", *shapeName)
	if err != nil {
		return err
	}
	ft, err := lookup(fileTypes, "type", *typeName)
	if err != nil {
		return err
	}
	switch {
	case *layers < 0:
		return fmt.Errorf("-layers %d is negative", *layers)
	case *layers > s.Layers:
		return fmt.Errorf("-layers %d: %s has %d", *layers, s.Name, s.Layers)
	case *layers > 0:
		s = s.keepLayers(*layers)
		if d := s.DeepSeek2; d != nil && s.Layers != 26 && s.Layers != 27 {
			// llama.cpp takes a deepseek2 without attention.q_lora_rank
			// only at a V2-Lite's block count: say 0 outright.
			dd := *d
			dd.QLoraKey = true
			s.DeepSeek2 = &dd
		}
		s.Name = fmt.Sprintf("%s, first %d blocks", s.Name, *layers)
		s = s.keepAttention()
	}
	switch {
	case *experts < 0 || *experts > 0 && (s.Experts == 0 || *experts > s.Experts || s.DeepSeek2 != nil && s.DeepSeek2.Groups > 0):
		return fmt.Errorf("-experts %d: %s has %d routed experts (deepseek2's groups are not cut)", *experts, s.Name, s.Experts)
	case *experts > 0 && s.Grove != nil && !s.groupsFit(*experts):
		return fmt.Errorf("-experts %d: %s's groups of %d experts must divide them into at least the %d used", *experts, s.Name, s.Grove.PerGroup, s.ExpertsUsed)
	case *experts > 0 && !s.groupsFit(*experts):
		return fmt.Errorf("-experts %d: %s's %d expert groups must be fewer, divide them and hold the %d used", *experts, s.Name, s.Routing.Groups, s.ExpertsUsed)
	case *experts > 0:
		s = s.keepExperts(*experts)
		s.Name = fmt.Sprintf("%s, %d experts", s.Name, *experts)
	}
	switch {
	case *vocab != 0 && (*vocab < 1024 || *vocab > s.Vocab):
		return fmt.Errorf("-vocab %d: want 1024 to %s's %d", *vocab, s.Name, s.Vocab)
	case *vocab > 0:
		s.Vocab = *vocab
		s.Name = fmt.Sprintf("%s, vocabulary of %d", s.Name, *vocab)
	}
	if *fuseQKV {
		if a := llm.LookupArch(s.Arch); a == nil || a.QKV == llm.QKVSeparate {
			return fmt.Errorf("-fuse-qkv: %s's loader here, as llama.cpp d32676d77's, refuses a fused attn_qkv", s.Arch)
		}
		s.FuseQKV = true
		s.Name += ", Q/K/V fused"
	}
	m, err := newModel(s, ft, *seed)
	if err != nil {
		return fmt.Errorf("%s %s: %w", s.Name, ft.Name, err)
	}
	start := time.Now()
	n, err := writeFile(*out, m)
	if err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Fprintf(stderr, "mkmodel: wrote %s: %s %s, %d tensors, %s params, %.2f GiB (%d bytes) in %.1fs (%.0f MiB/s)\n",
		*out, s.Name, ft.Name, len(m.tensors), cmdline.Count(m.params(), 1), float64(n)/(1<<30), n,
		el.Seconds(), float64(n)/(1<<20)/el.Seconds())
	if *imatrix != "" {
		if _, err := create(*imatrix, m.writeImatrix); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "mkmodel: wrote %s: an importance matrix of ones\n", *imatrix)
	}
	if *lora != "" {
		if *loraRank < 1 {
			return fmt.Errorf("-lora-rank %d: want at least 1", *loraRank)
		}
		n, err := create(*lora, func(w io.Writer) (int64, error) { return m.writeLoRA(w, *loraRank, *seed) })
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "mkmodel: wrote %s: a LoRA adapter of rank %d, %d bytes\n", *lora, *loraRank, n)
	}
	return nil
}

// writeFile writes m to path, removing the partial file on failure.
func writeFile(path string, m *model) (int64, error) { return create(path, m.writeTo) }

// create writes a new file at path with write, removing the partial file
// on failure.
func create(path string, write func(io.Writer) (int64, error)) (n int64, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	return write(f)
}
