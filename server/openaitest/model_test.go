package openaitest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/llmtest"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/server"
	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/packages/param"
	"github.com/openai/openai-go/shared"
)

// The tests below run the official clients against server.FromModel over
// a real (synthetic, random-weight) model, testutil.TinyChat.

// realServer serves TinyChat; it returns the model too, to compare the
// server's answers with Session.Chat's.
func realServer(t *testing.T) (*llm.Model, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chat.gguf")
	if err := testutil.WriteModelFile(path, testutil.TinyChat()); err != nil {
		t.Fatal(err)
	}
	m, err := llm.Load(path, llm.WithThreads(1), llm.WithSessions(2))
	if err != nil {
		t.Fatal(err)
	}
	b, err := server.FromModel(m, "tiny-chat")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(b, server.WithParallel(2))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close(); m.Close() })
	return m, hs.URL + "/v1"
}

func TestRealModel(t *testing.T) {
	m, url := realServer(t)
	client := openai.NewClient(option.WithBaseURL(url+"/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	ctx := context.Background()
	msgs := []llm.Message{{Role: "system", Content: "You tell stories."}, {Role: "user", Content: "Once upon a time"}}
	want, u := llmtest.ChatReply(t, m, msgs, llm.MaxTokens(12), llm.Temperature(0))
	params := openai.ChatCompletionNewParams{
		Model:       "tiny-chat",
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(msgs[0].Content), openai.UserMessage(msgs[1].Content)},
		MaxTokens:   openai.Int(12),
		Temperature: openai.Float(0),
	}
	resp, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != want || resp.Usage.PromptTokens != int64(u.PromptTokens) ||
		resp.Usage.CompletionTokens != int64(u.GeneratedTokens) {
		t.Errorf("reply %q, usage %+v; Session.Chat said %q, %+v", got, resp.Usage, want, u)
	}

	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	acc := accumulate(t, client.Chat.Completions.NewStreaming(ctx, params))
	if acc.Choices[0].Message.Content != want || acc.Usage.CompletionTokens != int64(u.GeneratedTokens) {
		t.Errorf("streamed %q (usage %+v), want %q", acc.Choices[0].Message.Content, acc.Usage, want)
	}

	// Two choices, each generated with its own seed.
	params.N, params.Seed, params.Temperature = openai.Int(2), openai.Int(5), openai.Float(1)
	if resp, err = client.Chat.Completions.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 2 || resp.Choices[1].Index != 1 || resp.Usage.PromptTokens != int64(u.PromptTokens) {
		t.Fatalf("n=2: %d choices, usage %+v", len(resp.Choices), resp.Usage)
	}
	params.N, params.Seed, params.Temperature = param.Opt[int64]{}, param.Opt[int64]{}, openai.Float(0)

	// A forced call (tool_choice "required") of a tool whose arguments are
	// an enum, so that the random model's call ends.
	unit := openai.ChatCompletionToolParam{Function: openai.FunctionDefinitionParam{Name: "unit",
		Parameters: openai.FunctionParameters{"type": "object", "additionalProperties": false, "required": []string{"u"},
			"properties": map[string]any{"u": map[string]any{"enum": []string{"c", "f"}}}}}}
	forced := params
	forced.Tools, forced.MaxTokens = []openai.ChatCompletionToolParam{unit}, openai.Int(400)
	forced.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
	if resp, err = client.Chat.Completions.New(ctx, forced); err != nil {
		t.Fatal(err)
	}
	if c := resp.Choices[0]; len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Name != "unit" || c.FinishReason != "tool_calls" {
		t.Errorf("tool_choice required: %+v", c)
	}

	// Log-probabilities, as the library gives them.
	ls, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	var lps []llm.Token
	for tok, err := range ls.ChatStream(ctx, msgs, llm.MaxTokens(12), llm.Temperature(0), llm.WithLogprobs(2)) {
		if err != nil {
			t.Fatal(err)
		}
		if tok.ID >= 0 {
			lps = append(lps, tok)
		}
	}
	params.Logprobs, params.TopLogprobs = openai.Bool(true), openai.Int(2)
	if resp, err = client.Chat.Completions.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	content := resp.Choices[0].Logprobs.Content
	if len(content) != len(lps) {
		t.Fatalf("logprobs: %d entries for %d tokens", len(content), len(lps))
	}
	for i, e := range content {
		if float32(e.Logprob) != lps[i].Logprob || len(e.TopLogprobs) != 2 || e.TopLogprobs[0].Logprob != e.Logprob {
			t.Fatalf("logprobs entry %d %+v; the library gave %+v", i, e, lps[i])
		}
	}
	params.Logprobs, params.TopLogprobs = param.Opt[bool]{}, param.Opt[int64]{}

	// JSON mode: what llm.WithJSON gives.
	want, _ = llmtest.ChatReply(t, m, msgs, llm.MaxTokens(12), llm.Temperature(0), llm.WithJSON())
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	if resp, err = client.Chat.Completions.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != want || !strings.HasPrefix(got, "{") {
		t.Errorf("JSON mode: reply %q; Session.Chat with WithJSON said %q", got, want)
	}

	// Structured output: a strict JSON schema.
	schema := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"ok"},
		"properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}
	raw, _ := json.Marshal(schema)
	want, _ = llmtest.ChatReply(t, m, msgs, llm.MaxTokens(200), llm.Temperature(0), llm.WithJSONSchema(raw))
	params.MaxTokens = openai.Int(200)
	params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Strict: openai.Bool(true), Schema: schema}}}
	if resp, err = client.Chat.Completions.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	var answer struct{ OK *bool }
	if got := resp.Choices[0].Message.Content; got != want || json.Unmarshal([]byte(got), &answer) != nil || answer.OK == nil {
		t.Errorf("json_schema: reply %q; Session.Chat with WithJSONSchema said %q", got, want)
	}
	params.MaxTokens = openai.Int(12)

	// A tool call and its result go back to the model with the tools.
	tools := []openai.ChatCompletionToolParam{weatherTool}
	call := openai.ChatCompletionMessageToolCallParam{ID: "call_1", Function: openai.ChatCompletionMessageToolCallFunctionParam{
		Name: "get_weather", Arguments: `{"location":"Paris"}`}}
	resp, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "tiny-chat",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.UserMessage("What is the weather in Paris?"),
			{OfAssistant: &openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallParam{call}}},
			openai.ToolMessage("sunny", "call_1"),
		},
		Tools:       tools,
		MaxTokens:   openai.Int(4),
		Temperature: openai.Float(0),
	})
	if err != nil {
		t.Fatal(err)
	}
	params2, _ := json.Marshal(weatherTool.Function.Parameters)
	_, u = llmtest.ChatReply(t, m, []llm.Message{{Role: "user", Content: "What is the weather in Paris?"},
		{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"location":"Paris"}`}}},
		{Role: "tool", ToolCallID: "call_1", Content: "sunny"}},
		llm.WithTools(llm.Tool{Name: "get_weather", Description: "Weather at a place", Parameters: params2}), llm.MaxTokens(4), llm.Temperature(0))
	if resp.Usage.PromptTokens != int64(u.PromptTokens) {
		t.Errorf("tool round trip: %d prompt tokens, Session.Chat rendered %d", resp.Usage.PromptTokens, u.PromptTokens)
	}

	comp, err := client.Completions.New(ctx, openai.CompletionNewParams{
		Model:     openai.CompletionNewParamsModel("tiny-chat"),
		Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")},
		MaxTokens: openai.Int(5),
	})
	if err != nil || comp.Usage.CompletionTokens == 0 || comp.Choices[0].FinishReason == "" {
		t.Errorf("completion %+v, %v", comp, err)
	}
}

// TestNodeClientRealModel runs node/client.mjs in its real-model mode.
func TestNodeClientRealModel(t *testing.T) {
	cmd := nodeClient(t)
	_, url := realServer(t)
	cmd.Env = append(cmd.Env, "BASE_URL="+url, "REAL_MODEL=tiny-chat")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "real model checks passed") {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestRealModelEmbeddings: client.Embeddings.New over a real model gives
// Session.EmbedBatch's vectors of the same inputs (which pack them into
// shared passes as the server does), from a string, an array of strings,
// token arrays, and base64 — which openai-go v1.12.0 does not decode:
// Embedding stays empty and the string is in the raw JSON.
func TestRealModelEmbeddings(t *testing.T) {
	m, url := realServer(t)
	client := openai.NewClient(option.WithBaseURL(url+"/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	ctx := context.Background()
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	texts := []string{"Once upon a time", "the cat sat on the mat"}
	want := make([][]float32, len(texts))
	var ids [][]int64
	tokens := 0
	var lists [][]int32
	for _, text := range texts {
		tok, err := m.TokenizeSpecial(text)
		if err != nil {
			t.Fatal(err)
		}
		lists = append(lists, tok)
	}
	// Packed and alone, a text's vector may differ in the last bits (the
	// batch kernels round in their own order); the server packs as
	// EmbedBatch does.
	batch := func(l [][]int32) [][]float32 {
		t.Helper()
		vs, err := s.EmbedBatch(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	want = batch(lists)
	for i := range texts {
		tok := lists[i]
		ids = append(ids, make([]int64, len(tok)))
		for j, id := range tok {
			ids[i][j] = int64(id)
		}
		tokens += len(tok)
	}
	same := func(what string, got []float64, want []float32) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
		}
		for j := range got {
			if float32(got[j]) != want[j] {
				t.Fatalf("%s: element %d is %g, Session.Embed's %g", what, j, got[j], want[j])
			}
		}
	}
	for _, c := range []struct {
		name  string
		input openai.EmbeddingNewParamsInputUnion
		want  [][]float32
	}{
		{"string", openai.EmbeddingNewParamsInputUnion{OfString: openai.String(texts[0])}, batch(lists[:1])},
		{"strings", openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts}, want},
		{"tokens", openai.EmbeddingNewParamsInputUnion{OfArrayOfTokens: ids[1]}, batch(lists[1:])},
		{"token arrays", openai.EmbeddingNewParamsInputUnion{OfArrayOfTokenArrays: ids}, want},
	} {
		resp, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "tiny-chat", Input: c.input})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(resp.Data) != len(c.want) || resp.Model != "tiny-chat" || resp.Usage.PromptTokens == 0 ||
			resp.Usage.TotalTokens != resp.Usage.PromptTokens {
			t.Fatalf("%s: %d vectors, model %q, usage %+v", c.name, len(resp.Data), resp.Model, resp.Usage)
		}
		for i, d := range resp.Data {
			if d.Index != int64(i) {
				t.Errorf("%s: data[%d] has index %d", c.name, i, d.Index)
			}
			same(fmt.Sprintf("%s %d", c.name, i), d.Embedding, c.want[i])
		}
	}

	resp, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "tiny-chat",
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatBase64})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.PromptTokens != int64(tokens) {
		t.Errorf("base64: usage %+v, want %d tokens", resp.Usage, tokens)
	}
	for i, d := range resp.Data {
		var b64 string
		if err := json.Unmarshal([]byte(d.JSON.Embedding.Raw()), &b64); err != nil || len(d.Embedding) != 0 {
			t.Fatalf("base64 %d: raw %s, decoded %d floats: the client decodes base64 now", i, d.JSON.Embedding.Raw(), len(d.Embedding))
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, len(raw)/4)
		for j := range got {
			got[j] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:])))
		}
		same(fmt.Sprintf("base64 %d", i), got, want[i])
	}

	// dimensions: Session.Embed's with WithDimensions.
	n := m.Info().Embedding / 4
	cut, err := s.Embed(ctx, texts[0], llm.WithDimensions(n))
	if err != nil {
		t.Fatal(err)
	}
	resp, err = client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "tiny-chat",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String(texts[0])}, Dimensions: openai.Int(int64(n))})
	if err != nil {
		t.Fatal(err)
	}
	same("dimensions", resp.Data[0].Embedding, cut)

	// An empty string is the client's error, as OpenAI's would be.
	_, err = client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "tiny-chat",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", ""}}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "input" {
		t.Errorf("empty string: %v", err)
	}
}
