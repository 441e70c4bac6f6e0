package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// RenderChat's signature is relied on by checks outside this repository.
var _ func(string, []llm.Message, llm.RenderOptions) (string, error) = llm.RenderChat

func TestRenderChat(t *testing.T) {
	b, err := os.ReadFile(testutil.Testdata(t, "chat/Qwen-Qwen2.5-7B-Instruct.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Template, BOSToken, EOSToken string
		Cases                        []struct {
			Messages            []llm.Message
			AddGenerationPrompt bool `json:"add_generation_prompt"`
			Rendered            string
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for i, c := range f.Cases {
		got, err := llm.RenderChat(f.Template, c.Messages, llm.RenderOptions{AddGenerationPrompt: c.AddGenerationPrompt,
			EOSToken: "<|im_end|>", Now: time.Date(2026, 8, 18, 0, 0, 0, 0, time.UTC)})
		if err != nil || got != c.Rendered {
			t.Errorf("case %d: %v\ngot  %q\nwant %q", i, err, got, c.Rendered)
		}
	}
}

// promptTokens is what a chat turn of msgs should make a session of m
// hold before it generates: the render with the model's template,
// tokenized with its special tokens.
func promptTokens(t *testing.T, m *llm.Model, msgs []llm.Message, o llm.RenderOptions) []int32 {
	t.Helper()
	info := m.Info()
	o.AddGenerationPrompt, o.BOSToken, o.EOSToken, o.StripBOS, o.StripEOS = true, info.BOSText, info.EOSText, info.AddBOS, info.AddEOS
	text, err := llm.RenderChat(info.ChatTemplate, msgs, o)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := m.TokenizeSpecial(text)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func shared(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestChatReusesPrefix follows a conversation on one session: each turn
// evaluates only the tokens past what the session shares with the new
// prompt, the replies equal those of fresh sessions, and a history edited
// in the middle is evaluated again from the first difference.
func TestChatReusesPrefix(t *testing.T) {
	m := load(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithThreads(1))
	s := session(t, m)
	ctx := context.Background()
	opts := []llm.GenerateOption{llm.MaxTokens(8), llm.Temperature(0)}
	turn := func(s *llm.Session, msgs []llm.Message) (llm.Message, llm.Usage, []int32) {
		t.Helper()
		before := s.Tokens()
		reply, err := s.Chat(ctx, msgs, opts...)
		if err != nil {
			t.Fatal(err)
		}
		want := promptTokens(t, m, msgs, llm.RenderOptions{})
		u := s.Usage()
		if got := s.Tokens(); !slices.Equal(got[:min(len(got), len(want))], want) {
			t.Fatalf("session holds %v, want the prompt %v first", got, want)
		}
		if reuse := min(shared(before, want), len(want)-1); u.PromptTokens != len(want) || u.ReusedTokens != reuse {
			t.Errorf("usage %+v: want %d prompt tokens, %d reused", u, len(want), reuse)
		}
		t.Logf("prompt %d tokens, %d reused; reply %q", u.PromptTokens, u.ReusedTokens, reply.Content)
		if reply.Role != llm.RoleAssistant || u.GeneratedTokens == 0 || u.Finish == llm.FinishNone {
			t.Errorf("reply %+v, usage %+v", reply, u)
		}
		return reply, u, want
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "You tell stories."}, {Role: llm.RoleUser, Content: "Once upon a time"}}
	reply, u, first := turn(s, msgs)
	if u.ReusedTokens != 0 {
		t.Errorf("first turn reused %d tokens", u.ReusedTokens)
	}
	msgs = append(msgs, reply, llm.Message{Role: llm.RoleUser, Content: "the dog and the cat"})
	second, u, _ := turn(s, msgs)
	if u.ReusedTokens < len(first) {
		t.Errorf("second turn reused %d tokens, fewer than the first prompt's %d", u.ReusedTokens, len(first))
	}
	if fresh, _, _ := turn(session(t, m), msgs); fresh.Content != second.Content {
		t.Errorf("reply after reusing the cache %q, from a fresh session %q", second.Content, fresh.Content)
	}
	msgs[1].Content = "Once upon a day"
	if _, u, _ = turn(s, msgs); u.ReusedTokens >= len(first) {
		t.Errorf("edited history reused %d tokens", u.ReusedTokens)
	}
}

func TestChatStream(t *testing.T) {
	m := load(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithThreads(1))
	ctx := context.Background()
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "the quick brown fox"}}
	opts := []llm.GenerateOption{llm.MaxTokens(10), llm.Temperature(0)}
	want, err := session(t, m).Chat(ctx, msgs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	s := session(t, m)
	var text strings.Builder
	n := 0
	for tok, err := range s.ChatStream(ctx, msgs, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		if tok.ID >= 0 {
			n++
		}
		text.WriteString(tok.Text)
		if tok.Thinking != "" || len(tok.ToolCalls) > 0 {
			t.Errorf("token %+v: no thinking or tool calls expected", tok)
		}
	}
	if text.String() != want.Content || n != s.Usage().GeneratedTokens {
		t.Errorf("streamed %q in %d tokens (usage %+v), Chat said %q", text.String(), n, s.Usage(), want.Content)
	}
	n = 0
	for _, err := range s.ChatStream(ctx, msgs, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 2 {
			break
		}
	}
	if u := s.Usage(); u.Finish != llm.FinishCaller || u.GeneratedTokens != 2 {
		t.Errorf("after breaking out: usage %+v", u)
	}
}

func TestChatTemplateErrors(t *testing.T) {
	path := testutil.TempModel(t, testutil.TinyLlama())
	ctx := context.Background()
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}
	m := load(t, path)
	if m.Info().ChatTemplate != "" {
		t.Errorf("a model without a template reports %q", m.Info().ChatTemplate)
	}
	_, err := session(t, m).Chat(ctx, msgs)
	if !errors.Is(err, llm.ErrNoChatTemplate) || !strings.Contains(err.Error(), "WithChatTemplate") {
		t.Errorf("chat without a template: %v", err)
	}
	m = load(t, path, llm.WithChatTemplate(testutil.HermesTemplate))
	if _, err := session(t, m).Chat(ctx, msgs, llm.MaxTokens(2)); err != nil || m.Info().ChatTemplate != testutil.HermesTemplate {
		t.Errorf("with WithChatTemplate: %v", err)
	}
	if _, err := llm.Load(path, llm.WithChatTemplate("{% if %}")); !errors.Is(err, llm.ErrInvalidOption) || !strings.Contains(err.Error(), "WithChatTemplate") {
		t.Errorf("a template that does not parse: %v", err)
	}
	m = load(t, path, llm.WithChatTemplate("{{ raise_exception('roles must alternate') }}"))
	if _, err := session(t, m).Chat(ctx, msgs); !errors.Is(err, llm.ErrInvalidOption) || !strings.Contains(err.Error(), "roles must alternate") {
		t.Errorf("a template that raises: %v", err)
	}
	bad := []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "f", Arguments: "{"}}}}
	m = load(t, path, llm.WithChatTemplate(testutil.HermesTemplate))
	if _, err := session(t, m).Chat(ctx, bad); err == nil {
		t.Error("tool call arguments that are not JSON were accepted")
	}
}

