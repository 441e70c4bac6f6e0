package quant

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// knownBytesSHA256 holds, per weight type, the SHA-256 of the bytes
// llama.cpp's llama-quantize (d32676d77, no importance matrix) wrote for
// knownInput(256·256) stored as a 256×256 F32 tensor (blk.0.attn_q.weight
// of a tiny llama, quantized with the file types Q2_K, Q3_K_M, IQ4_XS and
// IQ4_NL, all of which keep attn_q at their base type).
var knownBytesSHA256 = map[Type]string{
	Q2_K:   "8d3543a7a254d07de41819cf5948b120df6367a81891352a33d5c5fb5e8e6c79",
	Q3_K:   "0cbca4b7104ba9db2b19ee8f069caa1269c4c9dafc7a7ee1b30091809005d8d8",
	IQ4_XS: "3f64f90bd1e0e06112d6c3d2af388c72278d7c4db8593e1a3a75ee4465e6df07",
	IQ4_NL: "ad0056034e02a32a8d789e26dbc593c79f32c14dbbe65a0110d9435bd3273735",
}

// knownInput returns n deterministic test values, 256-element blocks of
// varied character: normal-ish, with outliers, zero, constant, one-signed,
// sparse, tiny and with groups of very different magnitude. It uses only
// exact integer arithmetic and float64 sums (no transcendental functions),
// so every platform produces the same floats.
func knownInput(n int) []float32 {
	s := uint64(0x9e3779b97f4a7c15)
	next := func() float64 { // uniform in [0, 1), splitmix64
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		return float64(z>>11) / (1 << 53)
	}
	normal := func() float64 { // Irwin–Hall: mean 0, variance 1
		var t float64
		for i := 0; i < 12; i++ {
			t += next()
		}
		return t - 6
	}
	x := make([]float32, n)
	for b := 0; b*QKK < n; b++ {
		blk := x[b*QKK : min(n, (b+1)*QKK)]
		for i := range blk {
			v := normal() * 0.05
			switch b % 10 {
			case 1:
				if i%37 == 3 {
					v *= 12
				}
			case 2:
				v = 0
			case 3:
				v = 0.02
			case 4:
				v = 0.1*next() + 0.01
			case 5:
				v = -0.1*next() - 0.01
			case 6:
				if i%16 != 5 {
					v = 0
				}
			case 7:
				v *= 1e-5
			case 8:
				v *= float64(int(1)<<(i/32)) / 16
			case 9:
				if i%32 < 16 {
					v = 0
				}
			}
			blk[i] = float32(v)
		}
	}
	return x
}

// checkKnownBytes quantizes knownInput with QuantizeRow, row by row, and
// compares the bytes with llama-quantize's.
func checkKnownBytes(t *testing.T, typ Type) {
	t.Helper()
	want, ok := knownBytesSHA256[typ]
	if !ok {
		t.Fatalf("no known bytes for %v", typ)
	}
	const n = 256
	x := knownInput(n * n)
	rb, _ := typ.RowBytes(n)
	q := make([]byte, n*int(rb))
	for r := 0; r < n; r++ {
		if err := QuantizeRow(typ, q[r*int(rb):(r+1)*int(rb)], x[r*n:(r+1)*n]); err != nil {
			t.Fatal(err)
		}
	}
	sum := sha256.Sum256(q)
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("%v: SHA-256 of the quantized rows %s, llama-quantize's %s", typ, got, want)
	}
}
