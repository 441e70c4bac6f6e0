package openaitest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/server"
	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/packages/ssestream"
	"github.com/openai/openai-go/shared"
)

// accumulate reads a streamed chat reply to its end, as a client
// application would.
func accumulate(t *testing.T, stream *ssestream.Stream[openai.ChatCompletionChunk]) openai.ChatCompletionAccumulator {
	t.Helper()
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	return acc
}

// backend is a scripted model: it answers a weather question with a tool
// call, a tool result with a sentence, anything else with a greeting.
type backend struct{ tmpl *chat.Template }

func (b *backend) Info() server.ModelInfo {
	return server.ModelInfo{ID: "tiny", ContextLength: 2048, Template: b.tmpl}
}

func (b *backend) NewSession() (server.Session, error) { return session{}, nil }

type session struct{}

func (session) Close() error { return nil }

func (session) Generate(ctx context.Context, prompt string, p server.Params, yield func(string) bool) (server.Result, error) {
	var pieces []string
	switch {
	case strings.Contains(prompt, "<tool_response>"):
		pieces = []string{"It is ", "sunny in ", "Paris."}
	case strings.Contains(prompt, "<tools>") && strings.Contains(prompt, "weather"):
		pieces = []string{"<tool_call>", `{"name": "get_weather", "arguments": {"location": "Paris"}}`, "</tool_call>"}
	default:
		pieces = []string{"Hello", ", ", "world", "!"}
	}
	res := server.Result{PromptTokens: len(strings.Fields(prompt)), Finish: "stop"}
	for _, piece := range pieces {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if p.MaxTokens > 0 && res.CompletionTokens == p.MaxTokens {
			res.Finish = "length"
			break
		}
		res.CompletionTokens++
		if !yield(piece) {
			break
		}
	}
	return res, nil
}

func newClient(t *testing.T, opts ...server.Option) openai.Client {
	t.Helper()
	tmpl, err := chat.Parse(testutil.HermesTemplate)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(&backend{tmpl: tmpl}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return openai.NewClient(option.WithBaseURL(hs.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
}

func TestChat(t *testing.T) {
	client := newClient(t)
	resp, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:       "tiny",
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be nice."), openai.UserMessage("Hi")},
		MaxTokens:   openai.Int(16),
		Temperature: openai.Float(0.5),
		Seed:        openai.Int(1),
		Stop:        openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"STOP"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "Hello, world!" {
		t.Errorf("content %q", got)
	}
	if resp.Choices[0].FinishReason != "stop" || resp.Model != "tiny" || resp.Usage.CompletionTokens != 4 {
		t.Errorf("response %+v", resp)
	}
}

func TestChatStream(t *testing.T) {
	client := newClient(t)
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         "tiny",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	acc := openai.ChatCompletionAccumulator{}
	var deltas []string
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			deltas = append(deltas, chunk.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(deltas, "") != "Hello, world!" || len(deltas) != 4 {
		t.Errorf("deltas %q", deltas)
	}
	if acc.Choices[0].Message.Content != "Hello, world!" || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("accumulated %+v", acc.Choices[0])
	}
	if acc.Usage.CompletionTokens != 4 || acc.Usage.TotalTokens != acc.Usage.PromptTokens+4 {
		t.Errorf("usage %+v", acc.Usage)
	}
}

var weatherTool = openai.ChatCompletionToolParam{Function: openai.FunctionDefinitionParam{
	Name:        "get_weather",
	Description: openai.String("Weather at a place"),
	Parameters: openai.FunctionParameters{
		"type":       "object",
		"properties": map[string]any{"location": map[string]string{"type": "string"}},
		"required":   []string{"location"},
	},
}}

func TestToolCalls(t *testing.T) {
	client := newClient(t)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    "tiny",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")},
		Tools:    []openai.ChatCompletionToolParam{weatherTool},
	}
	resp, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "get_weather" || resp.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("message %+v", resp.Choices[0])
	}
	var args struct{ Location string }
	if err := json.Unmarshal([]byte(calls[0].Function.Arguments), &args); err != nil || args.Location != "Paris" {
		t.Fatalf("arguments %q: %v", calls[0].Function.Arguments, err)
	}
	params.Messages = append(params.Messages, resp.Choices[0].Message.ToParam(), openai.ToolMessage("sunny", calls[0].ID))

	acc := accumulate(t, client.Chat.Completions.NewStreaming(ctx, params))
	if acc.Choices[0].Message.Content != "It is sunny in Paris." {
		t.Errorf("answer %q", acc.Choices[0].Message.Content)
	}

	// A streamed tool call arrives whole in one delta.
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:    "tiny",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")},
		Tools:    []openai.ChatCompletionToolParam{weatherTool},
	})
	acc = openai.ChatCompletionAccumulator{}
	var finished []openai.FinishedChatCompletionToolCall
	for stream.Next() {
		acc.AddChunk(stream.Current())
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(finished) != 1 || finished[0].Name != "get_weather" || acc.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finished %+v, choice %+v", finished, acc.Choices[0])
	}
}

