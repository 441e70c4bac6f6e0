package tokenizer

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// buildCharsmap is testutil.Charsmap (a darts-clone double array built
// for tests: the test data holds no UGM vocabulary), failing t on error.
func buildCharsmap(t testing.TB, repl map[string]string) []byte {
	t.Helper()
	b, err := testutil.Charsmap(repl)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testCharsmap replaces full-width A, the ligature fi, a tab, "x" and the
// longer "xy", "pq" (whose prefix "p" is not a key), deletes "D" and
// lowercases "A".
func testCharsmap(t testing.TB) []byte {
	return buildCharsmap(t, map[string]string{
		"Ａ": "A", "ﬁ": "fi", "\t": " ", "x": "1", "xy": "2", "pq": "3", "D": "", "A": "a",
	})
}

// The longest key that starts the text is replaced; a path through a
// non-key ("p" of "pq") or past the keys replaces nothing; a NUL ends the
// search.
func TestCharsmapLongest(t *testing.T) {
	m, err := parseCharsmap(testCharsmap(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, repl string
		n        int
	}{
		{"xyz", "2", 2}, {"xz", "1", 1}, {"x", "1", 1}, {"pqr", "3", 2}, {"pz", "", 0}, {"p", "", 0},
		{"Ａb", "A", 3}, {"ﬁx", "fi", 3}, {"\tx", " ", 1}, {"Dx", "", 1}, {"b", "", 0}, {"\x00x", "", 0},
		{"\xef\xbc", "", 0},
	} {
		repl, n := m.longest(tc.in)
		if repl != tc.repl || n != tc.n {
			t.Errorf("longest(%q) = %q, %d; want %q, %d", tc.in, repl, n, tc.repl, tc.n)
		}
	}
}

// A truncated or hostile charsmap is refused with an error wrapping
// ErrBadVocab that names the problem: no size, a size past the end (or
// leaving no replacements, which llama.cpp refuses), a key's value unit
// past the units, a replacement offset past the strings, a replacement
// without its NUL. Labels leading outside the units match nothing.
func TestCharsmapHostile(t *testing.T) {
	good := buildCharsmap(t, map[string]string{"a": "b"})
	// Find the value unit and the unit of "a" in the built map.
	units := func(b []byte) (leaf, value int) {
		leaf, value = -1, -1
		for i := 4; i+4 <= 4+int(binary.LittleEndian.Uint32(b)); i += 4 {
			u := binary.LittleEndian.Uint32(b[i:])
			switch {
			case u&(1<<31) != 0:
				value = i
			case u&0xFF == 'a' && u&(1<<8) != 0:
				leaf = i
			}
		}
		return leaf, value
	}
	leaf, value := units(good)
	if leaf < 0 || value < 0 {
		t.Fatal("builder: no leaf or value unit")
	}
	edit := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	tests := []struct {
		name    string
		data    []byte
		mention string
	}{
		{"three bytes", good[:3], "no room"},
		{"size past the end", good[:len(good)-3], "leaves no replacement"},
		{"size exactly the rest", good[:4+binary.LittleEndian.Uint32(good)], "leaves no replacement"},
		{"huge size", edit(func(b []byte) []byte { binary.LittleEndian.PutUint32(b, 0xFFFFFFFF); return b }), "leaves no replacement"},
		{"value unit outside", edit(func(b []byte) []byte {
			u := binary.LittleEndian.Uint32(b[leaf:])
			binary.LittleEndian.PutUint32(b[leaf:], u&0x3FF|(1<<20)<<10)
			return b
		}), "past the"},
		{"replacement offset outside", edit(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[value:], 1<<31|1000)
			return b
		}), "replacement offset 1000"},
		{"replacement without NUL", good[:len(good)-1], "no terminating NUL"},
	}
	for _, tc := range tests {
		_, err := parseCharsmap(tc.data)
		if !errors.Is(err, ErrBadVocab) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%s: error %v, want ErrBadVocab mentioning %q", tc.name, err, tc.mention)
		}
	}
	// The root's children lead past a one-block array: nothing matches.
	small := binary.LittleEndian.AppendUint32(nil, 4)
	small = binary.LittleEndian.AppendUint32(small, 1000<<10)
	small = append(small, 0)
	m, err := parseCharsmap(small)
	if err != nil {
		t.Fatal(err)
	}
	if _, n := m.longest("abc"); n != 0 {
		t.Errorf("out-of-range labels matched %d bytes", n)
	}
}

// FuzzCharsmap gives a UGM vocabulary arbitrary bytes as its charsmap:
// New must refuse them with ErrBadVocab or build a tokenizer that encodes
// any text into ids of the vocabulary, never panicking.
func FuzzCharsmap(f *testing.F) {
	good := testCharsmap(f)
	f.Add(good, "xy Ａﬁ\tpq DA")
	f.Add(good[:len(good)-1], "x")
	f.Add(good[:7], "x")
	f.Add([]byte{4, 0, 0, 0, 0, 1, 0, 0, 0}, "aaa")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		v := ugmVocab()
		v.Charsmap = data
		v.AddSpacePrefix, v.RemoveExtraWhitespaces = len(data)%2 == 0, len(data)%3 == 0
		tok, err := New(v)
		if err != nil {
			if !errors.Is(err, ErrBadVocab) {
				t.Fatalf("New: %v does not wrap ErrBadVocab", err)
			}
			return
		}
		ids := tok.Encode(text, true)
		checkIDs(t, "Encode", tok, ids)
		tok.Decode(ids)
	})
}
