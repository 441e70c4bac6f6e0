package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
)

// A File collects the functions of one generated assembly file and writes
// it with its Go declarations.
type File struct {
	Pkg   string // Go package name
	Name  string // base name: Name_arm64.s and Name_arm64.go
	Doc   string // what the file holds, for the header of both files
	Funcs []*Func
}

// Arg is an argument or result of an assembly function.
type Arg struct {
	Name string
	Type string // Go type: *byte, int, float32, bool, …
}

func (a Arg) size() int {
	switch a.Type {
	case "float32", "int32", "uint32":
		return 4
	case "bool", "byte", "int8", "uint8":
		return 1
	}
	return 8
}

// Func is one TEXT symbol.
type Func struct {
	Name    string
	Doc     string
	Args    []Arg
	Results []Arg

	lines []string
	// Instruction counting for the README: the instructions between Loop
	// and EndLoop, and how many blocks (of Unit elements) one pass covers.
	inLoop     bool
	loopInsts  int
	loopBlocks int
	Unit       string // what a block is, e.g. "32 elements × 4 rows"
	Counted    bool
}

// NewFunc starts a function in f.
func (f *File) NewFunc(name, doc string, args, results []Arg) *Func {
	fn := &Func{Name: name, Doc: doc, Args: args, Results: results}
	f.Funcs = append(f.Funcs, fn)
	return fn
}

// offsets returns the frame offsets of the arguments and results, laid out
// as Go's ABI0 does: each aligned to its size, results starting at a
// pointer-aligned offset after the arguments (without results the frame
// ends with the last argument, as go vet expects).
func (fn *Func) offsets() (args, results []int, size int) {
	off := 0
	for _, a := range fn.Args {
		s := a.size()
		off = (off + s - 1) / s * s
		args = append(args, off)
		off += s
	}
	if len(fn.Results) > 0 {
		off = (off + 7) / 8 * 8
	}
	for _, a := range fn.Results {
		s := a.size()
		off = (off + s - 1) / s * s
		results = append(results, off)
		off += s
	}
	return args, results, off
}

// Arg is the assembly operand of argument name, e.g. "w+0(FP)".
func (fn *Func) Arg(name string) string {
	args, results, _ := fn.offsets()
	for i, a := range fn.Args {
		if a.Name == name {
			return fmt.Sprintf("%s+%d(FP)", a.Name, args[i])
		}
	}
	for i, a := range fn.Results {
		if a.Name == name {
			return fmt.Sprintf("%s+%d(FP)", a.Name, results[i])
		}
	}
	panic(fn.Name + ": no argument " + name)
}

// I emits encoded instructions.
func (fn *Func) I(insts ...Inst) {
	for _, in := range insts {
		fn.lines = append(fn.lines, fmt.Sprintf("\tWORD $0x%08x // %s", in.Word, in.Text))
		fn.count()
	}
}

// Op emits one instruction in Go's assembler syntax.
func (fn *Func) Op(format string, args ...any) {
	fn.lines = append(fn.lines, "\t"+fmt.Sprintf(format, args...))
	fn.count()
}

// Load moves the named arguments (space-separated) into R registers regs,
// in order; a name ending in "?" is passed over when the function has no
// such argument (the int8 rows' scales).
func (fn *Func) Load(names string, regs ...XReg) {
	for i, name := range strings.Fields(names) {
		if opt, ok := strings.CutSuffix(name, "?"); ok {
			if !fn.hasArg(opt) {
				continue
			}
			name = opt
		}
		fn.Op("MOVD %s, R%d", fn.Arg(name), regs[i])
	}
}

// LoadF moves the named float32 arguments into F registers regs.
func (fn *Func) LoadF(names string, regs ...VReg) {
	for i, name := range strings.Fields(names) {
		fn.Op("FMOVS %s, F%d", fn.Arg(name), regs[i])
	}
}

func (fn *Func) hasArg(name string) bool {
	for _, a := range fn.Args {
		if a.Name == name {
			return true
		}
	}
	return false
}

// Chain sets R(dsts[0]) to R(base) and each further one to the one before
// plus R(step): the starts of consecutive rows.
func (fn *Func) Chain(base, step XReg, dsts ...XReg) {
	fn.Op("MOVD R%d, R%d", base, dsts[0])
	for i := 1; i < len(dsts); i++ {
		fn.Op("ADD R%d, R%d, R%d", step, dsts[i-1], dsts[i])
	}
}

