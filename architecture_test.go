package llm_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/lowmem/llm"

// documentedImports parses the import table of docs/ARCHITECTURE.md: rows
// "| package | a, b, c |" after the header "| package | imports (ours) |".
func documentedImports(t *testing.T) (table map[string][]string, order []string) {
	t.Helper()
	f, err := os.Open("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table = map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !in {
			in = line == "| package | imports (ours) |"
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 2 || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") {
			continue
		}
		pkg := strings.TrimSpace(cells[0])
		var deps []string
		for d := range strings.SplitSeq(cells[1], ",") {
			if d = strings.TrimSpace(d); d != "" && d != "nothing" {
				deps = append(deps, d)
			}
		}
		slices.Sort(deps)
		if _, dup := table[pkg]; dup {
			t.Errorf("ARCHITECTURE.md lists %s twice", pkg)
		}
		table[pkg] = deps
		order = append(order, pkg)
	}
	if len(table) == 0 {
		t.Fatal(`ARCHITECTURE.md has no "| package | imports (ours) |" table`)
	}
	return table, order
}

// sourceImports reads the imports of this module's packages from their
// non-test Go files (every build tag), named as the table names them:
// "llm" for the root, otherwise the path below the module.
func sourceImports(t *testing.T) map[string][]string {
	t.Helper()
	short := func(p string) string {
		if p == modulePath {
			return "llm"
		}
		return strings.TrimPrefix(p, modulePath+"/")
	}
	pkgs := map[string]map[string]bool{}
	err := eachSourceFile(parser.ImportsOnly, func(p string, f *ast.File) {
		pkg := short(path.Join(modulePath, filepath.ToSlash(filepath.Dir(p))))
		if pkgs[pkg] == nil {
			pkgs[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			q, _ := strconv.Unquote(imp.Path.Value)
			if q == modulePath || strings.HasPrefix(q, modulePath+"/") {
				pkgs[pkg][short(q)] = true
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for pkg, deps := range pkgs {
		out[pkg] = slices.Sorted(func(yield func(string) bool) {
			for d := range deps {
				if !yield(d) {
					return
				}
			}
		})
	}
	return out
}

// eachSourceFile parses every non-test Go file of this module (every build
// tag; not nested modules, testdata, or directories starting with "." or
// "_") with mode and calls f with its path and syntax.
func eachSourceFile(mode parser.Mode, f func(path string, file *ast.File)) error {
	fset := token.NewFileSet()
	return filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); p != "." && err == nil {
				return filepath.SkipDir // a nested module: not this one
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, p, nil, mode)
		if err != nil {
			return err
		}
		f(p, file)
		return nil
	})
}

// TestArchitectureImports checks that docs/ARCHITECTURE.md's import table
// lists every package of the module with exactly the packages it imports,
// and in an order where every import points up the table.
func TestArchitectureImports(t *testing.T) {
	doc, order := documentedImports(t)
	src := sourceImports(t)
	for i, pkg := range order {
		for _, d := range doc[pkg] {
			if !slices.Contains(order[:i], d) {
				t.Errorf("ARCHITECTURE.md: %s imports %s, which is not listed above it", pkg, d)
			}
		}
	}
	for pkg, deps := range src {
		want, ok := doc[pkg]
		switch {
		case !ok:
			t.Errorf("package %s (imports %v) is missing from ARCHITECTURE.md's table", pkg, deps)
		case !slices.Equal(deps, want):
			t.Errorf("%s imports %v; ARCHITECTURE.md says %v", pkg, deps, want)
		}
	}
	for pkg := range doc {
		if _, ok := src[pkg]; !ok {
			t.Errorf("ARCHITECTURE.md lists %s, which is not a package of the module", pkg)
		}
	}
}

// TestRootFilesAcyclic checks issue #8's rule for the root package: its
// files use each other's private helpers (unexported functions, methods,
// types, variables and constants, by name) in one direction only, so the
// public face reads file by file with no circle between them.
func TestRootFilesAcyclic(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	declared := map[string]string{} // private name → the file declaring it
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
		for _, id := range privateDecls(f) {
			declared[id] = name
		}
	}
	uses := map[string][]string{} // file → the files whose helpers it uses
	for name, f := range files {
		imported := map[string]bool{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			imported[path.Base(p)] = true
			if im.Name != nil {
				imported[im.Name.Name] = true
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && imported[x.Name] {
					return false // a package's member, not ours
				}
			case *ast.Ident:
				if d, ok := declared[n.Name]; ok && d != name && !slices.Contains(uses[name], d) {
					uses[name] = append(uses[name], d)
				}
			}
			return true
		})
	}
	// Depth-first search for a circle, reporting the first one's files.
	state := map[string]int{} // 1 on the path, 2 done
	var path []string
	var visit func(string) bool
	visit = func(f string) bool {
		state[f] = 1
		path = append(path, f)
		for _, d := range uses[f] {
			if state[d] == 1 {
				i := slices.Index(path, d)
				t.Errorf("root files use each other's private helpers in a circle: %s → %s", strings.Join(path[i:], " → "), d)
				return true
			}
			if state[d] == 0 && visit(d) {
				return true
			}
		}
		path = path[:len(path)-1]
		state[f] = 2
		return false
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if state[name] == 0 && visit(name) {
			return
		}
	}
}

// privateDecls lists f's unexported top-level names, its methods' and its
// interfaces' methods' included.
func privateDecls(f *ast.File) []string {
	var ids []*ast.Ident
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			ids = append(ids, d.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					ids = append(ids, s.Name)
					if it, ok := s.Type.(*ast.InterfaceType); ok {
						for _, m := range it.Methods.List {
							ids = append(ids, m.Names...)
						}
					}
				case *ast.ValueSpec:
					ids = append(ids, s.Names...)
				}
			}
		}
	}
	var names []string
	for _, id := range ids {
		if !id.IsExported() && id.Name != "_" {
			names = append(names, id.Name)
		}
	}
	return names
}
