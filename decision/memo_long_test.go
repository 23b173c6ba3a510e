//go:build long

package decision

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// The hedging built-in's decision reaches one configuration twice (a
// strategy swept again at the pace it was swept at, when no tuning's
// choice is shown no worse than every configuration measured): with the
// memo it simulates no run twice, without it some, and the decision is
// the same.
func TestLongMemoKeepsTheDecision(t *testing.T) {
	sc, err := scenarios.Builtin("hedging")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Rule: Rule{MaxShare: DefaultMaxRateLimitedShare}, NoLoad: true}
	with := decideCounting(t, sc, o, false)
	without := decideCounting(t, sc, o, true)
	if without.twice == 0 {
		t.Fatalf("without the memo no run was simulated twice (%d runs): the test compares nothing", without.runs)
	}
	if with.twice != 0 {
		t.Errorf("with the memo %d of %d runs simulated a run already simulated", with.twice, with.runs)
	}
	if with.runs != without.runs-without.twice {
		t.Errorf("with the memo %d runs; without %d, of which %d twice", with.runs, without.runs, without.twice)
	}
	sameResult(t, sc.Name, with.r, without.r)
	t.Logf("%d runs with the memo, %d without (%d twice)", with.runs, without.runs, without.twice)
}

// counted is a decision with the runs it simulated, counted by what the
// simulator did (the strategy's settings as it reads them and the seed).
type counted struct {
	r *Result
	// runs is how many runs were simulated; twice how many of them
	// simulated a run already simulated.
	runs, twice int
}

// decideCounting decides sc with options o (the memo left out with
// noMemo), counting the runs the search simulates.
func decideCounting(t fataler, sc *scenarios.Scenario, o Options, noMemo bool) counted {
	t.Helper()
	var c counted
	seen := map[runKey]bool{}
	o.noMemo = noMemo
	o.ran = func(st scenarios.Strategy, seed int, _ results.StrategyResult) {
		k := runKey{strategy: simKey(st), seed: uint64(seed)}
		c.runs++
		if seen[k] {
			c.twice++
		}
		seen[k] = true
	}
	r, err := Decide(context.Background(), sc, o)
	if err != nil {
		t.Fatalf("%s: %v", sc.Name, err)
	}
	c.r = r
	return c
}

// sameResult fails unless a and b are the same decision, sweep, strategy
// set and configurations measured.
func sameResult(t fataler, name string, a, b *Result) {
	t.Helper()
	ja, _ := json.Marshal(a.Decision)
	jb, _ := json.Marshal(b.Decision)
	if string(ja) != string(jb) {
		t.Fatalf("%s: the decision differs with the memo:\n%s\nwithout:\n%s", name, ja, jb)
	}
	if !reflect.DeepEqual(a.Row, b.Row) || !reflect.DeepEqual(a.Tuned, b.Tuned) || !reflect.DeepEqual(a.Measured, b.Measured) {
		t.Fatalf("%s: the sweep, the strategy set or the configurations measured differ with the memo", name)
	}
}
