package seq

import (
	"fmt"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/snapshot"
	"github.com/lowmem/llm/internal/testutil"
)

// A DeepSeek-V2/V3 session (multi-head latent attention: the cache holds
// the latent as one KV head) rewinds, saves and restores as any other: a
// rewound session gives a fresh one's logits bit for bit, and a restored
// one continues and rewinds as the original.
func TestMLARewindSaveRestore(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyDeepSeek2(), testutil.TinyDeepSeek3(), testutil.TinyDeepSeek2KVB()} {
		t.Run(spec.Variant(), func(t *testing.T) {
			m, open := hybridSeqs(t, spec, Config{Context: 128, Batch: 4})
			prompt := append(ids(14, 1), ids(6, 2)...)
			tail := []int32{7, 8, 9, 10, 11}
			for _, n := range []int{20, 13, 1, 0} {
				t.Run(fmt.Sprint(n), func(t *testing.T) {
					s := open()
					evalOK(t, s, prompt[:14])
					for _, tok := range prompt[14:] {
						evalOK(t, s, []int32{tok})
					}
					s.Truncate(n)
					got := evalOK(t, s, tail)
					want := evalOK(t, open(), append(slices.Clone(prompt[:n]), tail...))
					if !slices.Equal(got, want) {
						t.Fatalf("after Truncate(%d): logits differ from a fresh session's", n)
					}
				})
			}
			id := snapshot.Model{Arch: m.Arch, Dims: [9]uint32{6: uint32(m.Vocab)}}
			a := open()
			evalOK(t, a, prompt)
			b := restored(t, a, open(), id)
			if !slices.Equal(a.Logits(), b.Logits()) || !slices.Equal(evalOK(t, a, tail), evalOK(t, b, tail)) {
				t.Fatal("a restored session continues otherwise")
			}
			a.Truncate(9)
			b.Truncate(9)
			if !slices.Equal(evalOK(t, a, tail), evalOK(t, b, tail)) {
				t.Fatal("a restored session rewinds otherwise")
			}
		})
	}
}
