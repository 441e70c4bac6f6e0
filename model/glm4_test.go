package model

import (
	"errors"
	"strings"
	"testing"
)

// GLM-4's metadata as llama.cpp reads it: NORM RoPE over
// rope.dimension_count (half the head in the 0414 files), norms after
// attention and the feed-forward, 1/√head; a query not as wide as the
// embedding, values of another head size or multimodal RoPE sections are
// refused, each naming the key.
func TestConfigGLM4(t *testing.T) {
	glm := baseHeaderOf("glm4", map[string]uint32{"rope.dimension_count": 32})
	c := mustConfig(t, glm(nil))
	if c.RopeNeox || !c.PostNorms || c.RopeDim != 32 || c.HeadDimK != 64 || c.KQScale != 0.125 || c.Window != 0 || c.GELU || c.EmbedScale != 0 {
		t.Errorf("config %+v", c)
	}
	// Zero sections (a converter's placeholder) leave llama.cpp's RoPE
	// plain.
	mustConfig(t, glm(func(m map[string]any) { m["glm4.rope.dimension_sections"] = []int32{0, 0, 0, 0} }))
	for _, tc := range []struct {
		name string
		mut  func(map[string]any)
		want error
		key  string
	}{
		{"query wider than the embedding", func(m map[string]any) {
			m["glm4.attention.key_length"], m["glm4.attention.value_length"] = uint32(128), uint32(128)
		}, ErrBadModel, "glm4.embedding_length"},
		{"values of another size", func(m map[string]any) { m["glm4.attention.value_length"] = uint32(32) }, ErrBadModel, "glm4.attention.value_length"},
		{"multimodal RoPE", func(m map[string]any) { m["glm4.rope.dimension_sections"] = []int32{8, 12, 12, 0} }, ErrUnsupportedArch, "glm4.rope.dimension_sections"},
		{"sections not counts", func(m map[string]any) { m["glm4.rope.dimension_sections"] = "8,12,12" }, ErrBadModel, "glm4.rope.dimension_sections"},
	} {
		_, err := ConfigFromGGUF(parse(t, glm(tc.mut)))
		if !errors.Is(err, tc.want) || err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: %v, want %v naming %s", tc.name, err, tc.want, tc.key)
		}
	}
}
