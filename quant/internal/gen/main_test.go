package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCurrent checks that quant's committed generated files are what the
// tables and templates here write.
func TestCurrent(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("quant/%s is not what internal/gen writes: run go generate in quant", name)
		}
	}
}
