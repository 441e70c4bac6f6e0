package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// startLoRA serves TinyChat with one adapter of all its blocks' matrices
// at scale 1, on one slot.
func startLoRA(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	mb, err := testutil.ModelBytes(testutil.TinyChat())
	f, _ := testutil.Parse(t, mb, err)
	ab, err := testutil.LoRABytes(mb, testutil.LoRASpec{Tensors: testutil.BlockMatrices(f), Rank: 4, Alpha: 4, Seed: 9, Amplitude: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	model, adapter := filepath.Join(dir, "m.gguf"), filepath.Join(dir, "a.gguf")
	if err := os.WriteFile(model, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(adapter, ab, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := llm.Load(model, llm.WithThreads(1), llm.WithLoRA(adapter, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	_, hs := serveModel(t, m, "tiny-chat", 1, nil)
	return hs.URL, adapter
}

type loraCompletion struct {
	Content string `json:"content"`
	Timings struct {
		PromptN int `json:"prompt_n"`
		CacheN  int `json:"cache_n"`
	} `json:"timings"`
}

func complete(t *testing.T, url string, extra ...string) loraCompletion {
	t.Helper()
	resp, b := post(t, url+"/completion", `{"prompt":"Once upon a time there was","n_predict":8,"temperature":0`+strings.Join(extra, "")+`}`)
	var c loraCompletion
	if resp.StatusCode != 200 || json.Unmarshal(b, &c) != nil {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return c
}

// TestLoRAAdapters checks GET and POST /lora-adapters as llama-server
// answers them, and that a change of scale makes the slot evaluate its
// prompt again instead of reusing the cache computed at the old scale.
func TestLoRAAdapters(t *testing.T) {
	url, adapter := startLoRA(t)
	list := func() []LoRAAdapter {
		resp, b := getBytes(t, url+"/lora-adapters")
		var as []LoRAAdapter
		if resp.StatusCode != 200 || json.Unmarshal(b, &as) != nil {
			t.Fatalf("GET /lora-adapters: %d %s", resp.StatusCode, b)
		}
		return as
	}
	if as := list(); len(as) != 1 || as[0] != (LoRAAdapter{0, adapter, 1}) {
		t.Fatalf("GET /lora-adapters: %+v", as)
	}
	on := complete(t, url)
	again := complete(t, url)
	if again.Timings.CacheN == 0 || again.Content != on.Content {
		t.Fatalf("the same request twice: %+v then %+v, want the prompt cached and the same text", on, again)
	}

	// Not listed: scale 0, the base model's text, its prompt evaluated again.
	if resp, b := post(t, url+"/lora-adapters", `[]`); resp.StatusCode != 200 || !strings.Contains(string(b), `"success":true`) {
		t.Fatalf("POST /lora-adapters []: %d %s", resp.StatusCode, b)
	}
	if as := list(); as[0].Scale != 0 {
		t.Fatalf("scale %v after [], want 0", as[0].Scale)
	}
	off := complete(t, url)
	if off.Timings.CacheN != 0 {
		t.Errorf("after a scale change the slot reused %d cached tokens", off.Timings.CacheN)
	}
	if off.Content == on.Content {
		t.Errorf("the adapter at 1 and 0 wrote the same %q: the test cannot see it", on.Content)
	}
	if resp, b := post(t, url+"/lora-adapters", `[{"id":0,"scale":1}]`); resp.StatusCode != 200 {
		t.Fatalf("POST: %d %s", resp.StatusCode, b)
	}
	if back := complete(t, url); back.Content != on.Content || back.Timings.CacheN != 0 {
		t.Errorf("back at scale 1: %+v, want %q evaluated afresh", back, on.Content)
	}

	// A request's own scales: the others' cache is not reused, the
	// model's scale stays.
	if got := complete(t, url, `,"lora":[{"id":0,"scale":0}]`); got.Content != off.Content || got.Timings.CacheN != 0 {
		t.Errorf("a request at scale 0: %+v, want %q evaluated afresh", got, off.Content)
	}
	if got := complete(t, url, `,"lora":[]`); got.Content != off.Content {
		t.Errorf("a request listing no adapter: %q, want %q (scale 0)", got.Content, off.Content)
	}
	if got := complete(t, url); got.Content != on.Content || got.Timings.CacheN != 0 {
		t.Errorf("a request without lora after one with: %+v, want %q evaluated afresh", got, on.Content)
	}
	for _, extra := range []string{`,"lora":[{"id":1,"scale":1}]`, `,"lora":{"id":0}`, `,"lora":[{"scale":1}]`, `,"lora":[{"id":0,"scale":"x"}]`} {
		resp, b := post(t, url+"/completion", `{"prompt":"x","n_predict":1`+extra+`}`)
		if resp.StatusCode != 400 {
			t.Errorf("lora %s: %d %s, want 400", extra, resp.StatusCode, b)
		}
	}
	resp, b := post(t, url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"lora":[{"id":7,"scale":1}]}`)
	if resp.StatusCode != 400 {
		t.Errorf("/v1/chat/completions with lora id 7: %d %s, want 400", resp.StatusCode, b)
	}

	for _, body := range []string{`[{"id":1,"scale":1}]`, `[{"scale":1}]`, `[{"id":0,"scale":"x"}]`, `{"id":0}`, `[{"id":0,"scale":1e39}]`} {
		if resp, b := post(t, url+"/lora-adapters", body); resp.StatusCode != 400 {
			t.Errorf("POST %s: %d %s, want 400", body, resp.StatusCode, b)
		}
	}
	if as := list(); as[0].Scale != 1 {
		t.Errorf("refused requests changed the scale to %v", as[0].Scale)
	}
}
