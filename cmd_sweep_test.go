package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSweepMarksChosenCapAndWritesPlots(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	cmd := &SweepCmd{Scenario: "research-agent", Cap: "1..8", Strategy: "semaphore-4", MaxShare: 0.001, Duration: 2 * time.Minute, Out: dir, Stdout: &out}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"strategy semaphore-4", "cap", "← chosen"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	var saved sweepOut
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
		{Scenario: "tier3", Cap: "8..2"},
		{Scenario: "tier3", Cap: "1..4", By: "users=3"},
		{Scenario: "tier3", Cap: "1..4", Strategy: "nope"},
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
	var out bytes.Buffer
	cmd := &RecommendCmd{Scenario: "tier3", Headroom: 0.7, MaxShare: 0.001, Duration: 3 * time.Minute, Stdout: &out}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"binding limit: rpm at 10,000 requests/min",
		"usable with headroom 0.7: 10,000 × 0.7 = 7,000 requests/min",
		"verified by simulation (strategy bounded-64",
		"arithmetic says 50",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestRecommendJSON(t *testing.T) {
	var out bytes.Buffer
	cmd := &RecommendCmd{Scenario: "research-agent", Headroom: 0.7, NoVerify: true, JSON: true, Stdout: &out}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var got recommendOut
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
