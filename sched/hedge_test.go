package sched

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// drawHedge gives half the configs a hedge policy (forced: all, and three
// calls in four idempotent): a fixed delay, a percentile, or both, with a
// drawn budget.
func drawHedge(g *draws, cfg *Config, cs []Call, forced bool) {
	if !forced && !g.bool("hedge") {
		return
	}
	if forced {
		for i := range cs {
			cs[i].Idempotent = g.intRange("idempotent", 0, 3) > 0
		}
	}
	p := &HedgePolicy{
		After:      time.Duration(g.zeroOr("hedge after ms", 1, 600)) * time.Millisecond,
		Budget:     float64(g.intRange("hedge budget %", 20, 100)) / 100,
		Burst:      float64(g.zeroOr("hedge burst", 1, 5)),
		Window:     g.intRange("hedge window", 1, 10),
		MinSamples: g.intRange("hedge samples", 1, 5),
	}
	if p.After == 0 || g.bool("hedge percentile") {
		p.Percentile = float64(g.intRange("hedge pct", 1, 99)) / 100
	}
	cfg.Hedge = p
}

// checkHedges checks the hedges sent: only of idempotent reads, at most one
// per attempt, never more than the budget allows, each counted in its
// call's result; and that every success came from an attempt that was
// never cancelled, a hedge exactly when the result says so.
func checkHedges(rt *testing.T, d *vdriver, cfg Config, services []string) {
	for s, peak := range d.svcPeak {
		if c := cfg.Services[s].MaxInFlight; c > 0 && peak > c {
			rt.Fatalf("service %s: %d attempts in flight, hedges counted, above its cap %d", s, peak, c)
		}
	}
	primaries, hedges := map[string]int{}, map[string]int{}
	perAttempt := map[string]int{}
	perCall := map[string]int{}
	isHedge := map[AttemptID]bool{}
	for _, st := range d.starts {
		if !st.hedge {
			primaries[st.service]++
			continue
		}
		isHedge[st.attempt] = true
		hedges[st.service]++
		perCall[st.id]++
		key := fmt.Sprint(st.id, "#", st.n)
		if perAttempt[key]++; perAttempt[key] > 1 {
			rt.Fatalf("attempt %s hedged twice", key)
		}
		if c := d.calls[st.id]; cfg.Hedge == nil || c.Write || !c.Idempotent {
			rt.Fatalf("hedge of %s (%+v), policy %v", st.id, c, cfg.Hedge)
		}
	}
	if cfg.Hedge != nil {
		budget := cfg.Hedge.Budget
		if budget == 0 {
			budget = DefaultHedgeBudget
		}
		for _, s := range append(services, "") {
			if float64(hedges[s]) > budget*float64(primaries[s])+1e-9 {
				rt.Fatalf("service %q: %d hedges for %d attempts, budget %v", s, hedges[s], primaries[s], budget)
			}
		}
	}
	for id, r := range d.results {
		if int(r.Hedges) != perCall[id] {
			rt.Fatalf("%s: result says %d hedges, %d were sent", id, r.Hedges, perCall[id])
		}
		if r.Err != nil {
			if r.HedgeWon {
				rt.Fatalf("%s failed with HedgeWon set", id)
			}
			continue
		}
		a, ok := r.Value.(AttemptID)
		if !ok {
			rt.Fatalf("%s: success without an attempt's value: %v", id, r.Value)
		}
		if slices.Contains(d.cancels, a) {
			rt.Fatalf("%s: the result came from attempt %d, which was cancelled", id, a)
		}
		if isHedge[a] != r.HedgeWon {
			rt.Fatalf("%s: value from attempt %d (hedge %v), HedgeWon %v", id, a, isHedge[a], r.HedgeWon)
		}
	}
}

// scripted returns an executor that answers the k-th attempt started of
// each call (the first attempt, then its hedge, …) with plan[id][k].
type answer struct {
	lat time.Duration
	o   Outcome
}

// TestPropertiesHedged checks the invariants (TestProperties) with a hedge
// policy in every case, drawn with priority classes, caps and buckets:
// one result per call, caps never exceeded with hedges counted, the hedge
// budget never exceeded, and no result from a cancelled attempt.
func TestPropertiesHedged(t *testing.T) {
	forSeeds(t, 4*propertyChecks, func(rt *testing.T, g *draws) { checkProperties(rt, g, true) })
}

