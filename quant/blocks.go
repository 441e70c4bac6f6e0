package quant

import "iter"

// blocks yields a and b cut into blocks in step, na elements of a with nb
// of b, until either has no whole block left: the walk every block codec
// makes, a row of elements against a row of encoded bytes (dequant, quant)
// or a row of weights against a row of activations (dot products).
//
// The per-block code is the body of a range loop over blocks; the compiler
// inlines the iterator, walkBlocks and that body, so the loop it makes is
// the plain one, with no call per block (check with -gcflags=-m, which
// reports "inlining call to …-range1"). The walk is a function of its own
// so that a and b are its locals: stepped inside the closure blocks
// returns they would be captured by reference, and the compiler would keep
// them in memory, a store and a load per block that slowed dotQ4_0 by a
// tenth.
func blocks[A, B any](a []A, na int, b []B, nb int) iter.Seq2[[]A, []B] {
	return func(yield func([]A, []B) bool) { walkBlocks(a, na, b, nb, yield) }
}

// walkBlocks is the loop of blocks.
func walkBlocks[A, B any](a []A, na int, b []B, nb int, yield func([]A, []B) bool) {
	for len(a) >= na && len(b) >= nb {
		if !yield(a[:na], b[:nb]) {
			return
		}
		a, b = a[na:], b[nb:]
	}
}

// dotBlocks yields the first nb blocks of a dot product's weight row w
// (wb bytes each) with those of its activation row x (xb bytes each). It
// panics, as slicing does, when either row is shorter.
func dotBlocks(nb int, w []byte, wb int, x []byte, xb int) iter.Seq2[[]byte, []byte] {
	return blocks(w[:nb*wb], wb, x[:nb*xb], xb)
}
