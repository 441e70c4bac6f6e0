package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestImatrix reads back -imatrix's file in llama.cpp's legacy layout: an
// entry of ones per matrix but token_embd, as many values as input
// columns (times the experts), and nothing after the last entry.
func TestImatrix(t *testing.T) {
	for _, shape := range []string{"tiny", "qwen3-30b-a3b"} {
		dir := t.TempDir()
		s := mustShape(t, shape)
		m, err := newModel(miniature(s), fileTypes[0], 1)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "m.imatrix")
		n, err := create(path, m.writeImatrix)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) != n {
			t.Errorf("%s: %d bytes written, %d reported", shape, len(b), n)
		}
		r := bytes.NewReader(b)
		read := func() int32 {
			var v int32
			if err := binary.Read(r, binary.LittleEndian, &v); err != nil {
				t.Fatalf("%s: %v", shape, err)
			}
			return v
		}
		want := map[string]int64{}
		for _, tp := range m.tensors {
			if len(tp.Dims) >= 2 && tp.Name != "token_embd.weight" {
				want[tp.Name] = tp.Dims[0]
				if len(tp.Dims) == 3 {
					want[tp.Name] *= tp.Dims[2]
				}
			}
		}
		entries := read()
		if int(entries) != len(want) {
			t.Fatalf("%s: %d entries, want %d", shape, entries, len(want))
		}
		for range entries {
			name := make([]byte, read())
			r.Read(name)
			if calls := read(); calls != 1 {
				t.Errorf("%s: %s: %d calls", shape, name, calls)
			}
			nval := read()
			if int64(nval) != want[string(name)] {
				t.Errorf("%s: %s: %d values, want %d", shape, name, nval, want[string(name)])
			}
			for range nval {
				if v := read(); math.Float32frombits(uint32(v)) != 1 {
					t.Fatalf("%s: %s: value %g, want 1", shape, name, math.Float32frombits(uint32(v)))
				}
			}
			delete(want, string(name))
		}
		if r.Len() != 0 || len(want) != 0 {
			t.Errorf("%s: %d bytes left over, %d matrices without an entry", shape, r.Len(), len(want))
		}
	}
}