func TestChatInfo(t *testing.T) {
	m := load(t, testutil.TempModel(t, testutil.TinyChat()))
	info := m.Info()
	end, err := m.TokenizeSpecial("<|im_end|>")
	if err != nil {
		t.Fatal(err)
	}
	end = end[1:] // after BOS
	if info.ChatTemplate != testutil.HermesTemplate || info.BOSText != "<s>" || info.EOSText != "</s>" || !info.AddBOS || info.AddEOS {
		t.Errorf("info %+v", info)
	}
	if !slices.Equal(info.EOG, []int32{testutil.EOSID, end[0]}) || !m.IsEndOfGeneration(end[0]) {
		t.Errorf("end-of-generation tokens %v, want EOS and <|im_end|> %v", info.EOG, end)
	}
	info.EOG[0] = 99
	if m.Info().EOG[0] != testutil.EOSID {
		t.Error("Info shares its EOG slice with callers")
	}

	m = load(t, testutil.Testdata(t, "models/tiny-qwen3-q4_k_m.gguf"), llm.WithContextSize(512))
	info = m.Info()
	for _, id := range []int32{151643, 151645} { // <|endoftext|>, <|im_end|>
		if !slices.Contains(info.EOG, id) {
			t.Errorf("qwen3: EOG %v lacks %d (%s)", info.EOG, id, m.TokenText(id))
		}
	}
	if info.AddBOS || info.ChatTemplate == "" || info.EOSText != "<|im_end|>" {
		t.Errorf("qwen3: AddBOS %v, EOS %q, template %d bytes", info.AddBOS, info.EOSText, len(info.ChatTemplate))
	}
}

