package cli

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"6G", 6 << 30},
		{"6GiB", 6 << 30},
		{"6gb", 6 << 30},
		{"512M", 512 << 20},
		{"1.5K", 1536},
		{"4096", 4096},
		{"2T", 2 << 40},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "G", "-1G", "6X", "0", "1e30T"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
}

func TestJSONFlags(t *testing.T) {
	schema := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(schema, []byte(`{"type":"object"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		opts int
		err  bool
	}{
		{nil, 0, false},
		{[]string{"-json"}, 1, false},
		{[]string{"-json-schema", schema}, 1, false},
		{[]string{"-json", "-json-schema", schema}, 1, false},
		{[]string{"-json-schema", schema + ".missing"}, 0, true},
	} {
		var jf JSONFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		jf.Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		opts, err := jf.Options()
		if len(opts) != tc.opts || (err != nil) != tc.err {
			t.Errorf("%v: %d options, %v; want %d, error %v", tc.args, len(opts), err, tc.opts, tc.err)
		}
	}
}

// TestLoRAFlags: -lora and -lora-scaled in llama.cpp's forms, in order.
func TestLoRAFlags(t *testing.T) {
	var m ModelFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	m.Register(fs)
	args := LoRAArgs([]string{"-lora", "a.gguf", "--lora-scaled", "b.gguf", "0.5", "-lora-scaled", "c:d.gguf:-1,e.gguf:2", "-lora", "f.gguf,g.gguf", "-c", "64"})
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	want := []loraFlag{{"a.gguf", 1}, {"b.gguf", 0.5}, {"c:d.gguf", -1}, {"e.gguf", 2}, {"f.gguf", 1}, {"g.gguf", 1}}
	if !slices.Equal(m.LoRA.list, want) || m.Context != 64 {
		t.Errorf("adapters %v (context %d), want %v", m.LoRA.list, m.Context, want)
	}
	for _, bad := range [][]string{{"-lora-scaled", "x.gguf"}, {"-lora-scaled", "x.gguf:y"}} {
		var m ModelFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		m.Register(fs)
		if err := fs.Parse(LoRAArgs(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
