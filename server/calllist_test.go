package server

import (
	"testing"

	"github.com/lowmem/llm/chat"
)

// TestToolCallLists: a model whose template (our own few lines, holding
// the markers DetectFormat looks for) writes its calls as a list —
// Command R7B, Granite 3.x, Nemotron Nano v2, Apertus, LFM2, DeepSeek,
// Kimi K2, MiniMax-M2 (and Magistral's [TOOL_CALLS] list after its
// [THINK] reasoning) — replies in pieces that split its markers; the
// OpenAI endpoint gives its reasoning, content and call, whole and
// streamed, with the call's own ID where the syntax carries one (Command
// R7B's tool_call_id, Kimi K2's functions.NAME:IDX, Mistral's id).
func TestToolCallLists(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	const args = `{"city":"Paris"}`
	for _, c := range []struct {
		name, template string
		pieces         []string
		id             string // the call's ID, "" for one made up
	}{
		{"command r7b", "{#- <|END_THINKING|><|START_ACTION|> -#}",
			[]string{"<|START_THIN", "KING|>need it<|END_", "THINKING|>Let me check.<|START_ACT", `ION|>[{"tool_call_id": "0", "tool_name": "get_weather", "param`,
				`eters": {"city": "Paris"}}]<|END_ACT`, "ION|>"}, "0"},
		{"granite", "{#- elif thinking <|tool_call|> <think> -#}",
			[]string{"<thi", "nk>need it</th", "ink>Let me check.<|tool_", `call|>[{"name": "get_weather", "argu`, `ments": {"city": "Paris"}}]`}, ""},
		{"nemotron", "{#- <SPECIAL_10> <think> -#}",
			[]string{"<thi", "nk>need it</th", "ink>Let me check.<TOOL", `CALL>[{"name": "get_weather", "argu`, `ments": {"city": "Paris"}}]</TOOL`, "CALL>"}, ""},
		{"apertus", "{#- <|system_start|> <|tools_prefix|> <|inner_prefix|> -#}",
			[]string{"<|inner_", "prefix|>need it<|inner_suf", "fix|>Let me check.<|tools_pre", `fix|>[{"get_weather": {"city": "Par`, `is"}}]<|tools_suf`, "fix|>"}, ""},
		{"deepseek", "{#- <｜tool▁calls▁begin｜> <think> -#}",
			[]string{"<thi", "nk>need it</th", "ink>\n\nLet me check.<｜tool▁calls", "▁begin｜><｜tool▁call▁begin｜>function<｜tool▁", "sep｜>get_weather\n```json\n{\"city\": \"Par",
				"is\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁", "end｜>"}, ""},
		{"lfm2", "{#- List of tools: <|tool_list_start|>[]<|tool_list_end|> <think> -#}",
			[]string{"<thi", "nk>need it</th", "ink>Let me check.<|tool_call_", `start|>[get_weather(ci`, `ty="Paris")]<|tool_call_e`, "nd|>"}, ""},
		{"kimi k2", "{#- <|im_system|>tool_declare<|im_middle|> <|tool_calls_section_begin|> ## Return of -#}",
			[]string{"<thi", "nk>need it</th", "ink>Let me check.<|tool_calls_sec", "tion_begin|><|tool_call_begin|>functions.get_", "weather:0<|tool_call_argu",
				`ment_begin|>{"city": "Par`, `is"}<|tool_call_`, "end|><|tool_calls_section_e", "nd|>"}, "functions.get_weather:0"},
		{"minimax-m2", "{#- ]~!b[ ]~b] -#}",
			[]string{"<thi", "nk>\nneed it\n</th", "ink>\n\nLet me check.\n<minimax:tool_", "call>\n<invoke name=\"get_wea", "ther\">\n<parameter name=\"city\">Par",
				"is</param", "eter>\n</invoke>\n</minimax:tool_", "call>"}, ""},
		{"magistral", "{#- [TOOL_CALLS] [THINK] [/THINK] -#}",
			[]string{"[THI", "NK]need it[/TH", "INK]Let me check.[TOOL_", `CALLS][{"name": "get_weather", "argu`, `ments": {"city": "Paris"}, "id": "abc123def"}]`}, "abc123def"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newFake(func(string) []string { return c.pieces })
			tmpl, err := chat.Parse(c.template + "{% for m in messages %}{{ m.content }}{% endfor %}")
			if err != nil {
				t.Fatal(err)
			}
			b.tmpl = tmpl
			_, hs := start(t, b)
			got, body := postChat(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Weather?"}],`+tools+`}`)
			ch := got.Choices[0]
			if ch.FinishReason != "tool_calls" || ch.Message.ReasoningContent != "need it" || ch.Message.Content == nil || *ch.Message.Content != "Let me check." ||
				len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Name != "get_weather" || ch.Message.ToolCalls[0].Function.Arguments != args ||
				c.id != "" && ch.Message.ToolCalls[0].ID != c.id {
				t.Errorf("choice %s", body)
			}
			_, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"Weather?"}],`+tools+`}`)
			reasoning, content, gotArgs, id := joinDeltas(chunks)
			if reasoning != "need it" || content != "Let me check." || gotArgs != args || c.id != "" && id != c.id {
				t.Errorf("streamed reasoning %q, content %q, arguments %q, id %q", reasoning, content, gotArgs, id)
			}
		})
	}
}

// joinDeltas joins what a chat completion's stream of chunks gives, over
// its first choice: its reasoning, its content, and its calls' arguments
// and IDs.
func joinDeltas(chunks []chatChunk) (reasoning, content, args, ids string) {
	for _, ch := range chunks {
		d := ch.Choices[0].Delta
		reasoning += d.ReasoningContent
		if d.Content != nil {
			content += *d.Content
		}
		for _, tc := range d.ToolCalls {
			args += tc.Function.Arguments
			ids += tc.ID
		}
	}
	return reasoning, content, args, ids
}
