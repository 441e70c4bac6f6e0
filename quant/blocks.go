package quant

import (
	"iter"
	"unsafe"
)

// blocks yields a and b cut into blocks in step, as the arrays A (of a's
// elements) and B (of b's) that a block of each is, until either has no
// whole block left: the walk every block codec makes, a row of elements
// against a row of encoded bytes (dequant, quant) or a row of weights
// against a row of activations (dot products). Each yield is the pointer
// (*A)(a[:len(A)]) would give; the type arguments say the blocks' sizes,
// and the per-block code indexes them with constants and no bounds checks.
// A must be an array of EA and B of EB.
//
// The per-block code is the body of a range loop over blocks; the compiler
// inlines the iterator, walkBlocks and that body, so the loop it makes is
// the plain one, with no call per block (check with -gcflags=-m, which
// reports "inlining call to …-range1"). The walk is a function of its own
// so that a and b are its locals: stepped inside the closure blocks
// returns they would be captured by reference, and the compiler would keep
// them in memory, a store and a load per block that slowed dotQ4_0 by a
// tenth. The arrays are made with unsafe because a conversion to *A is
// not one Go allows for a type parameter A; arrays of different lengths
// are different shapes to the compiler, so their lengths are constants in
// each instance, as in a conversion written out.
func blocks[A, B, EA, EB any](a []EA, b []EB) iter.Seq2[*A, *B] {
	na, nb := arrayLen[A, EA](), arrayLen[B, EB]()
	return func(yield func(*A, *B) bool) { walkBlocks(a, na, b, nb, yield) }
}

// walkBlocks is the loop of blocks, over blocks of na and nb elements.
func walkBlocks[A, B, EA, EB any](a []EA, na int, b []EB, nb int, yield func(*A, *B) bool) {
	for len(a) >= na && len(b) >= nb {
		if !yield((*A)(unsafe.Pointer(&a[0])), (*B)(unsafe.Pointer(&b[0]))) {
			return
		}
		a, b = a[na:], b[nb:]
	}
}

// arrayLen is the length of the array A of elements E.
func arrayLen[A, E any]() int {
	var a A
	var e E
	return int(unsafe.Sizeof(a) / unsafe.Sizeof(e))
}

// dotBlocks yields the first nb blocks of a dot product's weight row w
// (blocks A) with those of its activation row x (blocks B). It panics, as
// slicing does, when either row is shorter.
func dotBlocks[A, B any](nb int, w, x []byte) iter.Seq2[*A, *B] {
	wb, xb := arrayLen[A, byte](), arrayLen[B, byte]()
	ws, xs := w[:nb*wb], x[:nb*xb]
	return func(yield func(*A, *B) bool) { walkBlocks(ws, wb, xs, xb, yield) }
}
