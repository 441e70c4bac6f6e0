package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// TestRawInstructions checks that the instructions avo lacks, emitted by
// raw, pass avo's passes and that the Go assembler accepts every form the
// generators use (registers of each width, memory sources), and that
// their register uses are declared: with virtual registers, the
// accumulator (read and written) and both sources, all live, get three
// different physical registers.
func TestRawInstructions(t *testing.T) {
	f := outFile{"raw", func() {
		text("rawForms", 0, "func()")
		VPDPBUSD(Z1, Z0, Z2)
		VPDPBUSD(Y1, Y0, Y2)
		VPDPBUSD(mem(RDI, 2), Y0, Y2)
		VPDPBUSD(mem(RDI, 0), Z23, Z3)
		VPDPBUSDMask(mem(RDI, 4), Z18, K1, Z27)
		VPDPBUSDBcast(mem(RDI, 4), Y24, Y16)
		VPDPWSSDBcast(mem(R8, 8), Y13, Y17)
		VPDPWSSD(Z9, Z7, Z12)
		VPDPWSSD(Y9, Y7, Y12)
		VGF2P8AFFINEQB(U8(0), Z19, Z0, Z0)
		c.VZEROUPPER()
		c.RET()
		text("rawVirtual", 0, "func()")
		a, b, acc := c.ZMM(), c.ZMM(), c.ZMM()
		c.VMOVDQU64(mem(RSI, 0), a)
		c.VMOVDQU64(mem(RSI, 64), b)
		c.VMOVDQU64(mem(RSI, 128), acc)
		VPDPBUSD(b, a, acc)
		c.VMOVDQU64(acc, mem(RDI, 0))
		c.VMOVDQU64(a, mem(RDI, 64))
		c.VMOVDQU64(b, mem(RDI, 128))
		c.VZEROUPPER()
		c.RET()
	}}
	asm, stubs, err := generate("rawtest", f)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"VPDPBUSD Z1, Z0, Z2", "VPDPBUSD 2(DI), Y0, Y2", "VPDPBUSD 4(DI), Z18, K1, Z27", "VPDPBUSD.BCST 4(DI), Y24, Y16", "VPDPWSSD.BCST 8(R8), Y13, Y17", "VPDPWSSD Z9, Z7, Z12", "VGF2P8AFFINEQB $0x00, Z19, Z0, Z0"} {
		if !strings.Contains(strings.Join(strings.Fields(string(asm)), " "), want) {
			t.Errorf("generated assembly lacks %q:\n%s", want, asm)
		}
	}
	_, virt, _ := strings.Cut(string(asm), "rawVirtual")
	found := false
	for _, l := range strings.Split(virt, "\n") {
		fs := strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
		if len(fs) == 4 && fs[0] == "VPDPBUSD" {
			found = true
			if fs[1] == fs[2] || fs[2] == fs[3] || fs[1] == fs[3] {
				t.Errorf("virtual registers share a physical one: %s", l)
			}
		}
	}
	if !found {
		t.Errorf("no VPDPBUSD in rawVirtual:\n%s", virt)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "raw_amd64.s"), asm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raw_amd64.go"), stubs, 0o644); err != nil {
		t.Fatal(err)
	}
	inc := filepath.Join(runtime.GOROOT(), "pkg", "include")
	cmd := exec.Command("go", "tool", "asm", "-I", inc, "-p", "rawtest", "-o", filepath.Join(dir, "raw.o"), filepath.Join(dir, "raw_amd64.s"))
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go tool asm rejects the raw instructions: %v\n%s", err, out)
	}
}

// TestGenerateDeterministic: two runs give the same bytes, so the CI
// freshness check compares like with like.
func TestGenerateDeterministic(t *testing.T) {
	for _, files := range [][]outFile{quantFiles(), kvFiles()} {
		for _, f := range files {
			a1, s1, err := generate("x", f)
			if err != nil {
				t.Fatal(err)
			}
			a2, s2, _ := generate("x", f)
			if string(a1) != string(a2) || string(s1) != string(s2) {
				t.Errorf("%s: two runs differ", f.base)
			}
		}
	}
}
