package gguf

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/lowmem/llm/quant"
)

// sampleTensors are the tensors of sampleFile, with dims whose names of
// equal length let tests patch one name into another.
var sampleTensors = []sampleTensor{
	{"token_embd.weight", quant.Q8_0, []int64{64, 10}},
	{"blk.0.attn_q.weight", quant.F32, []int64{64, 8}},
	{"blk.0.attn_k.weight", quant.F16, []int64{64, 4}},
	{"blk.0.ffn_up.weight", quant.Q4_K, []int64{256, 2}},
	{"blk.0.cube.weight", quant.F32, []int64{4, 3, 2}},
	{"blk.0.ffn_up_exps.weight", quant.MXFP4, []int64{64, 3, 2}}, // 17-byte blocks: offsets not a multiple of 2
	{"output_norm.weight", quant.F32, []int64{64}},
}

// sampleData returns deterministic bytes for a tensor.
func sampleData(i int, n int64) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(j*7 + i*31 + 1)
	}
	return b
}

// sampleFile returns a small valid GGUF file with string, array and
// scalar keys, an explicit alignment and tensors of several types.
func sampleFile(t testing.TB) []byte {
	t.Helper()
	w := NewWriter()
	w.AddKV("general.architecture", "llama")
	w.AddKV("general.name", "sample")
	w.SetAlignment(64)
	w.AddKV("test.a", uint32(7))
	w.AddKV("test.b", int32(-7))
	w.AddKV("tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>", "a", "b"})
	w.AddKV("tokenizer.ggml.scores", []float32{0, 0, 0, -1, -2})
	w.AddKV("test.nested", []any{[]int32{1, 2}, []string{"x"}})
	return writeSample(t, w, sampleTensors)
}

// sampleTensor is a tensor of a test file, its data sampleData.
type sampleTensor struct {
	name string
	typ  quant.Type
	dims []int64
}

// writeSample adds ts to w, the i'th with data sampleData(i, …), and
// returns the file.
func writeSample(t testing.TB, w *Writer, ts []sampleTensor) []byte {
	t.Helper()
	for i, st := range ts {
		size, err := TensorBytes(st.typ, st.dims)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(st.name, st.typ, st.dims, sampleData(i, size)); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// after returns the offset just past the GGUF string s in b: the value
// type of a key, or the n_dims of a tensor descriptor.
func after(t testing.TB, b []byte, s string) int {
	t.Helper()
	pat := binary.LittleEndian.AppendUint64(nil, uint64(len(s)))
	pat = append(pat, s...)
	i := bytes.Index(b, pat)
	if i < 0 {
		t.Fatalf("string %q not found", s)
	}
	return i + len(pat)
}

func put32(b []byte, at int, v uint32) { binary.LittleEndian.PutUint32(b[at:], v) }
func put64(b []byte, at int, v uint64) { binary.LittleEndian.PutUint64(b[at:], v) }

// raw assembles a hand-made file: header, then body.
func raw(version uint32, nTensors, nKV uint64, body ...[]byte) []byte {
	b := []byte(magic)
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint64(b, nTensors)
	b = binary.LittleEndian.AppendUint64(b, nKV)
	for _, p := range body {
		b = append(b, p...)
	}
	return b
}

func rawStr(s string) []byte {
	return append(binary.LittleEndian.AppendUint64(nil, uint64(len(s))), s...)
}

func rawU32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func rawU64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// testdata returns the directory of the shared reference files, or skips
// the test when it is missing (fails instead with LLM_REQUIRE_TESTDATA=1).
func testdata(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LLM_TESTDATA")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(d, "..", "shared", "testdata")
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); dir == "" || err != nil {
		if os.Getenv("LLM_REQUIRE_TESTDATA") == "1" {
			t.Fatalf("test data not found (dir %q); set LLM_TESTDATA", dir)
		}
		t.Skipf("test data not found (dir %q); set LLM_TESTDATA to run", dir)
	}
	return dir
}
