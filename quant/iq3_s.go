package quant

import (
	"math"
	"sync"
)

// IQ3_S super-block of 256 elements, 110 bytes:
//
//	[0:2)     d (fp16)
//	[2:66)    qs: the low eight bits of 64 lattice indexes, one per group
//	          of four elements
//	[66:74)   qh: the ninth index bit; bit k of qh[b] belongs to index k of
//	          sub-block b
//	[74:106)  signs: one bit per element, 1 = negative; byte 4b+l covers
//	          elements 8l..8l+7 of sub-block b, bit j element 8l+j
//	[106:110) scales: 4-bit codes, sub-block b in nibble b%2 (low first)
//	          of byte b/2
//
// Sub-block b is elements 32b..32b+31. Its group k (elements 32b+4k..+3)
// has lattice index qs[8b+k] | ((qh[b]>>k)&1)<<8, and element 32b+4k+e is
//
//	d·(1 + 2·scale_b)·byte e of iq3sGrid[index]·(-1 if its sign bit is set)
//
// Any bytes form a valid block: every 9-bit index is on the lattice.
const iq3_SBytes = 2 + QKK/4 + QKK/32 + QKK/8 + QKK/64

// iq3sSignMask expands a sign byte into eight byte masks: byte j of entry
// s is 0xff when bit j of s is set.
var iq3sSignMask = func() (t [256]uint64) {
	for s := range t {
		for j := 0; j < 8; j++ {
			if s>>j&1 != 0 {
				t[s] |= 0xff << (8 * j)
			}
		}
	}
	return t
}()

func dequantIQ3_S(dst []float32, src []byte) {
	for y, b := range blocks[[QKK]float32, [iq3_SBytes]byte](dst, src) {
		d := f16At(b[0:])
		for ib := 0; ib < 8; ib++ {
			db := d * float32(1+2*int32(b[106+ib/2]>>(4*uint(ib%2))&0xf))
			qh := b[66+ib]
			for k := 0; k < 8; k++ {
				g := iq3sGrid[int(b[2+8*ib+k])|int(qh>>uint(k)&1)<<8]
				s := b[74+4*ib+k/2] >> (4 * uint(k%2))
				for e := 0; e < 4; e++ {
					v := db * float32(g>>(8*uint(e))&0xff)
					if s>>uint(e)&1 != 0 {
						v = -v
					}
					y[32*ib+4*k+e] = v
				}
			}
		}
	}
}

// dotIQ3_S is ggml_vec_dot_iq3_s_q8_K. Per super-block:
//
//	isum = Σ_b (1+2·scale_b) · Σ_{i in b} ±grid_i·y_i   (exact, int32)
//	sum += (d·d_x)·isum
//
// Loop order, to mirror in SIMD: for each sub-block b and each eight
// elements l (two lattice points, indexes 2l and 2l+1), the two grid
// entries form eight unsigned bytes, the sign byte signs[4b+l] negates
// some of them, and the eight products with the Q8_K bytes 32b+8l.. are
// summed. (x86 gathers the 8 grid entries of 32 elements into one
// register with scalar loads, and applies the signs to the activations
// with VPSIGNB, which is exact because Q8_K never holds -128.) Here the
// signs are applied to the grid bytes as (g ^ m) + (m & 1) per byte, which
// cannot carry between bytes because no grid byte is 0.
func dotIQ3_S(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[iq3_SBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		qs := (*[64]byte)(a[2:])
		var isum int32
		for ib := 0; ib < 8; ib++ {
			ls := 1 + 2*int32(a[106+ib/2]>>(4*uint(ib%2))&0xf)
			qh := uint32(a[66+ib])
			var s int32
			for l := 0; l < 4; l++ {
				i0 := uint32(qs[8*ib+2*l]) | (qh>>uint(2*l)&1)<<8
				i1 := uint32(qs[8*ib+2*l+1]) | (qh>>uint(2*l+1)&1)<<8
				g := uint64(iq3sGrid[i0&511]) | uint64(iq3sGrid[i1&511])<<32
				m := iq3sSignMask[a[74+4*ib+l]]
				v := (g ^ m) + (m & 0x0101010101010101)
				y := le64(b[4+32*ib+8*l:])
				s += dot4(v, y) + dot4(v>>32, y>>32)
			}
			isum += ls * s
		}
		sum += f16At(a[0:]) * f32At(b[0:]) * float32(isum)
	}
	return sum
}

// iq3sCode returns the 12-bit code of grid entry g: three bits per
// element, (magnitude-1)/2, element 0 lowest, as ggml's quantizer keys
// its map.
func iq3sCode(g uint32) uint16 {
	var u uint16
	for k := 0; k < 4; k++ {
		u |= uint16((g>>(8*uint(k))&0xff-1)/2) << (3 * uint(k))
	}
	return u
}

