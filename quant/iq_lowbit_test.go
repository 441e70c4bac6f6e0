package quant

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"
)

// TestIQGrids pins the lattices of the decode-only IQ types as the kernels
// read them, expanded from iq_grids.txt: each SHA-256 is that of ggml's
// table (ggml-common.h) as little-endian words, and each entry's bytes are
// checked. TestDecodeOnlyKnown ties them to llama.cpp d32676d77.
func TestIQGrids(t *testing.T) {
	words := func(g []uint64) []byte {
		b := make([]byte, 8*len(g))
		for i, w := range g {
			binary.LittleEndian.PutUint64(b[8*i:], w)
		}
		return b
	}
	iq3 := make([]uint64, len(iq3xxsGrid))
	for i, w := range iq3xxsGrid {
		iq3[i] = uint64(w)
	}
	tests := []struct {
		name   string
		words  []uint64
		elems  int
		levels []byte
		sorted bool
		sha256 string
	}{
		{"iq2xxs", iq2xxsGrid[:], 8, []byte{8, 25, 43}, true, "05826b5d3e472a3a78f196be62ac78acf81df0f909626e12ab9fa2a5d490dd54"},
		{"iq2xs", iq2xsGrid[:], 8, []byte{8, 25, 43}, true, "06e47aaca60b4dc1d9b5a3f34540437058a6b142b4d7a59d5ded769b4d1bf1de"},
		{"iq2s", iq2sGrid[:], 8, []byte{8, 25, 43}, true, "e1aa1473412b0552c2174c30ef22ab4073f6a181b85a17056e8249bd2932fd88"},
		{"iq3xxs", iq3, 4, []byte{4, 12, 20, 28, 36, 44, 52, 62}, true, "46e35f5a997efdee6c99ce57854c8a0d4f0ff8ca57e5e8a60c0793ea580acf5d"},
		{"iq1s", iq1sGrid[:], 8, []byte{0xff, 0, 1}, false, "07540ffc1aeaf6ad4d97e96b0fcc765aae39671d4ae4a27bbd0e796fde167c6a"},
	}
	for _, tc := range tests {
		for i, w := range tc.words {
			if tc.sorted && i > 0 && w <= tc.words[i-1] {
				t.Errorf("%s: entry %d (%#x) not above entry %d", tc.name, i, w, i-1)
			}
			for e := 0; e < 8; e++ {
				b := byte(w >> (8 * e))
				if e >= tc.elems {
					if b != 0 {
						t.Errorf("%s: entry %d (%#x) has byte %d", tc.name, i, w, e)
					}
				} else if !bytesContain(tc.levels, b) {
					t.Errorf("%s: entry %d (%#x): byte %d is %d, not one of %v", tc.name, i, w, e, b, tc.levels)
				}
			}
		}
		b := words(tc.words)
		if tc.elems == 4 {
			b = make([]byte, 0, 4*len(tc.words))
			for _, w := range tc.words {
				b = binary.LittleEndian.AppendUint32(b, uint32(w))
			}
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != tc.sha256 {
			t.Errorf("%s: SHA-256 %s, want %s", tc.name, got, tc.sha256)
		}
	}
}

func bytesContain(s []byte, b byte) bool {
	for _, v := range s {
		if v == b {
			return true
		}
	}
	return false
}

// TestIQ2Signs checks the parity rule against ggml's table's first row.
func TestIQ2Signs(t *testing.T) {
	want := []uint8{0, 129, 130, 3, 132, 5, 6, 135, 136, 9, 10, 139, 12, 141, 142, 15}
	for i, w := range want {
		if got := iq2Signs(uint32(i)); got != w {
			t.Errorf("iq2Signs(%d) = %d, want %d", i, got, w)
		}
	}
	for i := uint32(0); i < 128; i++ {
		if got := iq2Signs(i | 0xffffff80); got != iq2Signs(i) {
			t.Errorf("iq2Signs(%#x) reads bits above the seventh", i|0xffffff80)
		}
	}
}

// knownBlocks returns nb deterministic blocks of type t (splitmix64 bytes),
// with any fp16 scale that would be Inf or NaN made finite: llama-quantize
// refuses a tensor holding one.
func knownBlocks(t Type, nb int) []byte {
	s := uint64(0x2545f4914f6cdd1d) + uint64(t)
	b := make([]byte, nb*t.BlockBytes())
	for i := 0; i < len(b); i += 8 {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], z)
		copy(b[i:], w[:])
	}
	bb := t.BlockBytes()
	for o := 0; o < len(b); o += bb {
		if t == IQ1_M {
			if b[o+55]&0x70 == 0x70 && b[o+53]&0xc0 == 0xc0 { // exponent bits 10..14 all set
				b[o+55] &^= 0x40
			}
			continue
		}
		if b[o+1]&0x7c == 0x7c {
			b[o+1] &^= 0x40
		}
	}
	return b
}

// knownDequantSHA256 holds, per decode-only type, the SHA-256 of the
// little-endian float32s llama.cpp (llama-quantize d32676d77
// --allow-requantize … F32) decoded from knownBlocks(t, 256) stored as
// blk.0.attn_q.weight (256×256) of a tiny llama.
var knownDequantSHA256 = map[Type]string{
	IQ2_XXS: "83b4131378c721b44d216fda580a07ebcff7fcc7e5af40d41307111da24106e4",
	IQ2_XS:  "8993e48b8a9e180b929a116d5b26f3c2b83d0420ef68696bcf0a4c991971e3a1",
	IQ2_S:   "71226f0e8a87fa767e4b46e63c34c65c50c749422c63d5fafec53088fed351fd",
	IQ3_XXS: "cba5b51abf6b216780925bcf1c3792dac5f46cfe08753b92bd169d325ce712a6",
	IQ1_S:   "9d30abde9861b767b22485a0be1136e6427f7cf6d3692dc5b5fb1284688f97b3",
	IQ1_M:   "b52587e6234e7a5f41d16e78dbc2526a9db2e07e819587aa2101bc271f797655",
}

func TestDecodeOnlyKnown(t *testing.T) {
	for _, typ := range decodeOnly {
		w := knownBlocks(typ, 256)
		y := make([]float32, 256*QKK)
		if err := Dequantize(typ, y, w); err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		var b [4]byte
		for _, v := range y {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			h.Write(b[:])
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != knownDequantSHA256[typ] {
			t.Errorf("%v: SHA-256 of the decoded floats %s, want llama.cpp's %s", typ, got, knownDequantSHA256[typ])
		}
	}
}

// TestParseGrids: a table whose header or codes do not parse, or whose
// count is wrong, is left out rather than half read.
func TestParseGrids(t *testing.T) {
	g := parseGrids("# c\ntwo 2 2 2 1 2 3\n0004 0001\nbroken 2 2 2 1 2\n0001 zz\nshort 3 1 2 5 6\n0 1\n")
	if w := g["two"]; len(w) != 2 || w[0] != 0x0201 || w[1] != 0x0102 {
		t.Errorf("two = %#x, want [0x201 0x102]", w)
	}
	for _, name := range []string{"broken", "short"} {
		if w, ok := g[name]; ok {
			t.Errorf("%s = %#x, want left out", name, w)
		}
	}
}
