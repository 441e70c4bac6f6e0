package quant

import "encoding/binary"

// Helpers for the portable kernels, which treat eight quants as one
// uint64 so that unpacking bit fields costs a few operations per eight
// elements rather than per element.

// le32 reads a little-endian uint32; b must hold at least 4 bytes.
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// le64 reads a little-endian uint64; b must hold at least 8 bytes.
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// le64x4 reads four little-endian uint64s; b must hold at least 32 bytes.
func le64x4(b []byte) [4]uint64 {
	b = b[:32]
	return [4]uint64{le64(b[0:]), le64(b[8:]), le64(b[16:]), le64(b[24:])}
}

// Byte-lane constants.
const (
	lanes01 = 0x0101010101010101
	lanes03 = 0x0303030303030303
)

// dot4 returns Σ int8(byte k of a)·int8(byte k of b) over the low four
// bytes. (An eight-byte version would not be inlined; callers write
// dot4(a, b) + dot4(a>>32, b>>32).)
func dot4(a, b uint64) int32 {
	return int32(int8(a))*int32(int8(b)) +
		int32(int8(a>>8))*int32(int8(b>>8)) +
		int32(int8(a>>16))*int32(int8(b>>16)) +
		int32(int8(a>>24))*int32(int8(b>>24))
}
