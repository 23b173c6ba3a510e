package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

func TestSweepMarksChosenCapAndWritesPlots(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	cmd := &SweepCmd{Scenario: "research-agent", Seeds: 1, Cap: "1..8", Strategy: "semaphore-4", MaxShare: 0.001, Duration: positiveDuration(2 * time.Minute), Out: dir, Stdout: &out}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"strategy semaphore-4", "cap", "← chosen"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	var saved results.Sweep
	data, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	if len(saved.Rows) != 1 || len(saved.Rows[0].Points) != 4 || saved.Rows[0].Chosen == 0 {
		t.Errorf("sweep.json: %+v", saved)
	}
	if _, err := os.Stat(filepath.Join(dir, "sweep.png")); err != nil {
		t.Error(err)
	}
}

func TestSweepRejectsBadFlags(t *testing.T) {
	for _, cmd := range []*SweepCmd{
		{Scenario: "tier3", Cap: "8..2", Seeds: 1},
		{Scenario: "tier3", Cap: "1..4", By: "users=3", Seeds: 1},
		{Scenario: "tier3", Cap: "1..4", Strategy: "nope", Seeds: 1},
		{Scenario: "tier3", Cap: "1..4", Seeds: 0},
		{Scenario: "tier3", Cap: "1..4", Seeds: 1, MaxShare: -0.1},
		{Scenario: "tier3", Cap: "1..4", Seeds: 1, Tolerance: -1},
		{Scenario: "tier3", Cap: "1..4", Seeds: 1, MaxShare: math.NaN()},
		{Scenario: "tier3", Cap: "1..4", Seeds: 1, Tolerance: math.NaN()},
		{Scenario: "tier3", Cap: "1..4", Seeds: 1, Tolerance: math.Inf(1)},
	} {
		cmd.Stdout = &bytes.Buffer{}
		err := cmd.Run()
		var ec interface{ ExitCode() int }
		if !errors.As(err, &ec) || ec.ExitCode() != exitInvalid {
			t.Errorf("%+v: err = %v, want exit %d", cmd, err, exitInvalid)
		}
	}
}

func TestRecommendShowsArithmeticAndVerdict(t *testing.T) {
	t.Parallel() // minutes under the race detector: share the cores with the other slow ones
	var out bytes.Buffer
	cmd := &RecommendCmd{Seeds: 1, Scenario: "tier3", Headroom: 0.7, MaxShare: 0.001, Duration: positiveDuration(3 * time.Minute), Stdout: &out}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"binding limit: rpm at 10,000 requests/min",
		"usable with headroom 0.7: 10,000 × 0.7 = 7,000 requests/min",
		"verified by simulation (strategy bounded-64",
		"arithmetic says 51",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestRecommendJSON(t *testing.T) {
	var out bytes.Buffer
	cmd := &RecommendCmd{Seeds: 1, Scenario: "research-agent", Headroom: 0.7, NoVerify: true, JSON: true, Stdout: &out}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var got decision.Report
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// research-agent's sources: 600 RPM, 8 calls per query, headroom 0.7 →
	// 420 requests/min usable, 52 queries/min.
	r, ok := got.Recommendation["sources"]
	if !ok || r.BindingLimit != "rpm" || r.RequestsPerMinute != 420 || r.TurnsPerMinute != 52 || r.VerifiedCap != 0 {
		t.Errorf("sources: %+v", r)
	}
	// Two services: the overall cap adds theirs and the turn rate is the
	// tighter one's.
	if got.Overall == nil || got.Overall.LimitedBy != "sources" || got.Overall.TurnsPerMinute != 52 || got.Overall.MaxInFlight != r.MaxInFlight+got.Recommendation["llm"].MaxInFlight {
		t.Errorf("overall %+v", got.Overall)
	}
	if got.Sweep != nil || len(got.Arithmetic["sources"]) == 0 {
		t.Errorf("--no-verify: sweep %+v, arithmetic %v", got.Sweep, got.Arithmetic)
	}
}

// The sweep's chosen cap for tier3 has no 429s and a p95 time to answer
// below the unbounded strategy's. Unbounded fails most of its turns at
// tier3's load, and fast: counted as unanswered, those turns put its p95
// beyond any answer, where p95 turn latency alone would call it fastest.
func TestTier3ChosenCapBeatsUnbounded(t *testing.T) {
	t.Parallel() // minutes under the race detector: share the cores with the other slow ones
	const d = 3 * time.Minute
	var out bytes.Buffer
	cmd := &RecommendCmd{Seeds: 1, Scenario: "tier3", Headroom: 0.7, MaxShare: 0.001, Duration: positiveDuration(d), JSON: true, Stdout: &out}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var rec decision.Report
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Sweep == nil || rec.Sweep.Chosen == 0 {
		t.Fatalf("the sweep chose no cap: %s", out.String())
	}
	var chosen *results.SweepPoint
	for i := range rec.Sweep.Points {
		if p := &rec.Sweep.Points[i]; p.Cap == rec.Sweep.Chosen {
			chosen = p
		}
	}

	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Strategies: []string{"unbounded"}, Duration: d})
	if err != nil {
		t.Fatal(err)
	}
	unbounded := res.Strategies[0]
	if chosen.RateLimitedShare != 0 {
		t.Errorf("cap %d: 429 share %v, want none", chosen.Cap, chosen.RateLimitedShare)
	}
	if !(chosen.P95Ms < unbounded.AnswerLatencyMs.P95) {
		t.Errorf("cap %d: p95 time to answer %v ms, not below unbounded's %v ms (%d of %d turns failed)",
			chosen.Cap, chosen.P95Ms, unbounded.AnswerLatencyMs.P95, unbounded.FailedTurns, unbounded.Turns)
	}
	if rec.Load == nil || rec.Load.Fits() {
		t.Errorf("tier3's overload not reported: %+v", rec.Load)
	}
}

