package sim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the import path of the repository's module.
const module = "github.com/simbench/simbench"

// engineDirs are the packages of the virtual engine, relative to the
// module's root: the simulator and the parts it drives that read no clock
// and do no I/O. A directory not there yet is skipped.
var engineDirs = []string{"sim", "internal/agent", "internal/collect", "internal/setup"}

// forbiddenImport says why the engine's own packages may not import p
// directly ("" if they may).
func forbiddenImport(p string) string {
	switch {
	case p == "net/http":
		return "HTTP is the live runtime's"
	case p == "os/exec":
		return "processes are the live runtime's"
	case strings.HasPrefix(p, "github.com/redis/"):
		return "Redis is the live runtime's"
	case p == module+"/live" || strings.HasPrefix(p, module+"/live/"):
		return "live drives the engine, not the other way"
	}
	return ""
}

// quotaPkg is the production quota path. The simulator drives its Memory
// backend, Shared and Failover in virtual time (sharedquota.go), so sim
// imports it; its Redis backend lives in the same package, so go-redis is
// in sim's dependencies through it and through it only.
const quotaPkg = module + "/sched/quota"

// listed is one package of `go list -deps`: its path and its imports
// (non-test files).
type listed struct {
	path    string
	imports []string
}

// goList returns the package pkg and every package it depends on, as
// `go list -deps` gives them.
func goList(t *testing.T, root, pkg string) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{join .Imports " "}}`, pkg)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var ps []listed
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		path, imports, _ := strings.Cut(strings.TrimSpace(line), "|")
		ps = append(ps, listed{path: path, imports: strings.Fields(imports)})
	}
	return ps
}

// moduleRoot returns the repository's root, the parent of sim.
func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// TestEngineImports holds the engine's boundary: sim and the packages it
// drives import no HTTP, no processes, no Redis and not the live runtime;
// none of them reaches live or os/exec through any dependency; and Redis
// is reached only through the production quota path (quotaPkg), which
// only sim imports.
func TestEngineImports(t *testing.T) {
	root := moduleRoot(t)
	for _, dir := range engineDirs {
		if _, err := os.Stat(filepath.Join(root, dir)); err != nil {
			continue
		}
		pkg := module + "/" + dir
		t.Run(dir, func(t *testing.T) {
			deps := goList(t, root, pkg)
			for _, p := range deps {
				if p.path == pkg {
					for _, imp := range p.imports {
						if why := forbiddenImport(imp); why != "" {
							t.Errorf("%s imports %s: %s", p.path, imp, why)
						}
						if imp == quotaPkg && dir != "sim" {
							t.Errorf("%s imports %s: only the simulator drives the quota path", p.path, imp)
						}
					}
				}
				if p.path == "os/exec" || p.path == module+"/live" {
					t.Errorf("%s depends on %s (through %s)", pkg, p.path, importers(deps, p.path))
				}
				for _, imp := range p.imports {
					if strings.HasPrefix(imp, "github.com/redis/") && !strings.HasPrefix(p.path, "github.com/redis/") && p.path != quotaPkg {
						t.Errorf("%s reaches %s through %s, not through %s only", pkg, imp, p.path, quotaPkg)
					}
				}
			}
		})
	}
}

// importers returns the packages among deps that import p.
func importers(deps []listed, p string) string {
	var by []string
	for _, d := range deps {
		if slices.Contains(d.imports, p) {
			by = append(by, d.path)
		}
	}
	return strings.Join(by, ", ")
}

// clockFuncs are the functions of package time that read the wall clock
// or wait on it.
var clockFuncs = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick"}

// goAllowed are the files of the engine that may start goroutines:
// parallel.go runs independent strategies' engines side by side, each
// engine on one goroutine, sharing nothing (see runEngines).
var goAllowed = []string{"sim/parallel.go"}

// TestEngineReadsNoClock: no non-test file of the engine's packages calls
// a clock function of package time, and none but goAllowed starts a
// goroutine: time in the engine is the event heap's.
func TestEngineReadsNoClock(t *testing.T) {
	root := moduleRoot(t)
	for _, dir := range engineDirs {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			rel, _ := filepath.Rel(root, file)
			for _, bad := range clockUses(t, file, !slices.Contains(goAllowed, filepath.ToSlash(rel))) {
				t.Errorf("%s: %s", rel, bad)
			}
		}
	}
}

// clockUses returns where the Go file calls a clock function of package
// time and, if noGo, where it starts a goroutine.
func clockUses(t *testing.T, file string, noGo bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	timeName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	var bad []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && timeName != "" && x.Name == timeName && slices.Contains(clockFuncs, n.Sel.Name) {
				bad = append(bad, fset.Position(n.Pos()).String()+": reads the clock (time."+n.Sel.Name+")")
			}
		case *ast.GoStmt:
			if noGo {
				bad = append(bad, fset.Position(n.Pos()).String()+": starts a goroutine")
			}
		}
		return true
	})
	return bad
}