// TestChatQwen3 runs the real Qwen3 template: WithThinking(false) closes
// the reasoning block in the prompt, and a tool call with its result
// renders with the tools offered.
func TestChatQwen3(t *testing.T) {
	m := load(t, testutil.Testdata(t, "models/tiny-qwen3-q4_k_m.gguf"), llm.WithContextSize(1024), llm.WithThreads(1))
	s := session(t, m)
	ctx := context.Background()
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "What is the weather in Paris?"}}
	off := false
	if _, err := s.Chat(ctx, msgs, llm.WithThinking(false), llm.MaxTokens(2), llm.Temperature(0)); err != nil {
		t.Fatal(err)
	}
	want := promptTokens(t, m, msgs, llm.RenderOptions{EnableThinking: &off})
	if got := s.Tokens()[:len(want)]; !slices.Equal(got, want) {
		t.Errorf("prompt without thinking: %v, want %v", got, want)
	}
	if text, _ := m.Detokenize(want); !strings.HasSuffix(text, "<think>\n\n</think>\n\n") {
		t.Errorf("prompt without thinking ends %q", text[max(0, len(text)-40):])
	}

	weather := llm.Tool{Name: "get_weather", Description: "Weather at a place",
		Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}}}`)}
	msgs = append(msgs,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"location":"Paris"}`}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Content: "sunny, 24 °C"})
	if _, err := s.Chat(ctx, msgs, llm.WithTools(weather), llm.MaxTokens(2), llm.Temperature(0)); err != nil {
		t.Fatal(err)
	}
	want = promptTokens(t, m, msgs, llm.RenderOptions{Tools: []llm.Tool{weather}})
	text, _ := m.Detokenize(want)
	if got := s.Tokens()[:len(want)]; !slices.Equal(got, want) || !strings.Contains(text, `"name": "get_weather"`) ||
		!strings.Contains(text, "<tool_response>\nsunny, 24 °C\n</tool_response>") {
		t.Errorf("tool round trip prompt:\n%s", text)
	}
}

// TestComplete checks that Complete holds exactly the prompt (special
// tokens parsed, BOS added) and reuses what a longer prompt shares.
func TestComplete(t *testing.T) {
	m := load(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithThreads(1))
	s := session(t, m)
	ctx := context.Background()
	run := func(prompt string) llm.Usage {
		for _, err := range s.Complete(ctx, prompt, llm.MaxTokens(3), llm.Temperature(0)) {
			if err != nil {
				t.Fatal(err)
			}
		}
		want, _ := m.TokenizeSpecial(prompt)
		if got := s.Tokens(); !slices.Equal(got[:len(want)], want) {
			t.Errorf("%q: holds %v, want %v first", prompt, got, want)
		}
		return s.Usage()
	}
	p := "<|im_start|>user\nthe dog<|im_end|>\n"
	ids, _ := m.TokenizeSpecial(p)
	u := run(p)
	if u.PromptTokens != len(ids) || u.ReusedTokens != 0 || u.GeneratedTokens != 3 || u.Finish != llm.FinishLength {
		t.Errorf("first: %+v, want %d prompt tokens", u, len(ids))
	}
	if u = run(p + "<|im_start|>assistant\n"); u.ReusedTokens != len(ids) {
		t.Errorf("longer prompt: %+v, want %d reused", u, len(ids))
	}
}

