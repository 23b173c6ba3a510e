package decision

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// noWorseThanWritten fails t when a strategy of the scenario, run as
// written over the decision's seeds, meets the rule and answers faster
// than the decision under the rule's own comparison: beyond its tolerance
// and with the two p95 intervals apart.
func noWorseThanWritten(t *testing.T, sc *scenarios.Scenario, d *results.Decision, rule Rule, opts sim.Options) {
	t.Helper()
	opts.Strategies = nil
	res, err := sim.RunSeeds(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	e := d.Expected
	chosen := &results.SweepPoint{Cap: max(1, e.Cap), P95Ms: e.P95Ms, P95LoMs: e.P95LoMs, P95HiMs: e.P95HiMs, Seeds: len(d.Evidence.Seeds)}
	if d.Evidence.Chosen == 0 {
		chosen = nil
	}
	for _, s := range res.Strategies {
		p := SweepPointOf(1, s)
		if rule.meets(p) && rule.faster(&p, chosen) {
			t.Errorf("%s: the decision (%s) answers at p95 %v ms [%v, %v]; %s as written meets the rule at %v ms [%v, %v]",
				sc.Name, d.Sentence, e.P95Ms, e.P95LoMs, e.P95HiMs, s.Name, p.P95Ms, p.P95LoMs, p.P95HiMs)
		}
	}
}

// On burst-8 the cap does not bind and the pace does: the decision paces
// at the full limit, says that the pace is the lever, and answers no
// slower than the scenario's own paced strategy.
func TestDecideBurst8ThePaceIsTheLever(t *testing.T) {
	sc, err := scenarios.Builtin("burst-8")
	if err != nil {
		t.Fatal(err)
	}
	rule := Rule{MaxShare: DefaultMaxRateLimitedShare}
	r, err := Decide(context.Background(), sc, Options{Rule: rule})
	if err != nil {
		t.Fatal(err)
	}
	d := r.Decision
	if d.Headroom != 1 || !d.Evidence.CapFlat || !strings.HasPrefix(d.Sentence, "pace geo at 5 requests/s") { // rps = 5: paced in the file's unit
		t.Errorf("headroom %g, cap flat %v, sentence %q: want headroom 1, a flat cap and the pace first", d.Headroom, d.Evidence.CapFlat, d.Sentence)
	}
	tried := map[float64]bool{}
	for _, p := range d.Evidence.Paces {
		tried[p.Headroom] = true
	}
	// The last round's paces leave out those swept in an earlier round.
	if len(tried) < len(SearchHeadrooms)-1 || !strings.Contains(strings.Join(d.Evidence.Search, "\n"), headroomsText()+" tried at cap") || len(d.Evidence.Strategies) != len(sc.Strategies) {
		t.Errorf("paces %v, strategies %v: want every headroom and every strategy as written", d.Evidence.Paces, d.Evidence.Strategies)
	}
	noWorseThanWritten(t, sc, d, rule, sim.Options{Seeds: DefaultSeeds})
}

// A strategy with per-service caps gets a per-service cap set, never a
// global cap it does not have, and the caps it keeps are named.
func TestDecidePerServiceCaps(t *testing.T) {
	sc, err := scenarios.Parse("two.toml", []byte(`
name = "two"
duration = "2m"
[workload]
sessions = 8
think = { dist = "constant", value = "500ms" }
calls = [ { tool = "search", count = 6 }, { tool = "crm", count = 1 } ]
[services.search_api]
rpm = 600
latency = { dist = "uniform", min = "100ms", max = "300ms" }
[services.crm]
rps = 20
latency = { dist = "constant", value = "50ms" }
[tools.search]
service = "search_api"
[tools.crm]
service = "crm"
[[strategy]]
name = "split"
max_in_flight_per_service = { search_api = 4, crm = 1 }
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decide(context.Background(), sc, Options{Rule: Rule{MaxShare: DefaultMaxRateLimitedShare}, Seeds: 2, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	d := r.Decision
	if d.MaxInFlight != 0 || !strings.HasPrefix(d.Knob, "max_in_flight_per_service.") || strings.Contains(d.Sentence, "set max_in_flight =") {
		t.Fatalf("knob %s, max_in_flight %d, sentence %q: want a per-service cap only", d.Knob, d.MaxInFlight, d.Sentence)
	}
	if d.Knob == "max_in_flight_per_service.search_api" && !strings.Contains(d.Sentence, "crm stays at 1") {
		t.Errorf("sentence %q: want the cap that stays named", d.Sentence)
	}
	if r.Tuned.MaxInFlight != 0 || len(r.Tuned.MaxInFlightPerService) != 2 {
		t.Errorf("tuned caps %d, %v: want the two per-service caps only", r.Tuned.MaxInFlight, r.Tuned.MaxInFlightPerService)
	}
}
