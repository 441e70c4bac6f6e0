package tokenizer

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// charsmap is SentencePiece's precompiled normalization map as GGUF files
// carry it in tokenizer.ggml.precompiled_charsmap: a little-endian uint32
// byte size, that many bytes of darts-clone double-array trie over the
// byte strings to replace, then the NUL-terminated replacement strings.
//
// Each trie unit is a uint32: bits 0–7 the label that leads to it (bit 31
// set marks a unit holding a value instead, so no label matches it), bit 8
// whether a key ends at it, bits 10–30 the offset to its children (shifted
// left by 8 more when bit 9 is set). The child by byte c of the unit at i
// is at i ^ offset(i) ^ c; a key's value, an offset into the replacement
// strings, is in the unit at i ^ offset(i) (the child by label 0).
type charsmap struct {
	units []uint32
	repl  string // the replacement strings, each ended by a NUL
}

func unitOffset(u uint32) uint32 { return (u >> 10) << ((u & (1 << 9)) >> 6) }
func unitLabel(u uint32) uint32  { return u & (1<<31 | 0xFF) }
func unitLeaf(u uint32) bool     { return u>>8&1 != 0 }
func unitValue(u uint32) uint32  { return u & (1<<31 - 1) }

// parseCharsmap reads b, refusing what llama.cpp refuses (a trie size
// that leaves no replacement strings) and, since llama.cpp would read out
// of bounds or fail mid-tokenization on them, a map shorter than its size
// field and any key the trie reaches whose value unit or replacement lies
// outside the map or whose replacement has no terminating NUL. Labels
// leading outside the units are kept: they match nothing (llama.cpp stops
// with an error on input that reaches them).
func parseCharsmap(b []byte) (charsmap, error) {
	if len(b) == 0 {
		return charsmap{}, nil
	}
	if len(b) < 4 {
		return charsmap{}, fmt.Errorf("%w: precompiled charsmap of %d bytes has no room for its 4-byte trie size", ErrBadVocab, len(b))
	}
	size := uint64(binary.LittleEndian.Uint32(b))
	if size+4 >= uint64(len(b)) {
		return charsmap{}, fmt.Errorf("%w: precompiled charsmap's trie of %d bytes leaves no replacement strings in its %d bytes", ErrBadVocab, size, len(b))
	}
	m := charsmap{units: make([]uint32, size/4), repl: string(b[4+size:])}
	for i := range m.units {
		m.units[i] = binary.LittleEndian.Uint32(b[4+4*i:])
	}
	if err := m.check(); err != nil {
		return charsmap{}, err
	}
	return m, nil
}

// check visits every unit reachable from the root (each once: a hostile
// trie may loop) and verifies each key's value and replacement string.
func (m *charsmap) check() error {
	n := uint32(len(m.units))
	if n == 0 {
		return nil
	}
	seen := make([]bool, n)
	stack := []uint32{unitOffset(m.units[0])}
	for len(stack) > 0 {
		base := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for c := uint32(1); c < 256; c++ {
			child := base ^ c
			if child >= n || unitLabel(m.units[child]) != c {
				continue
			}
			next := child ^ unitOffset(m.units[child])
			if unitLeaf(m.units[child]) {
				if next >= n {
					return fmt.Errorf("%w: precompiled charsmap: the value of trie unit %d is at unit %d, past the %d units", ErrBadVocab, child, next, n)
				}
				off := unitValue(m.units[next])
				if uint64(off) >= uint64(len(m.repl)) {
					return fmt.Errorf("%w: precompiled charsmap: replacement offset %d of trie unit %d is past the %d bytes of replacements", ErrBadVocab, off, child, len(m.repl))
				}
				if strings.IndexByte(m.repl[off:], 0) < 0 {
					return fmt.Errorf("%w: precompiled charsmap: the replacement at offset %d has no terminating NUL", ErrBadVocab, off)
				}
			}
			if next < n && !seen[next] {
				seen[next] = true
				stack = append(stack, next)
			}
		}
	}
	return nil
}

// longest returns the replacement of the longest prefix of s that is a
// key, and the prefix's length; 0 when no prefix is. A NUL in s ends the
// search, as in llama.cpp, which reads the text as a C string here.
func (m *charsmap) longest(s string) (string, int) {
	n := uint32(len(m.units))
	if n == 0 {
		return "", 0
	}
	length, off := 0, uint32(0)
	base := unitOffset(m.units[0])
	for i := 0; i < len(s) && s[i] != 0; i++ {
		c := uint32(s[i])
		child := base ^ c
		if child >= n || unitLabel(m.units[child]) != c {
			break
		}
		base = child ^ unitOffset(m.units[child])
		if unitLeaf(m.units[child]) {
			if base >= n {
				break // check refuses this; kept safe regardless
			}
			length, off = i+1, unitValue(m.units[base])
		}
	}
	if length == 0 || uint64(off) >= uint64(len(m.repl)) {
		return "", 0
	}
	r := m.repl[off:]
	if end := strings.IndexByte(r, 0); end >= 0 {
		r = r[:end]
	}
	return r, length
}
