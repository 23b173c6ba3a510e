package scenarios

import (
	"slices"
	"time"

	"github.com/simbench/simbench/spec"
)

// Hedge is a strategy's hedging of idempotent reads (sched.HedgePolicy):
// a second attempt of a call of a read tool marked idempotent = true that
// has not answered after a delay, the first success kept and the other
// attempt cancelled at the transport.
type Hedge struct {
	// After is the delay from an attempt's start to its hedge (key
	// hedge_after); with Percentile, the least delay.
	After time.Duration
	// Percentile, in (0, 1), sets the delay to that percentile of the
	// latencies of the service's recent first attempts, the attempts that
	// are not hedges, so that a share 1 − Percentile of them is hedged
	// (key hedge_percentile; sched.HedgePolicy.Percentile says how a first
	// attempt cut short by its hedge counts).
	Percentile float64
	// Budget is the most hedges per attempt, in (0, 1] (key hedge_budget;
	// 0: sched.DefaultHedgeBudget).
	Budget float64
}

// decodeHedge reads a strategy's hedge keys: hedge_after, hedge_percentile
// and hedge_budget.
func (d *decoder) decodeHedge(sc *Scenario, t *table) *Hedge {
	if !t.has("hedge_after") && !t.has("hedge_percentile") {
		if t.has("hedge_budget") {
			t.add("hedge_budget", "only applies with hedge_after or hedge_percentile; add one of them or remove hedge_budget")
		}
		return nil
	}
	h := &Hedge{}
	if a, ok := t.duration("hedge_after"); ok {
		if a <= 0 {
			t.add("hedge_after", "is %v; it is the wait before a second attempt, so it must be above 0", a)
		}
		h.After = a
	}
	if p, ok := t.fraction("hedge_percentile"); ok {
		if p == 0 || p == 1 {
			t.add("hedge_percentile", "is %s; it is the percentile of the recent first attempts' latencies after which a hedge is sent, so keep it strictly between 0 and 1 (0.95: hedge the slowest 5%%)", spec.ShowAmount(p))
		}
		h.Percentile = p
	}
	if b, ok := t.fraction("hedge_budget"); ok {
		if b == 0 {
			t.add("hedge_budget", "is 0, which would send no hedge; remove the hedge keys instead, or allow a fraction such as 0.1")
		}
		h.Budget = b
	}
	if !slices.ContainsFunc(sc.Tools, func(tool Tool) bool { return tool.Kind == KindRead && tool.Idempotent }) {
		k := "hedge_after"
		if !t.has(k) {
			k = "hedge_percentile"
		}
		t.add(k, "hedges only reads marked idempotent = true, and no tool is one; mark the read tools to hedge with idempotent = true")
	}
	return h
}
