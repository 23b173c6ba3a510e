package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vbauerster/mpb/v8/decor"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

func TestETA(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	e := &eta{now: func() time.Time { return now }}
	stat := func(cur int64) decor.Statistics { return decor.Statistics{Current: cur, Total: 600} }

	// Rows in order: each step moves the clock, maybe reports, then reads.
	tests := []struct {
		name    string
		advance time.Duration
		report  int64 // -1: no report
		cur     int64
		want    string
	}{
		{"queued: no report yet", 0, -1, 0, "queued"},
		{"queued, still, after a while", 30 * time.Second, -1, 0, "queued"},
		{"first report: no rate yet", 0, 60, 60, ""},
		{"no progress since: no rate yet", 5 * time.Second, 60, 60, ""},
		{"60 s simulated in 5 s: 480 left at 12/s", 0, 120, 120, "ETA 40s"},
		{"rate from its own start, not the queue's", 5 * time.Second, 180, 180, "ETA 35s"},
		{"almost done: at least a second", 10*time.Second - time.Millisecond, 599, 599, "ETA 1s"},
	}
	for _, tt := range tests {
		now = now.Add(tt.advance)
		if tt.report >= 0 {
			e.observe(tt.report)
		}
		if got := e.text(stat(tt.cur)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := e.text(decor.Statistics{Current: 600, Total: 600, Completed: true}); got != "" {
		t.Errorf("done: %q, want no ETA", got)
	}
}

// zeroConsole is a terminal that reports 0 columns and 0 rows.
type zeroConsole struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *zeroConsole) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *zeroConsole) ReadFrom(r io.Reader) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.ReadFrom(r)
}

func (c *zeroConsole) IsTerminal() bool               { return true }
func (c *zeroConsole) GetTermSize() (int, int, error) { return 0, 0, nil }
func (c *zeroConsole) Flush(int) error                { return nil }

func (c *zeroConsole) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// Under a terminal that reports 0 columns the bars still appear, at the
// fallback width.
func TestProgressOnZeroColumnTerminal(t *testing.T) {
	sc, err := scenarios.Open("tier3")
	if err != nil {
		t.Fatal(err)
	}
	var cw zeroConsole
	opts := sim.Options{Duration: 60 * time.Second}
	pr := newProgressOn(&cw, sc, &opts)
	for _, st := range sc.Strategies {
		pr.update(st.Name, 30*time.Second, time.Minute)
	}
	pr.wait(false)
	out := cw.String()
	for _, st := range sc.Strategies {
		if !strings.Contains(out, st.Name+" ") || !strings.Contains(out, "30/30 s") {
			t.Errorf("no bar for %s on a 0-column terminal; output %q", st.Name, out)
		}
	}
}

// The decision's search shows a bar per step as it runs: the strategies as
// written, the rounds of caps and the paces, each filled when done.
func TestDecisionShowsItsSteps(t *testing.T) {
	sc, err := scenarios.Open("burst-8")
	if err != nil {
		t.Fatal(err)
	}
	var cw zeroConsole
	bars := newDecisionBarsOn(&cw)
	o := decision.Options{Rule: decision.Rule{MaxShare: decision.DefaultMaxRateLimitedShare}, Seeds: 1, Duration: time.Minute, Steps: bars.stage}
	if _, err := decision.Decide(context.Background(), sc, o); err != nil {
		t.Fatal(err)
	}
	bars.wait()
	out := cw.String()
	for _, want := range []string{"decision: strategies as written", "decision: no-jitter at caps 1", "decision: no-jitter's paces at cap 1", "180/180 s"} {
		if !strings.Contains(out, want) {
			t.Errorf("the bars lack %q; output %q", want, out)
		}
	}
}
