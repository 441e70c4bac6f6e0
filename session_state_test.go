package llm_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// greedy evaluates k greedy tokens after z and returns them and every
// step's logits.
func greedy(t *testing.T, s *llm.Session, z []float32, k int) ([]int32, [][]float32) {
	t.Helper()
	var ids []int32
	var zs [][]float32
	for range k {
		id := argmax(z)
		var err error
		if z, err = s.Eval(context.Background(), []int32{id}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		zs = append(zs, slices.Clone(z))
	}
	return ids, zs
}

// savedSession evaluates ids on a new session of m and returns it with its
// saved state; the session closes with the test.
func savedSession(t *testing.T, m *llm.Model, ids []int32, opts ...llm.SessionOption) (*llm.Session, []byte) {
	t.Helper()
	s, err := m.NewSession(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Eval(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Save(&buf); err != nil {
		t.Fatal(err)
	}
	return s, buf.Bytes()
}

// sameAsSaved fails unless dst, restored from src's saved state, holds
// src's logits and tokens and then decodes exactly as src does: a restore
// that drops or misplaces cache rows shows only in later steps.
func sameAsSaved(t *testing.T, src, dst *llm.Session) {
	t.Helper()
	if !slices.Equal(dst.Logits(), src.Logits()) || !slices.Equal(dst.Tokens(), src.Tokens()) {
		t.Fatal("restored logits or tokens differ from the saved session's")
	}
	a, za := greedy(t, src, src.Logits(), 10)
	b, zb := greedy(t, dst, dst.Logits(), 10)
	if !slices.Equal(a, b) {
		t.Fatalf("greedy after restore %v, saved session %v", b, a)
	}
	for i := range za {
		if !slices.Equal(za[i], zb[i]) {
			t.Fatalf("step %d: logits differ after restore", i)
		}
	}
}

func TestSaveRestore(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		kvt    llm.KVType
		tokens int
		opts   []llm.SessionOption
	}{
		{"f16", llm.KVF16, 40, nil},
		{"int8", llm.KVInt8, 40, nil},
		{"grown cache", llm.KVF16, 600, nil},
		{"after shifts", llm.KVF16, 1000, []llm.SessionOption{llm.WithContextSize(512), llm.WithContextShift(3)}},
		{"preallocated", llm.KVInt8, 300, []llm.SessionOption{llm.WithKVPreallocate()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadStories(t, llm.WithContextSize(1024), llm.WithKVType(tc.kvt), llm.WithThreads(2))
			src, state := savedSession(t, m, randTokens(5, tc.tokens, m.Info().VocabSize), tc.opts...)
			// Only used rows are saved: far less than the full context's cache.
			if st := src.KVStats(); int64(len(state)) > st.Bytes*int64(st.Used)/int64(st.Cells)+64<<10 {
				t.Errorf("saved %d bytes for %d of %d cells (%d bytes)", len(state), st.Used, st.Cells, st.Bytes)
			}
			dst, err := m.NewSession(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			if _, err := dst.Eval(ctx, []int32{1, 2, 3}); err != nil { // something to replace
				t.Fatal(err)
			}
			if err := dst.Restore(bytes.NewReader(state)); err != nil {
				t.Fatal(err)
			}
			if got, want := dst.KVStats().Used, src.KVStats().Used; got != want {
				t.Errorf("restored %d used cells, saved %d", got, want)
			}
			sameAsSaved(t, src, dst)
		})
	}
}

// TestRestoreRejects checks that Restore refuses state from another model
// or KV type, damaged or truncated streams, and leaves the session as it
// was.
func TestRestoreRejects(t *testing.T) {
	ctx := context.Background()
	m := loadStories(t, llm.WithContextSize(256), llm.WithThreads(2))
	src, data := savedSession(t, m, randTokens(6, 30, m.Info().VocabSize))

	// The session every failed Restore must leave as it is.
	dst, _ := m.NewSession()
	defer dst.Close()
	before := mustEval(t, ctx, dst.Eval, []int32{1, 50, 60, 70})
	before = slices.Clone(before)
	unchanged := func(what string) {
		t.Helper()
		if !slices.Equal(dst.Logits(), before) || !equalIDs(dst.Tokens(), []int32{1, 50, 60, 70}) {
			t.Fatalf("%s: the session changed", what)
		}
	}

	for i := 0; i < len(data); i += max(1, len(data)/97) {
		bad := slices.Clone(data)
		bad[i] ^= 0x10
		if err := dst.Restore(bytes.NewReader(bad)); !errors.Is(err, llm.ErrBadState) {
			t.Fatalf("byte %d of %d flipped: err = %v, want ErrBadState", i, len(data), err)
		}
		unchanged("corrupted")
	}
	for _, n := range []int{0, 5, 12, 100, len(data) / 2, len(data) - 4, len(data) - 1} {
		if err := dst.Restore(bytes.NewReader(data[:n])); !errors.Is(err, llm.ErrBadState) {
			t.Fatalf("truncated to %d bytes: err = %v, want ErrBadState", n, err)
		}
		unchanged("truncated")
	}
	small, _ := m.NewSession(llm.WithContextSize(16))
	defer small.Close()
	if err := small.Restore(bytes.NewReader(data)); !errors.Is(err, llm.ErrContextFull) {
		t.Errorf("30 tokens into a context of 16: err = %v, want ErrContextFull", err)
	}

	for _, other := range []struct {
		name string
		path string
		opts []llm.Option
	}{
		{"int8 KV", testutil.Testdata(t, "models/stories260K-f32.gguf"), []llm.Option{llm.WithKVType(llm.KVInt8)}},
		// Same shape, other file: only the fingerprint tells them apart.
		{"f16 weights", testutil.Testdata(t, "models/stories260K-f16.gguf"), nil},
		{"other model", writeTiny(t), nil},
	} {
		om, err := llm.Load(other.path, append(other.opts, llm.WithContextSize(256))...)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := om.NewSession()
		if err := o.Restore(bytes.NewReader(data)); !errors.Is(err, llm.ErrBadState) {
			t.Errorf("%s: err = %v, want ErrBadState", other.name, err)
		} else {
			t.Logf("%s: %v", other.name, err)
		}
		if o.Len() != 0 {
			t.Errorf("%s: failed restore left %d tokens", other.name, o.Len())
		}
		o.Close()
		om.Close()
	}
	// After all that, a good stream still restores.
	if err := dst.Restore(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dst.Logits(), src.Logits()) {
		t.Error("logits differ after the final restore")
	}
}

func writeTiny(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := testutil.WriteModelFile(p, testutil.TinyLlama()); err != nil {
		t.Fatal(err)
	}
	return p
}
