package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
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
		{[]string{"-m", "x", "-kv", "q4"}, `-kv: kv type "q4": want one of f16, int8, int4`},
		{[]string{"-m", "x", "-weights", "mapped"}, `-weights: weights mode "mapped": want one of auto, resident, streaming`},
		{[]string{"-m", "x", "-mem", "lots"}, `-mem "lots"`},
		{[]string{"-m", "x", "-p", "600", "-c", "512"}, "-c 512 is smaller"},
		{[]string{"-m", "x", "-t", "-1"}, "-t -1"},
		{[]string{"-m", "x", "extra"}, `unexpected argument "extra"`},
		{[]string{"-m", "x", "-p", "64", "-n", "0", "-texts", "4"}, "-texts 4"},
		{[]string{"-m", "x", "-p", "64", "-n", "0", "-embd", "-texts", "5"}, "a divisor of -p 64"},
		{[]string{"-m", "x", "-p", "64", "-n", "0", "-embd", "-texts", "0"}, "-texts 0"},
		{[]string{"-m", "x", "-lookup", "65"}, "-lookup 65"},
		{[]string{"-m", "x", "-n", "0", "-lookup", "4"}, "-lookup 4"},
		{[]string{"-m", "x", "-pg", "-lookup", "4"}, "-lookup 4"},
		{[]string{"-m", "x", "-md", "y"}, "-md needs -lookup"},
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

// protoField appends a protobuf field to b: a varint (wire 0) or bytes
// (wire 2).
func protoField(b []byte, num int, v any) []byte {
	switch v := v.(type) {
	case uint64:
		b = binary.AppendUvarint(b, uint64(num)<<3)
		return binary.AppendUvarint(b, v)
	case []byte:
		b = binary.AppendUvarint(b, uint64(num)<<3|2)
		b = binary.AppendUvarint(b, uint64(len(v)))
		return append(b, v...)
	}
	panic("unsupported field")
}

