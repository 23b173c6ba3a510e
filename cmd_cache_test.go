package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// The check: run tier3, then recommend tier3 and sweep tier3,
// simulate each run once between them (counted through the cache), and
// print what they print without the cache, at any --parallel (here over
// 20 virtual seconds, to stay quick).
func TestRunRecommendSweepSimulateEachRunOnce(t *testing.T) {
	t.Parallel()
	d := positiveDuration(20 * time.Second)
	var mu sync.Mutex
	var warned []string
	cache := sim.NewCache(t.TempDir(), "test", func(msg string) { mu.Lock(); warned = append(warned, msg); mu.Unlock() })
	type outputs struct{ results, recommend, sweep []byte }
	commands := func(flags cacheFlags, parallel int) outputs {
		var o outputs
		dir := t.TempDir()
		var runOut, recOut, sweepOut bytes.Buffer
		run := &RunCmd{Scenario: "tier3", Duration: d, Out: dir, NoReports: true, Parallel: parallel, Stdout: &runOut, cacheFlags: flags}
		if err := run.Run(); err != nil {
			t.Fatal(err)
		}
		var err error
		if o.results, err = os.ReadFile(filepath.Join(dir, results.ResultsFile)); err != nil {
			t.Fatal(err)
		}
		if flags.cache != nil {
			for key, n := range cache.Simulated() {
				if n != 1 {
					t.Errorf("run tier3 simulated %s %d times", key, n)
				}
			}
		}
		before := len(flags.cache.Simulated())
		rec := &RecommendCmd{Scenario: "tier3", Duration: d, Seeds: 3, MaxShare: 0.001, Tolerance: 0.05, JSON: true, Parallel: parallel, Stdout: &recOut, cacheFlags: flags}
		if err := rec.Run(); err != nil {
			t.Fatal(err)
		}
		sweep := &SweepCmd{Scenario: "tier3", Duration: d, Seeds: 3, MaxShare: 0.001, Tolerance: 0.05, Out: t.TempDir(), JSON: true, Parallel: parallel, Stdout: &sweepOut, cacheFlags: flags}
		if err := sweep.Run(); err != nil {
			t.Fatal(err)
		}
		if after := len(flags.cache.Simulated()); flags.cache != nil && after != before {
			t.Errorf("recommend and sweep simulated %d runs that run had simulated or did not need", after-before)
		}
		o.recommend, o.sweep = recOut.Bytes(), sweepOut.Bytes()
		return o
	}
	cached := commands(cacheFlags{cache: cache}, 0)
	if n := len(cache.Simulated()); n < 20 || cache.Reused() < 2*n {
		t.Errorf("%d runs simulated, %d reused: want the decision's runs simulated once and reused by recommend and sweep", n, cache.Reused())
	}
	uncached := commands(cacheFlags{NoCache: true}, 1)
	for _, c := range []struct {
		name      string
		got, want []byte
	}{{"results.json", cached.results, uncached.results}, {"recommend --json", cached.recommend, uncached.recommend}, {"sweep --json", cached.sweep, uncached.sweep}} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s with the cache (all cores) differs from without it (--parallel 1)", c.name)
		}
	}
	if len(warned) > 0 {
		t.Errorf("warnings: %q", warned)
	}
}
