package quant

import (
	_ "embed"
	"math/bits"
	"strconv"
	"strings"
)

// The lattices of the IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S and IQ1_M
// types (ggml's iq2xxs_grid, iq2xs_grid, iq2s_grid, iq3xxs_grid and
// iq1s_grid), as the kernels read them: byte e of an entry is element e
// of the point, a magnitude (8, 25 or 43 in the IQ2 grids, 4…62 in
// IQ3_XXS's) or, in IQ1's, −1, 0 or 1 as a signed byte. They are data, so
// they live in iq_grids.txt as codes (a few bits an element) and are
// expanded once, at init.
//
// TestIQGrids pins each table (SHA-256 of ggml's, as little-endian
// words); TestDecodeOnlyKnown ties them to llama.cpp d32676d77, which
// decoded random blocks using every index to the same floats, bit for bit.
var (
	iq2xxsGrid [256]uint64
	iq2xsGrid  [512]uint64
	iq2sGrid   [1024]uint64
	iq3xxsGrid [256]uint32
	iq1sGrid   [2048]uint64
)

//go:embed iq_grids.txt
var iqGridsText string

func init() {
	g := parseGrids(iqGridsText)
	copy(iq2xxsGrid[:], g["iq2xxs"])
	copy(iq2xsGrid[:], g["iq2xs"])
	copy(iq2sGrid[:], g["iq2s"])
	copy(iq1sGrid[:], g["iq1s"])
	for i, w := range g["iq3xxs"] {
		if i < len(iq3xxsGrid) {
			iq3xxsGrid[i] = uint32(w)
		}
	}
}

// parseGrids reads iq_grids.txt: after comment lines, each table is a
// header "name points elements bits level…" and then its points' codes in
// hexadecimal. A table that does not parse is left out (and its grid stays
// zero, which the tests report).
func parseGrids(text string) map[string][]uint64 {
	grids := map[string][]uint64{}
	var (
		name   string
		elems  int
		nbits  uint
		levels []byte
		words  []uint64
		want   int
	)
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) >= 5 && !isHex(f[0]) {
			name, words, levels = f[0], nil, nil
			want, _ = strconv.Atoi(f[1])
			elems, _ = strconv.Atoi(f[2])
			b, _ := strconv.Atoi(f[3])
			nbits = uint(b)
			for _, l := range f[4:] {
				v, _ := strconv.Atoi(l)
				levels = append(levels, byte(int8(v)))
			}
			continue
		}
		for _, h := range f {
			c, err := strconv.ParseUint(h, 16, 16)
			if err != nil || name == "" {
				name = ""
				break
			}
			var w uint64
			for e := 0; e < elems; e++ {
				i := int(c>>(nbits*uint(e))) & (1<<nbits - 1)
				if i < len(levels) {
					w |= uint64(levels[i]) << (8 * uint(e))
				}
			}
			words = append(words, w)
		}
		if name != "" && len(words) == want {
			grids[name] = words
		}
	}
	return grids
}

func isHex(s string) bool {
	_, err := strconv.ParseUint(s, 16, 64)
	return err == nil
}

// iq2Signs is ggml's ksigns_iq2xs: the eight signs of a group from the
// seven stored bits (the low seven of s7), the eighth making the count of
// minus signs even.
func iq2Signs(s7 uint32) uint8 {
	s := uint8(s7 & 127)
	return s | uint8(bits.OnesCount8(s)&1)<<7
}
