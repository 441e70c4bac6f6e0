package quant

import "math"

// Prototype: Q4_0 rows repacked eight at a time. For groups of eight rows
// and each block column, 144 bytes: the eight rows' F16 scales, then four
// 32-byte chunks, chunk c holding bytes 4c..4c+3 of each row's 16 code
// bytes (row r at 4r): low nibbles elements 4c..4c+3, high ones
// 16+4c..16+4c+3.

// RepackQ4_0x8 repacks rows (a multiple of 8) Q4_0 rows of nb blocks.
func RepackQ4_0x8(dst, src []byte, rows, nb int) {
	const bb = 18
	for g := 0; g < rows/8; g++ {
		for b := 0; b < nb; b++ {
			o := dst[(g*nb+b)*144:]
			for r := 0; r < 8; r++ {
				blk := src[((8*g+r)*nb+b)*bb:]
				o[2*r], o[2*r+1] = blk[0], blk[1]
				for ch := 0; ch < 4; ch++ {
					copy(o[16+32*ch+4*r:16+32*ch+4*r+4], blk[2+4*ch:2+4*ch+4])
				}
			}
		}
	}
}

// x8Pre splits Q8_0 activations into their quants and per block d_x and
// 8·d_x·Σy.
func x8Pre(xq []byte, pre []float32, x []byte, nb int) {
	for b := 0; b < nb; b++ {
		blk := x[b*34:]
		d := FP16ToFP32(uint16(blk[0]) | uint16(blk[1])<<8)
		var s int32
		for i := 0; i < 32; i++ {
			s += int32(int8(blk[2+i]))
		}
		copy(xq[b*32:b*32+32], blk[2:34])
		pre[2*b] = d
		pre[2*b+1] = 8 * d * float32(s)
	}
}

// rowQ4_0x8Go is the pure-Go twin of rowQ4_0x8VNNI.
func rowQ4_0x8Go(w []byte, groups int, xq []byte, pre []float32, nb int, out []float32) {
	for g := 0; g < groups; g++ {
		var acc [8]float32
		for b := 0; b < nb; b++ {
			blk := w[(g*nb+b)*144:]
			x := xq[b*32:]
			for r := 0; r < 8; r++ {
				var is int32
				for ch := 0; ch < 4; ch++ {
					for k := 0; k < 4; k++ {
						q := blk[16+32*ch+4*r+k]
						is += int32(q&15)*int32(int8(x[4*ch+k])) + int32(q>>4)*int32(int8(x[16+4*ch+k]))
					}
				}
				f := float32(math.FMA(float64(is), float64(pre[2*b]), -float64(pre[2*b+1])))
				dw := FP16ToFP32(uint16(blk[2*r]) | uint16(blk[2*r+1])<<8)
				acc[r] = float32(math.FMA(float64(dw), float64(f), float64(acc[r])))
			}
		}
		copy(out[8*g:], acc[:])
	}
}
