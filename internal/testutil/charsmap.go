package testutil

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// Charsmap encodes repl (byte string → replacement) as the precompiled
// charsmap a UGM (tokenizer.ggml.model "t5") vocabulary carries in
// tokenizer.ggml.precompiled_charsmap: a little-endian uint32 byte size,
// a darts-clone double-array trie of the keys, then the replacements, each
// ended by a NUL, in key order. Keys must be non-empty and free of NULs.
//
// The trie is laid out the simplest way that satisfies darts-clone's
// rules: nodes are placed depth first; for each node the smallest offset
// o is taken that no other node has (units hold only labels, not parents,
// so two nodes sharing an offset would share their children) and at
// which every child's unit o^label (and, when a key ends at the node, its
// value unit o^0 = o) is still free. A node's unit stores o XOR its own
// index as its offset in bits 10–30 (so a walker at index i finds the
// child by c at i ^ offset(i) ^ c); a child's unit stores its label in
// bits 0–7 and, when a key ends there, bit 8; a value unit is bit 31 plus
// the replacement's offset. Unit 0 is the root, and the array grows in
// blocks of 256 units as darts-clone's does. Offsets of 2^21 or more
// (bit 9's shifted form) are not needed for the small maps tests build,
// and are refused.
func Charsmap(repl map[string]string) ([]byte, error) {
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
			return nil, fmt.Errorf("testutil: charsmap key %q: keys are non-empty and NUL-free", k)
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
	var place func(n *node, at uint32) error
	place = func(n *node, at uint32) error {
		labels := make([]uint32, 0, len(n.kids)+1)
		if n.isKey {
			labels = append(labels, 0)
		}
		for c := range n.kids {
			labels = append(labels, uint32(c))
		}
		if len(labels) == 0 {
			return nil
		}
		slices.Sort(labels)
		o := uint32(1)
		for ; ; o++ {
			ok := !offsetTaken[o]
			for _, c := range labels {
				ok = ok && free(o^c)
			}
			if ok {
				break
			}
		}
		if o^at >= 1<<21 {
			return fmt.Errorf("testutil: charsmap offset %d needs the shifted form", o^at)
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
			if c == 0 {
				continue
			}
			if err := place(n.kids[byte(c)], o^c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := place(root, 0); err != nil {
		return nil, err
	}

	out := binary.LittleEndian.AppendUint32(nil, uint32(4*len(units)))
	for _, u := range units {
		out = binary.LittleEndian.AppendUint32(out, u)
	}
	return append(out, strs...), nil
}
