package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// evexOnly matches what an AVX2 kernel must not contain, because only
// EVEX (AVX-512) encodes it: registers Z, K, X16-X31 and Y16-Y31,
// broadcast and masking suffixes, and the instructions without a VEX
// form. A test on an AVX-512 machine cannot see such a slip by running
// the kernel (LLM_CPU=avx2 caps the choice, not the CPU), so the
// generated source is read instead.
var evexOnly = regexp.MustCompile(`\b(Z\d+|K[1-7]|[XY](1[6-9]|2\d|3[01]))\b|\.(BCST|Z)\b|^\s*(VP(AND|ANDN|OR|XOR)[DQ]|VPTERNLOG[DQ]|VMOVDQ[AU](8|16|32|64)|VPMOV(DW|DB|QB|QW|QD|WB|SDW|USDW)|VPERM[IT]2|VPERM[BW]\b|VPDPBUSDS?|VPDPWSSDS?|V(EXTRACT|INSERT)[FI](32X4|64X2|32X8|64X4)|VBROADCAST[FI](32X[248]|64X[24])|VPS[LR][LA]VW|VPMULLQ|KMOV|VPCOMPRESS|VPEXPAND|VGF2P8)|^\s*VPBROADCAST[BWDQ]\s+[A-Z0-9]*[^XYZ0-9 ][A-Z0-9]*,`)

// TestAVX2KernelsAreVEX checks that every kernel named AVX2 in the
// generated assembly of quant, kv and internal/ssm uses VEX-encodable instructions
// only, so that it runs on the CPUs without AVX-512 it exists for.
func TestAVX2KernelsAreVEX(t *testing.T) {
	var files []string
	for _, dir := range []string{"../../../quant", "../../../kv", "../../ssm"} {
		fs, err := filepath.Glob(filepath.Join(dir, "*_amd64.s"))
		if err != nil || len(fs) == 0 {
			t.Fatalf("no assembly files in %s: %v", dir, err)
		}
		files = append(files, fs...)
	}
	kernels := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, requires := "", ""
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "// Requires:") {
				requires = line
				continue
			}
			if strings.HasPrefix(line, "TEXT ") {
				name, _, _ = strings.Cut(strings.TrimPrefix(strings.Fields(line)[1], "·"), "(")
				if !strings.Contains(name, "AVX2") {
					name = ""
					continue
				}
				kernels++
				// avo lists the extensions a function's instructions need.
				if strings.Contains(requires, "AVX512") {
					t.Errorf("%s:%d: %s, an AVX2 kernel, %s", f, i+1, name, strings.TrimPrefix(requires, "// "))
				}
				continue
			}
			code, _, _ := strings.Cut(line, "//")
			if name != "" && evexOnly.MatchString(code) {
				t.Errorf("%s:%d: %s, an AVX2 kernel, has an EVEX-only instruction: %s", f, i+1, name, strings.TrimSpace(code))
			}
		}
	}
	if kernels == 0 {
		t.Fatal("no AVX2 kernels found")
	}
}
