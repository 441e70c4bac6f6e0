package quant

import "math"

// Helpers shared by the K-quant formats (256-element super-blocks).

// groupMaxEps is ggml's GROUP_MAX_EPS: a group whose largest magnitude is
// below it is treated as all zeros.
const groupMaxEps = 1e-15

// kScaleSize is the bytes of packed 6-bit scales and mins in Q4_K and Q5_K.
const kScaleSize = 12

// scaleMinK4 unpacks the 6-bit scale and min of sub-block j (0..7) from the
// 12 packed bytes of a Q4_K or Q5_K block: sub-blocks 0-3 keep theirs in the
// low six bits of bytes j and j+4; sub-blocks 4-7 split theirs between a
// nibble of byte j+4 and the top two bits of bytes j-4 and j.
func scaleMinK4(j int, s *[kScaleSize]byte) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xf | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// scalesMinsK4 unpacks the scale and min codes of all eight sub-blocks
// of a Q4_K or Q5_K block (see scaleMinK4): element i of sub-block j is
// d·sc[j]·q_i - dmin·m[j], and its share of a dot product with Q8_K
// quants y is sc[j]·Σq_i·y_i - m[j]·Σy_i.
func scalesMinsK4(s *[kScaleSize]byte, sc, m *[8]int32) {
	for j := range sc {
		a, b := scaleMinK4(j, s)
		sc[j], m[j] = int32(a), int32(b)
	}
}

// minSumK4 is the min term of a Q4_K or Q5_K block's dot product with a
// Q8_K block: Σ_j m[j]·(the sum of the Q8_K quants of sub-block j), from
// the min codes m (scalesMinsK4) and the Q8_K bsums, two per sub-block.
// It needs no weight quants.
func minSumK4(m *[8]int32, bsums *[32]byte) int32 {
	var s int32
	for j, mj := range m {
		s += mj * (bsum(bsums, 2*j) + bsum(bsums, 2*j+1))
	}
	return s
}

// blockSumK4 is a Q4_K or Q5_K block's share of a dot product with a
// Q8_K block of scale dy: d·dy·sumi - dmin·dy·summ, d and dmin the fp16
// pair the block starts with.
func blockSumK4(a []byte, dy float32, sumi, summ int32) float32 {
	return f16At(a[0:])*dy*float32(sumi) - f16At(a[2:])*dy*float32(summ)
}

// packScaleMinK4 is the inverse of scaleMinK4 for all eight sub-blocks; ls
// and lm must be at most 63.
func packScaleMinK4(s *[kScaleSize]byte, ls, lm *[8]uint8) {
	*s = [kScaleSize]byte{}
	for j := 0; j < 8; j++ {
		if j < 4 {
			s[j] = ls[j]
			s[j+4] = lm[j]
		} else {
			s[j+4] = ls[j]&0xf | (lm[j]&0xf)<<4
			s[j-4] |= (ls[j] >> 4) << 6
			s[j] |= (lm[j] >> 4) << 6
		}
	}
}

func clamp32(v, lo, hi int32) int32 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

func abs32(f float32) float32 { return float32(math.Abs(float64(f))) }

