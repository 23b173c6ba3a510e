package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// placeholder is the version the repository's modules require each other
// at; replace directives point it at the local copies.
const placeholder = "v0.0.0-00010101000000-000000000000"

// TestImporterModuleGraphs checks what an importer of each sched module pays:
// a scratch module importing only sched lists itself and sched in
// `go list -m all`; one importing only sched/quota adds quota and exactly the
// graph of a module importing go-redis alone; likewise sched/promobs and the
// Prometheus client. It fails if a requirement creeps into a module (a
// test-only library, a harness module). It runs the go command offline
// (GOPROXY=off), from the module cache the repository's own build filled.
func TestImporterModuleGraphs(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sched := listModules(t, repo, []string{"github.com/simbench/simbench/sched"}, nil)
	t.Logf("importing sched: go list -m all =\n\t%s", strings.Join(sched, "\n\t"))
	if want := []string{"example.com/scratch", "github.com/simbench/simbench/sched " + placeholder}; !slices.Equal(sched, want) {
		t.Errorf("importing sched: go list -m all =\n\t%s\nwant\n\t%s", strings.Join(sched, "\n\t"), strings.Join(want, "\n\t"))
	}
	tests := []struct {
		pkg, module string
		thirdParty  []string // the packages the module's code imports
	}{
		{"github.com/simbench/simbench/sched/quota", "github.com/redis/go-redis/v9", []string{"github.com/redis/go-redis/v9"}},
		{"github.com/simbench/simbench/sched/promobs", "github.com/prometheus/client_golang", []string{"github.com/prometheus/client_golang/prometheus"}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.pkg), func(t *testing.T) {
			got := listModules(t, repo, []string{tt.pkg}, nil)
			t.Logf("importing %s: go list -m all =\n\t%s", tt.pkg, strings.Join(got, "\n\t"))
			version := ""
			for _, m := range got {
				if v, ok := strings.CutPrefix(m, tt.module+" "); ok {
					version = v
				}
			}
			if version == "" {
				t.Fatalf("importing %s: %s is not in the graph:\n\t%s", tt.pkg, tt.module, strings.Join(got, "\n\t"))
			}
			want := listModules(t, repo, tt.thirdParty, []string{tt.module + "@" + version})
			want = append(want, "github.com/simbench/simbench/sched "+placeholder, tt.pkg+" "+placeholder)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("importing %s: go list -m all =\n\t%s\nwant %s@%s's graph plus sched and %s:\n\t%s",
					tt.pkg, strings.Join(got, "\n\t"), tt.module, version, filepath.Base(tt.pkg), strings.Join(want, "\n\t"))
			}
		})
	}
}

// listModules makes a scratch module importing pkgs (the repository's
// modules replaced by their local copies, requirements pinned to require),
// tidies it, and returns `go list -m all` as sorted "path version" lines
// without the replacement targets.
func listModules(t *testing.T, repo string, pkgs, require []string) []string {
	t.Helper()
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, p := range pkgs {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n\nfunc main() {}\n")
	mod := "module example.com/scratch\n\ngo 1.26.0\n"
	for _, m := range []string{"sched", "sched/quota", "sched/promobs"} {
		mod += fmt.Sprintf("\nreplace github.com/simbench/simbench/%s => %s\n", m, filepath.Join(repo, m))
		if slices.Contains(pkgs, "github.com/simbench/simbench/"+m) {
			mod += fmt.Sprintf("\nrequire github.com/simbench/simbench/%s %s\n", m, placeholder)
		}
	}
	for _, r := range require {
		path, version, _ := strings.Cut(r, "@")
		mod += fmt.Sprintf("\nrequire %s %s\n", path, version)
	}
	for name, text := range map[string]string{"go.mod": mod, "main.go": src.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// -e: the tests of the requirements' own packages (go-redis's ginkgo,
	// say) are part of what tidy loads, and a machine that only built the
	// repository has not downloaded their modules; they are no part of the
	// importer's graph, which go list reads from go.mod.
	goCmd(t, dir, "mod", "tidy", "-e")
	// -e: list a module whose metadata (.info) is not in the cache too.
	out := goCmd(t, dir, "list", "-m", "-e", "-f", "{{.Path}} {{.Version}}", "all")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	slices.Sort(lines)
	return lines
}

// goCmd runs the go command in dir offline and outside any workspace, and
// returns its standard output.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return string(out)
}
