package llm_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// documented is what an error from the API may wrap.
var documented = []error{llm.ErrBadModel, llm.ErrUnsupportedArch, llm.ErrUnsupportedType, llm.ErrContextFull,
	llm.ErrInvalidOption, llm.ErrOutOfMemoryBudget, llm.ErrBadState, llm.ErrClosed, llm.ErrBadToken,
	llm.ErrNoChatTemplate, llm.ErrBusy, context.Canceled, context.DeadlineExceeded}

func checkDocumented(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, llm.ErrInternal) {
		t.Errorf("%s: an internal error: %v", what, err)
		return
	}
	for _, want := range documented {
		if errors.Is(err, want) {
			return
		}
	}
	if _, ok := errors.AsType[*fs.PathError](err); ok {
		return // the file could not be opened: no such file, permission …
	}
	t.Errorf("%s: %v wraps none of the documented errors", what, err)
}

// TestMisuse does to a model and its sessions what a careless or hostile
// caller might: calls after Close on every method, nil contexts, readers
// and options, values out of range, empty and special-only prompts,
// enormous stop strings and limits, saves of another model. Each call must
// return (quickly) a documented error or a result; none may panic or
// report an internal error.
func TestMisuse(t *testing.T) {
	path := testutil.TempModel(t, testutil.TinyChat())
	m := load(t, path, llm.WithThreads(2), llm.WithLogger(quietLogger()), nil)
	ctx := context.Background()
	var nilCtx context.Context
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}

	t.Run("options", func(t *testing.T) {
		for name, o := range map[string]llm.Option{
			"context -1": llm.WithContextSize(-1), "context MaxInt": llm.WithContextSize(math.MaxInt),
			"batch -1": llm.WithBatchSize(-1), "batch 2^30": llm.WithBatchSize(1 << 30),
			"threads 0": llm.WithThreads(0), "threads 2^20": llm.WithThreads(1 << 20),
			"memory -1": llm.WithMemoryLimit(-1), "kv type 99": llm.WithKVType(99), "kv type -1": llm.WithKVType(-1),
			"weights 99": llm.WithWeights(99), "weights -1": llm.WithWeights(-1), "shift -1": llm.WithContextShift(-1),
			"shift MaxInt": llm.WithContextShift(math.MaxInt), "template broken": llm.WithChatTemplate("{% if"),
			"sessions 0": llm.WithSessions(0), "sessions -1": llm.WithSessions(-1),
		} {
			_, err := llm.Load(path, o, llm.WithLogger(quietLogger()))
			if !errors.Is(err, llm.ErrInvalidOption) || !strings.HasPrefix(err.Error(), "llm: ") || !strings.HasSuffix(err.Error(), "llm: invalid option") {
				t.Errorf("Load with %s: %v, want ErrInvalidOption said by llm", name, err)
			}
		}
		for name, o := range map[string]llm.SessionOption{
			"context 0": llm.WithContextSize(0), "batch 0": llm.WithBatchSize(0), "kv type 9": llm.WithKVType(9),
			"shift = context": llm.WithContextShift(m.Info().Context),
		} {
			if _, err := m.NewSession(o); !errors.Is(err, llm.ErrInvalidOption) {
				t.Errorf("NewSession with %s: %v, want ErrInvalidOption", name, err)
			}
		}
		s := session(t, m, nil, llm.WithContextSize(64))
		for name, o := range map[string]llm.GenerateOption{
			"max tokens -1": llm.MaxTokens(-1), "temperature NaN": llm.Temperature(float32(math.NaN())),
			"temperature -inf": llm.Temperature(float32(math.Inf(-1))), "top-k -5": llm.TopK(-5),
			"top-p NaN": llm.TopP(float32(math.NaN())), "min-p 7": llm.MinP(7), "repeat NaN": llm.RepeatPenalty(float32(math.NaN())),
			"frequency inf": llm.FrequencyPenalty(float32(math.Inf(1))), "presence NaN": llm.PresencePenalty(float32(math.NaN())),
			"last-n -7": llm.PenaltyLastN(-7), "stop empty": llm.Stop("a", ""),
		} {
			_, err := s.Generate(ctx, "the", o)
			if !errors.Is(err, llm.ErrInvalidOption) {
				t.Errorf("Generate with %s: %v, want ErrInvalidOption", name, err)
			}
		}
		// Values that are legal but extreme run and end.
		for name, o := range map[string][]llm.GenerateOption{
			"max tokens huge":   {llm.MaxTokens(math.MaxInt)},
			"top-k huge":        {llm.TopK(math.MaxInt), llm.MaxTokens(3)},
			"temperature huge":  {llm.Temperature(1e30), llm.MaxTokens(3)},
			"penalties huge":    {llm.RepeatPenalty(1e30), llm.FrequencyPenalty(1e30), llm.PenaltyLastN(-1), llm.MaxTokens(3)},
			"stop of 1 MiB":     {llm.Stop(strings.Repeat("ab", 1<<19)), llm.MaxTokens(60)},
			"10000 stops":       {llm.Stop(manyStops(10000)...), llm.MaxTokens(20)},
			"seed max":          {llm.Seed(math.MaxUint64), llm.MaxTokens(2)},
			"nil option":        {nil, llm.MaxTokens(2)},
			"stop of one space": {llm.Stop(" "), llm.MaxTokens(20)},
		} {
			s.Reset()
			start := time.Now()
			_, err := s.Generate(ctx, "Once upon a time", o...)
			checkDocumented(t, "Generate with "+name, err)
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("Generate with %s took %v", name, d)
			}
		}
	})

	t.Run("inputs", func(t *testing.T) {
		s := session(t, m, llm.WithContextSize(64))
		for name, call := range map[string]func() error{
			"Eval nil ctx":         func() error { _, err := s.Eval(nilCtx, []int32{1}); return err },
			"EvalAll nil ctx":      func() error { _, err := s.EvalAll(nilCtx, []int32{1}); return err },
			"Generate nil ctx":     func() error { _, err := s.Generate(nilCtx, "x"); return err },
			"Stream nil ctx":       func() error { return firstErr(s.Stream(nilCtx, "x")) },
			"Complete nil ctx":     func() error { return firstErr(s.Complete(nilCtx, "x")) },
			"Chat nil ctx":         func() error { _, err := s.Chat(nilCtx, msgs); return err },
			"ChatStream nil ctx":   func() error { return firstErr(s.ChatStream(nilCtx, msgs)) },
			"Save nil writer":      func() error { return s.Save(nil) },
			"Restore nil reader":   func() error { return s.Restore(nil) },
			"Eval no tokens":       func() error { _, err := s.Eval(ctx, nil); return err },
			"Eval token -1":        func() error { _, err := s.Eval(ctx, []int32{-1}); return err },
			"Eval token 2^31-1":    func() error { _, err := s.Eval(ctx, []int32{math.MaxInt32}); return err },
			"EvalAll past context": func() error { _, err := s.EvalAll(ctx, make([]int32, 65)); return err },
			"Eval past context":    func() error { _, err := s.Eval(ctx, make([]int32, 1000)); return err },
			"Detokenize -1":        func() error { _, err := m.Detokenize([]int32{-1}); return err },
			"empty prompt":         func() error { s.Reset(); _, err := s.Generate(ctx, ""); return err },
			"Complete empty":       func() error { return firstErr(s.Complete(ctx, "")) },
			"Chat no messages":     func() error { _, err := s.Chat(ctx, nil); return err },
			"Chat unknown role": func() error {
				_, err := s.Chat(ctx, []llm.Message{{Role: "wizard", Content: "x"}}, llm.MaxTokens(2))
				return err
			},
			"Restore garbage":     func() error { return s.Restore(strings.NewReader("LLMSTATE garbage")) },
			"Restore empty":       func() error { return s.Restore(strings.NewReader("")) },
			"Load empty path":     func() error { _, err := llm.Load(""); return err },
			"Load NUL path":       func() error { _, err := llm.Load("a\x00b.gguf"); return err },
			"Plan of a directory": func() error { _, err := llm.Plan(t.TempDir()); return err },
		} {
			err := call()
			if err == nil && !strings.HasPrefix(name, "Chat unknown") {
				t.Errorf("%s: no error", name)
			}
			checkDocumented(t, name, err)
		}
		// Special-token text as a prompt: plain text for Generate, special
		// tokens for Complete; either way it runs.
		for _, p := range []string{"<s></s><s>", "<|im_start|><|im_end|><|im_end|>", "</s>"} {
			s.Reset()
			_, err := s.Generate(ctx, p, llm.MaxTokens(3))
			checkDocumented(t, "Generate "+p, err)
			checkDocumented(t, "Complete "+p, firstErr(s.Complete(ctx, p, llm.MaxTokens(3))))
			_, err = s.Chat(ctx, []llm.Message{{Role: llm.RoleUser, Content: p}}, llm.MaxTokens(3))
			checkDocumented(t, "Chat "+p, err)
		}
		for _, id := range []int32{-1, math.MaxInt32, math.MinInt32} {
			_ = m.TokenText(id)
			_ = m.IsEndOfGeneration(id)
		}
	})

	t.Run("restore of another model", func(t *testing.T) {
		other := load(t, testutil.TempModel(t, testutil.TinyLlama()), llm.WithLogger(quietLogger()))
		_, saved := savedSession(t, other, []int32{1, 40, 41})
		s := session(t, m)
		if err := s.Restore(bytes.NewReader(saved)); !errors.Is(err, llm.ErrBadState) {
			t.Errorf("Restore of another model's save: %v, want ErrBadState", err)
		}
		if s.Len() != 0 {
			t.Errorf("a refused Restore left %d tokens", s.Len())
		}
	})

	t.Run("after Close", func(t *testing.T) {
		m, err := llm.Load(path, llm.WithLogger(quietLogger()))
		if err != nil {
			t.Fatal(err)
		}
		live := session(t, m)
		if _, err := live.Eval(ctx, []int32{1, 40}); err != nil {
			t.Fatal(err)
		}
		closed := session(t, m)
		closed.Close()
		var saved bytes.Buffer
		if err := live.Save(&saved); err != nil {
			t.Fatal(err)
		}
		sessionCalls := func(s *llm.Session) map[string]func() error {
			return map[string]func() error{
				"Eval":       func() error { _, err := s.Eval(ctx, []int32{1}); return err },
				"EvalAll":    func() error { _, err := s.EvalAll(ctx, []int32{1}); return err },
				"Generate":   func() error { _, err := s.Generate(ctx, "x", llm.MaxTokens(2)); return err },
				"Stream":     func() error { return firstErr(s.Stream(ctx, "x", llm.MaxTokens(2))) },
				"Complete":   func() error { return firstErr(s.Complete(ctx, "x", llm.MaxTokens(2))) },
				"Chat":       func() error { _, err := s.Chat(ctx, msgs, llm.MaxTokens(2)); return err },
				"ChatStream": func() error { return firstErr(s.ChatStream(ctx, msgs, llm.MaxTokens(2))) },
				"Save":       func() error { return s.Save(&bytes.Buffer{}) },
				"Restore":    func() error { return s.Restore(bytes.NewReader(saved.Bytes())) },
			}
		}
		check := func(what string, s *llm.Session) {
			for name, call := range sessionCalls(s) {
				if err := call(); !errors.Is(err, llm.ErrClosed) {
					t.Errorf("%s: %s: %v, want ErrClosed", what, name, err)
				}
			}
			s.Reset()
			_, _, _, _, _, _ = s.Context(), s.Tokens(), s.Len(), s.KVStats(), s.Logits(), s.Usage()
		}
		check("closed session", closed)
		if closed.Len() != 0 || closed.Tokens() != nil && len(closed.Tokens()) != 0 {
			t.Errorf("a closed session holds %d tokens", closed.Len())
		}
		// Close the model from several goroutines at once.
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if err := m.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
		}
		wg.Wait()
		check("session of a closed model", live)
		check("closed session of a closed model", closed)
		for name, call := range map[string]func() error{
			"NewSession":      func() error { _, err := m.NewSession(); return err },
			"Tokenize":        func() error { _, err := m.Tokenize("x"); return err },
			"TokenizeSpecial": func() error { _, err := m.TokenizeSpecial("x"); return err },
			"Detokenize":      func() error { _, err := m.Detokenize([]int32{1}); return err },
		} {
			if err := call(); !errors.Is(err, llm.ErrClosed) {
				t.Errorf("closed model: %s: %v, want ErrClosed", name, err)
			}
		}
		_, _, _, _ = m.Info(), m.Plan(), m.BOS(), m.EOS()
		_, _ = m.TokenText(1), m.IsEndOfGeneration(2)
		if err := live.Close(); err != nil {
			t.Errorf("closing a session after its model: %v", err)
		}
		if err := m.Close(); err != nil {
			t.Errorf("third Close: %v", err)
		}
	})

	t.Run("nil receivers", func(t *testing.T) {
		// As after a failed Load or NewSession whose error was dropped.
		var nm *llm.Model
		var ns *llm.Session
		for name, call := range map[string]func() error{
			"Model.NewSession": func() error { _, err := nm.NewSession(); return err },
			"Model.Tokenize":   func() error { _, err := nm.Tokenize("x"); return err },
			"Model.Close":      func() error { return nm.Close() },
			"Session.Eval":     func() error { _, err := ns.Eval(ctx, []int32{1}); return err },
			"Session.Stream":   func() error { return firstErr(ns.Stream(ctx, "x")) },
			"Session.Chat":     func() error { _, err := ns.Chat(ctx, msgs); return err },
			"Session.Save":     func() error { return ns.Save(&bytes.Buffer{}) },
			"Session.Close":    func() error { return ns.Close() },
		} {
			if err := call(); !errors.Is(err, llm.ErrClosed) {
				t.Errorf("%s on nil: %v, want ErrClosed", name, err)
			}
		}
		_, _, _, _ = ns.Len(), ns.Tokens(), nm.Info(), nm.BOS()
		ns.Reset()
	})
}

func manyStops(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "zz" + strings.Repeat("q", i%50) + string(rune('a'+i%26))
	}
	return out
}