// iq3sSearch is what ggml's iq3xs_init_impl(512) builds for the
// quantizer: for each of the 4096 points (four levels 0..7, three bits
// each) the grid index when it is on the lattice, else the list of lattice
// points at the three smallest distinct squared distances from it,
// nearest first and by index within a distance.
type iq3sSearch struct {
	index [4096]int16  // grid index, or -1
	start [4097]uint16 // point u's neighbours are list[start[u]:start[u+1]]
	list  []uint16
}

func (t *iq3sSearch) neighbours(u uint16) []uint16 { return t.list[t.start[u]:t.start[u+1]] }

var (
	iq3sSearchOnce  sync.Once
	iq3sSearchTable *iq3sSearch
)

// iq3sTables returns the search table, built on first use (about 60 KB,
// a few tens of milliseconds) and read-only after.
func iq3sTables() *iq3sSearch {
	iq3sSearchOnce.Do(func() {
		t := new(iq3sSearch)
		for i := range t.index {
			t.index[i] = -1
		}
		for i, g := range iq3sGrid {
			t.index[iq3sCode(g)] = int16(i)
		}
		var d2 [512]int32
		for u := range t.index {
			t.start[u] = uint16(len(t.list))
			if t.index[u] >= 0 {
				continue
			}
			for j, g := range iq3sGrid {
				var d int32
				for k := 0; k < 4; k++ {
					p := int32(2*(u>>(3*k)&7) + 1)
					q := int32(g >> (8 * uint(k)) & 0xff)
					d += (q - p) * (q - p)
				}
				d2[j] = d
			}
			// The three smallest distinct distances, then every point at
			// each of them in index order.
			var dist [3]int32
			nd := 0
			for nd < 3 {
				next := int32(-1)
				for _, d := range d2 {
					if (nd == 0 || d > dist[nd-1]) && (next < 0 || d < next) {
						next = d
					}
				}
				if next < 0 {
					break
				}
				dist[nd] = next
				nd++
			}
			for _, want := range dist[:nd] {
				for j, d := range d2 {
					if d == want {
						t.list = append(t.list, uint16(j))
					}
				}
			}
		}
		t.start[4096] = uint16(len(t.list))
		iq3sSearchTable = t
	})
	return iq3sSearchTable
}

// iq3sBestNeighbour is ggml's iq3_find_best_neighbour: among the
// neighbours of an off-lattice point, the lattice point g minimising
// Σ w_i·(scale·g_i - x_i)²; l receives its levels.
func iq3sBestNeighbour(neighbours []uint16, x, w []float32, scale float32, l []int8) {
	best := float32(math.MaxFloat32)
	gi := -1
	for _, j := range neighbours {
		g := iq3sGrid[j]
		var d2 float32
		for i := 0; i < 4; i++ {
			diff := float32(scale*float32(g>>(8*uint(i))&0xff)) - x[i]
			d2 += float32(float32(w[i]*diff) * diff)
		}
		if d2 < best {
			best = d2
			gi = int(j)
		}
	}
	if gi < 0 {
		return // NaN input; ggml asserts here, keep the levels
	}
	g := iq3sGrid[gi]
	for i := 0; i < 4; i++ {
		l[i] = int8((g>>(8*uint(i))&0xff - 1) / 2)
	}
}

