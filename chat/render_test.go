package chat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lowmem/llm/internal/testutil"
)

// renderFile is one file of testdata/chat (manifest §9.4).
type renderFile struct {
	Template   string `json:"template"`
	BOS        string `json:"bos_token"`
	EOS        string `json:"eos_token"`
	RenderPath string `json:"render_path"`
	Cases      []struct {
		ID                  string    `json:"id"`
		Messages            []Message `json:"messages"`
		AddGenerationPrompt bool      `json:"add_generation_prompt"`
		Rendered            string    `json:"rendered"`
	} `json:"cases"`
}

var vocabRe = regexp.MustCompile(`vocab-only load of (ggml-vocab-[\w.-]+\.gguf)`)

// vocabFlags returns add_bos / add_eos of the vocabulary a render used (the
// render path names it), because llama.cpp strips BOS/EOS text by them.
func vocabFlags(t *testing.T, dir, renderPath string) (addBOS, addEOS bool) {
	m := vocabRe.FindStringSubmatch(renderPath)
	if m == nil {
		return false, false
	}
	g := testutil.ReadHeader(t, filepath.Join(dir, "..", "vocab", m[1]))
	addBOS, _ = g.Bool("tokenizer.ggml.add_bos_token")
	addEOS, _ = g.Bool("tokenizer.ggml.add_eos_token")
	return addBOS, addEOS
}

// TestRenderTestdata renders every case of every file in testdata/chat and
// compares with llama.cpp's render byte for byte.
func TestRenderTestdata(t *testing.T) {
	dir := testutil.Testdata(t, "chat")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 8, 18, 0, 0, 0, 0, time.UTC)
	n := 0
	for _, path := range files {
		if strings.HasPrefix(filepath.Base(path), "_") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var f renderFile
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			addBOS, addEOS := vocabFlags(t, dir, f.RenderPath)
			tmpl, err := Parse(f.Template)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range f.Cases {
				got, err := tmpl.Render(c.Messages, RenderOptions{
					AddGenerationPrompt: c.AddGenerationPrompt,
					BOSToken:            f.BOS,
					EOSToken:            f.EOS,
					Now:                 now,
					StripBOS:            addBOS,
					StripEOS:            addEOS,
				})
				if err != nil {
					t.Errorf("%s: %v", c.ID, err)
					continue
				}
				if got != c.Rendered {
					t.Errorf("%s: %s", c.ID, firstDiff(got, c.Rendered))
				}
				n++
			}
		})
	}
	if n == 0 {
		t.Fatal("no render cases found")
	}
	t.Logf("%d cases match", n)
}

// firstDiff says where two renders part.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	ctx := func(s string) string {
		lo, hi := max(0, i-30), min(len(s), i+30)
		return strings.ReplaceAll(s[lo:hi], "\n", `\n`)
	}
	return fmt.Sprintf("renders differ at byte %d (got %d bytes, want %d):\n got …%s…\nwant …%s…", i, len(got), len(want), ctx(got), ctx(want))
}

// TestRenderLongConversation: the default limits leave real conversations
// plenty of room (1000 turns of 4 KiB with tools through Qwen3's template,
// which scans the history twice).
func TestRenderLongConversation(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Testdata(t, "chat"), "qwen3.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f renderFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var msgs []Message
	text := strings.Repeat("lorem ipsum ", 340)
	for i := 0; i < 500; i++ {
		msgs = append(msgs, Message{Role: RoleUser, Content: text}, Message{Role: RoleAssistant, Content: text})
	}
	out, err := Render(f.Template, msgs, RenderOptions{AddGenerationPrompt: true,
		Tools: []Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 1000*len(text) {
		t.Errorf("render is %d bytes", len(out))
	}
}

// TestRenderContentBlocks: a Ministral 3 kind of template gets system and
// assistant turns as content blocks, the reasoning a thinking block first,
// as llama.cpp rewrites them, so past reasoning is written back; with
// Mistral Small 3.2's [CALL_ID] in the source they stay strings (and the
// template, reading no reasoning_content, drops it).
func TestRenderContentBlocks(t *testing.T) {
	const turn = `{%- if message['content'] is string %}{{ message['content'] }}` +
		`{%- else %}{%- for b in message['content'] %}{%- if b['type'] == 'text' %}{{ b['text'] }}` +
		`{%- elif b['type'] == 'thinking' %}[THINK]{{ b['thinking'] }}[/THINK]` +
		`{%- else %}{{ raise_exception('block ' + b['type']) }}{%- endif %}{%- endfor %}{%- endif %}`
	const ministral = `{%- for message in messages %}` +
		`{%- if message['role'] == 'system' %}[SYSTEM_PROMPT]` + turn + `[/SYSTEM_PROMPT]` +
		`{%- elif message['role'] == 'user' %}[INST]{{ message['content'] }}[/INST]` +
		`{%- elif message['role'] == 'assistant' %}` + turn +
		`{%- for c in message['tool_calls'] or [] %}[TOOL_CALLS]{{ c['function']['name'] }}[ARGS]{{ c['function']['arguments'] }}{%- endfor %}</s>` +
		`{%- elif message['role'] == 'tool' %}[TOOL_RESULTS]{{ message['content'] }}[/TOOL_RESULTS]` +
		`{%- endif %}{%- endfor %}`
	msgs := []Message{
		{Role: RoleSystem, Content: "S"},
		{Role: RoleUser, Content: "Q"},
		{Role: RoleAssistant, Thinking: "R", Content: "A"},
		{Role: RoleUser, Content: "Q2"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: `{"x":1}`}}},
		{Role: RoleTool, ToolCallID: "c1", Content: "3"},
	}
	for _, tc := range []struct {
		name, src, want string
		blocks          bool
	}{
		{"ministral 3", ministral, `[SYSTEM_PROMPT]S[/SYSTEM_PROMPT][INST]Q[/INST][THINK]R[/THINK]A</s>[INST]Q2[/INST][TOOL_CALLS]f[ARGS]{"x":1}</s>[TOOL_RESULTS]3[/TOOL_RESULTS]`, true},
		{"mistral small 3.2", ministral + `{#- [CALL_ID] #}`, `[SYSTEM_PROMPT]S[/SYSTEM_PROMPT][INST]Q[/INST]A</s>[INST]Q2[/INST][TOOL_CALLS]f[ARGS]{"x":1}</s>[TOOL_RESULTS]3[/TOOL_RESULTS]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := tmpl.Format().ContentBlocks; got != tc.blocks {
				t.Fatalf("ContentBlocks = %v, want %v", got, tc.blocks)
			}
			got, err := tmpl.Render(msgs, RenderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("render\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
