package kv

// Pure-Go inner loops of attention over an Int4 cache: q4_0 rows (see
// int4.go) read in place, without widening a row to float32 first. They
// follow kernels.go's F16/Int8 kernels: the ...Generic functions are the
// twins an assembly kernel must match (same float32 semantics, up to the
// order in which float32 sums are added), and the names without the suffix
// (kernels_int4_dispatch.go) are what attention calls.

// q4Lo and q4Hi map a q4_0 code byte to its low and high code minus 8, as
// float32: a table load is cheaper than Go's integer-to-float conversion.
var q4Lo, q4Hi [256]float32

func init() {
	for i := range q4Lo {
		q4Lo[i] = float32(i&15) - 8
		q4Hi[i] = float32(i>>4) - 8
	}
}

// dotQ4F32Generic returns Σ_b d_b·Σ_j (c_bj−8)·q_bj over the q4_0 blocks b
// of key row k and the float32 query q: each block's sum in float32 from
// four partial sums, then multiplied by the block's scale and added. len(q)
// must be at least 32 per block of k.
func dotQ4F32Generic(k []byte, q []float32) float32 {
	nb := len(k) / q4BlockBytes
	q = q[:nb*q4Block]
	var sum float32
	for b := range nb {
		blk := k[b*q4BlockBytes : (b+1)*q4BlockBytes : (b+1)*q4BlockBytes]
		qq := q[b*q4Block : (b+1)*q4Block : (b+1)*q4Block]
		cs := blk[2:]
		var s0, s1, s2, s3 float32
		for j := 0; j < q4Block/2; j += 2 {
			c0, c1 := cs[j], cs[j+1]
			s0 += q4Lo[c0] * qq[j]
			s1 += q4Hi[c0] * qq[j+16]
			s2 += q4Lo[c1] * qq[j+1]
			s3 += q4Hi[c1] * qq[j+17]
		}
		sum += q4Scale(blk) * ((s0 + s1) + (s2 + s3))
	}
	return sum
}

// axpyQ4Generic adds a·v to dst for the q4_0 value row v: element j of
// block b adds (a·d_b)·(c_bj−8). len(dst) must be at least 32 per block.
func axpyQ4Generic(dst []float32, a float32, v []byte) {
	nb := len(v) / q4BlockBytes
	dst = dst[:nb*q4Block]
	for b := range nb {
		blk := v[b*q4BlockBytes : (b+1)*q4BlockBytes : (b+1)*q4BlockBytes]
		dd := dst[b*q4Block : (b+1)*q4Block : (b+1)*q4Block]
		ad := a * q4Scale(blk)
		for j, c := range blk[2:] {
			dd[j] += ad * q4Lo[c]
			dd[j+16] += ad * q4Hi[c]
		}
	}
}

// axpy2Q4Generic adds a0·v0 + a1·v1 to dst (the two products summed first)
// for two q4_0 rows of the same length: one pass over dst for two rows.
func axpy2Q4Generic(dst []float32, a0, a1 float32, v0, v1 []byte) {
	nb := len(v0) / q4BlockBytes
	dst = dst[:nb*q4Block]
	v1 = v1[:len(v0)]
	for b := range nb {
		x := v0[b*q4BlockBytes : (b+1)*q4BlockBytes : (b+1)*q4BlockBytes]
		y := v1[b*q4BlockBytes : (b+1)*q4BlockBytes : (b+1)*q4BlockBytes]
		dd := dst[b*q4Block : (b+1)*q4Block : (b+1)*q4Block]
		ad0, ad1 := a0*q4Scale(x), a1*q4Scale(y)
		ys := y[2:q4BlockBytes]
		for j, c := range x[2:q4BlockBytes] {
			e := ys[j]
			dd[j] += ad0*q4Lo[c] + ad1*q4Lo[e]
			dd[j+16] += ad0*q4Hi[c] + ad1*q4Hi[e]
		}
	}
}

// scoresQ4Rows sets dst[i] to the dot product of q4_0 key row i of k with
// q; the rows hold len(q) elements.
func scoresQ4Rows(dst []float32, k []byte, q []float32) {
	rb := q4RowBytes(len(q))
	k = k[:len(dst)*rb]
	for i := range dst {
		dst[i] = dotQ4F32Generic(k[i*rb:(i+1)*rb], q)
	}
}

// valuesQ4Rows adds Σ w[i]·row i of v to o for q4_0 value rows of len(o)
// elements.
func valuesQ4Rows(o, w []float32, v []byte) {
	q4Pairs(w, v, q4RowBytes(len(o)),
		func(a0, a1 float32, r0, r1 []byte) { axpy2Q4Generic(o, a0, a1, r0, r1) },
		func(a float32, r []byte) { axpyQ4Generic(o, a, r) })
}

// q4Pairs hands the value rows of rb bytes in v with their weights w to the
// axpy kernels two rows at a time (two), or one (one) where the other's
// weight is zero or the rows run out: zero weights are skipped, since they
// add nothing.
func q4Pairs(w []float32, v []byte, rb int, two func(a0, a1 float32, r0, r1 []byte), one func(a float32, r []byte)) {
	v = v[:len(w)*rb]
	i := 0
	for ; i+2 <= len(w); i += 2 {
		a0, a1 := w[i], w[i+1]
		r0, r1 := v[i*rb:(i+1)*rb], v[(i+1)*rb:(i+2)*rb]
		switch {
		case a0 != 0 && a1 != 0:
			two(a0, a1, r0, r1)
		case a0 != 0:
			one(a0, r0)
		case a1 != 0:
			one(a1, r1)
		}
	}
	if i < len(w) && w[i] != 0 {
		one(w[i], v[i*rb:(i+1)*rb])
	}
}

// scoresQ4Heads is scoresF16Heads for q4_0 key rows: dst[h·stride+i] is key
// row i of k times query h of q, for the rows rows of d elements.
func scoresQ4Heads(dst []float32, stride, rows int, k []byte, q []float32, d int) {
	k = k[:rows*q4RowBytes(d)]
	for h := scoresQ4xN(dst, stride, rows, k, q, d); h < len(q)/d; h++ {
		scoresQ4(dst[h*stride:h*stride+rows], k, q[h*d:(h+1)*d])
	}
}

// valuesQ4Heads is valuesF16Heads for q4_0 value rows: output h of o gets
// Σ_i w[h·stride+i]·row i of v, for the rows rows of d elements.
func valuesQ4Heads(o, w []float32, stride, rows int, v []byte, d int) {
	v = v[:rows*q4RowBytes(d)]
	for h := valuesQ4xN(o, w, stride, rows, v, d); h < len(o)/d; h++ {
		valuesQ4(o[h*d:(h+1)*d], w[h*stride:h*stride+rows], v)
	}
}
