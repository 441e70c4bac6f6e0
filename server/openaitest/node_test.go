package openaitest

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/server"
)

// TestNodeClient runs node/client.mjs (the official openai npm package)
// against the server. It needs node and `npm ci --prefix node` done first;
// otherwise it skips.
func TestNodeClient(t *testing.T) {
	cmd := nodeClient(t)
	tmpl, err := chat.Parse(testutil.HermesTemplate)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(&backend{tmpl: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer func() { hs.Close(); srv.Close() }()
	cmd.Env = append(cmd.Env, "BASE_URL="+hs.URL+"/v1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// nodeClient is the command that runs node/client.mjs; it skips the test
// when node or the openai npm package is not installed.
func nodeClient(t *testing.T) *exec.Cmd {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join("node", "node_modules", "openai")); err != nil {
		t.Skip("the openai npm package is not installed: run npm ci --prefix server/openaitest/node")
	}
	cmd := exec.Command(node, "client.mjs")
	cmd.Dir = "node"
	cmd.Env = os.Environ()
	return cmd
}
