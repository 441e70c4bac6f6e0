package ollama

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const digest = "6a0746a1ec1aef3e7ec53868f220ff6e389f6f8ef87a01d77c96807de94ca2aa"

// fakeStore builds a store like Ollama's with llama3.2:3b and
// someone/custom:latest.
func fakeStore(t *testing.T) string {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest := `{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",
		"config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:aa","size":1},
		"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:` + digest + `","size":4},
		{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:bb","size":1}]}`
	write("manifests/registry.ollama.ai/library/llama3.2/3b", manifest)
	write("manifests/registry.ollama.ai/someone/custom/latest", manifest)
	write("manifests/registry.ollama.ai/library/broken/latest", `{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:`+strings.Repeat("0", 64)+`"}]}`)
	write("manifests/registry.ollama.ai/library/embed/latest", `{"layers":[{"mediaType":"application/vnd.ollama.image.license","digest":"sha256:cc"}]}`)
	write("blobs/sha256-"+digest, "GGUF")
	return dir
}

func TestResolve(t *testing.T) {
	dir := fakeStore(t)
	blob := filepath.Join(dir, "blobs", "sha256-"+digest)
	for _, ref := range []string{"ollama:llama3.2:3b", "llama3.2:3b", "ollama:someone/custom", "ollama:registry.ollama.ai/someone/custom:latest"} {
		got, err := ResolveIn(dir, ref)
		if err != nil {
			t.Errorf("%s: %v", ref, err)
			continue
		}
		if got != blob {
			t.Errorf("%s: %s, want %s", ref, got, blob)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	dir := fakeStore(t)
	cases := []struct {
		ref  string
		want error
		msg  string
	}{
		{"ollama:mistral", ErrNotFound, "llama3.2:3b, someone/custom:latest"},
		{"ollama:llama3.2:1b", ErrNotFound, "llama3.2:1b"},
		{"ollama:broken", ErrBadManifest, "missing"},
		{"ollama:embed", ErrBadManifest, "no layer"},
		{"ollama:../../etc/passwd", ErrBadName, ""},
		{"ollama:", ErrBadName, ""},
	}
	for _, c := range cases {
		_, err := ResolveIn(dir, c.ref)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.ref, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %q does not say %q", c.ref, err, c.msg)
		}
	}
	if _, err := ResolveIn(filepath.Join(dir, "nope"), "ollama:x"); !errors.Is(err, ErrNoStore) {
		t.Errorf("missing store: %v", err)
	}
}

func TestResolveHonoursOLLAMA_MODELS(t *testing.T) {
	dir := fakeStore(t)
	t.Setenv("OLLAMA_MODELS", dir)
	got, err := Resolve("ollama:llama3.2:3b")
	if err != nil || !strings.HasPrefix(got, dir) {
		t.Fatalf("%s, %v", got, err)
	}
	if !IsRef("ollama:x") || IsRef("/models/x.gguf") {
		t.Error("IsRef")
	}
}

func TestPath(t *testing.T) {
	dir := fakeStore(t)
	t.Setenv("OLLAMA_MODELS", dir)
	got, err := Path("ollama:llama3.2:3b")
	if err != nil || got != filepath.Join(dir, "blobs", "sha256-"+digest) {
		t.Errorf("reference: %s, %v", got, err)
	}
	if got, err := Path("/models/x.gguf"); err != nil || got != "/models/x.gguf" {
		t.Errorf("path: %s, %v", got, err)
	}
	// A file whose name only looks like a reference is that file.
	t.Chdir(t.TempDir())
	if err := os.WriteFile("ollama:odd", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Path("ollama:odd"); err != nil || got != "ollama:odd" {
		t.Errorf("existing file: %s, %v", got, err)
	}
	if _, err := Path("ollama:missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing model: %v", err)
	}
}

// TestResolveAdapters: a manifest's adapter layers, in order, beside its
// model; a bad adapter digest is a bad manifest.
func TestResolveAdapters(t *testing.T) {
	dir := fakeStore(t)
	a1, a2 := strings.Repeat("1", 64), strings.Repeat("2", 64)
	layer := func(typ, d string) string {
		return `{"mediaType":"application/vnd.ollama.image.` + typ + `","digest":"sha256:` + d + `"}`
	}
	for name, body := range map[string]string{
		"manifests/registry.ollama.ai/library/tuned/latest": `{"layers":[` + layer("adapter", a2) + "," + layer("model", digest) + "," + layer("adapter", a1) + `]}`,
		"manifests/registry.ollama.ai/library/bad/latest":   `{"layers":[` + layer("model", digest) + "," + layer("adapter", "x") + `]}`,
		"blobs/sha256-" + a1:                                "GGUF", "blobs/sha256-" + a2: "GGUF",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := ResolveModelIn(dir, "tuned")
	blob := func(d string) string { return filepath.Join(dir, "blobs", "sha256-"+d) }
	if err != nil || m.Path != blob(digest) || !slices.Equal(m.Adapters, []string{blob(a2), blob(a1)}) {
		t.Errorf("tuned: %+v, %v", m, err)
	}
	if m, err := ResolveModelIn(dir, "llama3.2:3b"); err != nil || m.Adapters != nil {
		t.Errorf("llama3.2:3b: %+v, %v: want no adapters", m, err)
	}
	if _, err := ResolveModelIn(dir, "bad"); !errors.Is(err, ErrBadManifest) {
		t.Errorf("bad adapter digest: %v", err)
	}
	t.Setenv("OLLAMA_MODELS", dir)
	if as, err := Adapters("ollama:tuned"); err != nil || len(as) != 2 {
		t.Errorf("Adapters: %v, %v", as, err)
	}
	if as, err := Adapters("/some/file.gguf"); err != nil || as != nil {
		t.Errorf("a file: %v, %v", as, err)
	}
}