// quantIQ3_S follows quantize_iq3_s without an importance matrix (which
// is also ggml's quantize_row_iq3_s_ref), so its output matches
// llama-quantize's: per 32-element sub-block, signs split off, x²
// weights, 19 candidate scales around max/15, each point of four levels
// snapped to the lattice (or its best neighbour), the best scale refined
// once more, then 4-bit scale codes relative to the largest scale (the
// super-block scale carries ggml's 1.033 fudge factor).
//
// ggml does not advance its qs and signs cursors past a sub-block that is
// all zeros, so the sub-blocks after one are stored one slot early (and
// dequantize wrongly); this reproduces that, for identical files.
func quantIQ3_S(dst []byte, src []float32) {
	const kMaxQ = 8
	tab := iq3sTables()
	var (
		scales             [8]float32
		weight, xval, waux [32]float32
		l, laux            [32]int8
		onGrid, onGridAux  [8]bool
		blockSigns         [4]uint8
	)
	// The loop is written out rather than ranging over blocks: this body
	// is past what the compiler inlines into a range loop.
	for len(src) >= QKK && len(dst) >= iq3_SBytes {
		x := (*[QKK]float32)(src)
		b := (*[iq3_SBytes]byte)(dst)
		*b = [iq3_SBytes]byte{}
		qs := b[2:66]
		qh := b[66:74]
		signs := b[74:106]
		var maxScale float32
		for ib := 0; ib < 8; ib++ {
			xb := x[32*ib : 32*ib+32]
			for i, v := range xb {
				weight[i] = float32(v * v)
				waux[i] = float32(math.Sqrt(float64(weight[i])))
			}
			for k := 0; k < 4; k++ {
				var s uint8
				for i := 0; i < 8; i++ {
					v := xb[8*k+i]
					if v >= 0 {
						xval[8*k+i] = v
					} else {
						xval[8*k+i] = -v
						s |= 1 << uint(i)
					}
				}
				blockSigns[k] = s
			}
			max := xval[0]
			for _, v := range xval[1:] {
				if !(max > v) {
					max = v
				}
			}
			l = [32]int8{}
			if max == 0 {
				scales[ib] = 0
				continue
			}
			var best float32
			scale := max / (2*kMaxQ - 1)
			onGrid = [8]bool{}
			for is := -9; is <= 9; is++ {
				id := float32(2*kMaxQ-1+float32(float32(is)*0.2)) / max
				thisScale := 1 / id
				for k := 0; k < 8; k++ {
					var u uint16
					for i := 0; i < 4; i++ {
						q := clamp32(nearestInt(float32(0.5*float32(float32(id*xval[4*k+i])-1))), 0, kMaxQ-1)
						laux[4*k+i] = int8(q)
						u |= uint16(q) << (3 * uint(i))
					}
					onGridAux[k] = tab.index[u] >= 0
					if !onGridAux[k] {
						iq3sBestNeighbour(tab.neighbours(u), xval[4*k:4*k+4], waux[4*k:4*k+4], thisScale, laux[4*k:4*k+4])
					}
				}
				var sumqx, sumq2 float32
				for i := range xval {
					w, q := weight[i], float32(2*int32(laux[i])+1)
					sumqx += float32(float32(w*xval[i]) * q)
					sumq2 += float32(float32(w*q) * q)
				}
				if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
					scale = sumqx / sumq2
					best = float32(scale * sumqx)
					l = laux
					onGrid = onGridAux
				}
			}
			offGrid := false
			for _, on := range onGrid {
				offGrid = offGrid || !on
			}
			if offGrid && scale > 0 {
				id := 1 / scale
				for k := 0; k < 8; k++ {
					var u uint16
					for i := 0; i < 4; i++ {
						q := clamp32(nearestInt(float32(0.5*float32(float32(id*xval[4*k+i])-1))), 0, kMaxQ-1)
						u |= uint16(q) << (3 * uint(i))
					}
					gi := int(tab.index[u])
					if gi < 0 {
						iq3sBestNeighbour(tab.neighbours(u), xval[4*k:4*k+4], waux[4*k:4*k+4], scale, l[4*k:4*k+4])
						continue
					}
					g := iq3sGrid[gi]
					for i := 0; i < 4; i++ {
						l[4*k+i] = int8((g>>(8*uint(i))&0xff - 1) / 2)
					}
				}
				var sumqx, sumq2 float32
				for i := range xval {
					w, q := weight[i], float32(2*int32(l[i])+1)
					sumqx += float32(float32(w*xval[i]) * q)
					sumq2 += float32(float32(w*q) * q)
				}
				if sumq2 > 0 {
					scale = sumqx / sumq2
				}
			}
			if scale < 0 {
				scale = -scale
				for k := range blockSigns {
					blockSigns[k] = ^blockSigns[k]
				}
			}
			for k := 0; k < 8; k++ {
				var u uint16
				for i := 0; i < 4; i++ {
					u |= uint16(l[4*k+i]) << (3 * uint(i))
				}
				gi := tab.index[u]
				if gi < 0 {
					gi = 0 // unreachable: every level set above is on the lattice
				}
				qs[k] = byte(gi)
				qh[ib] |= byte(gi>>8) << uint(k)
			}
			qs = qs[8:]
			copy(signs, blockSigns[:])
			signs = signs[4:]
			scales[ib] = scale
			if !(maxScale > scale) {
				maxScale = scale
			}
		}
		src = src[QKK:]
		dst = dst[iq3_SBytes:]
		if maxScale == 0 {
			continue
		}
		d := maxScale / 31
		put16(b[0:], FP32ToFP16(float32(d*1.033)))
		id := 1 / d
		for ib := 0; ib < 8; ib += 2 {
			l1 := clamp32(nearestInt(float32(0.5*float32(float32(id*scales[ib])-1))), 0, 15)
			l2 := clamp32(nearestInt(float32(0.5*float32(float32(id*scales[ib+1])-1))), 0, 15)
			b[106+ib/2] = byte(l1 | l2<<4)
		}
	}
}
