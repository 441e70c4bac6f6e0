package gguf_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/model"
)

// TestHostileMetadataSizes: a valid file whose metadata claims absurd
// sizes — 10^9 layers, a billion-wide embedding, billions of heads, or the
// largest counts the range checks allow, which the file's tensors do not
// back — is refused by model.Check and by llm.Load and llm.Plan with
// ErrBadModel, before anything is sized from the claim: each call
// allocates less than a small multiple of the (130 KB) file. (A context
// length of 2^24 is not hostile: the plan caps the context to the memory.)
func TestHostileMetadataSizes(t *testing.T) {
	good, err := testutil.ModelBytes(testutil.TinyLlama())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		key string
		val any
	}{
		{"llama.block_count", uint32(1_000_000_000)},
		{"llama.block_count", uint64(1) << 62},
		// The largest counts the range checks let through: the file's
		// tensors must be found missing before per-layer state is made.
		{"llama.block_count", uint32(1 << 24)},
		{"llama.embedding_length", uint32(1 << 24)},
		{"llama.feed_forward_length", uint32(1 << 24)},
		{"llama.embedding_length", uint32(1_000_000_000)},
		{"llama.attention.head_count", uint32(1_000_000_000)},
		{"llama.attention.head_count_kv", uint32(1_000_000_000)},
		{"llama.feed_forward_length", uint64(1_000_000_000_000)},
		{"llama.context_length", uint64(1) << 40},
		{"llama.rope.dimension_count", uint32(1_000_000_000)},
	} {
		t.Run(tc.key, func(t *testing.T) {
			b := rewrite(t, good, tc.key, tc.val)
			f, err := gguf.Read(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatalf("the edited file is not valid GGUF: %v", err)
			}
			limit := 8*uint64(len(b)) + 1<<20
			if d, err := allocs(func() error { _, err := model.Check(f); return err }); !errors.Is(err, model.ErrBadModel) || d > limit {
				t.Errorf("model.Check: %v after allocating %d bytes; want ErrBadModel within %d", err, d, limit)
			}
			path := filepath.Join(dir, "hostile.gguf")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			quiet := llm.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
			d, err := allocs(func() error {
				m, err := llm.Load(path, llm.WithMemoryLimit(1<<30), quiet)
				if err == nil {
					m.Close()
				}
				return err
			})
			if !errors.Is(err, llm.ErrBadModel) || d > limit {
				t.Errorf("llm.Load: %v after allocating %d bytes; want ErrBadModel within %d", err, d, limit)
			}
			if _, err := llm.Plan(path, llm.WithMemoryLimit(1<<30), quiet); !errors.Is(err, llm.ErrBadModel) {
				t.Errorf("llm.Plan: %v, want ErrBadModel", err)
			}
		})
	}
}

// rewrite returns file with key set to val.
func rewrite(t *testing.T, file []byte, key string, val any) []byte {
	t.Helper()
	f, err := gguf.Read(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		w.AddKV(kv.Key, kv.Value)
	}
	w.AddKV(key, val)
	for _, ti := range f.Tensors {
		if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, file[ti.Offset:ti.Offset+ti.Size]); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// allocs runs fn and returns the bytes it allocated (all goroutines).
func allocs(fn func() error) (uint64, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}
