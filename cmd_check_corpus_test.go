package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/simbench/simbench/check"
	"github.com/simbench/simbench/internal/racebuild"
)

// corpusEntry is one runtime of examples/corpus/manifest.toml.
type corpusEntry struct {
	Defect string   `toml:"defect"`
	Catch  string   `toml:"catch"`
	Also   []string `toml:"also"`
	Why    string   `toml:"why"`
	What   string   `toml:"what"`
}

// TestCheckCorpus runs every runtime of the labelled corpus
// (examples/corpus) under check and holds the report to the manifest's
// verdict matrix: the defect FAILs on its line, every other line PASSes
// or is NOT MEASURED (but the lines the manifest names as the defect's
// consequences), and the exit code says so. Each run takes a few seconds
// of real time, mostly waiting; they run in parallel.
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

// runCorpus runs each runtime of the corpus runs times under check and
// holds every report to the manifest.
func runCorpus(t *testing.T, runs int) {
	var manifest struct {
		Runtime []corpusEntry `toml:"runtime"`
	}
	if _, err := toml.DecodeFile("examples/corpus/manifest.toml", &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Runtime) < 8 {
		t.Fatalf("%d runtimes in the manifest, want the 8 of examples/corpus", len(manifest.Runtime))
	}
	bin := buildExample(t, "corpus")
	for _, e := range manifest.Runtime {
		for run := range runs {
			t.Run(fmt.Sprintf("%s/%d", e.Defect, run+1), func(t *testing.T) {
				t.Parallel()
				rep, err := runCheckArgv(t, "examples/corpus/scenario.toml", []string{bin, "-defect", e.Defect})
				checkCorpusReport(t, e, rep, err)
			})
		}
	}
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
			t.Errorf("%s: %s %s without its defect: %s", e.Defect, l.Check, l.Verdict, l.Figure)
		}
	}
	t.Logf("%s: %s", e.Defect, strings.Join(matrix, ", "))
	if e.Catch != "" && !caught {
		t.Errorf("%s: missed, want %s FAIL; the report:\n%+v", e.Defect, e.Catch, rep.Lines)
	}
	want := 0
	switch {
	case rep.Verdict == check.Fail:
		want = exitFailure
	case rep.Count()[check.NotMeasured] > 0:
		want = exitNotMeasured
	}
	if codeOf(err) != want || (e.Catch != "" && want != exitFailure) {
		t.Errorf("%s: exit %d (%v), want %d", e.Defect, codeOf(err), err, want)
	}
}