// makeQKX2Quants is ggml's make_qkx2_quants: it fits x ≈ scale·L - min with
// L in [0, nmax] and min ≥ 0, trying nstep+1 candidate scales around
// nmax/(max-min) and keeping the one with the least weighted error (absolute
// if useMad, else squared). It returns scale and min; L receives the levels
// and laux is scratch of the same length as x. Every product is rounded to
// float32 before it is added (float32(a*b)): Go fuses a*b+c on arm64 and
// other platforms, and the quantized bytes must be llama-quantize's
// everywhere.
func makeQKX2Quants(nmax int32, x, weights []float32, l, laux []uint8, rmin, rdelta float32, nstep int, useMad bool) (scale, theMin float32) {
	n := len(x)
	weights = weights[:n]
	l = l[:n]
	laux = laux[:n]
	min, max := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < min {
			min = x[i]
		}
		if x[i] > max {
			max = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if min > 0 {
		min = 0
	}
	if max == min {
		for i := range l {
			l[i] = 0
		}
		return 0, -min
	}
	iscale := float32(nmax) / (max - min)
	scale = 1 / iscale
	var bestError float32
	for i := range x {
		q := clamp32(nearestInt(float32(iscale*(x[i]-min))), 0, nmax)
		l[i] = uint8(q)
		diff := float32(scale*float32(q)) + min - x[i]
		if useMad {
			diff = abs32(diff)
		} else {
			diff *= diff
		}
		bestError += float32(weights[i] * diff)
	}
	if nstep < 1 {
		return scale, -min
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + float32(nmax)) / (max - min)
		var sumL, sumL2, sumXL float32
		for i := range x {
			q := clamp32(nearestInt(float32(iscale*(x[i]-min))), 0, nmax)
			laux[i] = uint8(q)
			w, fq := weights[i], float32(q)
			sumL += float32(w * fq)
			sumL2 += float32(float32(w*fq) * fq)
			sumXL += float32(float32(w*fq) * x[i])
		}
		det := float32(sumW*sumL2) - float32(sumL*sumL)
		if det <= 0 {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / det
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / det
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		var curError float32
		for i := range x {
			diff := float32(thisScale*float32(laux[i])) + thisMin - x[i]
			if useMad {
				diff = abs32(diff)
			} else {
				diff *= diff
			}
			curError += float32(weights[i] * diff)
		}
		if curError < bestError {
			copy(l, laux)
			bestError = curError
			scale = thisScale
			min = thisMin
		}
	}
	return scale, -min
}

// makeQXQuants is ggml's make_qx_quants for the cases Q6_K uses: it fits
// x ≈ scale·(L-nmax) with L in [0, 2·nmax), searching 18 scales around
// -nmax/max and weighting by qw, or by x² when qw is nil (rmse type 1).
func makeQXQuants(nmax int32, x []float32, l []int8, qw []float32) float32 {
	n := len(x)
	l = l[:n]
	max, amax := signedAbsMax(x)
	if amax < groupMaxEps {
		for i := range l {
			l[i] = 0
		}
		return 0
	}
	weight := func(i int) float32 {
		if qw != nil {
			return qw[i]
		}
		return x[i] * x[i]
	}
	iscale := -float32(nmax) / max
	var sumlx, suml2 float32
	for i := range x {
		q := clamp32(nearestInt(float32(iscale*x[i])), -nmax, nmax-1)
		l[i] = int8(q + nmax)
		w, fq := weight(i), float32(q)
		sumlx += w * x[i] * fq
		suml2 += w * fq * fq
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + 0.1*float32(is)) / max
		sumlx, suml2 = 0, 0
		for i := range x {
			q := clamp32(nearestInt(float32(iscale*x[i])), -nmax, nmax-1)
			w, fq := weight(i), float32(q)
			sumlx += w * x[i] * fq
			suml2 += w * fq * fq
		}
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			for i := range x {
				l[i] = int8(clamp32(nearestInt(float32(iscale*x[i])), -nmax, nmax-1) + nmax)
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// quantScalesMinsK4 turns the eight float scales and mins of a Q4_K or Q5_K
// super-block into 6-bit codes relative to the largest of each, stores them
// with d and dmin, and returns the decoded fp16 d and dmin, as
// quantize_row_q4_K_ref and quantize_row_q5_K_ref do.
func quantScalesMinsK4(b []byte, scales, mins *[8]float32) (d, dmin float32) {
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	var ls, lm [8]uint8
	for j := 0; j < 8; j++ {
		// ggml stores the rounded value in a uint8_t before clamping, so a
		// negative code wraps; keep that.
		ls[j] = min(63, uint8(nearestInt(float32(invScale*scales[j]))))
		lm[j] = min(63, uint8(nearestInt(float32(invMin*mins[j]))))
	}
	put16(b[0:], FP32ToFP16(maxScale/63))
	put16(b[2:], FP32ToFP16(maxMin/63))
	packScaleMinK4((*[kScaleSize]byte)(b[4:]), &ls, &lm)
	return f16At(b[0:]), f16At(b[2:])
}

// quantSubBlocksK4 is the first half of the Q4_K and Q5_K reference
// quantizers: it picks a scale and min for each 32-element sub-block of the
// super-block x with make_qkx2_quants, weighting each element by the
// sub-block's RMS plus its magnitude, writes d, dmin and the packed scales
// to b, and requantizes x against the stored scales into l.
func quantSubBlocksK4(b []byte, x *[QKK]float32, l *[QKK]uint8, nmax int32, rmin, rdelta float32, nstep int) {
	var scales, mins [8]float32
	var weights [32]float32
	var laux [32]uint8
	for j := 0; j < 8; j++ {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += v * v
		}
		avX := float32(math.Sqrt(float64(sumX2 / 32)))
		for i, v := range xs {
			weights[i] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, weights[:], l[32*j:32*j+32], laux[:], rmin, rdelta, nstep, false)
	}
	d, dmin := quantScalesMinsK4(b, &scales, &mins)
	s := (*[kScaleSize]byte)(b[4:])
	for j := 0; j < 8; j++ {
		sc, m := scaleMinK4(j, s)
		dl := d * float32(sc)
		if dl == 0 {
			continue // ggml keeps make_qkx2_quants' levels here
		}
		dm := dmin * float32(m)
		for i := 32 * j; i < 32*j+32; i++ {
			l[i] = uint8(clamp32(nearestInt(float32((x[i]+dm)/dl)), 0, nmax))
		}
	}
}
