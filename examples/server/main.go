// Command server serves a GGUF model over HTTP with OpenAI's API
// (POST /v1/chat/completions, /v1/completions and /v1/responses, streamed
// or not; POST /v1/embeddings, /v1/rerank; GET /v1/models, /health,
// /metrics), Anthropic's (POST /v1/messages), llama-server's own
// (POST /completion, /infill, /embedding, /tokenize, /detokenize,
// /apply-template; GET /props, /slots) and Ollama's (/api/chat,
// /api/generate, /api/embed, /api/embeddings, /api/show, /api/tags,
// /api/ps, /api/version), so that unmodified clients of each can use it.
//
//	go run ./examples/server -m model.gguf -addr 127.0.0.1:8080 -parallel 2
//	curl http://127.0.0.1:8080/v1/chat/completions -d '{"messages":[{"role":"user","content":"Hi"}]}'
//	curl http://127.0.0.1:8080/infill -d '{"input_prefix":"def add(a, b):\n    ","input_suffix":"\n"}'
//	curl http://127.0.0.1:8080/v1/embeddings -d '{"input":["a cat","a dog"]}'
//	curl http://127.0.0.1:8080/api/chat -d '{"model":"m","stream":false,"messages":[{"role":"user","content":"Hi"}]}'
//
// -m is a GGUF file or ollama:NAME[:TAG]; without it the server runs a tiny
// random-weight model, to try the API. -parallel N serves N requests at once,
// each on its own session whose KV cache the memory plan counts; -queue
// bounds how many more wait (429 past it). -md FILE drafts with a small
// model of the same vocabulary (speculative decoding, as llama-server's
// --model-draft; -draft-max, -draft-min, -draft-p-min, -cd, -mem-draft).
// SIGTERM or Ctrl-C stops taking requests, lets those in flight finish for
// up to -drain, then cancels them. -slot-save-path DIR enables
// llama-server's slot persistence: POST /slots/0?action=save with
// {"filename":"a.bin"} writes slot 0's state to DIR/a.bin, action=restore
// reads it back (the next request reuses its cached prompt), action=erase
// empties the slot. GET /slots shows each slot's last request's sampling
// settings and progress; -no-slots hides them (501), as llama-server's
// --no-slots.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/examples/internal/cli"
	"github.com/lowmem/llm/internal/cmdline"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmdline.Exit("server", run(ctx, os.Args[1:], os.Stderr))
}

// run serves until ctx ends, then shuts down gracefully.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	var mf cli.ModelFlags
	fs := mf.FlagSet("server", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	parallel := fs.Int("parallel", 1, "requests generated at once, one session (and KV cache) each")
	queue := fs.Int("queue", 16, "requests that may wait for a free session; more get 429")
	maxBody := fs.String("max-body", "1M", "largest request body")
	name := fs.String("name", "", "model name in the API (default: the file's name)")
	drain := fs.Duration("drain", 30*time.Second, "on SIGTERM, how long requests in flight may finish before they are cancelled")
	noSlots := fs.Bool("no-slots", false, "answer GET /slots with 501, as llama-server's --no-slots (/slots shows each slot's last request's sampling settings and progress)")
	slotSave := fs.String("slot-save-path", "", "directory for POST /slots/{id}?action=save and restore (llama-server's --slot-save-path); without it slot actions answer 501")
	var sf specFlags
	sf.register(fs)
	if err := fs.Parse(cli.LoRAArgs(args)); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := sf.checkType(); err != nil {
		return err
	}
	if *parallel < 1 || *queue < 0 {
		return fmt.Errorf("-parallel %d -queue %d: want at least 1 and 0", *parallel, *queue)
	}
	body, err := cli.ParseBytes(*maxBody)
	if err != nil {
		return fmt.Errorf("-max-body %q: %w", *maxBody, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	draft, extra, err := sf.load(&mf, *parallel, log)
	if err != nil {
		return err
	}
	if draft != nil {
		defer draft.Close()
	}
	m, done, err := mf.Load(stderr, append(extra, llm.WithSessions(*parallel), llm.WithLogger(log))...)
	if err != nil {
		return err
	}
	defer done()
	id := *name
	if id == "" {
		id = strings.TrimSuffix(filepath.Base(mf.Path), ".gguf")
	}
	logPlan(log, m, *parallel)
	b, err := server.FromModel(m, id)
	if err != nil {
		return err
	}
	if err := sf.speculate(fs, b, draft); err != nil {
		return err
	}
	opts := []server.Option{server.WithParallel(*parallel), server.WithQueue(*queue),
		server.WithMaxBodyBytes(body), server.WithLogger(log)}
	if *slotSave != "" {
		opts = append(opts, server.WithSlotSavePath(*slotSave))
	}
	if *noSlots {
		opts = append(opts, server.WithSlotsEndpoint(false))
	}
	srv, err := server.New(b, opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	if b.Info().Template == nil {
		log.Warn("the model has no chat template: /v1/chat/completions and /api/chat answer 400; give one with -template")
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("listening", "url", "http://"+ln.Addr().String(), "model", id, "parallel", *parallel, "queue", *queue)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight", "drain", *drain)
	dctx, cancel := context.WithTimeout(context.Background(), *drain)
	defer cancel()
	if err := srv.Shutdown(dctx); errors.Is(err, context.DeadlineExceeded) {
		log.Warn("requests still running after the drain time were cancelled")
	}
	// Every handler has returned; close the listener and idle connections.
	hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer hcancel()
	if err := hs.Shutdown(hctx); err != nil {
		return err
	}
	log.Info("shut down")
	return nil
}

// logPlan says what the memory plan holds for the sessions.
func logPlan(log *slog.Logger, m *llm.Model, parallel int) {
	p := m.Plan()
	var kvAll int64
	for _, c := range p.Components {
		if c.Name == memplan.KVComponent {
			kvAll = c.Bytes
		}
	}
	log.Info("memory plan", "sessions", parallel, "context", p.Context, "kv", p.KVType,
		"kv_per_session", memplan.FormatBytes(kvAll/int64(parallel)), "kv_start_per_session", memplan.FormatBytes(p.InitialKV),
		"total", memplan.FormatBytes(p.Total), "limit", memplan.FormatBytes(p.Limit), "weights", p.Weights)
	for _, s := range p.Steps {
		log.Warn("memory plan degraded", "step", s)
	}
}
