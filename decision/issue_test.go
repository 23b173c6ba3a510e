package decision

import (
	"context"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// measuredPoints returns every configuration a decision's search measured
// and meets the rule: the strategies as written (over the same seeds,
// rerun here), the caps of the decision's sweep and the paces tried.
func measuredPoints(t *testing.T, sc *scenarios.Scenario, d *Result, r Rule) map[string]results.SweepPoint {
	t.Helper()
	res, err := sim.RunSeeds(context.Background(), sc, sim.Options{Seeds: DefaultSeeds})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]results.SweepPoint{}
	for i, s := range res.Strategies {
		if p := SweepPointOf(max(1, sc.Strategies[i].MaxInFlight), s); r.meets(p) {
			out[s.Name+" as written"] = p
		}
	}
	for _, p := range d.Row.Points {
		if r.qualifies(p) {
			out[d.Decision.Strategy+" at cap "+strconvI(p.Cap)] = p
		}
	}
	return out
}

func strconvI(n int) string { return strconv.Itoa(n) }

// noWorseThanMeasured checks the property of the search: the decision is
// not worse, by the rule's own test, than any configuration measured that
// meets the rule and scores lower.
func noWorseThanMeasured(t *testing.T, sc *scenarios.Scenario, d *Result, r Rule) {
	t.Helper()
	c := pointAt(d.Row.Points, d.Row.Chosen)
	if c == nil {
		t.Fatalf("no cap chosen: %s", d.Decision.Sentence)
	}
	for what, p := range measuredPoints(t, sc, d, r) {
		if r.Score(p) < r.Score(*c) && r.Compare(*c, p) != NoWorse {
			t.Errorf("the decision (%s, score %v) is not shown no worse than %s (score %v)\n%s", d.Decision.Sentence, r.Score(*c), what, r.Score(p), strings.Join(d.Decision.Evidence.Search, "\n"))
		}
	}
}

// The first case, written from its description: an open workload
// of 40 queries a minute, 8 fetches each, 600 requests/min, lognormal
// latency of 400 ms median and 900 ms p95. The rule used to take cap 3
// because its interval overlapped the best's, at a p95 39% worse; a team
// following it would lower a working semaphore of 4. The decision is now
// no slower than any configuration measured, and not cap 3.
func TestDecideOpenFetchNotTheSlowerCap(t *testing.T) {
	sc, err := scenarios.Load("testdata/open-fetch.toml")
	if err != nil {
		t.Fatal(err)
	}
	r := Rule{MaxShare: DefaultMaxRateLimitedShare}
	d, err := Decide(context.Background(), sc, Options{Rule: r})
	if err != nil {
		t.Fatal(err)
	}
	if d.Row.Chosen < 4 {
		t.Errorf("chosen cap %d, want 4 or more: %s", d.Row.Chosen, d.Decision.Sentence)
	}
	noWorseThanMeasured(t, sc, d, r)
}

// The second case: the README's complete scenario. Its
// paced strategy as written answered 14.5% faster than the decision; now
// the decision is no worse, by the rule's test, than any strategy as
// written that meets the rule, as docs/decision.md promises.
func TestDecideReadmeExampleNoSlowerThanPaced(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## A complete scenario.*?```toml[^\n]*\n(.*?)```").FindSubmatch(data)
	if m == nil {
		t.Fatal("no complete scenario in README.md")
	}
	sc, err := scenarios.Parse("search-burst.toml", m[1])
	if err != nil {
		t.Fatal(err)
	}
	r := Rule{MaxShare: DefaultMaxRateLimitedShare}
	d, err := Decide(context.Background(), sc, Options{Rule: r})
	if err != nil {
		t.Fatal(err)
	}
	noWorseThanMeasured(t, sc, d, r)
}

// narrow-vs-wide under a cost objective: the decision costs no more per
// answered task than the cheapest strategy of the run, as written, that
// meets the rule.
func TestDecideNarrowVersusWideByCost(t *testing.T) {
	sc, err := scenarios.Builtin("narrow-vs-wide")
	if err != nil {
		t.Fatal(err)
	}
	sc.Objective = scenarios.ObjectiveCost
	r := Rule{MaxShare: DefaultMaxRateLimitedShare}
	d, err := Decide(context.Background(), sc, Options{Rule: r})
	if err != nil {
		t.Fatal(err)
	}
	r.Objective = scenarios.ObjectiveCost
	cost := d.Decision.Expected.CostPerAnsweredTaskUSD
	for _, o := range d.Decision.Evidence.Strategies {
		if o.MeetsRule && o.CostPerAnsweredTaskUSD > 0 && o.CostPerAnsweredTaskUSD < cost/(1+r.tolerance()) {
			t.Errorf("the decision costs %v per answered task, %s as written %v: %s", cost, o.Strategy, o.CostPerAnsweredTaskUSD, d.Decision.Sentence)
		}
	}
	noWorseThanMeasured(t, sc, d, r)
}

// The completion objective changes the answer (testdata/flaky-completion.toml):
// a tool answers a share f = 0.08 of its requests 500, and a turn makes
// k = 4 calls. "quick" tries a call twice, so a turn fails when one of its
// calls fails both times: it answers (1 − f²)^k = 97.5% of turns. "patient"
// tries five times: (1 − f⁵)^k, 99.99%. A turn meets an error with
// chance 1 − (1 − f)^k = 28%, more than the 5% above the p95, and patient
// waits up to 3 s before its retry, where quick waits at most 50 ms: by
// the p95 time to answer quick is best, by the share answered patient.
// Both meet the rule (no 429: the limit is far above the load).
func TestDecideCompletionObjective(t *testing.T) {
	sc, err := scenarios.Load("testdata/flaky-completion.toml")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Objective != scenarios.ObjectiveCompletion {
		t.Fatalf("objective %q, want completion", sc.Objective)
	}
	const f, k = 0.08, 4
	share := map[string]float64{"quick": math.Pow(1-f*f, k), "patient": math.Pow(1-math.Pow(f, 5), k)}
	for _, c := range []struct {
		objective scenarios.Objective
		want      string
	}{{scenarios.ObjectiveCompletion, "patient"}, {scenarios.ObjectiveP95, "quick"}} {
		s := *sc
		s.Objective = c.objective
		d, err := Decide(context.Background(), &s, Options{Rule: Rule{MaxShare: DefaultMaxRateLimitedShare}})
		if err != nil {
			t.Fatal(err)
		}
		if d.Decision.Strategy != c.want {
			t.Errorf("objective %s: the decision sets %s, want %s: %s", c.objective, d.Decision.Strategy, c.want, d.Decision.Sentence)
		}
		// The figures the answer rests on are the ones worked out above.
		for _, o := range d.Decision.Evidence.Strategies {
			if w, ok := share[o.Strategy]; ok && math.Abs(o.AnsweredShare-w) > 0.01 {
				t.Errorf("%s as written answers %v of turns, want %.4f ± 0.01", o.Strategy, o.AnsweredShare, w)
			}
		}
		r := Rule{MaxShare: DefaultMaxRateLimitedShare, Objective: c.objective}
		noWorseThanMeasured(t, &s, d, r)
	}
}
