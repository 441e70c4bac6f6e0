package ops

// Rotate turns vectors rotated for position p into the vectors for position
// p+delta: it applies the rotation of position delta (negative to move
// back) to len(x)/headDim consecutive vectors of headDim floats, with the
// same pairs, frequencies and factors as Angles and Apply. Rotations
// compose by adding angles, so this equals rotating for p+delta from the
// start, up to float32 rounding. The magnitude (MScale, YaRN's) is not
// applied again: the cached keys were scaled once. A context shift uses it
// to renumber cached keys without recomputing them.
func (r *Rope) Rotate(x []float32, headDim, delta int) {
	if r.Dim == 0 || headDim <= 0 {
		return
	}
	cs := make([]float32, r.Dim)
	r.angles(delta, cs, false)
	r.Apply(x, len(x)/headDim, headDim, cs)
}
