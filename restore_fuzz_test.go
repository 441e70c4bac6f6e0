package llm_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"runtime"
	"slices"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// restoreSpec is a small llama whose head size (32) allows every KV type.
var restoreSpec = testutil.ModelSpec{Arch: "llama", Vocab: testutil.MinVocab + 13, Embd: 64, Layers: 2, Heads: 2, HeadsKV: 1,
	HeadDim: 32, FFN: 64, Context: 64, WeightType: quant.Q8_0, Seed: 11}

var restoreKVTypes = []llm.KVType{llm.KVF16, llm.KVInt8, llm.KVInt4}

// FuzzRestore hands Session.Restore arbitrary bytes, seeded with real saves
// of restoreSpec (each KV type; empty, a few tokens, a grown cache). With
// fix set the last four bytes are replaced by the checksum of the rest,
// so that mutations get past it to the content. Restore must refuse with
// ErrBadState (or ErrContextFull, ErrOutOfMemoryBudget) leaving the session
// as it was, or succeed; either way the session must then evaluate a
// token. It must never panic, nor allocate much more than its input.
func FuzzRestore(f *testing.F) {
	m := load(f, testutil.TempModel(f, restoreSpec), llm.WithThreads(1), llm.WithContextSize(64), llm.WithLogger(quietLogger()))
	ctx := context.Background()
	sessions := make([]*llm.Session, len(restoreKVTypes))
	for i, kt := range restoreKVTypes {
		sessions[i] = session(f, m, llm.WithKVType(kt))
		for _, n := range []int{0, 5, 40} {
			s := session(f, m, llm.WithKVType(kt))
			if n > 0 {
				if _, err := s.Eval(ctx, randTokens(uint64(n), n, m.Info().VocabSize)); err != nil {
					f.Fatal(err)
				}
			}
			var buf bytes.Buffer
			if err := s.Save(&buf); err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), false, buf.Bytes())
			s.Close()
		}
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	f.Fuzz(func(t *testing.T, which uint8, fix bool, data []byte) {
		if fix && len(data) >= 4 {
			data = slices.Clone(data)
			binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[:len(data)-4], castagnoli))
		}
		s := sessions[int(which)%len(sessions)]
		s.Reset()
		if _, err := s.Eval(ctx, []int32{1, 7}); err != nil {
			t.Fatal(err)
		}
		before, logits := s.Tokens(), slices.Clone(s.Logits())
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		err := s.Restore(bytes.NewReader(data))
		runtime.ReadMemStats(&ms1)
		if grew := ms1.TotalAlloc - ms0.TotalAlloc; grew > uint64(8*len(data))+4<<20 {
			t.Fatalf("Restore of %d bytes allocated %d", len(data), grew)
		}
		if err != nil {
			if !errors.Is(err, llm.ErrBadState) && !errors.Is(err, llm.ErrContextFull) && !errors.Is(err, llm.ErrOutOfMemoryBudget) {
				t.Fatalf("Restore: %v wraps none of the documented errors", err)
			}
			if !slices.Equal(s.Tokens(), before) || !slices.Equal(s.Logits(), logits) {
				t.Fatalf("a refused Restore changed the session: %v → %v", before, s.Tokens())
			}
		}
		if s.Len() >= s.Context() {
			s.Reset()
		}
		if _, err := s.Eval(ctx, []int32{3}); err != nil {
			t.Fatalf("Eval after Restore (%v): %v", err, err)
		}
	})
}
