package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
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
// out of range stop the server before it listens, naming the flag.
func TestSpeculationFlags(t *testing.T) {
	path := testutil.Testdata(t, "models/stories260K-f32.gguf")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-spec-type", "eagle"}, "-spec-type"},
		{[]string{"-spec-type", "ngram", "-draft-max", "65"}, "Draft"},
		{[]string{"-spec-type", "ngram", "-draft-max", "0"}, "-draft-max"},
		{[]string{"-spec-type", "ngram", "-draft-max", "4", "-draft-min", "5"}, "MinDraft"},
		{[]string{"-spec-type", "ngram", "-spec-ngram-size-n", "-1"}, "NGram"},
	} {
		err := run(context.Background(), append([]string{"-m", path, "-addr", "127.0.0.1:0"}, tc.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want one naming %s", tc.args, err, tc.want)
		}
	}
}
