package decision

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/internal/racebuild"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// propertyScenarios is how many generated scenarios TestDecisionProperty
// decides: 24, the first 4 of them under the race detector, which runs a
// decision about 20 times slower (24 took 160 to 300 s); the scenarios
// after them all run in the long suite (TestLongDecisionProperty). The
// race detector is there for the decision's goroutines, which every
// scenario runs alike, not for the search's cases.
var propertyScenarios = 24

// propertyScenariosRace is propertyScenarios under the race detector.
const propertyScenariosRace = 4

// randomDecisionScenario writes a small scenario from the draws: one
// service with a request limit and a lognormal latency, a closed or open
// workload, and the strategies a user would write (no cap, a cap, a token
// bucket, both), in a random order.
func randomDecisionScenario(t *rapid.T) *scenarios.Scenario {
	rpm := rapid.IntRange(60, 1200).Draw(t, "rpm")
	p50 := rapid.IntRange(50, 800).Draw(t, "p50")
	p95 := p50 + rapid.IntRange(10, 1500).Draw(t, "p95-p50")
	calls := rapid.IntRange(1, 10).Draw(t, "calls")
	var work string
	if rapid.Bool().Draw(t, "open") {
		work = fmt.Sprintf("arrival_rate = \"%d/m\"\n", rapid.IntRange(2, 60).Draw(t, "arrivals"))
	} else {
		work = fmt.Sprintf("sessions = %d\nthink = { dist = \"uniform\", min = \"500ms\", max = \"3s\" }\n", rapid.IntRange(1, 8).Draw(t, "sessions"))
	}
	retry := `retry = { backoff = "full-jitter", base = "500ms", cap = "10s", attempts = 5 }`
	strategies := []string{
		"name = \"unbounded\"\n" + retry,
		fmt.Sprintf("name = \"capped\"\nmax_in_flight = %d\n%s", rapid.IntRange(1, 12).Draw(t, "cap"), retry),
		fmt.Sprintf("name = \"paced\"\ntoken_bucket = true\nheadroom = %.1f\n%s", rapid.SampledFrom([]float64{0.5, 0.7, 0.9, 1}).Draw(t, "headroom"), retry),
		fmt.Sprintf("name = \"both\"\nmax_in_flight = %d\ntoken_bucket = true\n%s", rapid.IntRange(1, 12).Draw(t, "cap2"), retry),
	}
	strategies = rapid.Permutation(strategies).Draw(t, "order")
	src := fmt.Sprintf("name = \"gen\"\nseed = %d\nduration = \"15s\"\n[workload]\n%scalls = [ { tool = \"t\", count = %d } ]\n[services.s]\nrpm = %d\nlatency = { dist = \"lognormal\", p50 = \"%dms\", p95 = \"%dms\" }\nheaders = \"standard\"\n[tools.t]\nservice = \"s\"\n",
		rapid.Uint64Range(0, 1000).Draw(t, "seed"), work, calls, rpm, p50, p95)
	for _, st := range strategies {
		src += "[[strategy]]\n" + st + "\n"
	}
	sc, err := scenarios.Parse("gen.toml", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return sc
}

// TestDecisionProperty decides generated scenarios and checks the joint
// search's property: the decision is not worse, by the rule's own test
// (no Worse finding), than any configuration measured that meets the rule
// (the strategies as written, every tuning's caps and paces, each over
// every seed it ran), and every strategy the search did not tune is named
// with its reason.
func TestDecisionProperty(t *testing.T) {
	n := propertyScenarios
	if racebuild.On {
		n = propertyScenariosRace
	}
	checkDecisionProperty(t, n)
}

func checkDecisionProperty(t *testing.T, n int) {
	withChecks(t, n)
	rapid.Check(t, func(rt *rapid.T) {
		sc := randomDecisionScenario(rt)
		r := Rule{MaxShare: DefaultMaxRateLimitedShare}
		d, err := Decide(context.Background(), sc, Options{Rule: r, Parallel: 1, NoLoad: true})
		if err != nil {
			rt.Fatal(err)
		}
		if d.Row.Chosen == 0 {
			return // nothing meets the rule: nothing to be worse than
		}
		c := pointAt(d.Row.Points, d.Row.Chosen)
		if len(d.Measured) == 0 {
			rt.Fatal("no configuration measured")
		}
		for what, p := range d.Measured {
			if r.Score(p) < r.Score(*c) && r.Compare(*c, p) == Worse {
				rt.Fatalf("the decision (%s) is not shown no worse than %s (p95 %v against %v)\n%s", d.Decision.Sentence, what, p.P95Ms, c.P95Ms, strings.Join(d.Decision.Evidence.Search, "\n"))
			}
		}
		search := strings.Join(d.Decision.Evidence.Search, "\n")
		for _, st := range sc.Strategies {
			if st.Name != d.Decision.Strategy && st.Name != sim.SweepStrategy(sc) && !strings.Contains(search, "strategy: "+st.Name+" ") {
				rt.Fatalf("strategy %s is neither tuned nor said why not:\n%s", st.Name, search)
			}
		}
	})
}

// withChecks makes rapid run n checks (its -rapid.checks flag) for the rest
// of the test.
func withChecks(t *testing.T, n int) {
	f := flag.Lookup("rapid.checks")
	old := f.Value.String()
	if err := flag.Set("rapid.checks", strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("rapid.checks", old) })
	// A fixed seed: the same scenarios in every run, with or without the
	// race detector, unless -rapid.seed asks for one (as rapid's report of
	// a failure says to reproduce it).
	seed := flag.Lookup("rapid.seed")
	oldSeed := seed.Value.String()
	if oldSeed != "0" {
		return
	}
	if err := flag.Set("rapid.seed", "38"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("rapid.seed", oldSeed) })
}
