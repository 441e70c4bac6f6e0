// Command chat is an interactive terminal chat with a GGUF model, using the
// model's own chat template.
//
//	go run ./examples/chat -m model.gguf
//	go run ./examples/chat -m ollama:qwen3:8b -system "Answer briefly."
//
// Type a message and press Enter; the answer streams as it is generated and
// ends with a line of statistics. The conversation is kept, and each turn
// evaluates only its new tokens (the KV cache holds the rest).
//
// Commands: /reset forgets the conversation, /system TEXT sets the system
// prompt (and starts over), /help lists them. Ctrl-C stops the current
// answer; at the prompt, a second Ctrl-C or Ctrl-D exits.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/examples/internal/cli"
	"github.com/lowmem/llm/internal/cmdline"
)

func main() {
	// Ctrl-C is ours from the start: it stops an answer, or exits at the prompt.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	cmdline.Exit("chat", run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, sig))
}

type chat struct {
	s      *llm.Session
	out    io.Writer
	system string
	msgs   []llm.Message
	gen    []llm.GenerateOption
	dim    bool // the output is a terminal: show reasoning dimmed
}

func run(args []string, in io.Reader, out, stderr io.Writer, sig <-chan os.Signal) error {
	var mf cli.ModelFlags
	fs := mf.FlagSet("chat", stderr)
	system := fs.String("system", "", "system prompt")
	n := fs.Int("n", 1024, "most tokens in one answer")
	temp := fs.Float64("temp", 0.8, "sampling temperature (0 = greedy)")
	seed := fs.Uint64("seed", 1, "sampling seed")
	think := fs.Bool("think", true, "let reasoning models think before answering (enable_thinking)")
	effort := fs.String("effort", "", "gpt-oss's reasoning effort: low, medium or high (its template's reasoning_effort)")
	var jf cli.JSONFlags
	jf.Register(fs)
	if err := fs.Parse(cli.LoRAArgs(args)); err != nil {
		return err
	}
	jsonOpts, err := jf.Options()
	if err != nil {
		return err
	}
	m, done, err := mf.Load(stderr)
	if err != nil {
		return err
	}
	defer done()
	s, err := m.NewSession()
	if err != nil {
		return err
	}
	defer s.Close()
	info := m.Info()
	fmt.Fprintf(stderr, "model: %s %s, context %d. Ctrl-C stops an answer; Ctrl-D or a second Ctrl-C at the prompt exits; /help.\n",
		info.Architecture, info.FileType, info.Context)
	c := &chat{s: s, out: out, gen: []llm.GenerateOption{llm.MaxTokens(*n), llm.Temperature(float32(*temp)),
		llm.Seed(*seed), llm.WithThinking(*think), llm.WithReasoningEffort(*effort)}}
	c.gen = append(c.gen, jsonOpts...)
	if f, ok := out.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			c.dim = true
		}
	}
	c.setSystem(*system)

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	interrupted := false
	for {
		fmt.Fprint(out, "> ")
		var line string
		select {
		case l, ok := <-lines:
			if !ok { // Ctrl-D
				fmt.Fprintln(out)
				return nil
			}
			line = strings.TrimSpace(l)
		case <-sig:
			if interrupted {
				fmt.Fprintln(out)
				return nil
			}
			interrupted = true
			fmt.Fprintln(out, "\n(Ctrl-C again or Ctrl-D to exit)")
			continue
		}
		interrupted = false
		switch {
		case line == "":
		case line == "/help":
			fmt.Fprintln(out, "/reset: forget the conversation | /system TEXT: set the system prompt and start over | Ctrl-C: stop an answer | Ctrl-D: exit")
		case line == "/reset":
			c.setSystem(c.system)
			fmt.Fprintln(out, "[conversation cleared]")
		case line == "/system" || strings.HasPrefix(line, "/system "):
			c.setSystem(strings.TrimSpace(strings.TrimPrefix(line, "/system")))
			fmt.Fprintf(out, "[system prompt set to %q; conversation cleared]\n", c.system)
		case strings.HasPrefix(line, "/"):
			fmt.Fprintf(out, "[unknown command %s; /help lists them]\n", line)
		default:
			if err := c.answer(line, sig); err != nil {
				return err
			}
		}
	}
}

// setSystem starts the conversation over with a system prompt.
func (c *chat) setSystem(text string) {
	c.system = text
	c.msgs = c.msgs[:0]
	if text != "" {
		c.msgs = append(c.msgs, llm.Message{Role: llm.RoleSystem, Content: text})
	}
	c.s.Reset()
}

// answer streams the model's reply to line; Ctrl-C (sig) stops it, and
// what was said so far stays in the conversation.
func (c *chat) answer(line string, sig <-chan os.Signal) error {
	c.msgs = append(c.msgs, llm.Message{Role: llm.RoleUser, Content: line})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-done:
		}
	}()
	reply := llm.Message{Role: llm.RoleAssistant}
	var text, thinking strings.Builder
	inThought := false
	var err error
	for tok, e := range c.s.ChatStream(ctx, c.msgs, c.gen...) {
		if err = e; err != nil {
			break
		}
		if tok.Thinking != "" {
			if !inThought && c.dim {
				fmt.Fprint(c.out, "\x1b[2m")
			}
			inThought = true
			thinking.WriteString(tok.Thinking)
			fmt.Fprint(c.out, tok.Thinking)
		}
		if tok.Text != "" {
			if inThought {
				inThought = false
				if c.dim {
					fmt.Fprint(c.out, "\x1b[0m")
				}
				fmt.Fprint(c.out, "\n\n")
			}
			text.WriteString(tok.Text)
			fmt.Fprint(c.out, tok.Text)
		}
		for _, tc := range tok.ToolCalls {
			fmt.Fprintf(c.out, "[tool call %s(%s)]", tc.Name, tc.Arguments)
			reply.ToolCalls = append(reply.ToolCalls, tc)
		}
	}
	if inThought && c.dim {
		fmt.Fprint(c.out, "\x1b[0m")
	}
	reply.Content, reply.Thinking = text.String(), thinking.String()
	fmt.Fprintln(c.out)
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(c.out, "[stopped]")
	case errors.Is(err, llm.ErrContextFull):
		fmt.Fprintln(c.out, "[the conversation no longer fits the context: /reset to start over]")
		c.msgs = c.msgs[:len(c.msgs)-1]
		return nil
	case err != nil:
		return err
	}
	c.msgs = append(c.msgs, reply)
	u := c.s.Usage()
	fmt.Fprintf(c.out, "[%d tokens, %.1f tok/s | prompt %d tokens, %d reused, %.1f tok/s]\n",
		u.GeneratedTokens, rate(u.GeneratedTokens, u.GenerateTime.Seconds()),
		u.PromptTokens, u.ReusedTokens, rate(u.PromptTokens-u.ReusedTokens, u.PromptTime.Seconds()))
	return nil
}

func rate(n int, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}
