package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/testutil"
)

// newHarmonyFake is a fake whose template is in gpt-oss's harmony format
// (testutil.HarmonyTemplate).
func newHarmonyFake(reply func(prompt string) []string) *fakeBackend {
	b := newFake(reply)
	t, err := chat.Parse(testutil.HarmonyTemplate)
	if err != nil {
		panic(err)
	}
	b.tmpl = t
	return b
}

// harmonyReply is what gpt-oss writes, token by token: its analysis, then
// a call when the prompt has no tool result yet, else its answer
// (generation ends at <|call|> or <|return|>, which are not text).
func harmonyReply(prompt string) []string {
	if !strings.Contains(prompt, "<|start|>functions.get_weather to=assistant") {
		return []string{"<|channel|>", "analysis", "<|message|>", "The user", " wants the weather.", "<|end|>",
			"<|start|>", "assistant", "<|channel|>", "commentary", " to", "=functions", ".get_weather", " ", "<|constrain|>", "json",
			"<|message|>", `{"city":`, ` "Paris"}`}
	}
	return []string{"<|channel|>", "analysis", "<|message|>", "Got 18 C.", "<|end|>",
		"<|start|>", "assistant", "<|channel|>", "final", "<|message|>", "It is ", "18 °C", " in Paris."}
}

const harmonyTools = `"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`

