package chat

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lowmem/llm/internal/templates"
)

// The system message templates.Harmony writes, with the date of
// harmonyNow and a reasoning effort.
func harmonySystem(effort string, tools bool) string {
	s := "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: 2026-11-29\n\nReasoning: " + effort +
		"\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message."
	if tools {
		s += "\nCalls to these tools must go to the commentary channel: 'functions'."
	}
	return s + "<|end|>"
}

var harmonyNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// TestRenderHarmony renders a harmony-format template (the repository's
// own, templates.Harmony, which a gpt-oss file without a template gets;
// it uses the Jinja features and markers of gpt-oss's) as llama.cpp
// does for gpt-oss: reasoning passed
// as thinking, kept before a call no answer follows, dropped from
// answered turns; reasoning_effort in the system message; a prompt
// without a generation prompt ending at <|end|>, not <|return|>.
func TestRenderHarmony(t *testing.T) {
	tmpl, err := Parse(templates.Harmony)
	if err != nil {
		t.Fatal(err)
	}
	if got := tmpl.Format(); got != (Format{Tools: ToolsHarmony}) {
		t.Fatalf("Format %+v, want harmony", got)
	}
	weather := Tool{Name: "get_weather", Description: "Current weather",
		Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string","description":"City name"},"unit":{"type":"string","enum":["c","f"],"default":"c"},"days":{"type":["integer","null"]},"tags":{"type":"array","items":{"type":"string"}}},"required":["city"]}`)}
	const weatherNS = "<|start|>developer<|message|># Tools\n\n## functions\n\nnamespace functions {\n\n// Current weather\ntype get_weather = (_: {\n// City name\ncity: string,\nunit?: \"c\" | \"f\", // default: \"c\",\ndays?: integer | null,\ntags?: string[],\n}) => any;\n\n} // namespace functions<|end|>"
	call := ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	user := Message{Role: RoleUser, Content: "Weather in Paris?"}
	const userTurn = "<|start|>user<|message|>Weather in Paris?<|end|>"
	for _, c := range []struct {
		name string
		msgs []Message
		o    RenderOptions
		want string
	}{
		{"plain", []Message{user}, RenderOptions{AddGenerationPrompt: true},
			harmonySystem("medium", false) + userTurn + "<|start|>assistant"},
		{"system", []Message{{Role: RoleSystem, Content: "Be brief."}, user}, RenderOptions{AddGenerationPrompt: true},
			harmonySystem("medium", false) + "<|start|>developer<|message|># Instructions\n\nBe brief.<|end|>" + userTurn + "<|start|>assistant"},
		{"developer", []Message{{Role: "developer", Content: "Be brief."}, user}, RenderOptions{AddGenerationPrompt: true},
			harmonySystem("medium", false) + "<|start|>developer<|message|># Instructions\n\nBe brief.<|end|>" + userTurn + "<|start|>assistant"},
		{"tools", []Message{user}, RenderOptions{AddGenerationPrompt: true, Tools: []Tool{weather}},
			harmonySystem("medium", true) + weatherNS + userTurn + "<|start|>assistant"},
		{"answered turn drops its reasoning", []Message{user, {Role: RoleAssistant, Thinking: "Easy.", Content: "Sunny."}, {Role: RoleUser, Content: "Thanks"}},
			RenderOptions{AddGenerationPrompt: true},
			harmonySystem("medium", false) + userTurn + "<|start|>assistant<|channel|>final<|message|>Sunny.<|end|><|start|>user<|message|>Thanks<|end|><|start|>assistant"},
		{"call and its result", []Message{user, {Role: RoleAssistant, Thinking: "Need the tool.", Content: "ignored", ToolCalls: []ToolCall{call}}, {Role: RoleTool, ToolCallID: "call_1", Content: "18 C"}},
			RenderOptions{AddGenerationPrompt: true, Tools: []Tool{weather}},
			harmonySystem("medium", true) + weatherNS + userTurn +
				"<|start|>assistant<|channel|>analysis<|message|>Need the tool.<|end|>" +
				"<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>" +
				"<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>\"18 C\"<|end|><|start|>assistant"},
		{"answered call drops its reasoning", []Message{user, {Role: RoleAssistant, Thinking: "Need the tool.", ToolCalls: []ToolCall{call}}, {Role: RoleTool, Content: "18 C"}, {Role: RoleAssistant, Content: "18 C in Paris."}, {Role: RoleUser, Content: "Thanks"}},
			RenderOptions{AddGenerationPrompt: true, Tools: []Tool{weather}},
			harmonySystem("medium", true) + weatherNS + userTurn +
				"<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>" +
				"<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>\"18 C\"<|end|>" +
				"<|start|>assistant<|channel|>final<|message|>18 C in Paris.<|end|><|start|>user<|message|>Thanks<|end|><|start|>assistant"},
		{"effort low", []Message{user}, RenderOptions{AddGenerationPrompt: true, ReasoningEffort: "low"},
			harmonySystem("low", false) + userTurn + "<|start|>assistant"},
		{"effort medium", []Message{user}, RenderOptions{AddGenerationPrompt: true, ReasoningEffort: "medium"},
			harmonySystem("medium", false) + userTurn + "<|start|>assistant"},
		{"effort high", []Message{user}, RenderOptions{AddGenerationPrompt: true, ReasoningEffort: "high"},
			harmonySystem("high", false) + userTurn + "<|start|>assistant"},
		{"kwargs override the effort", []Message{user}, RenderOptions{AddGenerationPrompt: true, ReasoningEffort: "high", Kwargs: map[string]any{"reasoning_effort": "low"}},
			harmonySystem("low", false) + userTurn + "<|start|>assistant"},
		{"last assistant turn continues at <|end|>", []Message{user, {Role: RoleAssistant, Thinking: "Easy.", Content: "Sunny."}}, RenderOptions{},
			harmonySystem("medium", false) + userTurn + "<|start|>assistant<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>Sunny.<|end|>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.Now = harmonyNow
			got, err := tmpl.Render(c.msgs, c.o)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				i := 0
				for i < min(len(got), len(c.want)) && got[i] == c.want[i] {
					i++
				}
				t.Errorf("differs at byte %d\n got %q\nwant %q", i, got[i:], c.want[i:])
			}
		})
	}
	// The template's own check: a tool result with no call before it.
	_, err = tmpl.Render([]Message{user, {Role: RoleTool, Content: "x"}}, RenderOptions{Now: harmonyNow})
	if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), "a tool result needs a call before it") {
		t.Errorf("tool result without a call: %v, want the template's exception", err)
	}
}

