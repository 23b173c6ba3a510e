package main

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/simbench/simbench/check"
	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/internal/racebuild"
	"github.com/simbench/simbench/scenarios"
)

// corpusEntry is one runtime of examples/corpus/manifest.toml.
type corpusEntry struct {
	Name        string   `toml:"name"` // "": Defect
	Recommended bool     `toml:"recommended"`
	Languages   []string `toml:"languages"`
	Defect      string   `toml:"defect"`
	Catch       string   `toml:"catch"`
	Also        []string `toml:"also"`
	Why         string   `toml:"why"`
	What        string   `toml:"what"`
	Args        []string `toml:"args"` // flags besides --defect, in every language
}

// TestCheckCorpus runs every runtime of the labelled corpus
// (examples/corpus), in each of its languages (Go, Node, Python), under
// check and holds the report to the manifest's verdict matrix: the defect
// FAILs on its line, every other line PASSes or is NOT MEASURED (but the
// lines the manifest names as the defect's consequences), and the exit
// code says so. Each run takes some 12 to 22 s of real time, mostly waiting, and
// about 1 CPU-s; they run in parallel. Without node and the
// openai package, or Debian's python3 and its httpx, that language's runs
// skip, saying what to install (make deps installs both where it can),
// except in CI (CI=true), where they fail.
//
// Not under the race detector: on a loaded machine it slows the server's
// noticing of a closed connection past check's 250 ms grace, and the good
// runtime's cancelled write then overlaps its retry (seen once, 1 of 8
// runtimes, in a loaded race run). TestLongCheckCorpus runs the corpus 3
// times without it.
func TestCheckCorpus(t *testing.T) {
	if racebuild.On {
		t.Skip("the race detector slows the server's view of a closed connection past check's grace on a loaded machine; TestLongCheckCorpus runs the corpus")
	}
	runCorpus(t, 1)
}

// name names the entry: its name, else its defect.
func (e corpusEntry) name() string { return cmp.Or(e.Name, e.Defect) }

// corpusManifest reads examples/corpus/manifest.toml and checks its
// entries' languages.
func corpusManifest(t *testing.T) []corpusEntry {
	t.Helper()
	var manifest struct {
		Runtime []corpusEntry `toml:"runtime"`
	}
	if _, err := toml.DecodeFile("examples/corpus/manifest.toml", &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Runtime) < 11 {
		t.Fatalf("%d runtimes in the manifest, want the 11 of examples/corpus", len(manifest.Runtime))
	}
	for _, e := range manifest.Runtime {
		if len(e.Languages) == 0 {
			t.Fatalf("examples/corpus/manifest.toml: runtime %q names no languages; want some of %v", e.Defect, corpusLanguages)
		}
		for _, lang := range e.Languages {
			if !slices.Contains(corpusLanguages, lang) {
				t.Fatalf("examples/corpus/manifest.toml: runtime %q: unknown language %q; want some of %v", e.Defect, lang, corpusLanguages)
			}
		}
	}
	return manifest.Runtime
}

