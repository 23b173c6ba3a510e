package sim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/trace"
)

// traceRun runs the built-in scenario name for d with a trace and returns
// the results and the trace's bytes.
func traceRun(t *testing.T, name string, d time.Duration) (*results.Results, []byte) {
	t.Helper()
	sc, err := scenarios.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{Duration: d, Trace: w})
	if err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return res, data
}

// TestTraceSectionsMatchResults checks that a run's trace holds one section
// per strategy in strategy order, that every record is valid, and that its
// 429s and successful attempts agree with the run's own counts; and that
// the same run writes the same bytes.
func TestTraceSectionsMatchResults(t *testing.T) {
	res, data := traceRun(t, "retry-after-herd", 20*time.Second)
	r := trace.NewReader(bytes.NewReader(data), "run.jsonl")
	var names []string
	limited := map[string]int64{}
	retries := 0
	for r.Next() {
		h := r.Header()
		if h == nil {
			t.Fatal("a record before any header")
		}
		if len(names) == 0 || names[len(names)-1] != h.Strategy {
			names = append(names, h.Strategy)
			if h.Mode != "virtual" || h.Scenario != "retry-after-herd" || h.Seed != res.Seed {
				t.Errorf("header %+v", *h)
			}
		}
		rec := r.Record()
		if err := rec.Check(); err != nil {
			t.Fatalf("line %d: %v", r.Line(), err)
		}
		if rec.Turn < 1 || rec.Intended > rec.Start || rec.Attempt < 1 {
			t.Fatalf("line %d: %+v", r.Line(), *rec)
		}
		if rec.Outcome == trace.OutcomeRateLimited {
			limited[h.Strategy]++
		}
		if rec.Attempt > 1 {
			retries++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) != len(res.Strategies) {
		t.Fatalf("sections %v, strategies %d", names, len(res.Strategies))
	}
	for i, s := range res.Strategies {
		if names[i] != s.Name {
			t.Errorf("section %d is %q, want %q", i, names[i], s.Name)
		}
		if limited[s.Name] != s.RateLimited {
			t.Errorf("%s: %d rate_limited records, the run counted %d 429s", s.Name, limited[s.Name], s.RateLimited)
		}
	}
	if retries == 0 {
		t.Error("no retries traced in a scenario built to make them")
	}
	_, again := traceRun(t, "retry-after-herd", 20*time.Second)
	if !bytes.Equal(data, again) {
		t.Error("the same run wrote a different trace")
	}
}
