package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// module is the import path of this module; the scheduler's modules live
// under it (sched, sched/quota, sched/promobs).
const module = "github.com/simbench/simbench"

// layers is the dependency arrow of docs/design.md, from the
// bottom up: a package may import packages of its own layer or of a layer
// below it, never one above. A path ending in "/..." names a folder and
// everything under it. A package of this module that no layer names fails
// the test, so a new package takes a place in the arrow when it is made.
var layers = []struct {
	name  string
	paths []string
}{
	{"the scheduler (own modules, standard library only)", []string{"sched/..."}},
	{"runnable integrations (import the scheduler only)", []string{"examples/..."}},
	{"small helpers", []string{
		"internal/atomicfile", "internal/bytesize", "internal/downsample", "internal/mdcheck",
		"internal/names", "internal/numfmt", "internal/proc", "internal/racebuild",
		"internal/redisproc", "internal/regfile", "internal/sweepwork",
	}},
	{"formats and vocabularies", []string{"spec", "trace", "results"}},
	{"the provider model and the scenario format", []string{"fakeapi/...", "scenarios/...", "internal/judge"}},
	{"the engines' shared parts", []string{"internal/setup", "internal/collect", "internal/agent"}},
	{"the virtual-time engine", []string{"sim"}},
	{"the live runtime", []string{"live"}},
	{"decision, drawing, grading, fitting, gating", []string{"decision", "reports/...", "check", "calibrate", "gate"}},
	{"the pipeline", []string{"pipeline"}},
	{"the command line", []string{""}},
}

// testSupport are packages only tests may import.
var testSupport = []string{
	"internal/tests/...", "internal/redistest", "internal/fixtures", "internal/hostile",
	"internal/simtest", "internal/proc/proctest", "internal/netns",
}

func matches(rel string, paths []string) bool {
	for _, p := range paths {
		if folder, ok := strings.CutSuffix(p, "/..."); ok {
			if rel == folder || strings.HasPrefix(rel, folder+"/") {
				return true
			}
		} else if rel == p {
			return true
		}
	}
	return false
}

// layerOf is the index of rel's layer in layers, or -1.
func layerOf(rel string) int {
	for i, l := range layers {
		if matches(rel, l.paths) {
			return i
		}
	}
	return -1
}

// relPath is an import path relative to the module ("" for the root),
// and whether it belongs to this module or the scheduler's.
func relPath(path string) (string, bool) {
	if path == module {
		return "", true
	}
	return strings.CutPrefix(path, module+"/")
}

// listImports asks go list for each package of the module and its
// non-test imports.
func listImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkgs[f[0]] = f[1:]
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list listed only %d packages", len(pkgs))
	}
	return pkgs
}

// TestImportArrow holds the layout's dependency arrow: every import
// between the project's packages points down the layers (the virtual engine
// never reaches the live runtime, reports never the simulator, the
// scheduler nothing of the harness), test support is imported by tests
// only, and every package has a place.
func TestImportArrow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for path, imports := range listImports(t) {
		rel, _ := relPath(path)
		if matches(rel, testSupport) {
			continue
		}
		from := layerOf(rel)
		if from < 0 {
			t.Errorf("package %q has no layer in the arrow: give it one in layers (arrow_test.go) and a row in docs/design.md", rel)
			continue
		}
		for _, imp := range imports {
			irel, ours := relPath(imp)
			if !ours {
				continue
			}
			if matches(irel, testSupport) {
				t.Errorf("%s imports %s, which only tests may import", path, imp)
				continue
			}
			to := layerOf(irel)
			if to > from {
				t.Errorf("%s (%s) imports %s (%s): against the arrow", path, layers[from].name, imp, layers[to].name)
			}
		}
	}
}

// TestLayoutNamesEveryPackage: docs/design.md's layout has a row for
// every package folder of the module (a row for a folder covers the
// packages under it), so the page describes the house as it stands.
func TestLayoutNamesEveryPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	page, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	path := regexp.MustCompile("`([^`]+)/`")
	for _, line := range strings.Split(string(page), "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) < 3 {
			continue
		}
		for _, m := range path.FindAllStringSubmatch(cells[0], -1) {
			rows = append(rows, m[1])
		}
	}
	if len(rows) < 10 {
		t.Fatalf("docs/design.md's layout names %d folders", len(rows))
	}
	var missing []string
	for path := range listImports(t) {
		rel, _ := relPath(path)
		if rel == "" {
			continue
		}
		covered := slices.ContainsFunc(rows, func(r string) bool { return rel == r || strings.HasPrefix(rel, r+"/") })
		if !covered {
			missing = append(missing, rel)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("docs/design.md's layout has no row for %s", strings.Join(missing, ", "))
	}
}
