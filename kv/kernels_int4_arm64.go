//go:build !purego

package kv

import "github.com/lowmem/llm/internal/cpu"

// The arm64 Int4 kernels (kernels_int4_neon_arm64.s, generated), NEON:
// scores of four rows at a time for one head, of one row at a time for
// four heads (each block's codes widened once for the four), and the value
// sums through axpy kernels. They keep the twins' order of operations as
// Go compiles them for arm64, so every result is the twin's bit for bit.
// They take rows of any multiple of 32 elements, which is every Int4 head
// size (mult 32). As for the other families, …At calls a level's kernel
// directly, and the functions attention calls pick the level once per call
// from the registry.

// archKernelsQ4 adds the Int4 variants to the registry.
func archKernelsQ4(k *kernelFamilies) {
	const n = cpu.NEON
	k.scoresQ4.add(variant[scoresQ4Func]{"neon", n, q4Block, func(dst []float32, kk []byte, q []float32) { scoresQ4At(n, dst, kk, q) }})
	k.valuesQ4.add(variant[valuesQ4Func]{"neon", n, q4Block, func(o, w []float32, v []byte) { valuesQ4At(n, o, w, v) }})
	k.scoresQ4xN.add(variant[scoresQ4xNFunc]{"neon", n, q4Block, func(dst []float32, stride, rows int, kk []byte, q []float32, d int) int {
		return scoresQ4xNAt(n, dst, stride, rows, kk, q, d)
	}})
	k.valuesQ4xN.add(variant[valuesQ4xNFunc]{"neon", n, q4Block, func(o, w []float32, stride, rows int, v []byte, d int) int {
		return valuesQ4xNAt(n, o, w, stride, rows, v, d)
	}})
}

// q4PermMax is the longest head the scores kernels take: the permuted
// query lives on the stack (16 KiB for four heads of this size).
const q4PermMax = 1024

// scoresQ4At runs four rows at a time through the NEON kernel and the rows
// past the last multiple of 4 through the twin, whose result is the same
// bits.
func scoresQ4At(l cpu.Level, dst []float32, k []byte, q []float32) {
	d := len(q)
	n4 := len(dst) &^ 3
	if l < cpu.NEON || d == 0 || d%q4Block != 0 || d > q4PermMax || n4 == 0 {
		scoresQ4Rows(dst, k, q)
		return
	}
	rb := q4RowBytes(d)
	k = k[:len(dst)*rb]
	var qp [q4PermMax]float32
	permuteQ4Query(qp[:d], q)
	scoresQ4NEON(&dst[0], &k[0], &qp[0], n4, d)
	scoresQ4Rows(dst[n4:], k[n4*rb:], q)
}

// q4Perm is the element of a 32-element block the NEON scores kernels
// read at position 4i+l: vector i holds q[2i], q[2i+16], q[2i+1], q[2i+17],
// the elements dotQ4F32Generic's running sums s0, s1, s2, s3 multiply at
// its step i.
var q4Perm = func() (p [q4Block]int) {
	for i := 0; i < q4Block/4; i++ {
		p[4*i], p[4*i+1], p[4*i+2], p[4*i+3] = 2*i, 2*i+16, 2*i+1, 2*i+17
	}
	return p
}()

// permuteQ4Query orders each 32 elements of q as scoresQ4NEON reads them.
func permuteQ4Query(dst, q []float32) {
	for b := 0; b+q4Block <= len(q); b += q4Block {
		s := (*[q4Block]float32)(q[b:])
		d := (*[q4Block]float32)(dst[b:])
		for j, e := range q4Perm {
			d[j] = s[e]
		}
	}
}

// permuteQ4Query4 interleaves four heads of d elements (q) as
// scoresQ4x4NEON reads them: per block and step i, head 0's four elements
// of permuteQ4Query, then head 1's, 2's and 3's.
func permuteQ4Query4(dst, q []float32, d int) {
	for b := 0; b+q4Block <= d; b += q4Block {
		out := (*[4 * q4Block]float32)(dst[4*b:])
		for h := 0; h < 4; h++ {
			s := (*[q4Block]float32)(q[h*d+b:])
			for i := 0; i < q4Block/4; i++ {
				o := out[16*i+4*h:]
				o[0], o[1], o[2], o[3] = s[q4Perm[4*i]], s[q4Perm[4*i+1]], s[q4Perm[4*i+2]], s[q4Perm[4*i+3]]
			}
		}
	}
}

// valuesQ4At is valuesQ4Rows with the NEON axpy kernels.
func valuesQ4At(l cpu.Level, o, w []float32, v []byte) {
	d := len(o)
	if l < cpu.NEON || d == 0 || d%q4Block != 0 {
		valuesQ4Rows(o, w, v)
		return
	}
	q4Pairs(w, v, q4RowBytes(d),
		func(a0, a1 float32, r0, r1 []byte) { axpy2Q4NEON(&o[0], a0, a1, &r0[0], &r1[0], d) },
		func(a float32, r []byte) { axpyQ4NEON(&o[0], a, &r[0], d) })
}

// scoresQ4xNAt reads each key row once for four heads (and widens its
// codes once); every result is the one-head kernel's bits.
func scoresQ4xNAt(l cpu.Level, dst []float32, stride, rows int, k []byte, q []float32, d int) int {
	if d%q4Block != 0 || d > q4PermMax/4 {
		return 0
	}
	n := headsN(l, q, dst, stride, rows, d, false)
	if n == 0 {
		return 0
	}
	k = k[:rows*q4RowBytes(d)]
	var qp [q4PermMax]float32
	for h := 0; h < n; h += 4 {
		permuteQ4Query4(qp[:4*d], q[h*d:(h+4)*d], d)
		scoresQ4x4NEON(&dst[h*stride], stride, &k[0], &qp[0], rows, d)
	}
	return n
}

// valuesQ4xNAt takes the heads one at a time (through the NEON axpy
// kernels): each head skips its own zero weights, so four heads would not
// share a row's work the way the scores do.
func valuesQ4xNAt(l cpu.Level, o, w []float32, stride, rows int, v []byte, d int) int {
	if d%q4Block != 0 {
		return 0
	}
	n := headsN(l, o, w, stride, rows, d, false)
	for h := 0; h < n; h++ {
		valuesQ4At(l, o[h*d:(h+1)*d], w[h*stride:h*stride+rows], v)
	}
	return n
}
