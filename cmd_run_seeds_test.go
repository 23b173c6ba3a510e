package main

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
)

// cellPattern reads a table cell: a number (or "—" for a time to answer
// that none came), an optional "±" half width, an optional best mark.
var cellPattern = regexp.MustCompile(`^([0-9,.]+|—)(?: ±([0-9,.e-]+))?\*?$`)

// decimalsOf is the number of digits after the point in a number as
// written ("3,449" 0, "130.51" 2, "0.004" 3).
func decimalsOf(text string) int {
	if i := strings.IndexByte(text, '.'); i >= 0 {
		return len(text) - i - 1
	}
	return 0
}

// runSeeds runs scenario at seeds 42 onwards for one virtual minute with
// the table's columns, twice: with --json, decoded, and as the terminal
// table.
func runSeeds(t *testing.T, scenario string, seeds int, columns []string) (results.Results, string) {
	t.Helper()
	seed := uint64(42)
	run := func(asJSON bool) string {
		var out bytes.Buffer
		cmd := &RunCmd{Scenario: scenario, Seed: &seed, Seeds: seedCount(seeds), Duration: positiveDuration(time.Minute), Out: t.TempDir(),
			JSON: asJSON, NoReports: true, NoRecommend: true, Columns: columns, Stdout: &out}
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	var res results.Results
	if err := json.Unmarshal([]byte(run(true)), &res); err != nil {
		t.Fatal(err)
	}
	return res, run(false)
}

// agrees reports whether the number written as text is v at the precision
// it is written with.
func agrees(text string, v float64) bool {
	f, err := strconv.ParseFloat(strings.ReplaceAll(text, ",", ""), 64)
	if err != nil {
		return false
	}
	if e := strings.IndexAny(text, "e"); e >= 0 {
		return math.Abs(f-v) <= 0.05*math.Abs(v) // two significant digits
	}
	return math.Abs(f-v) <= 0.5*math.Pow(10, -float64(decimalsOf(text)))+1e-9
}

// run tier3 --seeds 3 --json writes, for every strategy and every column of
// the terminal table that `run tier3 --seeds 3` prints, the column's mean
// and 95% interval in seed_stats, equal to what the table shows: the mean
// as the cell's number and the half width as its "±" (none when the seeds
// agree, and only then).
func TestRunSeedsWritesTheTableMeansAndIntervals(t *testing.T) {
	res, table := runSeeds(t, "tier3", 3, []string{"all"})
	lines := strings.Split(table, "\n")
	split := regexp.MustCompile(`\s{2,}`)
	var headers []string
	for _, l := range lines {
		if strings.HasPrefix(l, "strategy ") {
			headers = split.Split(strings.TrimSpace(l), -1)[1:]
		}
	}
	if len(headers) < 10 {
		t.Fatalf("no table header in:\n%s", table)
	}
	checked := 0
	for _, s := range res.Strategies {
		var cells []string
		for _, l := range lines {
			if strings.HasPrefix(l, s.Name+" ") {
				cells = split.Split(strings.TrimSpace(strings.TrimPrefix(l, s.Name)), -1)
			}
		}
		if len(cells) != len(headers) {
			t.Fatalf("%s: %d cells under %d headers:\n%s", s.Name, len(cells), len(headers), table)
		}
		if len(s.SeedRuns) != 3 || len(s.SeedStats) == 0 {
			t.Fatalf("%s: %d seed runs, seed_stats %v", s.Name, len(s.SeedRuns), s.SeedStats)
		}
		for i, h := range headers {
			key, scale, ok := reports.ColumnFigure(h, &res)
			if !ok {
				t.Errorf("column %q names no figure", h)
				continue
			}
			iv, ok := s.SeedStats[key]
			if !ok || iv.N != 3 {
				t.Errorf("%s: seed_stats has no %s (column %q): %+v", s.Name, key, h, iv)
				continue
			}
			m := cellPattern.FindStringSubmatch(cells[i])
			if m == nil {
				t.Errorf("%s %s: cell %q unreadable", s.Name, h, cells[i])
				continue
			}
			mean, half := iv.Mean*scale, iv.HalfWidth()*scale
			switch {
			case m[1] == "—":
				if !math.IsInf(iv.Mean, 1) {
					t.Errorf("%s %s: table — but seed_stats mean %v", s.Name, h, iv.Mean)
				}
			case !agrees(m[1], mean):
				t.Errorf("%s %s: table %q, seed_stats mean %v", s.Name, h, cells[i], mean)
			case m[2] == "" && iv.Lo != iv.Hi:
				t.Errorf("%s %s: table %q has no ±, seed_stats [%v, %v]", s.Name, h, cells[i], iv.Lo, iv.Hi)
			case m[2] != "" && !agrees(m[2], half):
				t.Errorf("%s %s: table %q, seed_stats half width %v", s.Name, h, cells[i], half)
			}
			checked++
		}
	}
	t.Logf("%d cells checked", checked)
}
