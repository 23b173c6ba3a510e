package sim

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// bothEngines runs sc with Run and with RunReference and returns both
// results.json encodings (an error's text in place of one).
func bothEngines(t interface {
	Helper()
	Fatal(...any)
}, sc *scenarios.Scenario, opts Options) (fast, ref []byte) {
	t.Helper()
	encode := func(res *results.Results, err error) []byte {
		if err != nil {
			return []byte("error: " + err.Error())
		}
		data, err := results.Encode(res)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	fast = encode(Run(context.Background(), sc, opts))
	ref = encode(RunReference(context.Background(), sc, opts))
	return fast, ref
}

// referenceDiff runs sc with both engines and returns where their
// results.json first differ ("" when they do not).
func referenceDiff(t *testing.T, sc *scenarios.Scenario) string {
	fast, ref := bothEngines(t, sc, Options{Parallel: 1})
	if bytes.Equal(fast, ref) {
		return ""
	}
	return firstDifference(fast, ref)
}

// firstDifference describes where two results.json encodings first
// differ, with a few lines of each around it.
func firstDifference(fast, ref []byte) string {
	a, b := strings.Split(string(fast), "\n"), strings.Split(string(ref), "\n")
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-6)
	show := func(lines []string) string {
		return strings.Join(lines[lo:min(len(lines), i+4)], "\n")
	}
	return fmt.Sprintf("first difference at line %d of results.json\nengine:\n%s\nreference:\n%s", i+1, show(a), show(b))
}

// TestReferenceBuiltins holds the engine to the reference on every
// built-in scenario, cut to 20 virtual seconds.
func TestReferenceBuiltins(t *testing.T) {
	for _, info := range scenarios.List() {
		sc, err := scenarios.Builtin(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		fast, ref := bothEngines(t, sc, Options{Duration: 20 * time.Second, Parallel: 1})
		if !bytes.Equal(fast, ref) {
			t.Errorf("%s: the engine and the reference differ; %s", info.Name, firstDifference(fast, ref))
		}
	}
}

// TestReferenceFoldJoin pins the reference on the case it was written
// for: one session, no think time, ten calls at uniform 200–900 ms and a
// progressive join on the first 8 that folds the late ones in. Each
// turn lasts the 8th-fastest of its 10 calls, whose mean is the 8th order
// statistic of 10 uniforms: 200 + 700 × 8/11 = 709.09 ms.
func TestReferenceFoldJoin(t *testing.T) {
	const file = `
name = "fold"
duration = "60s"
seed = 1
[workload]
sessions = 1
calls = [ { tool = "t", count = 10 } ]
[services.s]
latency = { dist = "uniform", min = "200ms", max = "900ms" }
[tools.t]
service = "s"
[[strategy]]
name = "fold-8"
progressive_join = { first = 8 }
`
	sc, err := scenarios.Parse("fold.toml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunReference(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const want = 200 + 700*8/11.0
	r := res.Strategies[0]
	// 84 turns: the mean of 84 order statistics, each with a standard
	// deviation of 700 × √(8·3/(11²·12)) = 90 ms, is within 3 × 90/√84
	// = 30 ms of its expectation all but once in 370 seeds.
	if got := r.TurnLatencyMs.Mean; r.Turns < 50 || got < want-30 || got > want+30 {
		t.Errorf("%d turns averaging %.1f ms; the 8th of 10 uniform calls is %.1f ms on average", r.Turns, got, want)
	}
}

// referenceCases is how many generated scenarios TestReferenceMatches
// tries; TestLongReferenceMatches tries thousands more.
const referenceCases = 250

// TestReferenceMatches requires the engine and the reference to write the
// same results.json, byte for byte, on generated scenarios.
func TestReferenceMatches(t *testing.T) { checkReference(t, genScenario, 0, referenceCases) }

// checkReference generates scenarios from, from+1, … up to to (gen's
// examples by those seeds) and requires the engine and the
// reference to write the same results.json for each, byte for byte. A
// failure prints the scenario file, which replays it: save it beside a
// file genEmpiricalFile holding genEmpirical, and run it.
func checkReference(t *testing.T, gen func(*rapid.T) string, from, to int) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, genEmpiricalFile), []byte(genEmpirical), 0o600); err != nil {
		t.Fatal(err)
	}
	examples := rapid.Custom(gen)
	failed := 0
	for i := from; i < to && failed < 3; i++ {
		file := examples.Example(i)
		sc, err := scenarios.Parse(filepath.Join(dir, "generated.toml"), []byte(file))
		if err != nil {
			t.Fatalf("the generator's example %d does not load: %v\n%s", i, err, file)
		}
		if diff := referenceDiff(t, sc); diff != "" {
			failed++
			t.Errorf("the engine and the reference differ on the generator's example %d (%s beside it holds %q):\n%s\n%s",
				i, genEmpiricalFile, genEmpirical, file, diff)
		}
	}
}

// TestReferenceCorpus holds the engine to the reference on the scenarios
// in testdata/reference: generated ones that once showed a difference,
// each file saying what it was.
func TestReferenceCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/reference/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in testdata/reference (%v)", err)
	}
	for _, f := range files {
		sc, err := scenarios.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if diff := referenceDiff(t, sc); diff != "" {
			t.Errorf("%s: the engine and the reference differ; %s", f, diff)
		}
	}
}
