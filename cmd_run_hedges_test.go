package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/simbench/simbench/reports"
)

// run hedging --seeds 2 writes the hedge figures' means and intervals in
// the seed_stats of the strategies that hedge, equal to what the table's
// hedge columns show (their share in brackets aside), and none for the
// strategy that does not, whose cells are "–".
func TestRunSeedsWritesTheHedgeFigures(t *testing.T) {
	columns := []string{"attempts", "hedges", "hedges won", "cancelled s"}
	res, table := runSeeds(t, "hedging", 2, columns)
	split := regexp.MustCompile(`\s{2,}`)
	share := regexp.MustCompile(` \([0-9.]+%\)$`)
	hedging := 0
	for _, s := range res.Strategies {
		var cells []string
		for _, l := range strings.Split(table, "\n") {
			if strings.HasPrefix(l, s.Name+" ") {
				cells = split.Split(strings.TrimSpace(strings.TrimPrefix(l, s.Name)), -1)
			}
		}
		if len(cells) != len(columns) {
			t.Fatalf("%s: cells %q under %v:\n%s", s.Name, cells, columns, table)
		}
		for i, h := range columns[1:] {
			key, _, _ := reports.ColumnFigure(h, &res)
			iv, ok := s.SeedStats[key]
			if s.Hedges == 0 {
				if ok || cells[i+1] != "–" {
					t.Errorf("%s never hedged: seed_stats %s %+v (%v), cell %q", s.Name, key, iv, ok, cells[i+1])
				}
				continue
			}
			cell := share.ReplaceAllString(cells[i+1], "")
			m := cellPattern.FindStringSubmatch(cell)
			switch {
			case !ok || iv.N != 2:
				t.Errorf("%s: seed_stats has no %s: %+v", s.Name, key, iv)
			case m == nil || !agrees(m[1], iv.Mean):
				t.Errorf("%s %s: table %q, seed_stats mean %v", s.Name, h, cells[i+1], iv.Mean)
			case m[2] != "" && !agrees(m[2], iv.HalfWidth()):
				t.Errorf("%s %s: table %q, seed_stats half width %v", s.Name, h, cells[i+1], iv.HalfWidth())
			}
		}
		if s.Hedges > 0 {
			hedging++
		}
	}
	if hedging == 0 || hedging == len(res.Strategies) {
		t.Fatalf("%d of %d strategies hedged; the scenario has one that does not:\n%s", hedging, len(res.Strategies), table)
	}
}
