package main

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/results"
)

// readHLog reads an interval log with the library's reader and returns
// its intervals and their merge.
func readHLog(t *testing.T, path string) (intervals []*hdrhistogram.Histogram, all *hdrhistogram.Histogram) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("%s: %v", path, err)
		}
		if h == nil {
			break
		}
		intervals = append(intervals, h)
	}
	all = hdrhistogram.New(1, 1<<40, collect.HDRSignificantDigits)
	for _, h := range intervals {
		all.Merge(h)
	}
	return intervals, all
}

// near reports whether the HdrHistogram's value (µs) is within the two
// histograms' precision (0.8% and 0.1%, and a microsecond of rounding) of
// results.json's (ms).
func near(us int64, ms float64) bool {
	return math.Abs(float64(us)/1e3-ms) <= 0.009*ms+0.002
}

// TestRunHDRLogsMatchResults writes the HDR logs of a short tier3 run,
// reads them back with the library's log reader, and checks each holds the
// strategy's turns (or calls) with the p50 and p95 that results.json says.
func TestRunHDRLogsMatchResults(t *testing.T) {
	dir, out := filepath.Join(t.TempDir(), "hdr"), t.TempDir()
	cmd := &RunCmd{Scenario: "tier3", Duration: positiveDuration(20 * time.Second), Out: out, Stdout: io.Discard,
		NoReports: true, NoRecommend: true, HDR: dir}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, results.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var res results.Results
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Strategies) < 2 {
		t.Fatalf("%d strategies", len(res.Strategies))
	}
	for _, s := range res.Strategies {
		for _, k := range []struct {
			kind  string
			count int64
			sum   results.Summary
		}{{"turn", s.Turns, s.TurnLatencyMs}, {"call", s.Calls, s.CallLatencyMs}} {
			path := filepath.Join(dir, s.Name+"-"+k.kind+".hlog")
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(text), "microseconds") {
				t.Errorf("%s: the header does not name the unit:\n%.400s", path, text)
			}
			intervals, h := readHLog(t, path)
			if len(intervals) != 1 || intervals[0].Tag() != s.Name+"-"+k.kind {
				t.Fatalf("%s: %d intervals, want 1 tagged %s-%s", path, len(intervals), s.Name, k.kind)
			}
			if k.count == 0 || h.TotalCount() != k.count {
				t.Errorf("%s: %d values, want %d", path, h.TotalCount(), k.count)
			}
			// At the nearest rank results.json uses, ceil(q × n): the
			// library rounds q × n instead, one rank off at some n.
			n := float64(h.TotalCount())
			atRank := func(q float64) int64 { return h.ValueAtQuantile(100 * math.Ceil(q*n) / n) }
			p50, p95 := atRank(0.5), atRank(0.95)
			if !near(p50, k.sum.P50) || !near(p95, k.sum.P95) {
				t.Errorf("%s: p50 %d µs, p95 %d µs; results.json %g ms, %g ms", path, p50, p95, k.sum.P50, k.sum.P95)
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestRunHDRSeedsAreIntervals: with --seeds 2 each log holds one interval
// per seed, one after the other in virtual time.
func TestRunHDRSeedsAreIntervals(t *testing.T) {
	dir := t.TempDir()
	cmd := &RunCmd{Scenario: "burst-8", Duration: positiveDuration(10 * time.Second), Out: t.TempDir(), Stdout: io.Discard,
		NoReports: true, NoRecommend: true, Seeds: 2, HDR: dir}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*-turn.hlog"))
	if len(logs) < 2 {
		t.Fatalf("turn logs: %v", logs)
	}
	iv, _ := readHLog(t, logs[0])
	if len(iv) != 2 || iv[0].TotalCount() == 0 || iv[1].StartTimeMs() != iv[0].EndTimeMs() {
		t.Fatalf("%s: %d intervals, want 2 in sequence", logs[0], len(iv))
	}
}

// TestRunHDRBadDirIsExit2: --hdr naming a file is bad input, refused
// before anything runs.
func TestRunHDRBadDirIsExit2(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*RunCmd{
		{Scenario: "burst-8", HDR: file},
	} {
		c.Duration, c.Out, c.Stdout, c.NoReports, c.NoRecommend = positiveDuration(5*time.Second), t.TempDir(), io.Discard, true, true
		if err := c.Run(); exitCode(err) != exitInvalid {
			t.Errorf("--hdr %s (live %v): err = %v, want exit %d", c.HDR, c.Live, err, exitInvalid)
		}
	}
}

// A live run writes its logs too: one interval per strategy, as many turns
// as results.json counts.
func TestRunHDRLive(t *testing.T) {
	dir := t.TempDir()
	c := bounded(t, &RunCmd{Scenario: "burst-8", Strategy: []string{"paced"}, Duration: positiveDuration(10 * time.Second), Live: true, TimeScale: 0.05,
		AllowInvalid: true, HDR: dir, Out: t.TempDir(), Stdout: io.Discard, NoReports: true, NoRecommend: true})
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	res, err := results.Read(filepath.Join(c.Out, results.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	iv, _ := readHLog(t, filepath.Join(dir, "paced-turn.hlog"))
	if len(iv) != 1 || iv[0].TotalCount() != res.Strategies[0].Turns || res.Strategies[0].Turns == 0 {
		t.Errorf("%d intervals, %v turns logged; results count %d", len(iv), iv, res.Strategies[0].Turns)
	}
}
