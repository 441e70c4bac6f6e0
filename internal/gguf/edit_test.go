package gguf

import (
	"bytes"
	"testing"
)

// TestEdits: Set, RenameKey and RenameTensor change what Get and Tensor
// find, on a parsed File (indexed) and on one built by hand (searched),
// and refuse a missing source or a taken name without changing anything.
func TestEdits(t *testing.T) {
	b := sampleFile(t)
	parsed, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	byHand := &File{KV: append([]KV(nil), parsed.KV...), Tensors: append([]TensorInfo(nil), parsed.Tensors...)}
	for _, f := range []*File{parsed, byHand} {
		first, second := f.Tensors[0].Name, f.Tensors[1].Name
		f.Set("test.a", uint32(8))
		f.Set("test.new", "x")
		if v, _ := f.Uint("test.a"); v != 8 {
			t.Errorf("Set replaced test.a with %d, want 8", v)
		}
		if v, _ := f.String("test.new"); v != "x" || f.KV[len(f.KV)-1].Key != "test.new" {
			t.Errorf("Set appended test.new = %q, last key %q", v, f.KV[len(f.KV)-1].Key)
		}
		if !f.RenameKey("test.b", "other.b") {
			t.Fatal("RenameKey test.b refused")
		}
		if _, ok := f.Get("test.b"); ok {
			t.Error("test.b still found after its rename")
		}
		if v, _ := f.Int("other.b"); v != -7 {
			t.Errorf("other.b = %d, want -7", v)
		}
		if f.RenameKey("missing", "x.y") || f.RenameKey("test.a", "other.b") {
			t.Error("RenameKey accepted a missing key or a taken name")
		}
		if !f.RenameTensor(first, "renamed") {
			t.Fatalf("RenameTensor %q refused", first)
		}
		if ti, ok := f.Tensor("renamed"); !ok || ti != &f.Tensors[0] {
			t.Error("the renamed tensor is not found under its new name")
		}
		if _, ok := f.Tensor(first); ok {
			t.Errorf("%q still found after its rename", first)
		}
		if f.RenameTensor("missing", "x") || f.RenameTensor(second, "renamed") {
			t.Error("RenameTensor accepted a missing tensor or a taken name")
		}
		if _, ok := f.Tensor(second); !ok {
			t.Errorf("a refused rename lost %q", second)
		}
	}
}
