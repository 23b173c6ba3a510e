package sched

import (
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestProperties checks the scheduler's invariants over random call sets,
// caps, buckets and outcomes.
func TestProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		services := []string{"a", "b"}
		cfg := Config{
			MaxInFlight:           rapid.IntRange(0, 6).Draw(rt, "global cap"),
			KeepSlotDuringBackoff: rapid.Bool().Draw(rt, "keep slot"),
			FanOut:                rapid.IntRange(0, 5).Draw(rt, "fan-out"),
			Retry: RetryPolicy{
				Backoff:          Backoff(rapid.IntRange(0, 5).Draw(rt, "backoff")),
				Base:             time.Duration(rapid.IntRange(0, 500).Draw(rt, "base ms")) * time.Millisecond,
				Cap:              2 * time.Second,
				MaxAttempts:      rapid.IntRange(1, 4).Draw(rt, "attempts"),
				RetryAfterJitter: time.Duration(rapid.IntRange(0, 300).Draw(rt, "ra jitter ms")) * time.Millisecond,
			},
			AttemptTimeout:    time.Duration(rapid.IntRange(0, 3).Draw(rt, "attempt timeout s")) * time.Second,
			TurnAttemptBudget: rapid.IntRange(0, 12).Draw(rt, "attempt budget"),
			TurnTokenBudget:   int64(rapid.IntRange(0, 20000).Draw(rt, "token budget")),
			Join:              JoinMode(rapid.IntRange(0, 2).Draw(rt, "join")),
			FanOutMode:        FanOutMode(rapid.IntRange(0, 1).Draw(rt, "fan-out mode")),
			// Deadlines and cancels end stuck calls, which would hide a
			// deadlock from the "every turn finishes" check: half the runs
			// have none.
			CallTimeout: time.Duration(rapid.OneOf(rapid.Just(0), rapid.IntRange(1, 20)).Draw(rt, "call timeout s")) * time.Second,
			TurnTimeout: time.Duration(rapid.OneOf(rapid.Just(0), rapid.IntRange(1, 60)).Draw(rt, "turn timeout s")) * time.Second,
			Services:    map[string]ServiceConfig{},
		}
		for _, s := range services {
			cfg.Services[s] = ServiceConfig{
				MaxInFlight:       rapid.IntRange(0, 4).Draw(rt, s+" cap"),
				RequestsPerMinute: float64(rapid.IntRange(0, 600).Draw(rt, s+" rpm")),
				RequestBurst:      float64(rapid.IntRange(0, 5).Draw(rt, s+" burst")),
				TokensPerMinute:   float64(rapid.IntRange(0, 60000).Draw(rt, s+" tpm")),
				TokenBurst:        float64(rapid.IntRange(0, 5000).Draw(rt, s+" token burst")),
				PauseOnRetryAfter: rapid.Bool().Draw(rt, s+" pause"),
				HeaderSync:        rapid.Bool().Draw(rt, s+" header sync"),
			}
			if rapid.Bool().Draw(rt, s+" retry budget") {
				sc := cfg.Services[s]
				sc.RetryBudget = &RetryBudget{
					Ratio:        float64(rapid.IntRange(0, 10).Draw(rt, s+" budget ratio ×10")) / 10,
					MinPerSecond: float64(rapid.IntRange(0, 3).Draw(rt, s+" budget floor/s")),
					Max:          float64(rapid.IntRange(0, 5).Draw(rt, s+" budget max")),
				}
				cfg.Services[s] = sc
			}
			if alg := rapid.IntRange(0, 2).Draw(rt, s+" adaptive"); alg > 0 {
				sc := cfg.Services[s]
				sc.Adaptive = &AdaptiveConfig{
					Algorithm:  Algorithm(alg),
					Initial:    rapid.IntRange(0, 6).Draw(rt, s+" initial"),
					Max:        rapid.IntRange(0, 8).Draw(rt, s+" max"),
					LongWindow: rapid.IntRange(0, 20).Draw(rt, s+" window"),
				}
				cfg.Services[s] = sc
			}
		}
		n := rapid.IntRange(1, 30).Draw(rt, "calls")
		cs := make([]Call, n)
		for i := range cs {
			cs[i] = Call{
				ID:         fmt.Sprint("c", i),
				Service:    rapid.SampledFrom(append(services, "")).Draw(rt, "service"),
				Tokens:     int64(rapid.IntRange(0, 3000).Draw(rt, "tokens")),
				Write:      rapid.IntRange(0, 4).Draw(rt, "write") == 0,
				Idempotent: rapid.Bool().Draw(rt, "idempotent"),
			}
		}
		// Dependencies follow a random order of the calls, so a call may
		// depend on one listed after it (a write on a later write), never
		// in a cycle.
		order := rapid.Permutation(seq(n)).Draw(rt, "dependency order")
		for k := 1; k < n; k++ {
			if rapid.IntRange(0, 2).Draw(rt, "has dep") == 0 {
				dep := order[rapid.IntRange(0, k-1).Draw(rt, "dep")]
				cs[order[k]].After = append(cs[order[k]].After, fmt.Sprint("c", dep))
			}
		}
		outcomes := rapid.SliceOfN(rapid.IntRange(0, 9), 64, 64).Draw(rt, "outcomes")
		latencies := rapid.SliceOfN(rapid.IntRange(-1, 2000), 64, 64).Draw(rt, "latencies ms")
		// Servers report what is left of their limits on some answers, as
		// little as nothing, so header sync can hold calls back.
		quotas := rapid.SliceOfN(rapid.IntRange(-1, 20), 64, 64).Draw(rt, "remaining")
		k := 0
		exec := func(c *Call, n int, now time.Duration) (time.Duration, Outcome) {
			k++
			lat := time.Duration(latencies[k%64]) * time.Millisecond
			if lat < 0 && cfg.AttemptTimeout == 0 {
				lat = time.Second // a hang needs a timeout to end
			}
			var o Outcome
			switch outcomes[k%64] {
			case 0:
				o = Outcome{Class: ClassRateLimited, Status: 429, RetryAfter: time.Duration(k%3) * time.Second, HasRetryAfter: k%2 == 0}
			case 1:
				o = Failed(ClassTransient, errors.New("reset"))
			case 2:
				o = Failed(ClassPermanent, errors.New("bad"))
			default:
				o = Succeeded(nil)
			}
			if q := quotas[k%64]; q >= 0 {
				o.Quota.Requests = QuotaLeft{Known: true, Remaining: int64(q), Reset: time.Second}
				o.Quota.Tokens = QuotaLeft{Known: true, Remaining: int64(q) * 100, Reset: time.Second}
			}
			return lat, o
		}
		d := newDriver(rt, cfg, exec)
		svcPeak := map[string]int{}
		svcNow := map[string]int{}
		d.core.cfg.Hook = func(e Event) {
			switch e.Kind {
			case EventStarted:
				svcNow[e.Service]++
				svcPeak[e.Service] = max(svcPeak[e.Service], svcNow[e.Service])
			case EventFinished, EventCancelled:
				svcNow[e.Service]--
			}
		}
		// The calls go out as up to three turns (contiguous runs of the
		// list, dependencies kept within a turn), submitted at random times,
		// so turns share caps, buckets and resources; one may be cancelled.
		cuts := []int{0, n}
		if n > 2 {
			a := rapid.IntRange(1, n-1).Draw(rt, "first cut")
			cuts = []int{0, a, n}
			if a < n-1 && rapid.Bool().Draw(rt, "second cut") {
				cuts = []int{0, a, rapid.IntRange(a+1, n-1).Draw(rt, "cut"), n}
			}
		}
		turnOf := make([]int, n)
		for t := 0; t+1 < len(cuts); t++ {
			for i := cuts[t]; i < cuts[t+1]; i++ {
				turnOf[i] = t
			}
		}
		for i := range cs {
			kept := cs[i].After[:0]
			for _, dep := range cs[i].After {
				var j int
				fmt.Sscanf(dep, "c%d", &j)
				if turnOf[j] == turnOf[i] {
					kept = append(kept, dep)
				}
			}
			cs[i].After = kept
		}
		cancelTurn := rapid.IntRange(-1, len(cuts)-2).Draw(rt, "cancelled turn")
		cancelAt := time.Duration(rapid.IntRange(0, 5000).Draw(rt, "cancel at ms")) * time.Millisecond
		var ids []TurnID
		for t := 0; t+1 < len(cuts); t++ {
			at := time.Duration(0)
			if t > 0 {
				at = time.Duration(rapid.IntRange(0, 2000).Draw(rt, "submit at ms")) * time.Millisecond
			}
			d.run(at)
			d.now = max(d.now, at)
			ids = append(ids, d.submit(cs[cuts[t]:cuts[t+1]]...))
		}
		if cancelTurn >= 0 {
			d.run(cancelAt)
			d.now = max(d.now, cancelAt)
			d.core.Cancel(d.now, ids[cancelTurn])
			d.drain()
		}
		d.run(1 << 62)

		// Exactly one result per id (the driver fails on a second one), and
		// every turn's results in its order.
		if len(d.results) != n || len(d.turns) != len(cuts)-1 {
			rt.Fatalf("%d results, %d turns finished for %d calls in %d turns", len(d.results), len(d.turns), n, len(cuts)-1)
		}
		for _, tr := range d.turns {
			for i, r := range tr.Results {
				if r.Index != i || r.ID != d.results[r.ID].ID {
					rt.Fatalf("turn %d: result %d is %s (index %d)", tr.Turn, i, r.ID, r.Index)
				}
			}
		}
		// In flight never exceeds any cap.
		if cfg.MaxInFlight > 0 && d.peak > cfg.MaxInFlight {
			rt.Fatalf("peak %d above global cap %d", d.peak, cfg.MaxInFlight)
		}
		for _, s := range services {
			if c := cfg.Services[s].MaxInFlight; c > 0 && svcPeak[s] > c {
				rt.Fatalf("service %s peak %d above cap %d", s, svcPeak[s], c)
			}
			// An adaptive limit stays within the static caps.
			if l, c := d.core.Limit(s), cfg.Services[s].MaxInFlight; l < 0 || (c > 0 && l > c) || (cfg.MaxInFlight > 0 && l > cfg.MaxInFlight) {
				rt.Fatalf("service %s limit %d outside the static caps %d and %d", s, l, c, cfg.MaxInFlight)
			}
		}
		// Only a service with a retry budget refuses retries for it.
		for id, r := range d.results {
			if errors.Is(r.Err, ErrRetryBudget) {
				var svc string
				for _, c := range cs {
					if c.ID == id {
						svc = c.Service
					}
				}
				if cfg.Services[svc].RetryBudget == nil {
					rt.Fatalf("%s (service %q, no budget) refused by a retry budget: %v", id, svc, r.Err)
				}
			}
		}
		if d.overlaps != 0 {
			rt.Fatalf("%d overlapping writes", d.overlaps)
		}
		// Buckets: what starts in any window fits capacity + rate × window.
		for _, s := range services {
			sc := cfg.Services[s]
			var starts []startRec
			for _, st := range d.starts {
				if st.service == s {
					starts = append(starts, st)
				}
			}
			sort.SliceStable(starts, func(i, j int) bool { return starts[i].at < starts[j].at })
			reqBurst := sc.RequestBurst
			if reqBurst == 0 {
				reqBurst = max(1, sc.RequestsPerMinute/60)
			}
			tokBurst := sc.TokenBurst
			if tokBurst == 0 {
				tokBurst = sc.TokensPerMinute
			}
			for i := range starts {
				var tokens float64
				for j := i; j < len(starts); j++ {
					w := (starts[j].at - starts[i].at).Seconds()
					tokens += float64(starts[j].tokens)
					if sc.RequestsPerMinute > 0 && float64(j-i+1) > reqBurst+sc.RequestsPerMinute/60*w+1e-6 {
						rt.Fatalf("service %s: %d requests in %.3fs window", s, j-i+1, w)
					}
					if sc.TokensPerMinute > 0 && tokens > tokBurst+sc.TokensPerMinute/60*w+1e-3 {
						rt.Fatalf("service %s: %.0f tokens in %.3fs window", s, tokens, w)
					}
				}
			}
		}
		// No call starts before its dependencies finished successfully.
		for _, c := range cs {
			start, ok := d.startedOf[c.ID]
			for _, dep := range c.After {
				r := d.results[dep]
				if ok && (r.Err != nil || start < r.Finished) {
					rt.Fatalf("%s started at %v; dependency %s finished at %v with %v", c.ID, start, dep, r.Finished, r.Err)
				}
			}
		}
		// Nothing is left behind.
		if d.core.InFlight() != 0 || d.core.Waiting() != 0 || d.core.Turns() != 0 || len(d.core.attempts) != 0 {
			rt.Fatalf("left: in flight %d waiting %d turns %d attempts %d", d.core.InFlight(), d.core.Waiting(), d.core.Turns(), len(d.core.attempts))
		}
	})
}

// seq returns 0, 1, …, n-1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