func scripted(plan map[string][]answer) func(*Call, int, time.Duration) (time.Duration, Outcome) {
	k := map[string]int{}
	return func(c *Call, _ int, _ time.Duration) (time.Duration, Outcome) {
		i := k[c.ID]
		k[c.ID]++
		p := plan[c.ID]
		if i >= len(p) {
			return 100 * time.Millisecond, Succeeded("late")
		}
		return p[i].lat, p[i].o
	}
}

func read(id string) Call { return Call{ID: id, Service: "api", Idempotent: true} }

// A slow first attempt is hedged after the delay; the hedge's answer is the
// result, the first attempt is cancelled.
func TestHedgeWins(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"api": {}}, Hedge: &HedgePolicy{After: 100 * time.Millisecond, Budget: 1}}
	d := newDriver(t, cfg, scripted(map[string][]answer{"a": {{10 * time.Second, Succeeded("slow")}, {200 * time.Millisecond, Succeeded("fast")}}}))
	d.submit(read("a"))
	d.run(1 << 62)
	r := d.results["a"]
	if r.Value != "fast" || !r.HedgeWon || r.Hedges != 1 || r.Attempts != 1 || r.Finished != 300*time.Millisecond {
		t.Fatalf("result %+v", r)
	}
	if len(d.starts) != 2 || !d.starts[1].hedge || d.starts[1].at != 100*time.Millisecond {
		t.Fatalf("starts %+v", d.starts)
	}
	if len(d.cancels) != 1 || d.cancels[0] != d.starts[0].attempt {
		t.Fatalf("cancels %v, want the first attempt %d", d.cancels, d.starts[0].attempt)
	}
	if r.Running != 300*time.Millisecond {
		t.Fatalf("running %v", r.Running)
	}
}

// The first attempt answering before the hedge wins; the hedge is
// cancelled. An attempt that answers before the delay is not hedged.
func TestHedgeFirstAttemptWinsOrIsNotHedged(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"api": {}}, Hedge: &HedgePolicy{After: 100 * time.Millisecond, Budget: 1}}
	d := newDriver(t, cfg, scripted(map[string][]answer{
		"a": {{150 * time.Millisecond, Succeeded("first")}, {time.Second, Succeeded("hedge")}},
		"b": {{50 * time.Millisecond, Succeeded("quick")}},
	}))
	d.submit(read("a"), read("b"))
	d.run(1 << 62)
	if r := d.results["a"]; r.Value != "first" || r.HedgeWon || r.Hedges != 1 || r.Finished != 150*time.Millisecond {
		t.Fatalf("a: %+v", r)
	}
	if r := d.results["b"]; r.Value != "quick" || r.Hedges != 0 {
		t.Fatalf("b: %+v", r)
	}
	if len(d.cancels) != 1 || d.cancels[0] != d.starts[2].attempt || !d.starts[2].hedge {
		t.Fatalf("cancels %v starts %+v", d.cancels, d.starts)
	}
}

// A failed first attempt does not trigger a retry while its hedge runs;
// the call takes the hedge's answer, or fails when the hedge fails too and
// no retries are left. A failed hedge is dropped while the first attempt
// runs.
func TestHedgeFailures(t *testing.T) {
	transient := Failed(ClassTransient, errors.New("reset"))
	cfg := Config{Services: map[string]ServiceConfig{"api": {}}, Hedge: &HedgePolicy{After: 100 * time.Millisecond, Budget: 1}}
	d := newDriver(t, cfg, scripted(map[string][]answer{
		"primary-fails": {{200 * time.Millisecond, transient}, {300 * time.Millisecond, Succeeded("hedge")}},
		"hedge-fails":   {{time.Second, Succeeded("first")}, {50 * time.Millisecond, transient}},
		"both-fail":     {{200 * time.Millisecond, transient}, {200 * time.Millisecond, Failed(ClassPermanent, errors.New("bad"))}},
	}))
	d.submit(read("primary-fails"), read("hedge-fails"), read("both-fail"))
	d.run(1 << 62)
	if r := d.results["primary-fails"]; r.Value != "hedge" || !r.HedgeWon || r.Finished != 400*time.Millisecond || r.Running != 400*time.Millisecond {
		t.Fatalf("primary-fails: %+v", r)
	}
	if r := d.results["hedge-fails"]; r.Value != "first" || r.HedgeWon || r.Finished != time.Second {
		t.Fatalf("hedge-fails: %+v", r)
	}
	if r := d.results["both-fail"]; r.Class != ClassPermanent || r.Err == nil || r.Finished != 300*time.Millisecond {
		t.Fatalf("both-fail: %+v", r)
	}
	if len(d.starts) != 6 || len(d.cancels) != 0 {
		t.Fatalf("%d starts, cancels %v", len(d.starts), d.cancels)
	}
	// With a retry left, the call retries once both have failed.
	cfg.Retry = RetryPolicy{MaxAttempts: 2}
	d = newDriver(t, cfg, scripted(map[string][]answer{
		"a": {{200 * time.Millisecond, transient}, {200 * time.Millisecond, transient}, {50 * time.Millisecond, Succeeded("retry")}},
	}))
	d.submit(read("a"))
	d.run(1 << 62)
	if r := d.results["a"]; r.Value != "retry" || r.HedgeWon || r.Attempts != 2 || r.Hedges != 1 {
		t.Fatalf("retry: %+v", r)
	}
}