// TestCorpusRecommendedControl holds the manifest's recommended control to
// what simbench recommend decides for the corpus scenario (and prints with
// --emit): its -cap the decided cap, its -pace the decided pace in
// requests per second.
func TestCorpusRecommendedControl(t *testing.T) {
	sc, err := scenarios.Load("examples/corpus/scenario.toml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := decision.Decide(t.Context(), sc, decision.Options{Rule: rule(decision.DefaultMaxRateLimitedShare, decision.DefaultTolerance), NoLoad: true})
	if err != nil {
		t.Fatal(err)
	}
	set := decision.Settings(sc, d)["api"]
	want := []string{"--cap", strconv.Itoa(set.MaxInFlight), "--pace", strconv.FormatFloat(set.PaceRPM/60, 'g', -1, 64)}
	if set.MaxInFlight <= 0 || set.PaceRPM <= 0 {
		t.Fatalf("recommend decides %+v for the corpus, want a cap and a pace", set)
	}
	n := 0
	for _, e := range corpusManifest(t) {
		if !e.Recommended {
			continue
		}
		n++
		if e.Defect != "none" || !slices.Equal(e.Args, want) {
			t.Errorf("manifest entry %s: defect %q, args %q; want the good runtime with %q, as recommend --emit prints", e.name(), e.Defect, e.Args, want)
		}
	}
	if n != 1 {
		t.Errorf("%d manifest entries are recommended, want 1", n)
	}
}

// runCorpus runs each runtime of the corpus runs times in each of its
// languages under check and holds every report to the manifest.
func runCorpus(t *testing.T, runs int) {
	manifest := corpusManifest(t)
	for _, lang := range corpusLanguages {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			argv := corpusRuntime(t, lang)
			for _, e := range manifest {
				if !slices.Contains(e.Languages, lang) {
					continue
				}
				for run := range runs {
					t.Run(fmt.Sprintf("%s/%d", e.name(), run+1), func(t *testing.T) {
						t.Parallel()
						rep, err := runCheckArgv(t, "examples/corpus/scenario.toml", slices.Concat(argv, []string{"--defect", e.Defect}, e.Args))
						checkCorpusReport(t, e, rep, err)
					})
				}
			}
		})
	}
}

// corpusLanguages are the languages the corpus's runtimes are written in.
var corpusLanguages = []string{"go", "node", "python"}

// corpusRuntime returns the command that runs the corpus's runtime in
// lang, to which the test appends --defect NAME and the entry's args. When what it needs is
// missing it skips, saying what to install, except in CI (CI=true),
// where it fails.
func corpusRuntime(t *testing.T, lang string) []string {
	t.Helper()
	missing := func(what, install string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: %s", what, install)
		}
		t.Skipf("%s is missing: %s", what, install)
	}
	switch lang {
	case "node":
		node, err := exec.LookPath("node")
		if err != nil {
			missing("node", nodeInstall)
		}
		if _, err := os.Stat(filepath.Join("examples", "node", "node_modules", "openai")); err != nil {
			missing("the openai package of examples/node", nodeInstall)
		}
		return []string{node, filepath.Join("examples", "corpus", "node", "corpus.mjs")}
	case "python":
		// Debian's python3, where python3 on PATH may be another without
		// Debian's packages.
		const python, install = "/usr/bin/python3", "apt-get install python3 python3-httpx (scripts/need-python)"
		if out, err := exec.Command(python, "-c", "import httpx").CombinedOutput(); err != nil {
			missing("Debian's python3 with httpx", fmt.Sprintf("%s (%s: %v %s)", install, python, err, strings.TrimSpace(string(out))))
		}
		return []string{python, filepath.Join("examples", "corpus", "python", "corpus.py")}
	}
	return []string{buildExample(t, "corpus")}
}

// checkCorpusReport holds one run's report (and check's error) to entry
// e of the manifest.
func checkCorpusReport(t *testing.T, e corpusEntry, rep *check.Report, err error) {
	t.Helper()
	var matrix []string
	caught := false
	for _, l := range rep.Lines {
		matrix = append(matrix, fmt.Sprintf("%s %s", l.Check, l.Verdict))
		switch {
		case l.Check == e.Catch:
			caught = caught || l.Verdict == check.Fail
		case slices.Contains(e.Also, l.Check):
		case l.Verdict != check.Pass && l.Verdict != check.NotMeasured:
			t.Errorf("%s: %s %s without its defect: %s", e.name(), l.Check, l.Verdict, l.Figure)
		}
	}
	t.Logf("%s: %s", e.name(), strings.Join(matrix, ", "))
	if e.Catch != "" && !caught {
		t.Errorf("%s: missed, want %s FAIL; the report:\n%+v", e.name(), e.Catch, rep.Lines)
	}
	want := 0
	switch {
	case rep.Verdict == check.Fail:
		want = exitFailure
	case rep.Count()[check.NotMeasured] > 0:
		want = exitNotMeasured
	}
	if codeOf(err) != want {
		t.Errorf("%s: exit %d (%v), want %d for the report's verdicts", e.name(), codeOf(err), err, want)
	}
}