func TestCheckEffort(t *testing.T) {
	harmony, hermes := Format{Tools: ToolsHarmony}, Format{Tools: ToolsHermes, Thinking: true}
	for _, c := range []struct {
		f     Format
		level string
		want  string // "" for no error, else a part of the message
	}{
		{harmony, "", ""}, {harmony, "low", ""}, {harmony, "medium", ""}, {harmony, "high", ""},
		{hermes, "", ""},
		{harmony, "max", `reasoning effort "max": want "low", "medium" or "high"`},
		{harmony, "Low", `reasoning effort "Low": want`},
		{hermes, "low", `reasoning effort "low": the template's output format (hermes) takes no levels`},
		{Format{}, "high", `(none) takes no levels`},
	} {
		err := c.f.CheckEffort(c.level)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %q: %v", c.f.Tools, c.level, err)
		case c.want != "" && (!errors.Is(err, ErrReasoningEffort) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %q: %v, want ErrReasoningEffort saying %q", c.f.Tools, c.level, err, c.want)
		}
	}
}

// TestParseHarmony parses the variants of harmony output llama.cpp's
// gpt-oss parser accepts, whole and streamed in pieces of every size.
func TestParseHarmony(t *testing.T) {
	h := Format{Tools: ToolsHarmony}
	tools := ParseOptions{Tools: true}
	call := func(name, args string) []ToolCall { return []ToolCall{{ID: "call_1", Name: name, Arguments: args}} }
	for _, c := range []struct {
		name string
		out  string
		opts ParseOptions
		want Message
	}{
		{"analysis then final", "<|channel|>analysis<|message|>The user greets.<|end|><|start|>assistant<|channel|>final<|message|>Hello!", ParseOptions{},
			Message{Thinking: "The user greets.", Content: "Hello!"}},
		{"final only", "<|channel|>final<|message|>Hello!", ParseOptions{}, Message{Content: "Hello!"}},
		{"space after markers (SentencePiece)", "<|channel|> analysis<|message|> Hm.<|end|><|start|> assistant<|channel|> final<|message|> Hi", ParseOptions{},
			Message{Thinking: "Hm.", Content: " Hi"}},
		{"final ended by <|return|> in the text", "<|channel|>final<|message|>Hello!<|return|>", ParseOptions{}, Message{Content: "Hello!"}},
		{"final ended by <|end|>", "<|channel|>final<|message|>Hello! <|end|>", ParseOptions{}, Message{Content: "Hello!"}},
		{"unfinished analysis", "<|channel|>analysis<|message|>Thinking about", ParseOptions{}, Message{Thinking: "Thinking about"}},
		{"stray commentary before analysis", "<|channel|>commentary<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant<|channel|>final<|message|>Ok.", ParseOptions{},
			Message{Thinking: "Hmm.", Content: "Ok."}},
		{"stray commentary to=assistant", "<|channel|>commentary to=assistant<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant<|channel|>final<|message|>Ok.", ParseOptions{},
			Message{Thinking: "Hmm.", Content: "Ok."}},
		{"preamble is content", "<|channel|>analysis<|message|>Plan.<|end|><|start|>assistant<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant<|channel|>final<|message|>Done.", ParseOptions{},
			Message{Thinking: "Plan.", Content: "Checking.Done."}},
		{"call, recipient after the channel", "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}", tools,
			Message{Thinking: "Need weather.", ToolCalls: call("get_weather", `{"city":"Paris"}`)}},
		{"call, recipient in the role", "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>", tools,
			Message{Thinking: "Need weather.", ToolCalls: call("get_weather", `{"city":"Paris"}`)}},
		{"call first, bare json constraint", " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\":\"Oslo\"}", tools,
			Message{ToolCalls: call("get_weather", `{"city":"Oslo"}`)}},
		{"call without constraint", "<|channel|>commentary to=functions.ping<|message|>{}", tools,
			Message{ToolCalls: call("ping", `{}`)}},
		{"call on the analysis channel", "<|channel|>analysis to=functions.ping <|constrain|>json<|message|>{\"n\": 1}", tools,
			Message{ToolCalls: call("ping", `{"n":1}`)}},
		{"call with tools not offered is dropped", "<|channel|>commentary to=functions.ping <|constrain|>json<|message|>{}<|call|>", ParseOptions{},
			Message{}},
		{"built-in tool call is dropped", "<|channel|>analysis<|message|>Search.<|end|><|start|>assistant<|channel|>analysis to=browser.search code<|message|>{\"query\": \"x\"}<|call|>", tools,
			Message{Thinking: "Search."}},
		{"call with broken arguments is content", "<|channel|>commentary to=functions.ping <|constrain|>json<|message|>{oops", tools,
			Message{Content: "{oops"}},
		{"plain text is content", "Hello <|end|> there", ParseOptions{}, Message{Content: "Hello <|end|> there"}},
		{"JSON output (WithJSON) is content", `{"a": [1, "<|end|>"]}`, ParseOptions{}, Message{Content: `{"a": [1, "<|end|>"]}`}},
		{"unicode split anywhere", "<|channel|>final<|message|>Grüße 😀", ParseOptions{}, Message{Content: "Grüße 😀"}},
		{"unfinished header says nothing", "<|channel|>final", ParseOptions{}, Message{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.want.Role = RoleAssistant
			for size := 0; size <= 9; size++ { // 0: the whole output at once
				n := size
				if n == 0 {
					n = len(c.out)
				}
				sum, msg := streamed(c.out, h, c.opts, n)
				if !reflect.DeepEqual(sum, c.want) || !reflect.DeepEqual(msg, c.want) {
					t.Fatalf("in %d-byte pieces: deltas %+v, message %+v\nwant %+v", size, sum, msg, c.want)
				}
			}
		})
	}
}

// TestHarmonyStreams: reasoning and answer are passed on as they come,
// holding back only what may be the start of a marker.
func TestHarmonyStreams(t *testing.T) {
	p := NewParser(Format{Tools: ToolsHarmony}, ParseOptions{})
	steps := []struct {
		push string
		want []Delta
	}{
		{"<|channel|>analysis", nil},
		{"<|message|>Let me", []Delta{{Thinking: "Let me"}}},
		{" think<|e", []Delta{{Thinking: " think"}}},
		{"nd|><|start|>assistant<|channel|>final<|message|>Hi", []Delta{{Content: "Hi"}}},
		{" there", []Delta{{Content: " there"}}},
	}
	for i, s := range steps {
		if got := p.Push(s.push); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("push %d %q: %+v, want %+v", i, s.push, got, s.want)
		}
	}
	if got := p.Finish(); len(got) != 0 {
		t.Errorf("Finish: %+v, want nothing", got)
	}
}