// Writes and calls not marked idempotent are never hedged; neither is an
// attempt when a call waits for the service's slot, nor beyond the budget.
func TestHedgeEligibilityCapsAndBudget(t *testing.T) {
	slow := func(*Call, int, time.Duration) (time.Duration, Outcome) { return time.Second, Succeeded(nil) }
	cfg := Config{Services: map[string]ServiceConfig{"api": {}}, Hedge: &HedgePolicy{After: 100 * time.Millisecond, Budget: 1}}
	d := newDriver(t, cfg, slow)
	d.submit(Call{ID: "w", Service: "api", Write: true, Idempotent: true}, Call{ID: "plain", Service: "api"})
	d.run(1 << 62)
	if len(d.starts) != 2 {
		t.Fatalf("starts %+v", d.starts)
	}
	// A cap of 2: two calls run, a third waits: no hedge takes its slot.
	cfg.Services["api"] = ServiceConfig{MaxInFlight: 2}
	d = newDriver(t, cfg, slow)
	d.submit(read("a"), read("b"), read("c"))
	d.run(1 << 62)
	for _, st := range d.starts {
		if st.hedge && st.id != "c" {
			t.Fatalf("%s hedged while c waited: %+v", st.id, d.starts)
		}
	}
	// A budget of 0.25 over 20 slow calls allows 5 hedges, the first after
	// 4 attempts have started.
	cfg.Services["api"] = ServiceConfig{}
	cfg.Hedge = &HedgePolicy{After: 100 * time.Millisecond, Budget: 0.25, Burst: 100}
	d = newDriver(t, cfg, slow)
	calls := make([]Call, 20)
	for i := range calls {
		calls[i] = read(fmt.Sprint("c", i))
	}
	d.submit(calls...)
	d.run(1 << 62)
	var hedged []string
	for _, st := range d.starts {
		if st.hedge {
			hedged = append(hedged, st.id)
		}
	}
	if fmt.Sprint(hedged) != "[c0 c1 c2 c3 c4]" {
		t.Fatalf("hedged %v", hedged)
	}
}

// With a percentile, the delay follows the latencies of the service's
// recent first attempts once enough are known; before that, After
// applies. Ten latencies of 100 ms … 1 s put their p90 at the position
// 0.9 × (10 + 1) = 9.9 of the ten sorted: 900 ms + 0.9 × 100 ms = 990 ms.
func TestHedgePercentileDelay(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"api": {}}, Hedge: &HedgePolicy{Percentile: 0.9, Window: 10, MinSamples: 10, Budget: 1, Burst: 100}}
	lat := map[string]time.Duration{}
	for i := range 10 {
		lat[fmt.Sprint("w", i)] = time.Duration(i+1) * 100 * time.Millisecond // 100 ms … 1 s
	}
	d := newDriver(t, cfg, func(c *Call, _ int, _ time.Duration) (time.Duration, Outcome) {
		if l, ok := lat[c.ID]; ok {
			return l, Succeeded(nil)
		}
		return 5 * time.Second, Succeeded(nil)
	})
	var warm []Call
	for i := range 10 {
		warm = append(warm, read(fmt.Sprint("w", i)))
	}
	d.submit(warm...)
	d.run(1 << 62)
	if n := len(d.starts); n != 10 {
		t.Fatalf("%d starts while warming up (no After: no hedges)", n)
	}
	start := d.now
	d.submit(read("x"))
	d.run(1 << 62)
	h := d.starts[len(d.starts)-1]
	if !h.hedge || h.at-start != 990*time.Millisecond {
		t.Fatalf("hedge %+v at %v after the start, want the p90 of 990ms", h, h.at-start)
	}
}

