package llm_test

import (
	"go/ast"
	"go/parser"
	"os"
	"regexp"
	"strings"
	"testing"
)

// declaredNames maps each package name of this module (the root is "llm")
// to the names its non-test files declare at top level: functions, types,
// variables and constants as "F", methods as "T.M".
func declaredNames(t *testing.T) map[string]map[string]bool {
	t.Helper()
	names := map[string]map[string]bool{}
	err := eachSourceFile(parser.SkipObjectResolution, func(_ string, f *ast.File) {
		pkg := f.Name.Name
		if names[pkg] == nil {
			names[pkg] = map[string]bool{}
		}
		add := func(s string) { names[pkg][s] = true }
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil || len(decl.Recv.List) == 0 {
					add(decl.Name.Name)
					continue
				}
				typ := decl.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if ix, ok := typ.(*ast.IndexExpr); ok {
					typ = ix.X
				}
				if ix, ok := typ.(*ast.IndexListExpr); ok {
					typ = ix.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					add(id.Name + "." + decl.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						add(spec.Name.Name)
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							add(n.Name)
						}
					}
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// docName matches a code span naming something in a package:
// pkg.Func, pkg.Type, pkg.Type.Method or pkg.(*Type).Method.
var docName = regexp.MustCompile(`^([a-z][a-z0-9]*)\.(?:\(\*?([A-Za-z_]\w*)\)\.|([A-Za-z_]\w*)\.)?([A-Za-z_]\w*)$`)

// TestArchitectureNames checks that every function, method, type, variable
// or constant docs/ARCHITECTURE.md names in a code span with a package of
// this module in front (`seq.(*Seq).eval`, `memplan.GrowTarget`) is
// declared in that package, so the paths it walks through name code that
// exists. Spans whose first word is not one of our packages (llama.cpp's
// names, a field like `Seq.logits`) and GGUF keys are not checked.
func TestArchitectureNames(t *testing.T) {
	doc, err := os.ReadFile("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	names := declaredNames(t)
	spans := regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(string(doc), -1)
	checked := 0
	seen := map[string]bool{}
	for _, s := range spans {
		span := strings.TrimSuffix(s[1], "()")
		m := docName.FindStringSubmatch(span)
		if m == nil || seen[span] {
			continue
		}
		seen[span] = true
		if strings.ToLower(span) == span && strings.Contains(m[4], "_") {
			continue // a GGUF key (tokenizer.chat_template)
		}
		decl, ok := names[m[1]]
		if !ok {
			continue
		}
		want := m[4]
		if recv := m[2] + m[3]; recv != "" {
			want = recv + "." + m[4]
			if !decl[want] && decl[recv] && m[3] != "" {
				// pkg.Type.Field or a method promoted from an embedded
				// field: the type at least must exist.
				checked++
				continue
			}
		}
		checked++
		if !decl[want] {
			t.Errorf("docs/ARCHITECTURE.md names `%s`, but package %s declares no %s", s[1], m[1], want)
		}
	}
	if checked < 50 {
		t.Errorf("only %d names checked: has the document's style changed?", checked)
	}
	t.Logf("%d names checked", checked)
}
