package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	// Only the test uses the synthetic model; the command itself imports
	// nothing but the public API.
	"github.com/lowmem/llm/internal/testutil"
)

func TestStats(t *testing.T) {
	s := newStats(128, []float64{10, 12, 14})
	if s.TPS != 12 || s.SD != 2 || s.N != 128 {
		t.Errorf("stats %+v, want mean 12, sd 2", s)
	}
	if s := newStats(1, []float64{5}); s.TPS != 5 || s.SD != 0 {
		t.Errorf("one run: %+v", s)
	}
}

func TestFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "-m model.gguf is required"},
		{[]string{"-m", "x", "-p", "0", "-n", "0"}, "nothing to measure"},
		{[]string{"-m", "x", "-r", "0"}, "-r 0"},
		{[]string{"-m", "x", "-kv", "q4"}, `-kv "q4"`},
		{[]string{"-m", "x", "-mem", "lots"}, `-mem "lots"`},
		{[]string{"-m", "x", "-p", "600", "-c", "512"}, "-c 512 is smaller"},
		{[]string{"-m", "x", "-t", "-1"}, "-t -1"},
		{[]string{"-m", "x", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		_, err := parseFlags(tt.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseFlags(%q) = %v, want an error containing %q", tt.args, err, tt.want)
		}
	}
	c, err := parseFlags([]string{"-m", "x", "-p", "100", "-n", "20"}, &bytes.Buffer{})
	if err != nil || c.ctx != 512 {
		t.Errorf("default context %d, %v; want 512", c.ctx, err)
	}
	c, err = parseFlags([]string{"-m", "x", "-p", "1000", "-n", "200"}, &bytes.Buffer{})
	if err != nil || c.ctx != 1200 {
		t.Errorf("default context %d, %v; want 1200", c.ctx, err)
	}
}

func tinyModel(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := testutil.WriteModelFile(path, testutil.TinyLlama()); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunJSON(t *testing.T) {
	path := tinyModel(t)
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"-m", path, "-t", "2", "-p", "32", "-n", "8", "-r", "2", "-c", "64", "-kv", "int8", "-json"}, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	for _, key := range []string{"model", "threads", "pp", "tg", "peak_rss_bytes"} {
		if _, ok := res[key]; !ok {
			t.Errorf("no %q in %s", key, out.String())
		}
	}
	if res["model"] != "tiny.gguf" || res["threads"] != 2.0 || res["kv_type"] != "int8" || res["context"] != 64.0 {
		t.Errorf("output %s", out.String())
	}
	for _, test := range []struct {
		key string
		n   float64
	}{{"pp", 32}, {"tg", 8}} {
		s, _ := res[test.key].(map[string]any)
		tps, _ := s["tps"].(float64)
		if s["n"] != test.n || !(tps > 0) || math.IsInf(tps, 0) {
			t.Errorf("%s = %v", test.key, s)
		}
	}
	if rss, _ := res["peak_rss_bytes"].(float64); !(rss > 0) {
		t.Errorf("peak_rss_bytes = %v", res["peak_rss_bytes"])
	}
}

func TestRunTableSkipsPP(t *testing.T) {
	path := tinyModel(t)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-m", path, "-p", "0", "-n", "4", "-r", "1", "-warmup=false"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.Contains(s, " pp") || !strings.Contains(s, " tg4 |") || !strings.Contains(s, "peak RSS") {
		t.Errorf("table:\n%s", s)
	}
}

func TestRunLoadError(t *testing.T) {
	err := run(context.Background(), []string{"-m", filepath.Join(t.TempDir(), "missing.gguf")}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "missing.gguf") {
		t.Errorf("error %v, want one naming the file", err)
	}
}
