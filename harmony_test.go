package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// TestChatHarmony: a chat turn with a harmony-format (gpt-oss) model
// holds the prompt its template renders with the reasoning effort asked,
// ending at <|start|>assistant; <|return|> and <|call|> end generation
// but <|end|> does not; a level is refused, naming it, where it is not
// taken.
func TestChatHarmony(t *testing.T) {
	m := load(t, testutil.TempModel(t, testutil.TinyHarmony()), llm.WithThreads(1))
	ctx := context.Background()
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "Be brief."}, {Role: llm.RoleUser, Content: "the quick brown fox"}}
	for _, level := range []string{"", "low", "medium", "high"} {
		s := session(t, m)
		if _, err := s.Chat(ctx, msgs, llm.WithReasoningEffort(level), llm.MaxTokens(2), llm.Temperature(0)); err != nil {
			t.Fatalf("effort %q: %v", level, err)
		}
		want := promptTokens(t, m, msgs, llm.RenderOptions{ReasoningEffort: level})
		if got := s.Tokens(); !slices.Equal(got[:min(len(got), len(want))], want) {
			t.Fatalf("effort %q: session holds %v, want the prompt %v first", level, got, want)
		}
		text, err := m.Detokenize(want)
		if err != nil {
			t.Fatal(err)
		}
		shown := level
		if shown == "" {
			shown = "medium" // the template's default
		}
		// (SentencePiece's prefix space shows after each marker.)
		if !strings.Contains(text, "Reasoning: "+shown+"\n") || !strings.HasSuffix(text, "<|start|> assistant") {
			t.Errorf("effort %q: prompt %q", level, text)
		}
	}
	info := m.Info()
	for _, marker := range []string{"<|return|>", "<|call|>", "<|end|>"} {
		ids, err := m.TokenizeSpecial(marker)
		if err != nil {
			t.Fatal(err)
		}
		id := ids[len(ids)-1]
		if got, want := slices.Contains(info.EOG, id), marker != "<|end|>"; got != want {
			t.Errorf("%s (token %d) ends generation: %v, want %v", marker, id, got, want)
		}
	}

	for _, c := range []struct {
		model *llm.Model
		level string
		want  string
	}{
		{m, "extreme", `reasoning effort "extreme": want "low", "medium" or "high"`},
		{load(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithThreads(1)), "low", `reasoning effort "low": the template's output format (hermes) takes no levels`},
	} {
		_, err := session(t, c.model).Chat(ctx, msgs, llm.WithReasoningEffort(c.level), llm.MaxTokens(1))
		if !errors.Is(err, llm.ErrInvalidOption) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("effort %q: %v, want ErrInvalidOption saying %q", c.level, err, c.want)
		}
	}
}

// TestChatHarmonyForcedCall: a forced call is written as gpt-oss writes
// one, its header then arguments following the tool's parameters (enums
// only, so that it ends within its tokens), and parsed into the reply's
// call; "required" with two tools cannot frame the name, and is refused.
func TestChatHarmonyForcedCall(t *testing.T) {
	m := load(t, testutil.TempModel(t, testutil.TinyHarmony()), llm.WithThreads(1))
	s := session(t, m)
	weather := llm.Tool{Name: "weather", Parameters: []byte(
		`{"type":"object","properties":{"unit":{"enum":["c","f"]}},"required":["unit"],"additionalProperties":false}`)}
	clock := llm.Tool{Name: "clock", Parameters: []byte(`{"type":"object","additionalProperties":false}`)}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "What is the weather?"}}
	for _, temp := range []float32{0, 1} {
		reply, err := s.Chat(context.Background(), msgs, llm.WithTools(weather, clock), llm.WithToolChoice("weather"),
			llm.MaxTokens(400), llm.Temperature(temp))
		if err != nil {
			t.Fatal(err)
		}
		var args struct{ Unit string }
		if len(reply.ToolCalls) != 1 || reply.ToolCalls[0].Name != "weather" || reply.Content != "" ||
			json.Unmarshal([]byte(reply.ToolCalls[0].Arguments), &args) != nil || (args.Unit != "c" && args.Unit != "f") {
			t.Fatalf("temperature %g: reply %+v (%s), want one call of weather", temp, reply, s.Usage().Finish)
		}
	}
	_, err := s.Chat(context.Background(), msgs, llm.WithTools(weather, clock), llm.WithToolChoice("required"), llm.MaxTokens(400))
	if !errors.Is(err, llm.ErrInvalidOption) || !strings.Contains(err.Error(), "harmony's to=functions.NAME syntax needs the tool named") {
		t.Errorf("required with two tools: %v", err)
	}
}

// TestGptOssAsShipped: gpt-oss as its files come — the gpt-oss
// architecture with MXFP4 experts beside Q8_0 weights (llama-quantize's
// MXFP4_MOE mix) and a harmony template — loads, answers a chat turn at
// each reasoning effort through the public API, and decodes without
// allocating.
func TestGptOssAsShipped(t *testing.T) {
	spec := testutil.TinyGptOss()
	spec.ExpertType = quant.MXFP4
	spec.Context = 1024
	spec.ChatTemplate, spec.ChatTokens = testutil.HarmonyTemplate, testutil.HarmonyTokens
	path := testutil.TempModel(t, spec)
	if _, err := llm.Plan(path, llm.WithContextSize(512)); err != nil {
		t.Fatal(err)
	}
	m := load(t, path, llm.WithThreads(2), llm.WithContextSize(512))
	if got := m.Info().Architecture; got != "gpt-oss" {
		t.Fatalf("architecture %q", got)
	}
	ctx := context.Background()
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "the quick brown fox"}}
	for _, level := range []string{"low", "high"} {
		s := session(t, m)
		if _, err := s.Chat(ctx, msgs, llm.WithReasoningEffort(level), llm.MaxTokens(8), llm.Temperature(0)); err != nil {
			t.Fatalf("effort %q: %v", level, err)
		}
		if raceEnabled {
			continue // allocation counts are not meaningful under the race detector
		}
		checkDecodeAllocs(t, s, 20, "gpt-oss decode step")
	}
}
