package main

import (
	"strings"
	"testing"
)

// TestShapesFile checks shapes.jsonc as mkmodel reads it (the shapes'
// files are TestMiniatureShapes'), and that parseShapes refuses what a
// slip in editing it would make.
func TestShapesFile(t *testing.T) {
	if shapesErr != nil {
		t.Fatal(shapesErr)
	}
	seen := map[string]bool{}
	for _, s := range shapes {
		if seen[s.Name] {
			t.Errorf("%s given twice", s.Name)
		}
		seen[s.Name] = true
	}
	if len(shapes) < 2 || shapes[0].Name != "tiny" {
		t.Errorf("%d shapes, the first %q: want tiny first of them all", len(shapes), shapes[0].Name)
	}
	// llama is a shape of two layers; the cases edit it.
	const llama = `"Arch": "llama", "Vocab": 512, "Embd": 256, "Layers": 2, "Heads": 4, "HeadsKV": 2, "FFN": 512, "Context": 512`
	for _, tc := range []struct{ what, file, want string }{
		{"comments and two shapes", "// a comment\n[\n\t// the first\n\t{\"Name\": \"a\", " + llama + "},\n{\"Name\": \"b\", " + llama + "}\n]\n", ""},
		{"unknown field", `[{"Name": "a", "Heds": 4, ` + llama + `}]`, `unknown field "Heds"`},
		{"name given twice", `[{"Name": "a", ` + llama + `}, {"Name": "a", ` + llama + `}]`, "a given twice"},
		{"no name", `[{` + llama + `}]`, `shape 1: Name ""`},
		{"no layers", `[{"Name": "a", ` + strings.Replace(llama, `"Layers": 2`, `"Layers": 0`, 1) + `}]`, "Layers 0"},
		{"KV heads not dividing the heads", `[{"Name": "a", ` + strings.Replace(llama, `"HeadsKV": 2`, `"HeadsKV": 3`, 1) + `}]`, "4 heads on 3 KV heads"},
		{"more experts used than there are", `[{"Name": "a", "Experts": 4, "ExpertsUsed": 8, ` + llama + `}]`, "8 experts a token of 4"},
		{"an attention layer past the shape", `[{"Name": "a", "AttentionLayers": [2], ` + llama + `}]`, "AttentionLayers: [2]"},
		{"attention layers out of order", `[{"Name": "a", "AttentionLayers": [1, 0], ` + llama + `}]`, "AttentionLayers: [1 0]"},
		{"a conv layer given twice", `[{"Name": "a", "ConvLayers": [0, 0], ` + llama + `}]`, "ConvLayers: [0 0]"},
		{"both layer lists", `[{"Name": "a", "ConvLayers": [0], "AttentionLayers": [1], ` + llama + `}]`, "both ConvLayers and AttentionLayers"},
		{"a pattern shorter than the layers", `[{"Name": "a", "Pattern": "M", ` + llama + `}]`, "Pattern of 1 layers for 2"},
		{"a syntax error, by its line", "[\n// a comment\n{\"Name\": }\n]", "shapes.jsonc:3:"},
		{"a number for a string, by its line", "[\n{\"Name\": 1}\n]", "shapes.jsonc:2:"},
		{"more after the array", `[] []`, "more after the array"},
	} {
		got, err := parseShapes([]byte(tc.file))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.what, err)
		case tc.want == "" && len(got) != 2:
			t.Errorf("%s: %d shapes, want 2", tc.what, len(got))
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.what, err, tc.want)
		}
	}
}
