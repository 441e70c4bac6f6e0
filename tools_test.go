package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// TestToolChoice: "required" and a tool's name make the reply exactly one
// call, in the template's syntax, with a known name and arguments that
// follow the tool's parameters; "none" leaves the tools out of the prompt;
// a name no tool has fails.
func TestToolChoice(t *testing.T) {
	m := load(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithThreads(1))
	s := session(t, m)
	ctx := context.Background()
	// Arguments of enums only: a forced call ends within its tokens.
	weather := llm.Tool{Name: "weather", Parameters: json.RawMessage(
		`{"type":"object","properties":{"unit":{"enum":["c","f"]}},"required":["unit"],"additionalProperties":false}`)}
	clock := llm.Tool{Name: "clock", Parameters: json.RawMessage(`{"type":"object","additionalProperties":false}`)}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "What is the weather?"}}
	for _, tc := range []struct {
		choice string
		tools  []llm.Tool
		names  []string
	}{
		{"required", []llm.Tool{weather}, []string{"weather"}},
		{"required", []llm.Tool{weather, clock}, []string{"weather", "clock"}},
		{"weather", []llm.Tool{weather, clock}, []string{"weather"}},
		{"clock", []llm.Tool{weather, clock}, []string{"clock"}},
	} {
		for _, temp := range []float32{0, 1} {
			reply, err := s.Chat(ctx, msgs, llm.WithTools(tc.tools...), llm.WithToolChoice(tc.choice), llm.MaxTokens(400), llm.Temperature(temp))
			if err != nil {
				t.Fatalf("%s: %v", tc.choice, err)
			}
			if len(reply.ToolCalls) != 1 || s.Usage().Finish != llm.FinishEnd {
				t.Fatalf("%s, temperature %g: reply %+v (%s), want one call", tc.choice, temp, reply, s.Usage().Finish)
			}
			call := reply.ToolCalls[0]
			var args map[string]string
			if json.Unmarshal([]byte(call.Arguments), &args) != nil {
				t.Fatalf("%s: arguments %q", tc.choice, call.Arguments)
			}
			known := false
			for _, n := range tc.names {
				known = known || call.Name == n
			}
			if !known || call.Name == "weather" && args["unit"] != "c" && args["unit"] != "f" || call.Name == "clock" && len(args) != 0 {
				t.Fatalf("%s: call %+v", tc.choice, call)
			}
		}
	}
	if _, err := s.Chat(ctx, msgs, llm.WithTools(weather), llm.WithToolChoice("news")); !errors.Is(err, llm.ErrInvalidOption) {
		t.Errorf("an unknown tool: %v, want ErrInvalidOption", err)
	}
	if _, err := s.Chat(ctx, msgs, llm.WithToolChoice("required")); !errors.Is(err, llm.ErrInvalidOption) {
		t.Errorf("required without tools: %v, want ErrInvalidOption", err)
	}
	s.Chat(ctx, msgs, llm.WithTools(weather), llm.MaxTokens(1))
	with := s.Usage().PromptTokens
	s.Chat(ctx, msgs, llm.WithTools(weather), llm.WithToolChoice("none"), llm.MaxTokens(1))
	if none := s.Usage().PromptTokens; none >= with {
		t.Errorf("tool choice none: prompt of %d tokens, with the tools offered %d", none, with)
	}
}

// TestToolChoiceMistral: forced calls in both of Mistral's syntaxes, a
// list after [TOOL_CALLS] and the newer name[ARGS]{…}.
func TestToolChoiceMistral(t *testing.T) {
	weather := llm.Tool{Name: "weather", Parameters: json.RawMessage(
		`{"type":"object","properties":{"unit":{"enum":["c","f"]}},"required":["unit"],"additionalProperties":false}`)}
	clock := llm.Tool{Name: "clock", Parameters: json.RawMessage(`{"type":"object","additionalProperties":false}`)}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "What is the weather?"}}
	for _, syntax := range []string{"[TOOL_CALLS]", "[TOOL_CALLS]name[ARGS]"} {
		spec := testutil.TinyChat()
		// The format is told from the template's source: a comment names
		// the markers.
		spec.ChatTemplate = `{%- for m in messages %}{% if m.role == 'user' %}[INST]{{ m.content }}[/INST]{% endif %}{%- endfor %}{# ` + syntax + ` #}`
		spec.ChatTokens = []string{"[INST]", "[/INST]", "[TOOL_CALLS]", "[ARGS]"}
		m := load(t, testutil.TempModel(t, spec), llm.WithThreads(1))
		s := session(t, m)
		for _, temp := range []float32{0, 1} {
			reply, err := s.Chat(context.Background(), msgs, llm.WithTools(weather, clock), llm.WithToolChoice("weather"),
				llm.MaxTokens(400), llm.Temperature(temp))
			if err != nil {
				t.Fatalf("%s: %v", syntax, err)
			}
			var args struct{ Unit string }
			if len(reply.ToolCalls) != 1 || reply.ToolCalls[0].Name != "weather" ||
				json.Unmarshal([]byte(reply.ToolCalls[0].Arguments), &args) != nil || (args.Unit != "c" && args.Unit != "f") {
				t.Fatalf("%s, temperature %g: reply %+v (%s), want one call of weather", syntax, temp, reply, s.Usage().Finish)
			}
		}
		_, err := s.Chat(context.Background(), msgs, llm.WithTools(weather, clock), llm.WithToolChoice("required"), llm.MaxTokens(400))
		if newer := syntax != "[TOOL_CALLS]"; newer != errors.Is(err, llm.ErrInvalidOption) {
			t.Errorf("%s, required with two tools: %v", syntax, err)
		}
	}
}
