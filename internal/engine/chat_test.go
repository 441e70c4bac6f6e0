package engine

import (
	"errors"
	"testing"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
)

// TestChat checks what Load settles for chat: the template, the markers
// of its output format that are control tokens (kept in chat output), the
// end-of-generation list, and the error of a model without a template.
func TestChat(t *testing.T) {
	load := func(spec testutil.ModelSpec, override string) *Engine {
		e, err := Load(testutil.TempModel(t, spec), Options{Request: memplan.Request{Threads: 1, Batch: 16, Limit: 1 << 30},
			ChatTemplate: override})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	e := load(testutil.TinyChat(), "")
	c := e.Chat
	// TinyChat's four markers take the last ids of its 320 tokens.
	if c.Template == nil || c.Template.Format().Tools != chat.ToolsHermes {
		t.Fatalf("template %v, err %v", c.Template, c.Err)
	}
	if want := []int32{318, 319}; len(c.Preserve) != 2 || c.Preserve[0] != want[0] || c.Preserve[1] != want[1] {
		t.Errorf("preserved %v, want the tool-call markers %v", c.Preserve, want)
	}
	if len(c.EOG) != 2 || c.EOG[0] != testutil.EOSID || c.EOG[1] != 317 {
		t.Errorf("EOG %v, want EOS and <|im_end|>", c.EOG)
	}
	if c.Render.BOSToken != "<s>" || c.Render.EOSToken != "</s>" || !c.Render.StripBOS || c.Render.StripEOS {
		t.Errorf("render options %+v", c.Render)
	}
	ids, po, err := e.ChatPrompt([]chat.Message{{Role: "user", Content: "hi"}}, chat.RenderOptions{})
	if err != nil || ids[0] != testutil.BOSID || ids[1] != 316 || po.Tools || po.ThinkingOpen {
		t.Errorf("prompt %v, %+v, %v", ids, po, err)
	}

	e = load(testutil.TinyLlama(), "")
	if _, _, err := e.ChatPrompt(nil, chat.RenderOptions{}); !errors.Is(err, chat.ErrNoTemplate) {
		t.Errorf("no template: %v", err)
	}
	if e = load(testutil.TinyLlama(), testutil.HermesTemplate); e.Chat.Template == nil || len(e.Chat.Preserve) != 0 {
		t.Errorf("override: %+v", e.Chat)
	}
}
