package model

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
)

// Qwen 3.5's released sections, [11, 11, 10, 0] over the 32 pairs of its
// 64 rotated dimensions, leave no pair to the extra section: IMRoPE's
// angles are plain NEOX RoPE's to the bit at every position.
func TestQwen35ReleasedSectionsAreNeox(t *testing.T) {
	imrope := ops.Rope{Dim: 64, Neox: true, Base: 10000000, Sections: [4]int{11, 11, 10, 0}, Interleaved: true}
	neox := imrope
	neox.Sections, neox.Interleaved = [4]int{}, false
	a, b := make([]float32, 64), make([]float32, 64)
	for pos := range 40000 {
		imrope.Angles(pos, a)
		neox.Angles(pos, b)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("position %d, value %d: %v with the sections, %v without", pos, i, a[i], b[i])
			}
		}
	}
}

// A qwen35 and qwen35moe file reads rope.dimension_sections as llama.cpp
// does (IMRoPE over rope.dimension_count): the tiny models' sections
// ([3, 3, 2, 0] over 8 pairs, as the converter splits them) give the
// logits of plain NEOX RoPE to the bit. Sections leaving pairs to the
// extra section ([3, 0, 3, 2]: pairs 1, 4 and 7 unturned for a text, pair 1 fast enough to show it) match
// the float64 reference within 1e-3 in one pass, chunks of 4 and token
// by token, and turning those pairs (plain NEOX RoPE, today's rotation
// before the sections were read), contiguous sections, or no sections
// each move the reference by more than 1e-2.
func TestQwen35RopeSections(t *testing.T) {
	for _, base := range []testutil.ModelSpec{testutil.TinyQwen35(), testutil.TinyQwen35MoE()} {
		t.Run(base.Arch, func(t *testing.T) {
			pool, m, _, _ := loadF32(t, base)
			if m.RopeSections != [4]int{3, 3, 2, 0} || !m.RopeInterleaved || m.RopeDim != 16 {
				t.Fatalf("config: sections %v, interleaved %v, rope %d", m.RopeSections, m.RopeInterleaved, m.RopeDim)
			}
			toks := prompt(13)
			got := forwardAll(t, m, pool, toks, 4, 32)
			m.RopeSections, m.RopeInterleaved = [4]int{}, false
			neox := forwardAll(t, m, pool, toks, 4, 32)
			if i, ok := sameLogitBits(got, neox); !ok {
				t.Errorf("logit %d: %v with the sections, %v with plain NEOX RoPE", i, got[i], neox[i])
			}

			spec := base
			spec.RopeSections = []int32{3, 0, 3, 2}
			for _, s := range qwen35Specs(spec, spec.Seed+6) {
				pool, m, f, data := loadF32(t, s)
				if m.RopeSections != [4]int{3, 0, 3, 2} || !m.RopeInterleaved {
					t.Fatalf("config: sections %v, interleaved %v", m.RopeSections, m.RopeInterleaved)
				}
				ref, want := checkedRef(t, m, pool, f, data, toks)
				mustMove(t, "extra pairs turned", ref(refDecoder{mrope: mropePerturb{ExtraTurns: true}}), want, 1e-2)
				mustMoveAll(t, m, f, data, toks, want, 1e-2, "other section layout", "no sections")
			}
		})
	}
}

// Sections ggml's rope asserts against are refused, naming the key: none
// in the temporal, height or width section, or a sum above the head size
// (32 here).
func TestQwen35RopeSectionsRefused(t *testing.T) {
	for _, tc := range []struct {
		sections []int32
		want     string
	}{
		{[]int32{0, 0, 0, 0}, "qwen35.rope.dimension_sections is all 0"},
		{[]int32{0, 0, 0, 4}, "qwen35.rope.dimension_sections = [0 0 0 4]: no pair takes the temporal, height or width position"},
		{[]int32{16, 16, 8, 0}, "qwen35.rope.dimension_sections = [16 16 8 0] sums to 40, more than the head size 32"},
	} {
		spec := testutil.TinyQwen35()
		spec.RopeSections = tc.sections
		b, err := testutil.ModelBytes(spec)
		f, _ := testutil.Parse(t, b, err)
		_, err = ConfigFromGGUF(f)
		if !errors.Is(err, ErrBadModel) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want ErrBadModel containing %q", tc.sections, err, tc.want)
		}
	}
}
