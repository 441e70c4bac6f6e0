package server

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/llmtest"
	"github.com/lowmem/llm/internal/testutil"
)

// embeddingsReply is a /v1/embeddings body with each vector decoded,
// whether it came as floats or base64.
type embeddingsReply struct {
	Object string `json:"object"`
	Model  string `json:"model"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
		vector    []float32
	} `json:"data"`
	Usage map[string]int `json:"usage"`
}

// postEmbeddings posts body to /v1/embeddings, wants 200, and decodes the
// vectors: an array of numbers, or with base64 set a base64 string of
// little-endian float32s.
func postEmbeddings(t *testing.T, url, body string, base64Format bool) embeddingsReply {
	t.Helper()
	resp, b := post(t, url+"/v1/embeddings", body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s: status %d: %s", body, resp.StatusCode, b)
	}
	var got embeddingsReply
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%s: %v: %s", body, err, b)
	}
	if got.Object != "list" {
		t.Errorf("%s: object %q", body, got.Object)
	}
	for i := range got.Data {
		d := &got.Data[i]
		if d.Object != "embedding" || d.Index != i {
			t.Errorf("%s: data[%d] is %q with index %d", body, i, d.Object, d.Index)
		}
		if !base64Format {
			if err := json.Unmarshal(d.Embedding, &d.vector); err != nil {
				t.Fatalf("%s: data[%d].embedding %s: %v", body, i, d.Embedding, err)
			}
			continue
		}
		var s string
		if err := json.Unmarshal(d.Embedding, &s); err != nil {
			t.Fatalf("%s: data[%d].embedding %s is not a string", body, i, d.Embedding)
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(raw)%4 != 0 {
			t.Fatalf("%s: data[%d].embedding %q: %v", body, i, s, err)
		}
		for k := 0; k < len(raw); k += 4 {
			d.vector = append(d.vector, math.Float32frombits(binary.LittleEndian.Uint32(raw[k:])))
		}
	}
	return got
}

// TestEmbeddings: each of OpenAI's input forms reaches the Backend as the
// inputs it holds, in order; the vectors come back in that order, as
// floats or base64, with the dimensions asked for, and usage counts every
// input's tokens.
func TestEmbeddings(t *testing.T) {
	text := func(s string) EmbedInput { return EmbedInput{Text: s} }
	toks := func(ids ...int32) EmbedInput { return EmbedInput{Tokens: ids} }
	cases := []struct {
		body string
		want []EmbedInput
		dims int
	}{
		{`{"input":"hello world","model":"x"}`, []EmbedInput{text("hello world")}, 0},
		{`{"input":["a","bc","<s>d"],"encoding_format":"float"}`, []EmbedInput{text("a"), text("bc"), text("<s>d")}, 0},
		{`{"input":[5,6,7],"dimensions":3,"user":"u1"}`, []EmbedInput{toks(5, 6, 7)}, 3},
		{`{"input":[[1],[2,3],[255,0,9]],"dimensions":8}`, []EmbedInput{toks(1), toks(2, 3), toks(255, 0, 9)}, 8},
		{`{"input":"one","dimensions":1}`, []EmbedInput{text("one")}, 1},
	}
	for _, c := range cases {
		for _, b64 := range []bool{false, true} {
			b := newFake(words("x"))
			_, hs := start(t, b)
			body := c.body
			if b64 {
				body = strings.Replace(body, `"float"`, `"base64"`, 1)
				if !strings.Contains(body, "base64") {
					body = strings.Replace(body, "{", `{"encoding_format":"base64",`, 1)
				}
			}
			got := postEmbeddings(t, hs.URL, body, b64)
			if got.Model != "fake-model" || len(got.Data) != len(c.want) {
				t.Fatalf("%s: model %q, %d vectors; want fake-model, %d", body, got.Model, len(got.Data), len(c.want))
			}
			tokens := 0
			for i, in := range c.want {
				ids := fakeTokens(in)
				tokens += len(ids)
				o := EmbedOptions{Dimensions: c.dims}
				if want := fakeEmbedding(ids, o); !slices.Equal(got.Data[i].vector, want) {
					t.Errorf("%s: vector %d %v, want %v", body, i, got.Data[i].vector, want)
				}
				if !slices.Equal(b.embeds[i].Tokens, in.Tokens) || b.embeds[i].Text != in.Text || b.embedOpts[i] != o {
					t.Errorf("%s: the Backend got %+v (%+v), want %+v (%+v)", body, b.embeds[i], b.embedOpts[i], in, o)
				}
			}
			if u := got.Usage; len(u) != 2 || u["prompt_tokens"] != tokens || u["total_tokens"] != tokens {
				t.Errorf("%s: usage %v, want %d prompt and total tokens", body, u, tokens)
			}
		}
	}
}

// TestEmbeddingsBadRequests: every refusal is a 400 (413 for a body too
// large) in OpenAI's error JSON, naming the field.
func TestEmbeddingsBadRequests(t *testing.T) {
	b := newFake(words("x"))
	_, hs := start(t, b, WithMaxBodyBytes(64<<10))
	many := `{"input":[` + strings.Repeat(`"a",`, maxEmbedInputs) + `"a"]}`
	cases := []struct {
		name, body string
		status     int
		param      string
		code       string
		msg        string
	}{
		{"malformed", `{"input":"a"`, 400, "", "", "could not parse"},
		{"empty body", ``, 400, "", "", "empty"},
		{"not an object", `["a"]`, 400, "", "", "must be a JSON object"},
		{"no input", `{"model":"x"}`, 400, "input", "", "input is missing"},
		{"null input", `{"input":null}`, 400, "input", "", "input is missing"},
		{"empty string", `{"input":""}`, 400, "input", "", "input is an empty string"},
		{"empty string in an array", `{"input":["a",""]}`, 400, "input", "", "input[1] is an empty string"},
		{"empty array", `{"input":[]}`, 400, "input", "", "empty array"},
		{"empty token array", `{"input":[[1],[]]}`, 400, "input", "", "input[1] is an empty array of tokens"},
		{"null token array", `{"input":[[1],null]}`, 400, "input", "", "input[1] is an empty array of tokens"},
		{"input type", `{"input":{"text":"a"}}`, 400, "input", "", "must be a string, an array of strings"},
		{"mixed array", `{"input":["a",[1]]}`, 400, "input", "", "must be a string, an array of strings"},
		{"fractional token", `{"input":[1.5]}`, 400, "input", "", "must be a string"},
		{"token beyond int32", `{"input":[4294967296]}`, 400, "input", "", "must be a string"},
		{"negative token", `{"input":[3,-1]}`, 400, "input", "", "token id -1"},
		{"token outside the vocabulary", `{"input":[[1],[3,256]]}`, 400, "input", "", "input[1]: server: the prompt cannot be used: token 256 not in the vocabulary"},
		{"too many inputs", many, 400, "input", "", "at most 2048 inputs"},
		{"encoding_format", `{"input":"a","encoding_format":"int8"}`, 400, "encoding_format", "", `"int8" is not one of float, base64`},
		{"encoding_format type", `{"input":"a","encoding_format":1}`, 400, "encoding_format", "", "wrong type"},
		{"dimensions zero", `{"input":"a","dimensions":0}`, 400, "dimensions", "", "between 1 and 8"},
		{"dimensions negative", `{"input":"a","dimensions":-3}`, 400, "dimensions", "", "between 1 and 8"},
		{"dimensions above the width", `{"input":"a","dimensions":9}`, 400, "dimensions", "", "between 1 and 8 (the model's width), got 9"},
		{"dimensions type", `{"input":"a","dimensions":"8"}`, 400, "dimensions", "", "wrong type"},
		{"longer than the context", `{"input":"` + strings.Repeat("a", 5000) + `"}`, 400, "input", "context_length_exceeded", "does not fit the context"},
		{"oversized", `{"input":"` + strings.Repeat("a", 70<<10) + `"}`, 413, "", "request_too_large", "larger"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := post(t, hs.URL+"/v1/embeddings", c.body)
			e := errorJSON(t, resp, body, c.status)
			if !strings.Contains(e.Message, c.msg) {
				t.Errorf("message %q does not say %q", e.Message, c.msg)
			}
			if c.param != "" && (e.Param == nil || *e.Param != c.param) {
				t.Errorf("param %v, want %q", e.Param, c.param)
			}
			if c.code != "" && (e.Code == nil || *e.Code != c.code) {
				t.Errorf("code %v, want %q", e.Code, c.code)
			}
		})
	}
	// Refused before the Backend, but for the bad token and the long text.
	if len(b.embeds) != 3 {
		t.Errorf("the Backend embedded %d inputs, want 3 (the bad token's request's 2, the long text)", len(b.embeds))
	}
}

// errorJSON checks that a reply has status and OpenAI's error JSON, and
// returns the error.
func errorJSON(t *testing.T, resp *http.Response, body []byte, status int) *apiError {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	var e struct {
		Error *apiError `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Type == "" || e.Error.Message == "" ||
		resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("not OpenAI error JSON: %s", body)
	}
	return e.Error
}

// TestEmbeddingsNotSupported: a Backend whose sessions cannot embed
// answers 501, as llama-server without --embeddings; the other endpoints
// work.
func TestEmbeddingsNotSupported(t *testing.T) {
	b := newFake(words("ok"))
	b.noEmbed = true
	_, hs := start(t, b)
	resp, body := post(t, hs.URL+"/v1/embeddings", `{"input":"a"}`)
	if e := errorJSON(t, resp, body, 501); e.Type != "not_supported_error" || !strings.Contains(e.Message, "does not support embeddings") {
		t.Errorf("error %+v", e)
	}
	if resp, body := post(t, hs.URL+"/v1/completions", `{"prompt":"x"}`); resp.StatusCode != 200 {
		t.Errorf("completions: %d %s", resp.StatusCode, body)
	}
	_, metrics := get(t, hs.URL+"/metrics")
	if want := `llm_requests_total{endpoint="/v1/embeddings",code="501"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("metrics lack %q:\n%s", want, metrics)
	}
}

// TestEmbeddingsSlots: an embedding request takes a slot like a
// generation: past the slots and the queue it gets 429, a client that
// goes away stops it before its next input, and it leaves its slot
// caching nothing, which the next embedding takes first.
func TestEmbeddingsSlots(t *testing.T) {
	b := newFake(words("a b"))
	b.gate = make(chan struct{})
	srv, hs := start(t, b, WithParallel(2), WithQueue(0))

	// A generation and an embedding hold both slots.
	var wg sync.WaitGroup
	codes := make(chan int, 2)
	for _, req := range [][2]string{{"/v1/completions", `{"prompt":"x y"}`}, {"/v1/embeddings", `{"input":["a","b"]}`}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := post(t, hs.URL+req[0], req[1])
			if resp.StatusCode != 200 {
				t.Errorf("%s: %d %s", req[0], resp.StatusCode, body)
			}
			codes <- resp.StatusCode
		}()
	}
	waitFor(t, func() bool { _, busy := srv.slots.load(); return busy == 2 })
	resp, body := post(t, hs.URL+"/v1/embeddings", `{"input":"c"}`)
	if e := errorJSON(t, resp, body, 429); e.Code == nil || *e.Code != "rate_limit_exceeded" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("third request: %+v", e)
	}
	close(b.gate)
	wg.Wait()
	b.gate = nil
	var cached []string
	for _, sl := range srv.all {
		cached = append(cached, sl.prompt)
	}
	if !slices.Contains(cached, "") || !slices.Contains(cached, "x y") {
		t.Fatalf("slots cache %q: want the generation's prompt and nothing", cached)
	}
	// The next embedding takes the empty slot, keeping the generation's.
	postEmbeddings(t, hs.URL, `{"input":"d"}`, false)
	if cached := []string{srv.all[0].prompt, srv.all[1].prompt}; !slices.Contains(cached, "x y") {
		t.Errorf("slots cache %q after an embedding: it took the generation's slot", cached)
	}

	// The client goes away while the first of many inputs is held.
	b.gate = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/v1/embeddings", strings.NewReader(`{"input":["a","b","c","d"]}`))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.active == 1 })
	steps := b.steps.Load()
	cancel()
	<-done
	waitFor(t, func() bool { _, busy := srv.slots.load(); return busy == 0 })
	if b.cancelled.Load() != 1 || b.steps.Load() != steps {
		t.Errorf("after the client left: %d cancelled, %d more steps; want 1 and 0", b.cancelled.Load(), b.steps.Load()-steps)
	}
	b.gate = nil
	_, metrics := get(t, hs.URL+"/metrics")
	for _, want := range []string{`llm_requests_total{endpoint="/v1/embeddings",code="200"} 2`, `llm_requests_total{endpoint="/v1/embeddings",code="429"} 1`,
		fmt.Sprintf("llm_prompt_tokens_total %d", 2+2+1)} { // the completion's 2 words and 3 bytes embedded
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q:\n%s", want, metrics)
		}
	}
}

// TestModelEmbeddings: FromModel's embeddings of the synthetic TinyChat.
func TestModelEmbeddings(t *testing.T) {
	m, _, hs := startModel(t, 1, nil)
	checkModelEmbeddings(t, m, hs.URL)
}

// TestModelEmbeddingsQwen3: FromModel's embeddings of a real model's file
// from the test data (skipped without it).
func TestModelEmbeddingsQwen3(t *testing.T) {
	m, hs := startQwen3(t)
	checkModelEmbeddings(t, m, hs.URL)
}

// TestModelEmbeddingsEncoder: an encoder (a synthetic bert, a
// nomic-bert-moe, whose every other layer routes its tokens to experts, and
// a modern-bert, a pre-norm stack seeing the whole text, a jina-bert-v2,
// whose attention is biased by ALiBi, a jina-bert-v3 with its Unigram
// vocabulary, eurobert's and neo-bert's RMSNorm stacks and llama-embed's
// causal one) embeds as the
// library does, and its generation endpoints answer 501
// naming the embeddings endpoint, as llama-server's do when it only
// embeds.
func TestModelEmbeddingsEncoder(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyBert(), testutil.TinyNomicBertMoE(), testutil.TinyModernBert(), testutil.TinyJinaBertV2(),
		testutil.TinyJinaBertV3(), testutil.TinyEuroBert(), testutil.TinyNeoBert(), testutil.TinyLlamaEmbed()} {
		t.Run(spec.Arch, func(t *testing.T) {
			m := loadEncoder(t, spec)
			if !m.Info().EmbeddingOnly {
				t.Fatalf("Info().EmbeddingOnly is false for a %s", spec.Arch)
			}
			_, hs := serveModel(t, m, "tiny-"+spec.Arch, 1, nil)
			checkModelEmbeddings(t, m, hs.URL)
			for _, c := range []struct{ path, body string }{
				{"/v1/completions", `{"prompt":"Hi"}`},
				{"/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}]}`},
			} {
				resp, body := post(t, hs.URL+c.path, c.body)
				if e := errorJSON(t, resp, body, 501); e.Type != "not_supported_error" || !strings.Contains(e.Message, "/v1/embeddings") {
					t.Errorf("%s: %+v", c.path, e)
				}
			}
		})
	}
}