func TestPhaseBreakdown(t *testing.T) {
	// Three samples: 30 ms in phase "a" (one sample, values packed),
	// 10 ms in "b" (values unpacked), 20 ms unlabelled.
	var packed []byte
	packed = binary.AppendUvarint(packed, 3)
	packed = binary.AppendUvarint(packed, 30e6)
	lab := func(v uint64) []byte { return protoField(protoField(nil, 1, uint64(1)), 2, v) }
	s1 := protoField(protoField(nil, 2, packed), 3, lab(2))
	s2 := protoField(protoField(protoField(nil, 2, uint64(1)), 2, uint64(10e6)), 3, lab(3))
	s3 := protoField(nil, 2, packed[:1])
	s3 = protoField(s3, 2, []byte{0x80, 0xDA, 0xC4, 0x09}) // 20e6 packed
	var msg []byte
	for _, s := range [][]byte{s1, s2, s3} {
		msg = protoField(msg, 2, s)
	}
	for _, s := range []string{"", "phase", "a", "b"} {
		msg = protoField(msg, 6, []byte(s))
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(msg)
	zw.Close()
	path := filepath.Join(t.TempDir(), "cpu.prof")
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := phaseBreakdown(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []phaseShare{
		{Phase: "a", Seconds: 0.03, Share: 0.5, PerTok: 3},
		{Phase: "(other)", Seconds: 0.02, Share: 1.0 / 3, PerTok: 2},
		{Phase: "b", Seconds: 0.01, Share: 1.0 / 6, PerTok: 1},
	}
	if len(ps) != len(want) {
		t.Fatalf("breakdown %+v, want %+v", ps, want)
	}
	for i := range want {
		g, w := ps[i], want[i]
		if g.Phase != w.Phase || math.Abs(g.Seconds-w.Seconds) > 1e-12 || math.Abs(g.Share-w.Share) > 1e-12 || math.Abs(g.PerTok-w.PerTok) > 1e-9 {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	os.WriteFile(path, []byte("not a profile"), 0o644)
	if _, err := phaseBreakdown(path, 1); err == nil {
		t.Error("garbage accepted as a profile")
	}
}

// TestRunProfile: -profile writes a pp and a tg profile and prints their
// breakdowns, for separate tests and for -pg (the last run's two parts).
func TestRunProfile(t *testing.T) {
	t.Setenv(profileLabelsEnv, "") // restored after run sets it
	path := tinyModel(t)
	for _, args := range [][]string{
		{"-p", "16", "-n", "4", "-r", "1"},
		{"-p", "16", "-n", "4", "-r", "2", "-pg"},
	} {
		prof := filepath.Join(t.TempDir(), "cpu.prof")
		var out bytes.Buffer
		all := append([]string{"-m", path, "-warmup=false", "-profile", prof}, args...)
		if err := run(context.Background(), all, &out, &bytes.Buffer{}); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		for _, test := range []string{"pp", "tg"} {
			if _, err := phaseBreakdown(prof+"."+test, 1); err != nil {
				t.Errorf("%v: %s profile: %v", args, test, err)
			}
			if !strings.Contains(out.String(), test+" CPU profile "+prof+"."+test) {
				t.Errorf("%v: no %s breakdown in\n%s", args, test, out.String())
			}
		}
	}
}

// -pg generates on top of the prompt in one session; the JSON carries the
// residency and the plan's peak for that many tokens.
func TestRunPromptThenGenerate(t *testing.T) {
	path := tinyModel(t)
	var out bytes.Buffer
	err := run(context.Background(), []string{"-m", path, "-p", "40", "-n", "8", "-pg", "-r", "1", "-c", "256", "-kv", "int8", "-json"}, &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		PG        bool             `json:"pg"`
		KV        string           `json:"kv_type"`
		Context   int              `json:"context"`
		PlanPeak  int64            `json:"plan_peak_bytes"`
		Residency map[string]any   `json:"residency"`
		PPStats   *json.RawMessage `json:"pp"`
		TGStats   *json.RawMessage `json:"tg"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if !res.PG || res.KV != "int8" || res.Context != 256 || res.PlanPeak <= 0 || res.PPStats == nil || res.TGStats == nil {
		t.Errorf("output %s", out.String())
	}
	for _, key := range []string{"blocks", "streamed_start", "streamed_end", "bytes_read", "disk_bytes_per_token", "stall_seconds"} {
		if _, ok := res.Residency[key]; !ok {
			t.Errorf("residency lacks %q: %v", key, res.Residency)
		}
	}
	if _, err := parseFlags([]string{"-m", "x", "-p", "400", "-n", "200", "-pg", "-c", "512"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "-c 512") {
		t.Errorf("-pg with p+n past the context: err = %v", err)
	}
	if _, err := parseFlags([]string{"-m", "x", "-p", "0", "-pg"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "-pg") {
		t.Errorf("-pg without -p: err = %v", err)
	}
}

// -embd -texts embeds the pp test's tokens as several texts, packed in
// one EmbedBatch call or one call a text.
func TestRunEmbedTexts(t *testing.T) {
	path := tinyModel(t)
	for _, pack := range []string{"-pack=true", "-pack=false"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"-m", path, "-p", "32", "-n", "0", "-r", "1", "-embd", "-texts", "8", pack, "-json"}, &out, &bytes.Buffer{}); err != nil {
			t.Fatalf("%s: %v", pack, err)
		}
		var res map[string]any
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%s: output %q: %v", pack, out.String(), err)
		}
		if pp, _ := res["pp"].(map[string]any); pp["n"] != 32.0 {
			t.Errorf("%s: pp = %v", pack, res["pp"])
		}
	}
}

// TestRunLookup: -lookup reports greedy generation without and with
// speculation, the drafts, and the cost model's two times.
func TestRunLookup(t *testing.T) {
	path := tinyModel(t)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-m", path, "-p", "0", "-n", "24", "-r", "1", "-lookup", "4", "-json"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Lookup *lookupResult `json:"lookup"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Lookup == nil {
		t.Fatalf("output %s: %v", out.String(), err)
	}
	l := res.Lookup
	if l.Draft != 4 || !(l.Plain.TPS > 0) || !(l.Spec.TPS > 0) || !(l.Step > 0) || !(l.Verify > 0) || l.Accepted > l.Drafted {
		t.Errorf("lookup result %+v", *l)
	}
	out.Reset()
	if err := run(context.Background(), []string{"-m", path, "-p", "0", "-n", "8", "-r", "1", "-lookup", "2", "-warmup=false"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, " lookup2 tg8 |") || !strings.Contains(s, "cost model: decode step") {
		t.Errorf("table:\n%s", s)
	}
	// -md: the model drafting for itself has its greedy drafts kept.
	out.Reset()
	if err := run(context.Background(), []string{"-m", path, "-md", path, "-p", "0", "-n", "16", "-r", "1", "-lookup", "3", "-json"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Lookup == nil {
		t.Fatalf("output %s: %v", out.String(), err)
	}
	if l := res.Lookup; l.DraftModel != filepath.Base(path) || l.Drafted == 0 || l.Accepted == 0 {
		t.Errorf("-md: lookup result %+v", *l)
	}
}
