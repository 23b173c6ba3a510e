package tests

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestLongTestsRunUnderMakeTestLong checks that every test in a file built
// only with the long tag is named TestLong…: make test-long selects them
// with -run Long, so a long test named otherwise would never run at all.
// It walks every module of the repository.
func TestLongTestsRunUnderMakeTestLong(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var files, tests int
	err = filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != repo && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if !longOnly(f.Comments) {
			return nil
		}
		files++
		rel, _ := filepath.Rel(repo, path)
		for _, decl := range f.Decls {
			name, ok := testFunc(decl)
			if !ok {
				continue
			}
			tests++
			if !strings.HasPrefix(name, "TestLong") {
				t.Errorf("%s: %s is built only with the long tag, but make test-long runs -run Long: name it TestLong…", rel, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 || tests == 0 {
		t.Fatalf("found %d long-only test files with %d tests: the walk missed them", files, tests)
	}
}

// longOnly reports whether a file's build constraint (before the package
// clause) is satisfied with the long tag and not without it.
func longOnly(groups []*ast.CommentGroup) bool {
	for _, g := range groups {
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			with := expr.Eval(func(tag string) bool { return tag == "long" })
			without := expr.Eval(func(string) bool { return false })
			return with && !without
		}
	}
	return false
}

// testFunc returns the name of a top-level func TestX(t *testing.T), other
// than TestMain.
func testFunc(decl ast.Decl) (string, bool) {
	fn, ok := decl.(*ast.FuncDecl)
	if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
		return "", false
	}
	return fn.Name.Name, true
}