// A first attempt that loses to its hedge counts as slower than the time
// it ran, not as that time, and a hedge's own latency does not count.
// Five calls, each hedged at 500 ms: four first attempts answer in 1, 2,
// 4 and 5 s (their hedges take 10 s), the third's hedge answers at 3 s
// (2.5 s after it started) and wins. The median of the five, worked out
// by hand from the product-limit shares (hedgeService): 1 s gets
// 1 − 5/6 = 1/6, 2 s 1 − 5/6 × 4/5 = 1/3; the 3 s sample is censored and
// leaves the two above it at risk, so 4 s gets 1 − 4/6 × 2/3 = 5/9; 0.5
// lies 3/4 of the way from 1/3 to 5/9, at 2 s + 3/4 × 2 s = 3.5 s. Had the
// third first attempt answered at 3 s, the median would be that 3 s.
func TestHedgePercentileCountsALostFirstAttemptAsSlower(t *testing.T) {
	for _, c := range []struct {
		third answer // of the third call's first attempt
		want  time.Duration
	}{
		{answer{10 * time.Second, Succeeded(nil)}, 3500 * time.Millisecond},
		{answer{3 * time.Second, Succeeded(nil)}, 3 * time.Second},
	} {
		cfg := Config{Services: map[string]ServiceConfig{"api": {}}, Hedge: &HedgePolicy{After: 500 * time.Millisecond, Percentile: 0.5, Window: 5, MinSamples: 5, Budget: 1, Burst: 100}}
		slowHedge := answer{10 * time.Second, Succeeded(nil)}
		d := newDriver(t, cfg, scripted(map[string][]answer{
			"w1": {{time.Second, Succeeded(nil)}, slowHedge},
			"w2": {{2 * time.Second, Succeeded(nil)}, slowHedge},
			"w3": {c.third, {2500 * time.Millisecond, Succeeded(nil)}},
			"w4": {{4 * time.Second, Succeeded(nil)}, slowHedge},
			"w5": {{5 * time.Second, Succeeded(nil)}, slowHedge},
			"x":  {{time.Minute, Succeeded(nil)}, slowHedge},
		}))
		for i := 1; i <= 5; i++ {
			d.submit(read(fmt.Sprint("w", i)))
			d.run(1 << 62)
		}
		if r := d.results["w3"]; r.HedgeWon != (c.third.lat > 3*time.Second) {
			t.Fatalf("w3: %+v", r)
		}
		start := d.now
		d.submit(read("x"))
		d.run(1 << 62)
		h := d.starts[len(d.starts)-1]
		if !h.hedge || h.id != "x" || h.at-start != c.want {
			t.Errorf("third first attempt %v: hedge %+v at %v after the start, want %v", c.third.lat, h, h.at-start, c.want)
		}
	}
}

