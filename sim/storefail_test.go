package sim

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/quota"
	"github.com/simbench/simbench/trace"
)

// outageRun runs shared-key's shared strategy, its quota changed by mut,
// with a trace, and returns the strategy's results and its attempts.
func outageRun(t *testing.T, mut func(q *scenarios.Quota)) (results.StrategyResult, []trace.Record) {
	t.Helper()
	sc, err := scenarios.Builtin("shared-key")
	if err != nil {
		t.Fatal(err)
	}
	c := *sc
	c.Strategies = []scenarios.Strategy{*sc.Strategy("shared")}
	mut(&c.Strategies[0].Quota)
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	res, err := Run(context.Background(), &c, Options{Trace: w})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var recs []trace.Record
	r := trace.NewReader(&buf, "t.jsonl")
	for r.Next() {
		recs = append(recs, *r.Record())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return res.Strategies[0], recs
}

// window counts the attempts sent in [from, to) and their 429s.
func window(recs []trace.Record, from, to time.Duration) (attempts, limited int) {
	for _, r := range recs {
		if r.Start >= from.Seconds() && r.Start < to.Seconds() {
			attempts++
			if r.Status == 429 {
				limited++
			}
		}
	}
	return
}

// queued returns the mean time, in ms, the attempts sent in [from, to)
// waited in the client (for a slot, the bucket or credit) before going out.
func queued(recs []trace.Record, from, to time.Duration) float64 {
	var sum float64
	n := 0
	for _, r := range recs {
		if r.Start >= from.Seconds() && r.Start < to.Seconds() {
			sum += r.Start - r.Intended
			n++
		}
	}
	return 1000 * sum / float64(max(n, 1))
}

// modelQuota connects one process of a fleet of two to a simulated store
// with quota q (a 1 ms round trip, unless q says otherwise) for a service
// "s" of 1,200 requests a minute, bursts of 20.
func modelQuota(q scenarios.Quota) (*quotaStore, *procQuota) {
	q.Mode = scenarios.QuotaShared
	if q.RTT == 0 {
		q.RTT = time.Millisecond
	}
	s := newQuotaStore(q, 2, time.Minute)
	cfg := sched.Config{Services: map[string]sched.ServiceConfig{"s": {RequestsPerMinute: 1200, RequestBurst: 20}}}
	return s, s.connect(cfg)
}

// reserveAt asks for one request of credit at t and returns when it is
// available (after the round trips and the wait) and the error.
func reserveAt(pq *procQuota, t time.Duration) (time.Duration, error) {
	pq.conn.clock = t
	p, err := pq.shared.ReserveAt(context.Background(), virtualEpoch.Add(t), "s", sched.CreditRequests, 1)
	return pq.conn.clock + p.Wait, err
}

// TestStoreOutageFailover drives one process's production quota path
// (quota.Shared over quota.Failover over the simulated store) by hand
// through a store outage, on virtual time, and checks every figure: a
// reservation reaching the store during the outage is refused one round
// trip after it was sent, which switches the process to its local share
// (limit ÷ 2: 10 at once, then one every 100 ms); while down, no round
// trip is made until ProbeEvery after the last failure; the first probe
// reaching the store after the outage succeeds and recovers, so the
// process spent exactly from the switch to that answer on the fallback.
// A hung store times out instead, and under fallback = "closed" the
// reservation is refused with quota.ErrUnavailable.
func TestStoreOutageFailover(t *testing.T) {
	const ms = time.Millisecond
	out := scenarios.Quota{OutageAt: 10 * time.Second, OutageFor: 5 * time.Second, Outage: scenarios.OutageDown}
	st, pq := modelQuota(out)
	step := func(at, want time.Duration, trips int64) {
		t.Helper()
		got, err := reserveAt(pq, at)
		if err != nil || got != want || pq.conn.trips != trips {
			t.Fatalf("credit asked at %v: available at %v (%v) after %d round trips in all; want %v, nil, %d", at, got, err, pq.conn.trips, want, trips)
		}
	}
	step(time.Second, time.Second+ms, 1)       // the store grants it
	step(10*time.Second, 10*time.Second+ms, 2) // refused after one round trip: the local share grants it
	step(10500*ms, 10500*ms, 2)                // down: local, no round trip
	step(11*time.Second, 11*time.Second, 2)    // 999 ms since the failure: still no probe
	step(11001*ms, 11002*ms, 3)                // a probe, refused: local again
	for range 10 {                             // the local share: 10 requests a second, bursts of 10
		step(12*time.Second, 12*time.Second, 3)
	}
	step(12*time.Second, 12*time.Second+100*ms, 3) // the 11th waits a tenth of a second
	step(14999*ms, 15*time.Second, 4)              // a probe reaching the store at 14.9995 s: refused
	if n, d := pq.fallback(time.Minute); n != 1 || d != time.Minute-(10*time.Second+ms) {
		t.Errorf("down: %d switches, %v on the fallback (to the end of the run); want 1, %v", n, d, time.Minute-(10*time.Second+ms))
	}
	step(15500*ms, 15500*ms, 4)                // the store is back, but no probe is due until 16 s
	step(16*time.Second, 16*time.Second+ms, 5) // the probe: recovered
	step(17*time.Second, 17*time.Second+ms, 6) // the store again
	if n, d := pq.fallback(time.Minute); n != 1 || d != 6*time.Second {
		t.Errorf("%d switches, %v on the fallback; want 1, 6s (from the refusal at 10.001 s to the probe's answer at 16.001 s)", n, d)
	}
	fs := pq.fail.Stats()
	if fs.Switches != 1 || fs.Recoveries != 1 || fs.PrimaryErrors != 3 || fs.PrimaryGrants != 3 || fs.FallbackGrants != 17 {
		t.Errorf("failover stats %+v; want 1 switch, 1 recovery, 3 errors, 3 store grants, 17 local ones", fs)
	}
	if st.ops != 3 {
		t.Errorf("the store applied %d operations; want the 3 that reached it while up", st.ops)
	}

	// A hung store: the reservation fails at the 50 ms timeout.
	_, pq = modelQuota(scenarios.Quota{OutageAt: 10 * time.Second, OutageFor: 5 * time.Second, Outage: scenarios.OutageHung})
	step(10*time.Second, 10*time.Second+50*ms, 1)
	if n, d := pq.fallback(11 * time.Second); n != 1 || d != 950*ms {
		t.Errorf("hung: %d switches, %v on the fallback by 11 s; want 1, 950ms (since the timeout at 10.05 s)", n, d)
	}

	// A store slower than the timeout: the reservation reaches it and is
	// applied there, but its answer is lost; its unit is forfeited.
	st, pq = modelQuota(scenarios.Quota{RTT: 60 * ms})
	step(time.Second, time.Second+50*ms, 1)
	lim, _ := pq.shared.Limit("s", sched.CreditRequests)
	st.at = time.Second + 30*ms
	if a, _ := st.mem.Available(context.Background(), lim); st.ops != 1 || a != 19 {
		t.Errorf("slow store: %d operations applied, %v of 20 left; want 1 and 19 (the lost answer's unit forfeited)", st.ops, a)
	}

	// Fail closed: no local share; the credit is refused.
	_, pq = modelQuota(scenarios.Quota{OutageAt: 10 * time.Second, OutageFor: 5 * time.Second, Outage: scenarios.OutageDown, Fallback: scenarios.FallbackClosed})
	if at, err := reserveAt(pq, 10*time.Second); !errors.Is(err, quota.ErrUnavailable) || at != 10*time.Second+ms {
		t.Errorf("fail closed: answered at %v with %v; want 10.001s and quota.ErrUnavailable", at, err)
	}
	if at, err := reserveAt(pq, 10500*ms); !errors.Is(err, quota.ErrUnavailable) || at != 10500*ms || pq.conn.trips != 1 {
		t.Errorf("fail closed, down: answered at %v with %v after %d round trips; want 10.5s, quota.ErrUnavailable, 1", at, err, pq.conn.trips)
	}
}

// TestStoreOutageFleet runs shared-key's shared strategy (six processes,
// uneven loads, a fixed-window provider) through a one-minute outage of
// its store at minute 2, on virtual time:
//   - before the outage nothing differs: every attempt that ended before
//     it is the same as in the run without one;
//   - under fallback = "local" every process switches to its local share
//     (limit ÷ 6) once, for about the outage (from its first round trip
//     in it to its first probe after it, which needs an operation a probe
//     interval after the last failure: a quiet process recovers later); the local shares cannot lend a
//     quiet process's part to the busy ones, so 429s appear during the
//     outage (as for the static split), none before or after it, calls
//     wait longer in the client, and the fleet's goodput dips;
//   - a hung store gives the same, each switch a timeout later;
//   - under fallback = "closed" calls waiting for credit during the outage
//     fail (overloaded), almost no attempt is sent, and after it the fleet
//     runs as before, without a 429;
//   - a store slower than the timeout (60 ms round trips against 50 ms)
//     leaves every process on its local share for the whole run.
func TestStoreOutageFleet(t *testing.T) {
	const at, dur = 2 * time.Minute, time.Minute
	base, baseRecs := outageRun(t, func(*scenarios.Quota) {})
	before := func(recs []trace.Record) []trace.Record {
		var out []trace.Record
		for _, r := range recs {
			if r.End < at.Seconds() {
				out = append(out, r)
			}
		}
		return out
	}
	after := at + dur + 2*time.Second // every process has recovered by then
	for _, tc := range []struct {
		name string
		mut  func(q *scenarios.Quota)
	}{
		{"down", func(q *scenarios.Quota) { q.OutageAt, q.OutageFor, q.Outage = at, dur, scenarios.OutageDown }},
		{"hung", func(q *scenarios.Quota) { q.OutageAt, q.OutageFor, q.Outage = at, dur, scenarios.OutageHung }},
		{"closed", func(q *scenarios.Quota) {
			q.OutageAt, q.OutageFor, q.Outage, q.Fallback = at, dur, scenarios.OutageDown, scenarios.FallbackClosed
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, recs := outageRun(t, tc.mut)
			if b, o := before(baseRecs), before(recs); len(b) == 0 || !slices.Equal(b, o) {
				t.Errorf("%d attempts ended before the outage, against %d without it (or they differ): the outage changed the past", len(o), len(b))
			}
			for _, p := range r.Processes {
				if p.QuotaFallbacks != 1 || p.QuotaFallbackS < 0.95*dur.Seconds() || p.QuotaFallbackS > (dur+2*time.Second).Seconds() {
					t.Errorf("%s: %d switches to the fallback, %.3f s on it; want 1, about the outage's %v (recovery waits for a real operation a probe interval after the last failure: at most 2 s more)", p.Name, p.QuotaFallbacks, p.QuotaFallbackS, dur)
				}
			}
			a0, l0 := window(recs, 10*time.Second, at)
			a1, l1 := window(recs, at, at+dur)
			a2, l2 := window(recs, after, 5*time.Minute)
			_, bl1 := window(baseRecs, at, at+dur)
			b1, _ := window(baseRecs, at, at+dur)
			t.Logf("attempts (429s): before %d (%d), during %d (%d), after %d (%d); without the outage, during %d (%d); failed %d, goodput %.2f/s against %.2f/s; mean wait in the client before %.0f ms, during %.0f ms (%.0f ms without the outage), after %.0f ms",
				a0, l0, a1, l1, a2, l2, b1, bl1, r.Failed, r.GoodputPerS, base.GoodputPerS,
				queued(recs, 10*time.Second, at), queued(recs, at, at+dur), queued(baseRecs, at, at+dur), queued(recs, after, 5*time.Minute))
			if l0 != 0 || l2 != 0 || bl1 != 0 {
				t.Errorf("429s before the outage %d, after it %d, during it without one %d; want 0: the shared bucket keeps the fleet within the key's limit", l0, l2, bl1)
			}
			if tc.name == "closed" {
				if r.Failed == 0 || base.Failed != 0 || a1 > b1/100 || l1 != 0 {
					t.Errorf("fail closed: %d failed calls (%d without the outage), %d attempts during it (%d without), %d 429s; want failures, none without, almost no attempts, no 429",
						r.Failed, base.Failed, a1, b1, l1)
				}
				return
			}
			if w, bw := queued(recs, at, at+dur), queued(baseRecs, at, at+dur); w <= bw {
				t.Errorf("local shares: calls waited %.0f ms in the client during the outage, %.0f ms without it; want longer (the busy processes queue behind their sixth)", w, bw)
			}
			if l1 == 0 || r.Failed != 0 || a1 >= b1 || r.GoodputPerS >= base.GoodputPerS {
				t.Errorf("local shares: %d 429s during the outage, %d failed calls, %d attempts against %d, goodput %.2f against %.2f; want 429s, no failures, fewer attempts, less goodput",
					l1, r.Failed, a1, b1, r.GoodputPerS, base.GoodputPerS)
			}
		})
	}
	t.Run("slow", func(t *testing.T) {
		r, recs := outageRun(t, func(q *scenarios.Quota) { q.RTT, q.Timeout = 60*time.Millisecond, 50*time.Millisecond })
		sc, _ := scenarios.Builtin("shared-key")
		for _, p := range r.Processes {
			if p.QuotaFallbacks != 1 || p.QuotaFallbackS < (sc.Duration-sc.Workload.Ramp-time.Second).Seconds() {
				t.Errorf("%s: %d switches, %.3f s on the fallback; want 1, from its first round trip to the end of the run", p.Name, p.QuotaFallbacks, p.QuotaFallbackS)
			}
		}
		if a, l := window(recs, 0, sc.Duration); l == 0 {
			t.Errorf("a store slower than the timeout: %d attempts, no 429; the local shares should meet the split's", a)
		}
	})
}