// CountDown takes one off R(r) and branches to label while it is not
// zero.
func (fn *Func) CountDown(r XReg, label string) {
	fn.Op("SUBS $1, R%d, R%d", r, r)
	fn.Op("BNE %s", label)
}

// Repeat emits a loop at label: body, then CountDown(r, label).
func (fn *Func) Repeat(label string, r XReg, body func()) {
	fn.Label(label)
	body()
	fn.CountDown(r, label)
}

// Return emits the label done, where the early exits branch, and RET.
func (fn *Func) Return() {
	fn.Label("done")
	fn.Op("RET")
}

// Label emits a label.
func (fn *Func) Label(name string) { fn.lines = append(fn.lines, name+":") }

// Comment emits a comment line.
func (fn *Func) Comment(format string, args ...any) {
	fn.lines = append(fn.lines, "\t// "+fmt.Sprintf(format, args...))
}

func (fn *Func) count() {
	if fn.inLoop {
		fn.loopInsts++
	}
}

// Loop marks the start of the main loop, whose one pass handles blocks
// blocks of unit (for the instruction counts in COUNTS.md).
func (fn *Func) Loop(label string, blocks int, unit string) {
	check(!fn.Counted && !fn.inLoop, "%s: one counted loop per function", fn.Name)
	fn.Label(label)
	fn.inLoop = true
	fn.loopBlocks = blocks
	fn.Unit = unit
}

// EndLoop marks the end of the main loop; the branch back must already be
// emitted.
func (fn *Func) EndLoop() {
	fn.inLoop = false
	fn.Counted = true
}

// PerBlock is the instruction count of one pass of the main loop per block.
func (fn *Func) PerBlock() float64 { return float64(fn.loopInsts) / float64(fn.loopBlocks) }

const header = "// Code generated by \"go run ./arm64\" in internal/asm; DO NOT EDIT.\n"

// Write writes dir/Name_arm64.s and dir/Name_arm64.go.
func (f *File) Write(dir string) error {
	var s bytes.Buffer
	s.WriteString(header)
	s.WriteString("\n//go:build !purego\n\n")
	writeDoc(&s, f.Doc)
	s.WriteString("\n#include \"textflag.h\"\n")
	for _, fn := range f.Funcs {
		_, _, size := fn.offsets()
		fmt.Fprintf(&s, "\n// func %s\n", fn.signature())
		fmt.Fprintf(&s, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", fn.Name, size)
		for _, l := range fn.lines {
			s.WriteString(l)
			s.WriteByte('\n')
		}
	}
	if err := os.WriteFile(filepath.Join(dir, f.Name+"_arm64.s"), s.Bytes(), 0o644); err != nil {
		return err
	}

	var g bytes.Buffer
	g.WriteString(header)
	g.WriteString("\n//go:build !purego\n\n")
	writeDoc(&g, f.Doc)
	fmt.Fprintf(&g, "\npackage %s\n", f.Pkg)
	for _, fn := range f.Funcs {
		g.WriteByte('\n')
		writeDoc(&g, fn.Doc)
		fmt.Fprintf(&g, "//\n//go:noescape\nfunc %s\n", fn.signature())
	}
	src, err := format.Source(g.Bytes())
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", f.Name, err, g.Bytes())
	}
	return os.WriteFile(filepath.Join(dir, f.Name+"_arm64.go"), src, 0o644)
}

func (fn *Func) signature() string {
	list := func(as []Arg) string {
		var p []string
		for _, a := range as {
			p = append(p, a.Name+" "+a.Type)
		}
		return strings.Join(p, ", ")
	}
	s := fn.Name + "(" + list(fn.Args) + ")"
	switch len(fn.Results) {
	case 0:
	case 1:
		s += " " + fn.Results[0].Type
	default:
		s += " (" + list(fn.Results) + ")"
	}
	return s
}

// writeDoc writes text as // comment lines, wrapped at about 76 columns.
func writeDoc(b *bytes.Buffer, text string) {
	if text == "" {
		return
	}
	line := "//"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 76 && line != "//" {
			b.WriteString(line + "\n")
			line = "//"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
}
