package sim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

func TestParseCaps(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{"1..64", "[1 2 4 8 16 32 64]"},
		{"3..20", "[3 6 12 20]"},
		{"4..16/4", "[4 8 12 16]"},
		{"1,4,9", "[1 4 9]"},
		{"0..4", "error"},
		{"8..2", "error"},
		{"a,b", "error"},
	}
	for _, tt := range tests {
		caps, err := ParseCaps(tt.give)
		got := fmt.Sprint(caps)
		if err != nil {
			got = "error"
		}
		if got != tt.want {
			t.Errorf("ParseCaps(%q) = %s, want %s", tt.give, got, tt.want)
		}
	}
}

func TestParseLoads(t *testing.T) {
	l, err := ParseLoads("sessions=10,20")
	if err != nil || len(l) != 2 || l[1].Sessions != 20 || l[0].String() != "sessions=10" {
		t.Errorf("sessions: %v %v", l, err)
	}
	l, err = ParseLoads("arrival_rate=0.5,2/s")
	if err != nil || l[0].ArrivalRate != 0.5 || l[1].ArrivalRate != 2 {
		t.Errorf("arrival_rate: %v %v", l, err)
	}
	for _, bad := range []string{"sessions=0", "users=3", "sessions", "arrival_rate=-1",
		"arrival_rate=NaN", "arrival_rate=+Inf", "arrival_rate=1e9", "sessions=99999999"} {
		if _, err := ParseLoads(bad); err == nil {
			t.Errorf("ParseLoads(%q) accepted", bad)
		}
	}
}

func TestSweepRaisesGoodputWithCap(t *testing.T) {
	sc, err := scenarios.Builtin("research-agent")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Sweep(context.Background(), sc, sc.Strategies[0].Name, []int{1, 2, 4}, []Load{{Sessions: 4}, {Sessions: 8}}, Options{Duration: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || len(rows[0].Results) != 3 {
		t.Fatalf("rows %+v", rows)
	}
	for _, row := range rows {
		r := row.Results
		if r[0].MaxInFlight != 1 || r[2].MaxInFlight != 4 || r[2].Name != sc.Strategies[0].Name+"@4" {
			t.Errorf("%v: caps %d, %d, name %q", row.Load, r[0].MaxInFlight, r[2].MaxInFlight, r[2].Name)
		}
		if !(r[0].GoodputPerS < r[1].GoodputPerS && r[1].GoodputPerS <= r[2].GoodputPerS) {
			t.Errorf("%v: goodput does not grow with the cap: %.2f %.2f %.2f", row.Load, r[0].GoodputPerS, r[1].GoodputPerS, r[2].GoodputPerS)
		}
	}
	if _, err := Sweep(context.Background(), sc, "nope", []int{1}, nil, Options{}); err == nil {
		t.Error("unknown strategy accepted")
	}
}

// An interrupted sweep keeps, per cap, the runs that finished: with one
// seed the strategies not cut short, with several the seeds that finished
// (a cap with none is left out).
func TestFinishedRuns(t *testing.T) {
	done := results.StrategyResult{Turns: 10}
	cut := results.StrategyResult{Turns: 3, Partial: true}
	row := finishedRuns(Load{}, []int{1, 2, 4}, []results.StrategyResult{done, cut, done}, 1)
	if fmt.Sprint(row.Caps) != "[1 4]" || len(row.Results) != 2 {
		t.Errorf("one seed: caps %v, %d results; want caps 1 and 4", row.Caps, len(row.Results))
	}
	seeded := func(runs ...results.StrategyResult) results.StrategyResult {
		s := runs[0]
		s.SeedRuns = runs
		return s
	}
	row = finishedRuns(Load{Sessions: 2}, []int{1, 2, 4}, []results.StrategyResult{seeded(done, done), seeded(cut), seeded(done, cut)}, 3)
	if fmt.Sprint(row.Caps) != "[1 4]" || len(row.Results[0].SeedRuns) != 2 || len(row.Results[1].SeedRuns) != 1 || row.Results[1].Partial {
		t.Errorf("three seeds: caps %v, results %+v; want cap 1 with 2 seeds, cap 4 with 1", row.Caps, row.Results)
	}
}
