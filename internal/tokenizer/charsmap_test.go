package tokenizer

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
)

// buildCharsmap encodes repl (byte string → replacement) as a GGUF
// precompiled charsmap, for tests: the test data holds no UGM vocabulary.
//
// The trie is a darts-clone double array laid out the simplest way that
// satisfies its rules: nodes are placed depth first; for each node the
// smallest offset o is taken that no other node has (the units hold only
// labels, not parents, so two nodes sharing an offset would share their
// children) and at which every child's unit o^label (and, when a key ends
// at the node, its value unit o^0 = o) is still free. The
// node's unit stores o XOR its own index as its offset (so a walker at
// index i finds the child by c at i ^ offset(i) ^ c); a child's unit
// stores its label in bits 0–7 and, when a key ends there, bit 8; a value
// unit is bit 31 plus the replacement's offset. Unit 0 is the root, the
// array grows in blocks of 256 units as darts-clone's does, and offsets
// stay below 2^21, so the shifted-offset form (bit 9) is never needed.
// The replacements follow, each ended by a NUL, in key order.
func buildCharsmap(t testing.TB, repl map[string]string) []byte {
	type node struct {
		kids  map[byte]*node
		isKey bool
		value uint32
	}
	keys := make([]string, 0, len(repl))
	for k := range repl {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	root := &node{kids: map[byte]*node{}}
	var strs []byte
	for _, k := range keys {
		if k == "" || strings.IndexByte(k, 0) >= 0 {
			t.Fatalf("charsmap key %q: keys are non-empty and NUL-free", k)
		}
		n := root
		for i := 0; i < len(k); i++ {
			kid := n.kids[k[i]]
			if kid == nil {
				kid = &node{kids: map[byte]*node{}}
				n.kids[k[i]] = kid
			}
			n = kid
		}
		n.isKey, n.value = true, uint32(len(strs))
		strs = append(append(strs, repl[k]...), 0)
	}

	units := make([]uint32, 256)
	used := make([]bool, 256)
	used[0] = true
	offsetTaken := map[uint32]bool{}
	free := func(i uint32) bool {
		for int(i) >= len(units) {
			units = append(units, make([]uint32, 256)...)
			used = append(used, make([]bool, 256)...)
		}
		return !used[i]
	}
	var place func(n *node, at uint32)
	place = func(n *node, at uint32) {
		labels := make([]uint32, 0, len(n.kids)+1)
		if n.isKey {
			labels = append(labels, 0)
		}
		for c := range n.kids {
			labels = append(labels, uint32(c))
		}
		if len(labels) == 0 {
			return
		}
		slices.Sort(labels)
		o := uint32(1)
		for ; ; o++ {
			ok := !offsetTaken[o]
			for _, c := range labels {
				if !free(o ^ c) {
					ok = false
					break
				}
			}
			if ok {
				break
			}
		}
		if o^at >= 1<<21 {
			t.Fatalf("charsmap offset %d too large for the test builder", o^at)
		}
		offsetTaken[o] = true
		units[at] |= (o ^ at) << 10
		for _, c := range labels {
			used[o^c] = true
			if c == 0 {
				units[o] = 1<<31 | n.value
				continue
			}
			u := c
			if n.kids[byte(c)].isKey {
				u |= 1 << 8
			}
			units[o^c] = u
		}
		for _, c := range labels {
			if c != 0 {
				place(n.kids[byte(c)], o^c)
			}
		}
	}
	place(root, 0)

	out := binary.LittleEndian.AppendUint32(nil, uint32(4*len(units)))
	for _, u := range units {
		out = binary.LittleEndian.AppendUint32(out, u)
	}
	return append(out, strs...)
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
