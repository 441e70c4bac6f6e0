// Command embed prints the embedding of each text given and how alike the
// texts are (the cosine similarity of every pair); with -query and a
// reranker (a file whose pooling_type is rank), how relevant each text is
// to the query, most relevant first.
//
//	go run ./examples/embed -m Qwen3-Embedding-0.6B-Q8_0.gguf "a cat" "a kitten" "tax law"
//	go run ./examples/embed -m bge-reranker.gguf -query "what do pandas eat?" "Pandas eat bamboo." "Paris is in France."
//
// Texts come from the arguments, or one a line from standard input. -m is
// a GGUF file or ollama:NAME[:TAG]; without it a small random-weight
// model is built in a temporary directory, so the command works on a
// fresh machine (its vectors mean nothing).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"sort"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/examples/internal/cli"
	"github.com/lowmem/llm/internal/cmdline"
)

func main() {
	cmdline.Exit("embed", run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var mf cli.ModelFlags
	fs := mf.FlagSet("embed", stderr)
	pooling := fs.String("pooling", "", "mean, cls or last (default: the file's, else last; mean for an encoder such as bert)")
	dims := fs.Int("dims", 0, "keep the first n dimensions (0 = all)")
	truncate := fs.Bool("truncate", false, "embed the start of a text longer than the context instead of failing")
	raw := fs.Bool("raw", false, "do not normalise the vectors to unit length")
	asJSON := fs.Bool("json", false, "print each vector as a JSON line instead of the similarities")
	query := fs.String("query", "", "rank the texts by their relevance to this query with a reranker (Model.Rerank) instead of embedding them")
	if err := fs.Parse(cli.LoRAArgs(args)); err != nil {
		return err
	}
	texts := fs.Args()
	if len(texts) == 0 {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 1<<16), 1<<24)
		for sc.Scan() {
			texts = append(texts, sc.Text())
		}
		if err := sc.Err(); err != nil {
			return err
		}
	}
	if len(texts) == 0 {
		return fmt.Errorf("no texts: give them as arguments or one a line on standard input")
	}
	opts := []llm.EmbedOption{llm.WithDimensions(*dims), llm.WithTruncate(*truncate), llm.WithNormalize(!*raw)}
	switch *pooling {
	case "":
	case "mean":
		opts = append(opts, llm.WithPooling(llm.PoolingMean))
	case "cls":
		opts = append(opts, llm.WithPooling(llm.PoolingCLS))
	case "last":
		opts = append(opts, llm.WithPooling(llm.PoolingLast))
	default:
		return fmt.Errorf("-pooling %q: want mean, cls or last", *pooling)
	}

	m, done, err := mf.Load(stderr)
	if err != nil {
		return err
	}
	defer done()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *query != "" {
		return rerank(ctx, m, *query, texts, stdout)
	}
	vs, err := m.Embed(ctx, texts, opts...)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for i, v := range vs {
			if err := enc.Encode(struct {
				Text      string    `json:"text"`
				Embedding []float32 `json:"embedding"`
			}{texts[i], v}); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(stdout, "%d texts, %d dimensions; cosine similarity:\n", len(vs), len(vs[0]))
	for i := range vs {
		for j := range vs {
			fmt.Fprintf(stdout, "%7.3f", cosine(vs[i], vs[j]))
		}
		fmt.Fprintf(stdout, "  %.60q\n", texts[i])
	}
	return nil
}

// rerank prints each text's relevance score to query, most relevant
// first.
func rerank(ctx context.Context, m *llm.Model, query string, texts []string, w io.Writer) error {
	scores, err := m.Rerank(ctx, query, texts)
	if err != nil {
		return err
	}
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	fmt.Fprintf(w, "%d texts by relevance to %.60q:\n", len(texts), query)
	for _, i := range order {
		fmt.Fprintf(w, "%10.4f  %.60q\n", scores[i], texts[i])
	}
	return nil
}

// cosine is a·b / (|a| |b|): 1 for the same direction.
func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}
