package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lowmem/llm/internal/testutil"
)

func loadTemplate(b *testing.B, name string) string {
	data, err := os.ReadFile(filepath.Join(testutil.Testdata(b, "chat"), name+".json"))
	if err != nil {
		b.Fatal(err)
	}
	var f renderFile
	if err := json.Unmarshal(data, &f); err != nil {
		b.Fatal(err)
	}
	return f.Template
}

// BenchmarkParse: parsing and probing a template (done once per model).
func BenchmarkParse(b *testing.B) {
	src := loadTemplate(b, "qwen3")
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender: one render of a short conversation (done per request).
func BenchmarkRender(b *testing.B) {
	t, err := Parse(loadTemplate(b, "qwen3"))
	if err != nil {
		b.Fatal(err)
	}
	msgs := []Message{{Role: RoleSystem, Content: "Be brief."}, {Role: RoleUser, Content: "Hi"},
		{Role: RoleAssistant, Content: "Hello."}, {Role: RoleUser, Content: "Capital of France?"}}
	opts := RenderOptions{AddGenerationPrompt: true, Now: time.Unix(0, 0)}
	for b.Loop() {
		if _, err := t.Render(msgs, opts); err != nil {
			b.Fatal(err)
		}
	}
}
