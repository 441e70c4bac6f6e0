// Command amd64 writes the amd64 assembly kernels of package quant, kv,
// internal/cpu or internal/ssm and the Go declarations of their functions:
//
//	go run ./amd64 -pkg quant -out ../../quant
//
// Every output file pair (foo_amd64.s and foo_amd64.go) comes from one
// build context; the kernels themselves are built by one parameterised Go
// function per family (dot products by block type and width, tiles, the
// activation quantizers, kv's attention kernels) from shared pieces.
// kv also gets dispatch_amd64.go, Go without assembly: the functions that
// pick a multi-row kernel by level, written from the kernels emitted.
package main

import (
	"flag"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
	. "github.com/mmcloughlin/avo/reg"
)

// c is the build context of the file being generated.
var c *build.Context

// outFile is one .s file and its Go declarations, named base_amd64.s and
// base_amd64.go.
type outFile struct {
	base string
	gen  func()
}

// goFile is a Go file without assembly, named base_amd64.go, written
// after the package's outFiles from what they emitted (src gets the
// package name).
type goFile struct {
	base string
	src  func(pkg string) ([]byte, error)
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("amd64: ")
	// avo's build package registers its own flags on flag.CommandLine.
	fs := flag.NewFlagSet("amd64", flag.ExitOnError)
	pkg := fs.String("pkg", "", "target package: quant, kv, cpu (internal/cpu) or ssm (internal/ssm)")
	out := fs.String("out", ".", "directory to write the files to")
	fs.Parse(os.Args[1:])
	var files []outFile
	var goFiles []goFile
	switch *pkg {
	case "quant":
		files = quantFiles()
	case "kv":
		files = kvFiles()
		goFiles = []goFile{{"dispatch", kvDispatch}}
	case "cpu":
		files = cpuFiles()
	case "ssm":
		files = ssmFiles()
	default:
		log.Fatalf("-pkg %q: want quant, kv, cpu or ssm", *pkg)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(*out, name), b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	for _, f := range files {
		s, g, err := generate(*pkg, f)
		if err != nil {
			log.Fatalf("%s: %v", f.base, err)
		}
		write(f.base+"_amd64.s", s)
		write(f.base+"_amd64.go", g)
	}
	for _, f := range goFiles {
		b, err := f.src(*pkg)
		if err != nil {
			log.Fatalf("%s: %v", f.base, err)
		}
		write(f.base+"_amd64.go", b)
	}
}

// generate builds one file pair and returns the assembly and the Go
// declarations.
func generate(pkg string, f outFile) (asm, stubs []byte, err error) {
	c = build.NewContext()
	resetFile()
	c.ConstraintExpr("amd64,!purego")
	f.gen()
	file, err := c.Result()
	if err != nil {
		return nil, nil, err
	}
	if err := pass.Compile.Execute(file); err != nil {
		return nil, nil, err
	}
	cfg := printer.Config{Name: "internal/asm/amd64 (go generate)", Pkg: pkg}
	if asm, err = printer.NewGoAsm(cfg).Print(file); err != nil {
		return nil, nil, err
	}
	if stubs, err = printer.NewStubs(cfg).Print(file); err != nil {
		return nil, nil, err
	}
	return asm, stubs, nil
}

// loadArgs loads Go arguments into registers: the space-separated names
// into regs in order, skipping those whose register is nil.
func loadArgs(names string, regs ...Register) {
	for i, name := range strings.Fields(names) {
		if regs[i] != nil {
			c.Load(c.Param(name), regs[i])
		}
	}
}

// text starts a function that Go calls through a stub declared
// //go:noescape: its pointer arguments do not outlive the call.
func text(name string, a attr.Attribute, sig string, doc ...string) {
	c.Function(name)
	c.Attributes(a)
	c.SignatureExpr(sig)
	c.Pragma("noescape")
	if len(doc) > 0 {
		c.Doc(doc...)
	}
}