// The samples of the percentile are first attempts only, a cut-short one
// censored: a hedge's latency is no sample, even when the hedge wins after
// its first attempt failed, nor is a failed first attempt; a first attempt
// cancelled by its call's deadline, or past AttemptTimeout, is a censored
// sample at the time it ran. Five calls run one after another, each hedged
// at After = 100 ms while fewer than three samples are known:
//   - f fails at 600 ms and its hedge wins at 900 ms: no sample;
//   - a answers at 3 s: 3 s;
//   - c's call deadline cancels it at 2 s: 2 s, censored;
//   - t times out at 4 s and its hedge wins at 4.05 s: 4 s, censored;
//   - x is hedged at the p30 of the three: sorted 2 s (censored), 3 s,
//     4 s (censored), the one answer, 3 s, has its share 1 − 2/3 = 1/3
//     (two samples at risk) at or above 0.3, so the delay is 3 s.
//
// Counting the censored samples as answers would put 2 s at 1/4 and 3 s at
// 1/2, and the delay at 2.2 s; dropping either leaves two samples and the
// delay at 100 ms; counting the hedges' latencies (800 ms, then 3.95 s)
// puts it at 3.95 s.
func TestHedgePercentileSamplesFirstAttemptsOnly(t *testing.T) {
	transient := Failed(ClassTransient, errors.New("reset"))
	hang := answer{lat: -1}
	cfg := Config{Services: map[string]ServiceConfig{"api": {}}, AttemptTimeout: 4 * time.Second,
		Hedge: &HedgePolicy{After: 100 * time.Millisecond, Percentile: 0.3, Window: 3, MinSamples: 3, Budget: 1, Burst: 100}}
	d := newDriver(t, cfg, scripted(map[string][]answer{
		"f": {{600 * time.Millisecond, transient}, {800 * time.Millisecond, Succeeded(nil)}},
		"a": {{3 * time.Second, Succeeded(nil)}, hang},
		"c": {hang, hang},
		"t": {hang, {3950 * time.Millisecond, Succeeded(nil)}},
		"x": {hang, hang},
	}))
	c := read("c")
	c.Timeout = 2 * time.Second
	x := read("x")
	x.Timeout = 3500 * time.Millisecond
	for _, call := range []Call{read("f"), read("a"), c, read("t"), x} {
		start := d.now
		d.submit(call)
		d.run(1 << 62)
		want := 100 * time.Millisecond
		if call.ID == "x" {
			want = 3 * time.Second
		}
		if h := d.starts[len(d.starts)-1]; !h.hedge || h.id != call.ID || h.at-start != want {
			t.Fatalf("%s: last start %+v at %v after the call's, want its hedge at %v", call.ID, h, h.at-start, want)
		}
	}
	for id, won := range map[string]bool{"f": true, "a": false, "t": true} {
		if r := d.results[id]; r.Err != nil || r.HedgeWon != won {
			t.Errorf("%s: %+v, want a success, hedge won %v", id, r, won)
		}
	}
}

// hedgedShare runs n calls one after another, each attempt's latency
// drawn by lat, under a percentile policy with the default window, and
// returns the share of calls hedged.
func hedgedShare(t *testing.T, p float64, n int, lat func(*rand.Rand) time.Duration) float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	cfg := Config{Services: map[string]ServiceConfig{"api": {}}, Hedge: &HedgePolicy{Percentile: p, Budget: 1, Burst: 100}}
	d := newDriver(t, cfg, func(*Call, int, time.Duration) (time.Duration, Outcome) { return lat(rng), Succeeded(nil) })
	for i := range n {
		d.submit(read(fmt.Sprint("c", i)))
		d.run(1 << 62)
	}
	hedges := 0
	for _, s := range d.starts {
		if s.hedge {
			hedges++
		}
	}
	return float64(hedges) / float64(n)
}

// Percentile p hedges a share 1 − p of the calls: by its definition, a
// first attempt's latency exceeds its p-th percentile with probability
// 1 − p, whatever the distribution, and every first attempt still running
// at the delay is hedged (the budget is 1 and nothing waits). Hedges win
// half the races on exponential latencies, cancelling the slowest first
// attempts; the estimate must not be pulled down by it (taking the
// winners' latencies hedged 11.9% at 0.95, counting a lost first
// attempt's time run as its latency 5.6%). Over 40,000 calls the binomial
// standard deviation of the share is at most 0.15 points; the tolerance
// is 0.5 points.
func TestHedgePercentileHedgesItsShare(t *testing.T) {
	exp := func(r *rand.Rand) time.Duration { return time.Duration(r.ExpFloat64() * float64(100*time.Millisecond)) }
	uniform := func(r *rand.Rand) time.Duration {
		return 50*time.Millisecond + time.Duration(r.Float64()*float64(200*time.Millisecond))
	}
	for _, c := range []struct {
		name string
		p    float64
		lat  func(*rand.Rand) time.Duration
	}{
		{"exponential", 0.95, exp},
		{"exponential", 0.9, exp},
		{"uniform", 0.95, uniform},
	} {
		got := hedgedShare(t, c.p, 40_000, c.lat)
		t.Logf("%s latencies, percentile %v: %.3f%% of calls hedged", c.name, c.p, 100*got)
		if want := 1 - c.p; math.Abs(got-want) > 0.005 {
			t.Errorf("%s latencies, percentile %v: %.2f%% of calls hedged, want %.2f%% ± 0.5", c.name, c.p, 100*got, 100*want)
		}
	}
}

func TestHedgePolicyValidation(t *testing.T) {
	for _, p := range []HedgePolicy{{}, {After: -1}, {After: 1, Percentile: 1}, {After: 1, Budget: 2}, {After: 1, Window: -1}} {
		if _, err := New(Config{Hedge: &p}); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}
