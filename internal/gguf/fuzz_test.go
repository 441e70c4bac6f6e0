package gguf

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzRead checks that Read never panics, that it fails only with
// ErrBadFile, and that what it accepts is self-consistent (tensor data
// inside the file, aligned, not overlapping) and survives a write and a
// second read. Plain `go test` runs the seeds: the hostile files of
// TestReadHostile and the corpus in testdata/fuzz/FuzzRead.
func FuzzRead(f *testing.F) {
	good := sampleFile(f)
	f.Add(good)
	f.Add(good[:200])
	f.Add(raw(3, 0, 1, rawStr("k"), rawU32(uint32(typeArray)), rawU32(uint32(typeArray)), rawU64(1),
		rawU32(uint32(typeString)), rawU64(2), rawStr("ab"), rawStr("")))
	f.Add(raw(2, 1, 0, rawStr("t"), rawU32(1), rawU64(8), rawU32(0), rawU64(0), make([]byte, 64)))
	for _, m := range hostileMutations(f) {
		f.Add(m.mutate(bytes.Clone(good)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, ErrBadFile) {
				t.Fatalf("error does not wrap ErrBadFile: %v", err)
			}
			return
		}
		w := NewWriter()
		for _, kv := range g.KV {
			w.AddKV(kv.Key, kv.Value)
		}
		for i, ti := range g.Tensors {
			for _, tj := range g.Tensors[:i] {
				if ti.Offset < tj.Offset+tj.Size && tj.Offset < ti.Offset+ti.Size {
					t.Fatalf("tensors %q and %q overlap", ti.Name, tj.Name)
				}
			}
			if ti.Offset < g.DataOffset || ti.Offset%g.Alignment != 0 || ti.Offset+ti.Size > int64(len(data)) {
				t.Fatalf("tensor %q: [%d, %d) outside data section [%d, %d)", ti.Name, ti.Offset, ti.Offset+ti.Size, g.DataOffset, len(data))
			}
			if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, data[ti.Offset:ti.Offset+ti.Size]); err != nil {
				t.Fatalf("re-adding tensor read back: %v", err)
			}
		}
		if a, ok := g.Get("general.alignment"); ok {
			if _, ok := a.(uint32); !ok || g.Alignment > 1<<16 {
				return // valid to read, but the writer only writes uint32, and padding to a huge alignment is slow
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatalf("rewriting: %v", err)
		}
		g2, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatalf("reading the rewritten file: %v", err)
		}
		if len(g2.KV) != len(g.KV) || len(g2.Tensors) != len(g.Tensors) {
			t.Fatalf("rewritten file has %d keys and %d tensors, want %d and %d", len(g2.KV), len(g2.Tensors), len(g.KV), len(g.Tensors))
		}
	})
}
