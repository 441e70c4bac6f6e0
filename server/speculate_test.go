package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// TestModelSpeculation: a server whose Model speculates (Speculate, the
// example server's -spec-type ngram) drafts for a request, a request's
// speculative.n_max of 0 turns it off, and values out of range are 400s
// naming the field, as is a bad server-wide setting.
func TestModelSpeculation(t *testing.T) {
	m := loadModel(t, testutil.Testdata(t, "models/stories260K-f32.gguf"), llm.WithContextSize(256))
	b, err := FromModel(m, "stories")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Speculate(llm.PromptLookup{Draft: 65}); !errors.Is(err, llm.ErrInvalidOption) || !strings.Contains(err.Error(), "Draft") {
		t.Errorf("Speculate with Draft 65: err = %v, want ErrInvalidOption naming Draft", err)
	}
	if err := b.Speculate(llm.PromptLookup{Draft: 6, NGram: 2}); err != nil {
		t.Fatal(err)
	}
	hs, usage := serveOne(t, b)
	if r, err := http.Get(hs.URL + "/slots"); err != nil {
		t.Error(err)
	} else {
		var slots []map[string]any
		if json.NewDecoder(r.Body).Decode(&slots) != nil || len(slots) != 1 || slots[0]["speculative"] != true {
			t.Errorf("/slots of a speculating server: %v", slots)
		}
		r.Body.Close()
	}

	prompt, _ := json.Marshal("Once upon a time, there was a little girl named Lily. She liked to play with her ball. " +
		"One day, Lily went to the park with her mom. Once upon a time, there was a little girl named Lily. She liked")
	req := `{"model":"stories","prompt":` + string(prompt) + `,"max_tokens":80,"temperature":0`
	var texts [2]string
	for i, extra := range []string{"", `,"speculative.n_max":0`} {
		resp, body := post(t, hs.URL+"/v1/completions", req+extra+"}")
		var c struct {
			Choices []struct{ Text string } `json:"choices"`
			Timings map[string]float64      `json:"timings"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(body, &c) != nil || len(c.Choices) != 1 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		texts[i] = c.Choices[0].Text
		u := usage()
		if on := i == 0; (u.AcceptedTokens > 0) != on || (u.DraftTokens > 0) != on {
			t.Errorf("request %d: %d drafted, %d accepted, want speculation %v", i, u.DraftTokens, u.AcceptedTokens, on)
		}
		checkDraftTimings(t, fmt.Sprint("request ", i), c.Timings, u)
	}
	if texts[0] == "" {
		t.Error("speculation generated nothing")
	}
	for _, tc := range []struct{ extra, param string }{
		{`,"speculative.n_max":65`, "speculative.n_max"},
		{`,"speculative.n_max":-1`, "speculative.n_max"},
		{`,"speculative.n_min":-2`, "speculative.n_min"},
	} {
		resp, body := post(t, hs.URL+"/v1/completions", req+tc.extra+"}")
		if resp.StatusCode != 400 || !strings.Contains(string(body), `"param":"`+tc.param+`"`) {
			t.Errorf("%s: status %d, %s; want 400 naming %s", tc.extra, resp.StatusCode, body, tc.param)
		}
	}
}

// TestModelDraft: a server whose Model drafts with a draft model (Draft,
// the example server's -md) drafts for a request by default (the slots'
// sessions own draft sessions), a request's speculative.n_max of 0 turns
// it off, speculative.p_min of 1 leaves fewer drafts, values out of range
// are 400s naming the field, and GET /props reports the settings.
func TestModelDraft(t *testing.T) {
	load := func(file string) *llm.Model {
		return loadModel(t, testutil.Testdata(t, "models/"+file), llm.WithContextSize(256))
	}
	m, d := load("stories260K-f32.gguf"), load("stories260K-f16.gguf")
	b, err := FromModel(m, "stories")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Draft(d, llm.Drafting{Draft: 4, PMin: 2}); !errors.Is(err, llm.ErrInvalidOption) || !strings.Contains(err.Error(), "PMin") {
		t.Errorf("Draft with PMin 2: err = %v, want ErrInvalidOption naming PMin", err)
	}
	if err := b.Draft(d, llm.Drafting{Draft: 6, MinDraft: 1, PMin: 0.5}); err != nil {
		t.Fatal(err)
	}
	hs, usage := serveOne(t, b)

	req := `{"model":"stories","prompt":"Once upon a time, there was a little girl","max_tokens":60,"temperature":0`
	var drafted [3]int
	for i, extra := range []string{"", `,"speculative.n_max":0`, `,"speculative.p_min":1`} {
		resp, body := post(t, hs.URL+"/v1/completions", req+extra+"}")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		u := usage()
		drafted[i] = u.DraftTokens
		var c struct{ Timings map[string]float64 }
		if err := json.Unmarshal(body, &c); err != nil {
			t.Fatal(err)
		}
		checkDraftTimings(t, fmt.Sprint("request ", i), c.Timings, u)
	}
	// llama-server's native answer and a streamed chat's last chunk carry
	// the same counts.
	resp, body := post(t, hs.URL+"/completion", `{"prompt":"Once upon a time, there was a little girl","n_predict":60,"temperature":0}`)
	var nat struct{ Timings map[string]float64 }
	if resp.StatusCode != 200 || json.Unmarshal(body, &nat) != nil {
		t.Fatalf("/completion: status %d: %s", resp.StatusCode, body)
	}
	checkDraftTimings(t, "/completion", nat.Timings, usage())
	if drafted[0] == 0 || drafted[1] != 0 || drafted[2] >= drafted[0] {
		t.Errorf("drafted %v (default, n_max 0, p_min 1), want some, none, fewer", drafted)
	}
	for _, tc := range []struct{ extra, param string }{
		{`,"speculative.p_min":1.5`, "speculative.p_min"},
		{`,"speculative.p_min":-0.1`, "speculative.p_min"},
		{`,"speculative.n_max":65`, "speculative.n_max"},
	} {
		resp, body := post(t, hs.URL+"/v1/completions", req+tc.extra+"}")
		if resp.StatusCode != 400 || !strings.Contains(string(body), `"param":"`+tc.param+`"`) {
			t.Errorf("%s: status %d, %s; want 400 naming %s", tc.extra, resp.StatusCode, body, tc.param)
		}
	}
	_, props := get(t, hs.URL+"/props")
	if !strings.Contains(props, `"speculative.n_max":6`) || !strings.Contains(props, `"speculative.p_min":0.5`) {
		t.Errorf("/props: %s, want the draft settings", props)
	}
}

// checkDraftTimings checks that a reply's timings report the drafts u
// counts, as llama-server does: draft_n and draft_n_accepted when
// speculation drafted, neither when it did not.
func checkDraftTimings(t *testing.T, what string, tm map[string]float64, u llm.Usage) {
	t.Helper()
	if tm == nil || tm["predicted_n"] != float64(u.GeneratedTokens) {
		t.Errorf("%s: timings %v, want predicted_n %d", what, tm, u.GeneratedTokens)
		return
	}
	n, okN := tm["draft_n"]
	a, okA := tm["draft_n_accepted"]
	if u.DraftTokens == 0 {
		if okN || okA {
			t.Errorf("%s: timings %v name drafts, none drafted", what, tm)
		}
		return
	}
	if n != float64(u.DraftTokens) || a != float64(u.AcceptedTokens) {
		t.Errorf("%s: timings draft_n %v, draft_n_accepted %v; want %d, %d", what, n, a, u.DraftTokens, u.AcceptedTokens)
	}
}

// serveOne serves b on one slot for the test and returns the server and
// a reader of the slot's session's usage.
func serveOne(t *testing.T, b *Model) (*httptest.Server, func() llm.Usage) {
	t.Helper()
	srv, err := New(b)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return hs, func() llm.Usage { return srv.all[0].session.(modelSession).s.Usage() }
}
