package gguf

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

type manifest struct {
	Models map[string]struct {
		Size             int64                      `json:"size"`
		Arch             string                     `json:"arch"`
		NTensors         int                        `json:"n_tensors"`
		Hparams          map[string]any             `json:"hparams"`
		Tokenizer        map[string]any             `json:"tokenizer"`
		TensorTypeCounts map[string]int             `json:"tensor_type_counts"`
		TypesByRole      map[string]json.RawMessage `json:"tensor_types_by_role"`
	} `json:"models"`
}

func readFile(t *testing.T, path string) *File {
	t.Helper()
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

var blockPrefix = regexp.MustCompile(`^blk\.\d+\.`)

// TestTestdataModels reads every reference model and checks it against
// the manifest: tensor counts and types (overall and per role), the
// architecture, hyper-parameters and tokenizer keys.
func TestTestdataModels(t *testing.T) {
	dir := testdata(t)
	var m manifest
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "models", "*.gguf"))
	if len(paths) != len(m.Models) {
		t.Errorf("%d model files, manifest lists %d", len(paths), len(m.Models))
	}
	for _, path := range paths {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			want, ok := m.Models[name]
			if !ok {
				t.Fatalf("%s is not in the manifest", name)
			}
			f := readFile(t, path)
			if f.Size != want.Size {
				t.Errorf("size %d, want %d", f.Size, want.Size)
			}
			if f.Arch() != want.Arch {
				t.Errorf("arch %q, want %q", f.Arch(), want.Arch)
			}
			if len(f.Tensors) != want.NTensors {
				t.Errorf("%d tensors, want %d", len(f.Tensors), want.NTensors)
			}
			counts := map[string]int{}
			byRole := map[string]map[string]int{}
			for _, ti := range f.Tensors {
				typ := ti.Type.String()
				counts[typ]++
				role := blockPrefix.ReplaceAllString(ti.Name, "")
				if byRole[role] == nil {
					byRole[role] = map[string]int{}
				}
				byRole[role][typ]++
			}
			if !maps.Equal(counts, want.TensorTypeCounts) {
				t.Errorf("tensor types %v, want %v", counts, want.TensorTypeCounts)
			}
			checkRoles(t, f, byRole, want.TypesByRole)
			for k, v := range want.Hparams {
				checkValue(t, f, f.Arch()+"."+k, v)
			}
			for k, v := range want.Tokenizer {
				checkValue(t, f, k, v)
			}
			checkVocab(t, f)
		})
	}
}

// TestTestdataVocabs reads every vocab-only file.
func TestTestdataVocabs(t *testing.T) {
	dir := testdata(t)
	paths, _ := filepath.Glob(filepath.Join(dir, "vocab", "*.gguf"))
	if len(paths) == 0 {
		t.Fatal("no vocab files")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f := readFile(t, path)
			if len(f.Tensors) != 0 {
				t.Errorf("%d tensors in a vocab-only file", len(f.Tensors))
			}
			if _, ok := f.String("tokenizer.ggml.model"); !ok {
				t.Error("no tokenizer.ggml.model")
			}
			checkVocab(t, f)
		})
	}
}

// checkVocab checks that the per-token arrays agree in length.
func checkVocab(t *testing.T, f *File) {
	t.Helper()
	tokens, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok || len(tokens) == 0 {
		t.Fatal("no tokenizer.ggml.tokens string array")
	}
	if s, ok := f.Float32s("tokenizer.ggml.scores"); ok && len(s) != len(tokens) {
		t.Errorf("%d scores for %d tokens", len(s), len(tokens))
	}
	if tt, ok := f.Int32s("tokenizer.ggml.token_type"); ok && len(tt) != len(tokens) {
		t.Errorf("%d token types for %d tokens", len(tt), len(tokens))
	}
}

// checkValue compares a metadata value with its JSON form in the manifest.
// Floats in the manifest are the float32 values widened to float64, so
// they compare exactly.
func checkValue(t *testing.T, f *File, key string, want any) {
	t.Helper()
	switch w := want.(type) {
	case string:
		if got, ok := f.String(key); !ok || got != w {
			t.Errorf("%s = %q, %v; want %q", key, got, ok, w)
		}
	case bool:
		if got, ok := f.Bool(key); !ok || got != w {
			t.Errorf("%s = %v, %v; want %v", key, got, ok, w)
		}
	case float64:
		if got, ok := f.Float(key); ok {
			if got != w {
				t.Errorf("%s = %v, want %v", key, got, w)
			}
		} else if got, ok := f.Uint(key); !ok || w != math.Trunc(w) || got != uint64(w) {
			t.Errorf("%s = %v, %v; want %v", key, got, ok, w)
		}
	default:
		t.Errorf("%s: manifest value %v of type %T", key, want, want)
	}
}

// checkRoles compares tensor types per role (the name without "blk.N.")
// with the manifest, which gives either counts per type for each role or,
// for a uniformly quantized file, one type for "2-D …" tensors and one for
// "norms".
func checkRoles(t *testing.T, f *File, byRole map[string]map[string]int, want map[string]json.RawMessage) {
	t.Helper()
	counted := 0
	for role, rawWant := range want {
		var w map[string]int
		if err := json.Unmarshal(rawWant, &w); err == nil {
			counted++
			if !maps.Equal(byRole[role], w) {
				t.Errorf("%s: types %v, want %v", role, byRole[role], w)
			}
			continue
		}
		var typ string
		if err := json.Unmarshal(rawWant, &typ); err != nil {
			t.Fatalf("manifest role %q: %s", role, rawWant)
		}
		for _, ti := range f.Tensors {
			match := false
			switch {
			case strings.HasPrefix(role, "2-D"):
				match = len(ti.Dims) == 2
			case role == "norms":
				match = strings.HasSuffix(ti.Name, "norm.weight")
			default:
				t.Fatalf("manifest role %q not understood", role)
			}
			if match && ti.Type.String() != typ {
				t.Errorf("%s: type %v, want %s (%s)", ti.Name, ti.Type, typ, role)
			}
		}
	}
	if counted == len(want) && len(byRole) != len(want) {
		t.Errorf("%d tensor roles, want %d", len(byRole), len(want))
	}
}