// Ctrl-C during a sweep leaves a sweep.json marked partial with the points
// measured: here the interrupt comes as the second load's runs begin, so
// the first load's row is whole.
func TestSweepInterruptedWritesPartial(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last time.Duration
	cmd := &SweepCmd{Scenario: "research-agent", Seeds: 1, Cap: "1,4", By: "sessions=2,4", Strategy: "semaphore-4", MaxShare: 0.001,
		Duration: positiveDuration(30 * time.Minute), Out: dir, Stdout: &bytes.Buffer{}, parent: ctx,
		progress: func(strategy string, done, total time.Duration) {
			if strategy == "semaphore-4@1" {
				if done < last { // the virtual clock went back: the next load's run began
					cancel()
				}
				last = max(last, done)
			}
		}}
	err := cmd.Run()
	if codeOf(err) != exitInterrupted || !strings.Contains(err.Error(), "partial") {
		t.Fatalf("Run() = %v (exit %d), want exit %d saying the points are written, marked partial", err, codeOf(err), exitInterrupted)
	}
	saved, err := results.ReadSweep(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !saved.Partial || len(saved.Rows) == 0 || saved.Rows[0].Load != "sessions=2" || len(saved.Rows[0].Points) != 2 {
		t.Fatalf("sweep.json: partial %v, rows %+v; want partial with the whole sessions=2 row", saved.Partial, saved.Rows)
	}
	if len(saved.Rows) > 1 && saved.Rows[1].Load != "sessions=4" {
		t.Errorf("second row %+v", saved.Rows[1])
	}
}

// Ctrl-C during recommend's verifying sweep prints the points measured,
// marked partial: here the interrupt comes once a run is into its second
// seed (progress over seeds runs from 0 to the duration, a third each), so
// every cap has its first seed finished, and a cap whose other seeds the
// search had begun at most one more.
func TestRecommendInterruptedPrintsPartial(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	cmd := &RecommendCmd{Scenario: "research-agent", Seeds: 3, MaxShare: 0.001, Tolerance: 0.05, Duration: positiveDuration(30 * time.Minute),
		JSON: true, Stdout: &out, parent: ctx,
		progress: func(_ string, done, total time.Duration) {
			if done > total/3 {
				cancel()
			}
		}}
	err := cmd.Run()
	if codeOf(err) != exitInterrupted || !strings.Contains(err.Error(), "partial") {
		t.Fatalf("Run() = %v (exit %d), want exit %d saying the points are printed, marked partial", err, codeOf(err), exitInterrupted)
	}
	var sw results.Sweep
	if err := json.Unmarshal(out.Bytes(), &sw); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	if !sw.Partial || len(sw.Rows) != 1 || len(sw.Rows[0].Points) < 2 {
		t.Fatalf("partial %v, rows %+v: want the points of every cap", sw.Partial, sw.Rows)
	}
	for _, p := range sw.Rows[0].Points {
		if p.Seeds != 1 && p.Seeds != 2 {
			t.Errorf("cap %d: %d seeds, want the 1 or 2 that finished", p.Cap, p.Seeds)
		}
	}
}
