package quant

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// knownBytesSHA256 holds, per weight type, the SHA-256 of the bytes
// llama.cpp's llama-quantize (d32676d77, no importance matrix) wrote for
// knownInput(256·256) stored as a 256×256 F32 tensor (blk.0.attn_q.weight
// of a tiny llama, quantized with the file types Q2_K, Q3_K_M, IQ4_XS,
// IQ4_NL, IQ3_S, TQ1_0 and TQ2_0, all of which keep attn_q at their base
// type); for
// MXFP4, those it wrote for blk.0.ffn_gate_exps.weight, [256, 32, 8], of a
// tiny qwen3moe holding the same values, with the file type MXFP4_MOE.
var knownBytesSHA256 = map[Type]string{
	Q2_K:   "d3100bc0b6e94b8c3fcf7feaff927f6f73631f0695a17ceac8c5adac67570b56",
	Q3_K:   "a0dc5a06f8f9b41937c6fb6c702e480bb66b349d8e2f25a42b637bb4e94f44f6",
	IQ4_XS: "1a88cb937e2e30bbb8e7959c81e17ff49b099487d656ec60429c1acf5224deca",
	IQ4_NL: "17daf9339f57a26221d7ce9210450acb2aebeefc49dcd27d5d7f4116111d4f4b",
	IQ3_S:  "6afad393feded17f45d28c45be6a7e9e640236b5bfb05a8bae1bb0adbdae08df",
	MXFP4:  "2c73d1beaaa13825c8e781c2a742813326426673c17c52a14ec58cfb7872a403",
	TQ1_0:  "08f0cdd62d5ce69e90d73be52542d48916e6aea486e053635b6d6be33bb4912f",
	TQ2_0:  "c8a263e6074144cf47fc78341d9f69226f19ac3a53ddda6ad35868e10c50deac",
}

// knownInput returns n deterministic test values, 256-element blocks of
// varied character: normal-ish, with outliers, zero, constant, one-signed,
// sparse (one with an all-zero 32-element sub-block), tiny and with groups
// of very different magnitude. It uses only
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
				if i%32 < 16 || i/32 == 2 {
					v = 0 // sub-block 2 all zeros
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