// TestCompleteTokens checks that CompleteTokens holds exactly the ids
// given (no BOS added) and generates what Complete does from the same
// tokens, and refuses an id outside the vocabulary or no ids.
func TestCompleteTokens(t *testing.T) {
	m := load(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithThreads(1))
	s := session(t, m)
	ctx := context.Background()
	collect := func(seq iter.Seq2[llm.Token, error]) []int32 {
		var out []int32
		for tok, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tok.ID)
		}
		return out
	}
	const p = "<|im_start|>user\nthe dog<|im_end|>\n"
	ids, _ := m.TokenizeSpecial(p)
	byText := collect(s.Complete(ctx, p, llm.MaxTokens(4), llm.Temperature(0)))
	s.Reset()
	byIDs := collect(s.CompleteTokens(ctx, ids, llm.MaxTokens(4), llm.Temperature(0)))
	if !slices.Equal(byText, byIDs) || !slices.Equal(s.Tokens()[:len(ids)], ids) || s.Usage().PromptTokens != len(ids) {
		t.Errorf("CompleteTokens generated %v, Complete %v; holds %v", byIDs, byText, s.Tokens())
	}
	noBOS := ids[1:]
	collect(s.CompleteTokens(ctx, noBOS, llm.MaxTokens(1)))
	if got := s.Tokens(); !slices.Equal(got[:len(noBOS)], noBOS) {
		t.Errorf("ids without BOS: holds %v", got)
	}
	for _, bad := range [][]int32{{1, int32(m.Info().VocabSize)}, {-1}, {}} {
		var last error
		for _, err := range s.CompleteTokens(ctx, bad, llm.MaxTokens(1)) {
			last = err
		}
		if !errors.Is(last, llm.ErrBadToken) && !(len(bad) == 0 && errors.Is(last, llm.ErrInvalidOption)) {
			t.Errorf("ids %v: %v", bad, last)
		}
	}
	if fim := m.Info().FIM; fim != (llm.FIMTokens{Pre: -1, Suf: -1, Mid: -1, Pad: -1, Rep: -1, Sep: -1}) {
		t.Errorf("TinyChat's FIM tokens %+v, want none", fim)
	}
}

// TestLoadOllama loads a model by its name in an Ollama store.
func TestLoadOllama(t *testing.T) {
	store := t.TempDir()
	const digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	if err := os.MkdirAll(store+"/blobs", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testutil.WriteModelFile(store+"/blobs/sha256-"+digest, testutil.TinyChat()); err != nil {
		t.Fatal(err)
	}
	manifest := store + "/manifests/registry.ollama.ai/library/tiny/latest"
	if err := os.MkdirAll(manifest[:strings.LastIndex(manifest, "/")], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, []byte(`{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:`+digest+`"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OLLAMA_MODELS", store)
	m := load(t, "ollama:tiny")
	if m.Info().ChatTemplate != testutil.HermesTemplate {
		t.Errorf("loaded %+v", m.Info())
	}
	if p, err := llm.Plan("ollama:tiny", llm.WithMemoryLimit(1<<30)); err != nil || !p.Fits {
		t.Errorf("plan: %+v, %v", p, err)
	}
	if _, err := llm.Load("ollama:absent"); err == nil || !strings.Contains(err.Error(), "tiny:latest") {
		t.Errorf("a model not in the store: %v", err)
	}
}
