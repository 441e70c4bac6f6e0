package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lowmem/llm"
	// Only the test uses internal packages.
	"github.com/lowmem/llm/internal/llmtest"
	"github.com/lowmem/llm/internal/testutil"
)

// longSeed finds a seed with which the model's reply to "hi" runs to n
// tokens, so that a request is still generating when the test signals.
func longSeed(t *testing.T, path string, n int) int {
	t.Helper()
	_, s := llmtest.Open(t, path, llm.WithThreads(1))
	for seed := 1; seed < 100; seed++ {
		if _, err := s.Chat(context.Background(), []llm.Message{{Role: "user", Content: "hi"}}, llm.MaxTokens(n), llm.Seed(uint64(seed))); err != nil {
			t.Fatal(err)
		}
		if s.Usage().Finish == llm.FinishLength {
			return seed
		}
	}
	t.Fatal("no seed gives a long reply")
	return 0
}

// TestSIGTERM runs the server binary, starts a streamed request and sends
// SIGTERM while it generates: with time to drain, the request finishes
// whole; without, it is cancelled. Either way the process exits cleanly.
func TestSIGTERM(t *testing.T) {
	bin := llmtest.BuildCommand(t)
	model := testutil.TempModel(t, testutil.TinyChat())
	const tokens = 600
	seed := longSeed(t, model, tokens)
	for _, tc := range []struct {
		drain     string
		want      string // the stream's last event
		logs      string
		finishing bool
	}{
		{"30s", "[DONE]", "shut down", true},
		{"1ms", `"the server shut down during generation"`, "cancelled", false},
	} {
		t.Run("drain "+tc.drain, func(t *testing.T) {
			cmd := exec.Command(bin, "-m", model, "-addr", "127.0.0.1:0", "-t", "1", "-drain", tc.drain)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			logs := bufio.NewScanner(stderr)
			url := ""
			var log strings.Builder
			for url == "" && logs.Scan() {
				log.WriteString(logs.Text() + "\n")
				if m := regexp.MustCompile(`msg=listening url=(\S+)`).FindStringSubmatch(logs.Text()); m != nil {
					url = m[1]
				}
			}
			if url == "" {
				t.Fatalf("no listening line:\n%s", log.String())
			}
			resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(
				`{"stream":true,"messages":[{"role":"user","content":"hi"}],"max_tokens":`+strconv.Itoa(tokens)+`,"seed":`+strconv.Itoa(seed)+`}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			events := bufio.NewScanner(resp.Body)
			if !events.Scan() || !strings.Contains(events.Text(), `"role":"assistant"`) {
				t.Fatalf("first event %q", events.Text())
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			last, n := "", 0
			for events.Scan() {
				if e := strings.TrimPrefix(events.Text(), "data: "); e != "" {
					last = e
					n++
				}
			}
			if !strings.Contains(last, tc.want) {
				t.Errorf("stream of %d events ends %q, want %s", n, last, tc.want)
			}
			if tc.finishing && n < tokens/2 {
				t.Errorf("only %d events: the request did not finish", n)
			}
			done := make(chan error, 1)
			go func() {
				rest, _ := io.ReadAll(stderr)
				log.Write(rest)
				done <- cmd.Wait()
			}()
			select {
			case err := <-done:
				if err != nil || !strings.Contains(log.String(), tc.logs) {
					t.Errorf("exit: %v\n%s", err, log.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("the server did not exit after SIGTERM:\n%s", log.String())
			}
		})
	}
}

// TestSpeculationFlags: -spec-type takes none or ngram, and draft sizes
// out of range, a draft model that does not load, does not fit -mem or
// whose vocabulary differs stop the server before it listens, naming the
// flag or the problem.
func TestSpeculationFlags(t *testing.T) {
	path := testutil.Testdata(t, "models/stories260K-f32.gguf")
	tiny := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := testutil.WriteModelFile(tiny, testutil.TinyLlama()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-spec-type", "eagle"}, "-spec-type"},
		{[]string{"-spec-type", "ngram", "-draft-max", "65"}, "Draft"},
		{[]string{"-spec-type", "ngram", "-draft-max", "0"}, "-draft-max"},
		{[]string{"-spec-type", "ngram", "-draft-max", "4", "-draft-min", "5"}, "MinDraft"},
		{[]string{"-spec-type", "ngram", "-spec-ngram-size-n", "-1"}, "NGram"},
		{[]string{"-md", "/nonexistent.gguf"}, "draft model"},
		{[]string{"--model-draft", path, "-draft-max", "0"}, "-draft-max"},
		{[]string{"-md", path, "--draft-p-min", "1.5"}, "PMin"},
		{[]string{"-md", path, "-cd", "-1"}, "-c -1"},
		{[]string{"-md", path, "-mem", "1M"}, "the draft model's plan takes"},
		{[]string{"-md", tiny}, "more than 128 apart"},
	} {
		err := run(context.Background(), append([]string{"-m", path, "-addr", "127.0.0.1:0"}, tc.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want one naming %s", tc.args, err, tc.want)
		}
	}
}

// TestSlotSavePathFlag: -slot-save-path must name a directory.
func TestSlotSavePathFlag(t *testing.T) {
	model := testutil.TempModel(t, testutil.TinyChat())
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(t.TempDir(), "missing")} {
		err := run(context.Background(), []string{"-m", model, "-addr", "127.0.0.1:0", "-slot-save-path", dir}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("-slot-save-path %s: err = %v, want one saying it is not a directory", dir, err)
		}
	}
}

// lockedBuffer is a strings.Builder written by the server's goroutine and
// read by the test's.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serve runs the server with args (and an address of its choosing)
// until the test ends, and returns its URL.
func serve(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var logs lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append(args, "-addr", "127.0.0.1:0"), &logs) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v\n%s", err, logs.String())
		}
	})
	listening := regexp.MustCompile(`msg=listening url=(\S+)`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := listening.FindStringSubmatch(logs.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("the server did not listen:\n%s", logs.String())
	return ""
}

// TestDraftModelServes: with -md (and -mem, which the draft's plan is
// taken from) the server listens, GET /props reports the draft settings
// and a completion is served.
func TestDraftModelServes(t *testing.T) {
	path := testutil.Testdata(t, "models/stories260K-f32.gguf")
	url := serve(t, "-m", path, "-t", "1", "-mem", "256M", "-md", path, "-draft-p-min", "0.5")
	resp, err := http.Get(url + "/props")
	if err != nil {
		t.Fatal(err)
	}
	props, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(props), `"speculative.n_max":3`) || !strings.Contains(string(props), `"speculative.p_min":0.5`) {
		t.Errorf("/props: %s", props)
	}
	resp, err = http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"Once upon a time","max_tokens":20,"temperature":0}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"text"`) {
		t.Errorf("completion: %d %s", resp.StatusCode, body)
	}
}

// TestNoSlotsFlag: GET /slots answers the slots by default, as
// llama-server's does, and 501 with -no-slots (llama-server's --no-slots).
func TestNoSlotsFlag(t *testing.T) {
	model := testutil.TempModel(t, testutil.TinyChat())
	for _, tc := range []struct {
		args   []string
		status int
	}{
		{nil, 200},
		{[]string{"-no-slots"}, 501},
		{[]string{"--no-slots"}, 501},
	} {
		url := serve(t, append([]string{"-m", model, "-t", "1"}, tc.args...)...)
		resp, err := http.Get(url + "/slots")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%v: GET /slots %d %s, want %d", tc.args, resp.StatusCode, body, tc.status)
		}
	}
}

// TestLoRAFlagsRefused: -lora and -lora-scaled reach Load, which refuses
// a missing file and an adapter of another architecture by name.
func TestLoRAFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	tiny, qwen := filepath.Join(dir, "tiny.gguf"), filepath.Join(dir, "qwen.gguf")
	if err := testutil.WriteModelFile(tiny, testutil.TinyLlama()); err != nil {
		t.Fatal(err)
	}
	if err := testutil.WriteModelFile(qwen, testutil.TinyQwen2()); err != nil {
		t.Fatal(err)
	}
	qb, err := os.ReadFile(qwen)
	if err != nil {
		t.Fatal(err)
	}
	ab, err := testutil.LoRABytes(qb, testutil.LoRASpec{Tensors: []string{"blk.0.attn_q.weight"}, Rank: 2})
	if err != nil {
		t.Fatal(err)
	}
	adapter := filepath.Join(dir, "qwen-lora.gguf")
	if err := os.WriteFile(adapter, ab, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lora", filepath.Join(dir, "none.gguf")}, "none.gguf"},
		{[]string{"--lora-scaled", adapter, "0.5"}, "qwen2"},
		{[]string{"-lora-scaled", adapter + ":0.5"}, "qwen2"},
		{[]string{"-lora-scaled", adapter}, "FNAME:SCALE"},
	} {
		err := run(context.Background(), append([]string{"-m", tiny, "-addr", "127.0.0.1:0"}, tc.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want one naming %s", tc.args, err, tc.want)
		}
	}
}