// TestHarmonyOpenAI: a gpt-oss (harmony) model over /v1/chat/completions:
// its analysis as reasoning_content, its call as tool_calls, its final
// message as content, streamed or not; reasoning_effort reaches the
// template, and is refused, naming it, where it cannot.
func TestHarmonyOpenAI(t *testing.T) {
	b := newHarmonyFake(harmonyReply)
	_, hs := start(t, b)
	got, body := postChat(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Weather in Paris?"}],"reasoning_effort":"low",`+harmonyTools+`}`)
	c := got.Choices[0]
	if c.FinishReason != "tool_calls" || c.Message.Content != nil || c.Message.ReasoningContent != "The user wants the weather." || len(c.Message.ToolCalls) != 1 {
		t.Fatalf("choice %s", body)
	}
	tc := c.Message.ToolCalls[0]
	if tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"Paris"}` || tc.ID == "" {
		t.Errorf("tool call %+v", tc)
	}
	if p := b.prompts[0]; !strings.Contains(p, "Reasoning: low\n") || !strings.Contains(p, "type get_weather = (_: {\ncity: string,\n}) => any;") ||
		!strings.HasSuffix(p, "<|start|>assistant") {
		t.Errorf("prompt %q", p)
	}

	// The result goes back with the call and its reasoning; the answer
	// streams as reasoning then content.
	second := fmt.Sprintf(`{"stream":true,"reasoning_effort":"high","messages":[{"role":"user","content":"Weather in Paris?"},
		{"role":"assistant","content":null,"reasoning_content":"The user wants the weather.","tool_calls":[{"id":%q,"type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":%q,"content":"18 C"}],`+harmonyTools+`}`, tc.ID, tc.ID)
	_, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions", second)
	var text, reasoning strings.Builder
	finish := ""
	for _, ch := range chunks {
		for _, c := range ch.Choices {
			if c.Delta.Content != nil {
				text.WriteString(*c.Delta.Content)
			}
			reasoning.WriteString(c.Delta.ReasoningContent)
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if text.String() != "It is 18 °C in Paris." || reasoning.String() != "Got 18 C." || finish != "stop" {
		t.Errorf("streamed content %q, reasoning %q, finish %q", text.String(), reasoning.String(), finish)
	}
	const history = "<|start|>user<|message|>Weather in Paris?<|end|><|start|>assistant<|channel|>analysis<|message|>The user wants the weather.<|end|>" +
		"<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>" +
		"<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>\"18 C\"<|end|><|start|>assistant"
	if p := b.prompts[1]; !strings.Contains(p, "Reasoning: high\n") || !strings.HasSuffix(p, history) {
		t.Errorf("second prompt %q\nwant it to end %q", p, history)
	}

	// "none" turns thinking off: enable_thinking, which harmony does not
	// read, so the template's default effort stays.
	if resp, body := post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}],"reasoning_effort":"none"}`); resp.StatusCode != 200 ||
		!strings.Contains(b.prompts[2], "Reasoning: medium\n") {
		t.Errorf("reasoning_effort none: %d %s, prompt %q", resp.StatusCode, body, b.prompts[2])
	}

	_, hermes := start(t, newFake(words("x")))
	for _, c := range []struct {
		url, effort, want string
	}{
		{hs.URL, `"max"`, `reasoning_effort "max" is not one of "low", "medium", "high" or "none"`},
		{hs.URL, `1`, "reasoning_effort: wrong type"},
		{hermes.URL, `"high"`, `reasoning effort "high": the template's output format (hermes) takes no levels`},
	} {
		resp, body := post(t, c.url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}],"reasoning_effort":`+c.effort+`}`)
		var e struct{ Error apiError }
		if resp.StatusCode != 400 || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error.Message, c.want) ||
			e.Error.Param == nil || *e.Error.Param != "reasoning_effort" {
			t.Errorf("reasoning_effort %s: %d %s, want 400 saying %q", c.effort, resp.StatusCode, body, c.want)
		}
	}
}

// TestHarmonyOllama: the same over Ollama's /api/chat and /api/generate:
// think levels reach the template as reasoning_effort (refused for other
// models, as Ollama does), think false is taken and the analysis still
// comes as thinking (as Ollama's harmony parser gives it), calls carry
// their arguments as an object, and /api/show lists thinking and tools.
func TestHarmonyOllama(t *testing.T) {
	b := newHarmonyFake(harmonyReply)
	_, hs := start(t, b)
	for _, c := range []struct {
		think, effort string
		stream        bool
	}{
		{`"low"`, "low", true}, {`"medium"`, "medium", false}, {`"high"`, "high", true},
		{`true`, "medium", false}, {`false`, "medium", true}, {`null`, "medium", false},
	} {
		n := len(b.prompts)
		rs := ollamaReplies(t, hs.URL+"/api/chat", fmt.Sprintf(`{"model":"gpt-oss","stream":%v,"think":%s,"messages":[{"role":"user","content":"Weather in Paris?"}],%s}`,
			c.stream, c.think, harmonyTools), c.stream)
		text, thinking, calls := joined(rs)
		if text != "" || thinking != "The user wants the weather." || len(calls) != 1 || calls[0].Function.Name != "get_weather" ||
			calls[0].Function.Arguments["city"] != "Paris" || rs[len(rs)-1].DoneReason != "stop" {
			t.Errorf("think %s: content %q, thinking %q, calls %+v", c.think, text, thinking, calls)
		}
		if p := b.prompts[n]; !strings.Contains(p, "Reasoning: "+c.effort+"\n") {
			t.Errorf("think %s: prompt %q, want reasoning effort %s", c.think, p, c.effort)
		}
	}
	rs := ollamaReplies(t, hs.URL+"/api/generate", `{"model":"gpt-oss","stream":false,"think":"high","prompt":"Weather in Paris?"}`, false)
	if text, thinking, _ := joined(rs); text != "" || thinking != "The user wants the weather." ||
		!strings.Contains(b.prompts[len(b.prompts)-1], "Reasoning: high\n") {
		t.Errorf("generate: response %q, thinking %q, prompt %q", text, thinking, b.prompts[len(b.prompts)-1])
	}

	resp, body := post(t, hs.URL+"/api/show", `{"model":"gpt-oss"}`)
	var show struct{ Capabilities []string }
	if resp.StatusCode != 200 || json.Unmarshal(body, &show) != nil || strings.Join(show.Capabilities, ",") != "completion,tools,thinking" {
		t.Errorf("show: %d %s", resp.StatusCode, body)
	}

	_, hermes := start(t, newFake(words("x")))
	for _, c := range []struct {
		url, think, want string
	}{
		{hermes.URL, `"high"`, `think value "high" is not supported for this model`},
		{hs.URL, `"max"`, `invalid think value: "max"`},
	} {
		resp, body := post(t, c.url+"/api/chat", `{"model":"m","think":`+c.think+`,"messages":[{"role":"user","content":"Hi"}]}`)
		if msg := ollamaErrorJSON(t, resp, body, 400); !strings.Contains(msg, c.want) {
			t.Errorf("think %s: %q, want %q", c.think, msg, c.want)
		}
	}
}

// TestHarmonyModel: FromModel's backend of a synthetic model in the
// harmony format (testutil.TinyHarmony) holds the prompt its template
// renders with the effort asked, over both APIs; its reply (random
// weights: no harmony) comes back as content.
func TestHarmonyModel(t *testing.T) {
	m := loadModel(t, testutil.TempModel(t, testutil.TinyHarmony()))
	var held []int32
	_, hs := serveModel(t, m, "tiny-harmony", 1, func(b Backend) Backend {
		return &watchBackend{b, func(s Session) { held = s.(modelSession).s.Tokens() }}
	})
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "the quick brown fox"}}
	for _, c := range []struct{ url, body, effort string }{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"the quick brown fox"}],"max_tokens":3,"temperature":0,"reasoning_effort":"high"}`, "high"},
		{"/api/chat", `{"model":"tiny-harmony","stream":false,"think":"low","messages":[{"role":"user","content":"the quick brown fox"}],"options":{"num_predict":3,"temperature":0}}`, "low"},
	} {
		resp, body := post(t, hs.URL+c.url, c.body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.url, resp.StatusCode, body)
		}
		info := m.Info()
		prompt, err := llm.RenderChat(info.ChatTemplate, msgs, llm.RenderOptions{AddGenerationPrompt: true, ReasoningEffort: c.effort,
			BOSToken: info.BOSText, EOSToken: info.EOSText, StripBOS: info.AddBOS, StripEOS: info.AddEOS})
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.TokenizeSpecial(prompt)
		if err != nil {
			t.Fatal(err)
		}
		if len(held) < len(want) || fmt.Sprint(held[:len(want)]) != fmt.Sprint(want) {
			t.Errorf("%s: session holds %v, want the prompt %v first", c.url, held, want)
		}
	}
}