// newSession is a session of m, closed when the test ends.
func newSession(t *testing.T, m *llm.Model) *llm.Session {
	t.Helper()
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// loadTinyBert loads a synthetic bert, an encoder, until the test ends.
func loadTinyBert(t *testing.T) *llm.Model { return loadEncoder(t, testutil.TinyBert()) }

// loadEncoder loads the synthetic encoder spec until the test ends.
func loadEncoder(t *testing.T, spec testutil.ModelSpec) *llm.Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), spec.Arch+".gguf")
	if err := testutil.WriteModelFile(path, spec); err != nil {
		t.Fatal(err)
	}
	m := loadModel(t, path)
	return m
}

// checkModelEmbeddings checks a server of m against the library: each
// vector is Session.Embed's of the same text, of unit length, whole or in
// base64; dimensions gives the first n elements renormalised; a token
// array is embedded as given; usage counts the tokens; a text longer than
// the context and a token outside the vocabulary are 400s.
func checkModelEmbeddings(t *testing.T, m *llm.Model, url string) {
	t.Helper()
	ctx := context.Background()
	s := newSession(t, m)
	texts := []string{"The quick brown fox jumps over the lazy dog.", "Once upon a time", "a"}
	input, _ := json.Marshal(texts)
	ids, tokens := llmtest.TokenizeAll(t, m, texts...)
	// The request's inputs share forward passes as Session.EmbedBatch
	// packs them: its vectors to the bit, and within a batch kernel's
	// rounding of each text's Session.Embed alone.
	want, err := s.EmbedBatch(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, alone := range llmtest.EmbedEach(t, s, texts...) {
		text := texts[i]
		if norm := math.Sqrt(dot(alone, alone)); math.Abs(norm-1) > 1e-5 {
			t.Fatalf("Session.Embed(%q) has length %g", text, norm)
		}
		if c := dot(alone, want[i]); c < 1-1e-4 {
			t.Errorf("%q: cosine %v between Session.Embed and EmbedBatch", text, c)
		}
	}
	for _, b64 := range []bool{false, true} {
		format := map[bool]string{false: "float", true: "base64"}[b64]
		got := postEmbeddings(t, url, fmt.Sprintf(`{"input":%s,"encoding_format":%q}`, input, format), b64)
		for i := range texts {
			if !slices.Equal(got.Data[i].vector, want[i]) {
				t.Errorf("%s: vector of %q differs from Session.EmbedBatch's", format, texts[i])
			}
		}
		if got.Usage["prompt_tokens"] != tokens || got.Usage["total_tokens"] != tokens {
			t.Errorf("%s: usage %v, want %d tokens", format, got.Usage, tokens)
		}
	}

	// Tokens as given: the same as the text they are.
	tokInput, _ := json.Marshal(ids)
	got := postEmbeddings(t, url, fmt.Sprintf(`{"input":%s}`, tokInput), false)
	for i := range texts {
		if !slices.Equal(got.Data[i].vector, want[i]) {
			t.Errorf("tokens of %q: vector differs from Session.EmbedBatch's of the text", texts[i])
		}
	}

	// dimensions: the first n, renormalised.
	n := m.Info().Embedding / 2
	got = postEmbeddings(t, url, fmt.Sprintf(`{"input":%q,"dimensions":%d}`, texts[0], n), false)
	v := got.Data[0].vector
	cut, err := s.Embed(ctx, texts[0], llm.WithDimensions(n))
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != n || !slices.Equal(v, cut) {
		t.Fatalf("dimensions %d: %d elements, want Session.Embed's with WithDimensions", n, len(v))
	}
	full, err := s.Embed(ctx, texts[0])
	if err != nil {
		t.Fatal(err)
	}
	head := full[:n]
	scale := 1 / math.Sqrt(dot(head, head))
	for j := range v {
		if math.Abs(float64(v[j])-float64(head[j])*scale) > 1e-6 {
			t.Fatalf("dimensions %d: element %d is %g, want %g (the full vector's, renormalised)", n, j, v[j], float64(head[j])*scale)
		}
	}

	info := m.Info()
	for _, c := range []struct{ name, body, param, code string }{
		{"longer than the context", fmt.Sprintf(`{"input":%q}`, strings.Repeat("the dog ", info.Context)), "input", "context_length_exceeded"},
		{"token outside the vocabulary", fmt.Sprintf(`{"input":[1,%d]}`, info.VocabSize), "input", ""},
		{"dimensions above the width", fmt.Sprintf(`{"input":"a","dimensions":%d}`, info.Embedding+1), "dimensions", ""},
	} {
		resp, body := post(t, url+"/v1/embeddings", c.body)
		e := errorJSON(t, resp, body, 400)
		if e.Param == nil || *e.Param != c.param || c.code != "" && (e.Code == nil || *e.Code != c.code) {
			t.Errorf("%s: %s", c.name, body)
		}
	}
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