func TestCompletions(t *testing.T) {
	client := newClient(t)
	resp, err := client.Completions.New(context.Background(), openai.CompletionNewParams{
		Model:     openai.CompletionNewParamsModel("tiny"),
		Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say hi")},
		MaxTokens: openai.Int(2),
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Text != "Hello, " || resp.Choices[0].FinishReason != "length" {
		t.Errorf("choice %+v", resp.Choices[0])
	}
	stream := client.Completions.NewStreaming(context.Background(), openai.CompletionNewParams{
		Model:  openai.CompletionNewParamsModel("tiny"),
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say hi")},
	})
	var text strings.Builder
	for stream.Next() {
		if c := stream.Current(); len(c.Choices) > 0 {
			text.WriteString(c.Choices[0].Text)
		}
	}
	if err := stream.Err(); err != nil || text.String() != "Hello, world!" {
		t.Errorf("streamed %q, %v", text.String(), err)
	}
}

func TestErrors(t *testing.T) {
	client := newClient(t)
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "tiny",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
		N:        openai.Int(17),
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "n" || !strings.Contains(apiErr.Message, "between 1 and 16") {
		t.Fatalf("error %v", err)
	}
	models, err := client.Models.List(context.Background())
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != "tiny" {
		t.Fatalf("models %+v, %v", models, err)
	}
	// The scripted sessions cannot embed: 501, as llama-server's without
	// --embeddings.
	_, err = client.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "tiny",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("Hi")}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 501 || !strings.Contains(apiErr.Message, "does not support embeddings") {
		t.Fatalf("embeddings: %v", err)
	}
}

// harmonyClient is a client of a server of a harmonyBackend, and the
// backend.
func harmonyClient(t *testing.T) (openai.Client, *harmonyBackend) {
	t.Helper()
	tmpl, err := chat.Parse(testutil.HarmonyTemplate)
	if err != nil {
		t.Fatal(err)
	}
	b := &harmonyBackend{tmpl: tmpl}
	srv, err := server.New(b)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return openai.NewClient(option.WithBaseURL(hs.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0)), b
}

// harmonyBackend is a scripted gpt-oss: a template in the harmony format,
// replies of an analysis and a final message, and the prompts it got.
type harmonyBackend struct {
	tmpl    *chat.Template
	mu      sync.Mutex
	prompts []string
}

func (b *harmonyBackend) Info() server.ModelInfo {
	return server.ModelInfo{ID: "gpt-oss", ContextLength: 2048, Template: b.tmpl}
}

func (b *harmonyBackend) NewSession() (server.Session, error) { return harmonySession{b}, nil }

type harmonySession struct{ b *harmonyBackend }

func (harmonySession) Close() error { return nil }

func (s harmonySession) Generate(ctx context.Context, prompt string, p server.Params, yield func(string) bool) (server.Result, error) {
	s.b.mu.Lock()
	s.b.prompts = append(s.b.prompts, prompt)
	s.b.mu.Unlock()
	pieces := []string{"<|channel|>analysis<|message|>", "A greeting.", "<|end|>", "<|start|>assistant<|channel|>final<|message|>", "Hello", "!"}
	res := server.Result{PromptTokens: len(strings.Fields(prompt)), Finish: "stop"}
	for _, piece := range pieces {
		res.CompletionTokens++
		if !yield(piece) {
			break
		}
	}
	return res, nil
}

// TestReasoningEffort: openai-go's reasoning_effort reaches a harmony
// template, the reply's final message is the content (its analysis the
// reasoning_content, a field the client keeps as extra JSON), and a level
// for a model in another format is a 400 the client reads.
func TestReasoningEffort(t *testing.T) {
	client, b := harmonyClient(t)
	resp, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:           "gpt-oss",
		Messages:        []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
		ReasoningEffort: shared.ReasoningEffortHigh,
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if msg.Content != "Hello!" || msg.JSON.ExtraFields["reasoning_content"].Raw() != `"A greeting."` {
		t.Errorf("message %s", msg.RawJSON())
	}
	if len(b.prompts) != 1 || !strings.Contains(b.prompts[0], "Reasoning: high\n") {
		t.Errorf("prompts %q", b.prompts)
	}

	hermes := newClient(t)
	_, err = hermes.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:           "tiny",
		Messages:        []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
		ReasoningEffort: shared.ReasoningEffortLow,
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "reasoning_effort" || !strings.Contains(apiErr.Message, "takes no levels") {
		t.Errorf("a level for a Hermes model: %v", err)
	}
}
