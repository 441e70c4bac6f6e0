package llm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// TestReadmeProgram builds the README's Go program exactly as printed, in
// a module that depends on this clone the way the README says (go mod
// edit -require -replace, go mod tidy; offline), and runs it on a small
// chat model saved as model.gguf.
func TestReadmeProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n## Use it from Go\n")
	_, after, ok2 := strings.Cut(after, "\n```go\npackage main\n")
	src, _, ok3 := strings.Cut(after, "\n```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal(`README.md has no "package main" Go block under "## Use it from Go"`)
	}
	repo, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"+src+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := testutil.WriteModelFile(filepath.Join(dir, "model.gguf"), testutil.TinyChat()); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOFLAGS=")
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("go", "mod", "init", "example.com/readme")
	run("go", "mod", "edit", "-require=github.com/lowmem/llm@v0.0.0", "-replace=github.com/lowmem/llm="+repo)
	// Offline, go mod tidy cannot ask the checksum database about our
	// dependencies; this clone's go.sum has their sums, as a user's
	// first go get would fetch them.
	sums, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	// -e: tidy looks at every platform's imports, and offline it cannot
	// fetch golang.org/x/exp (mem's fallback off Linux), which a fresh
	// machine's module cache lacks until something builds for another
	// platform; the Linux build below needs nothing tidy could not find.
	run("go", "mod", "tidy", "-e")
	run("go", "vet", ".")
	run("go", "build", "-o", "prog", ".")
	if out := run(filepath.Join(dir, "prog")); !strings.HasSuffix(strings.TrimSpace(out), "320 logits") {
		t.Errorf("the program's output does not end with the logits line:\n%s", out)
	}
}
