package sched

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRetryBudgetArithmetic runs calls one after another against a budget of 2
// tokens, 0.5 per success and no floor, with 3 attempts per call allowed:
//
//	c0 fails ×3: two retries spend both tokens, then the policy ends it;
//	c1 fails: no token, so it fails at once with ErrRetryBudget;
//	c2, c3 succeed: +0.5 each, one token;
//	c4 fails then succeeds: the retry spends the token, the success adds 0.5;
//	c5 fails: 0.5 is less than a retry, so ErrRetryBudget.
func TestRetryBudgetArithmetic(t *testing.T) {
	cfg := Config{
		MaxInFlight: 1,
		Retry:       RetryPolicy{MaxAttempts: 3},
		Services:    map[string]ServiceConfig{"s": {RetryBudget: &RetryBudget{Ratio: 0.5, Max: 2}}},
	}
	fails := map[string]int{"c0": 3, "c1": 1, "c4": 1, "c5": 1}
	d := newDriver(t, cfg, func(c *Call, n int, _ time.Duration) (time.Duration, Outcome) {
		if n <= fails[c.ID] {
			return 10 * time.Millisecond, Failed(ClassTransient, errors.New("reset"))
		}
		return 10 * time.Millisecond, Succeeded(nil)
	})
	for i := range 6 {
		d.submit(Call{ID: fmt.Sprint("c", i), Service: "s"})
		d.run(time.Hour)
	}
	want := []struct {
		attempts int
		err      error
	}{{3, ErrRetriesExhausted}, {1, ErrRetryBudget}, {1, nil}, {1, nil}, {2, nil}, {1, ErrRetryBudget}}
	for i, w := range want {
		r := d.results[fmt.Sprint("c", i)]
		if r.Attempts != w.attempts || (w.err == nil) != (r.Err == nil) || (w.err != nil && !errors.Is(r.Err, w.err)) {
			t.Errorf("c%d: %d attempts, err %v; want %d, %v", i, r.Attempts, r.Err, w.attempts, w.err)
		}
		if errors.Is(r.Err, ErrRetryBudget) {
			if !strings.Contains(r.Err.Error(), `service "s"`) || !strings.Contains(r.Err.Error(), "0.5 per success") {
				t.Errorf("c%d: error %q does not name the service and the budget", i, r.Err)
			}
			if r.Class != ClassTransient || r.State != Completed {
				t.Errorf("c%d: class %v state %v, want the last attempt's class and completed", i, r.Class, r.State)
			}
		}
	}
	if left, ok := d.core.RetryBudgetLeft("s"); !ok || left != 0.5 {
		t.Errorf("budget left %v, %v; want 0.5", left, ok)
	}
	if _, ok := d.core.RetryBudgetLeft("other"); ok {
		t.Error("a service without a budget reports one")
	}
}

// TestRetryBudgetFloor checks the per-second floor: a spent budget of at
// most 1 token with 2 tokens/s allows the next retry 0.5 s later.
func TestRetryBudgetFloor(t *testing.T) {
	cfg := Config{
		Retry:    RetryPolicy{MaxAttempts: 2},
		Services: map[string]ServiceConfig{"s": {RetryBudget: &RetryBudget{MinPerSecond: 2, Max: 1}}},
	}
	d := newDriver(t, cfg, func(c *Call, n int, _ time.Duration) (time.Duration, Outcome) {
		if n == 1 {
			return 0, Failed(ClassOverloaded, errors.New("overloaded"))
		}
		return 0, Succeeded(nil)
	})
	submitAt := func(at time.Duration, id string) {
		d.run(at)
		d.now = at
		d.submit(Call{ID: id, Service: "s"})
		d.run(at)
	}
	submitAt(0, "a")                     // spends the one token
	submitAt(400*time.Millisecond, "b")  // 0.8 tokens: refused
	submitAt(500*time.Millisecond, "c")  // 0.8 + 0.2 = 1: retried
	submitAt(1500*time.Millisecond, "d") // 1 again (capped at Max)
	submitAt(1500*time.Millisecond, "e") // 0: refused
	for id, want := range map[string]int{"a": 2, "b": 1, "c": 2, "d": 2, "e": 1} {
		if r := d.results[id]; r.Attempts != want {
			t.Errorf("%s: %d attempts (%v), want %d", id, r.Attempts, r.Err, want)
		}
	}
}

// outageRun sends one call every 50 ms for 60 s to a service that answers
// every attempt in 100 ms, except from 20 s to 40 s, when it refuses every
// attempt at once with 503 (an outage). The strategy retries up to 5
// attempts with exponential backoff from 100 ms (1.5 s of backoff in all,
// well inside the outage). It returns the attempts started during the
// outage per call first started during it.
func outageRun(t *testing.T, budget *RetryBudget) (float64, int) {
	t.Helper()
	const from, to = 20 * time.Second, 40 * time.Second
	cfg := Config{
		MaxInFlight: 20,
		Retry:       RetryPolicy{Backoff: BackoffExponential, Base: 100 * time.Millisecond, Cap: 2 * time.Second, MaxAttempts: 5},
		Services:    map[string]ServiceConfig{"s": {RetryBudget: budget}},
	}
	d := newDriver(t, cfg, func(_ *Call, _ int, now time.Duration) (time.Duration, Outcome) {
		if now >= from && now < to {
			return 0, Outcome{Class: ClassOverloaded, Status: 503}
		}
		return 100 * time.Millisecond, Succeeded(nil)
	})
	for i := range 1200 {
		at := time.Duration(i) * 50 * time.Millisecond
		d.run(at)
		d.now = max(d.now, at)
		d.submit(Call{ID: fmt.Sprint("c", i), Service: "s"})
	}
	d.run(time.Hour)
	var attempts, calls, refused int
	for _, s := range d.starts {
		if s.at >= from && s.at < to {
			attempts++
			if s.n == 1 {
				calls++
			}
		}
	}
	for _, r := range d.results {
		if errors.Is(r.Err, ErrRetryBudget) {
			refused++
		}
	}
	if calls == 0 || len(d.results) != 1200 {
		t.Fatalf("%d calls in the outage, %d results", calls, len(d.results))
	}
	return float64(attempts) / float64(calls), refused
}

// TestRetryBudgetCalmsOutage is the retry-storm check: during an outage the
// same strategy makes more than 2 attempts per call without a budget (5,
// all but the last of a call's backoffs inside the outage) and at most 1.2
// with a budget of 0.1 per success, 1/s floor: about 10 reserve + 20 floor
// retries over 400 calls.
func TestRetryBudgetCalmsOutage(t *testing.T) {
	without, refused := outageRun(t, nil)
	if without <= 2 || refused != 0 {
		t.Errorf("without a budget: %.3f attempts per call in the outage (want > 2), %d refused", without, refused)
	}
	with, refused := outageRun(t, &RetryBudget{Ratio: 0.1, MinPerSecond: 1})
	if with > 1.2 {
		t.Errorf("with a budget: %.3f attempts per call in the outage, want ≤ 1.2", with)
	}
	// 400 calls start in the outage; at most 10 + 20 + 1 of their retries are allowed.
	if refused < 400-31 {
		t.Errorf("with a budget: %d calls refused a retry, want at least %d", refused, 400-31)
	}
	t.Logf("attempts per call in the outage: %.3f without a budget, %.3f with one (%d refused)", without, with, refused)
}

// TestHeaderSyncLowersBucket checks that a server's remaining count lowers
// the request bucket (10/s, burst 10) and never raises it.
//
// c0 and c1 start at 0 (8 tokens left here). c0's response, at 100 ms, says
// the server had `remaining` left after c0: c1 was reserved after c0, so
// the bucket holds remaining − 1 as of 0 s, plus 1 refilled by 100 ms.
// Seven calls submitted then start at once as far as that allows and one
// per 100 ms after.
func TestHeaderSyncLowersBucket(t *testing.T) {
	cases := []struct {
		name      string
		sync      bool
		remaining int64
		limit     int64           // the published limit reported with remaining
		want      []time.Duration // start times of the seven calls, in ms
	}{
		// Without sync, or with a report above the bucket's level, the
		// bucket holds 9 at 100 ms: all seven start.
		{"no sync", false, 0, 0, []time.Duration{100, 100, 100, 100, 100, 100, 100}},
		{"sync above level", true, 50, 0, []time.Duration{100, 100, 100, 100, 100, 100, 100}},
		// remaining 5: 5 − 1 + 1 = 5 at 100 ms.
		{"sync 5 left", true, 5, 0, []time.Duration{100, 100, 100, 100, 100, 200, 300}},
		// remaining 0: −1 + 1 = 0 at 100 ms, so one per 100 ms from 200 ms.
		{"sync none left", true, 0, 0, []time.Duration{200, 300, 400, 500, 600, 700, 800}},
		// 300 of a 600/min limit left is half of the bucket's 10: as 5 left.
		{"sync share of the limit", true, 300, 600, []time.Duration{100, 100, 100, 100, 100, 200, 300}},
		// 600 of 600 is a full bucket: no change.
		{"sync full share", true, 600, 600, []time.Duration{100, 100, 100, 100, 100, 100, 100}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Services: map[string]ServiceConfig{"s": {RequestsPerMinute: 600, RequestBurst: 10, HeaderSync: tc.sync}}}
			d := newDriver(t, cfg, func(c *Call, _ int, _ time.Duration) (time.Duration, Outcome) {
				if c.ID == "c1" {
					return time.Hour, Succeeded(nil)
				}
				o := Succeeded(nil)
				o.Quota.Requests = QuotaLeft{Known: true, Remaining: tc.remaining, Limit: tc.limit, Reset: time.Second}
				return 100 * time.Millisecond, o
			})
			d.submit(Call{ID: "c0", Service: "s"}, Call{ID: "c1", Service: "s"})
			d.run(100 * time.Millisecond)
			if _, ok := d.results["c0"]; !ok {
				t.Fatal("c0 not finished at 100 ms")
			}
			var calls []Call
			for i := range 7 {
				calls = append(calls, Call{ID: fmt.Sprint("n", i), Service: "s"})
			}
			d.submit(calls...)
			d.run(2 * time.Second)
			for i, w := range tc.want {
				if got := d.startedOf[fmt.Sprint("n", i)]; got != w*time.Millisecond {
					t.Errorf("n%d started at %v, want %v", i, got, w*time.Millisecond)
				}
			}
		})
	}
}

// TestHeaderSyncTokens checks the token bucket follows a reported token
// count too, and that without a token report nothing moves.
func TestHeaderSyncTokens(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"s": {TokensPerMinute: 60_000, TokenBurst: 10_000, HeaderSync: true}}}
	d := newDriver(t, cfg, func(c *Call, _ int, _ time.Duration) (time.Duration, Outcome) {
		o := Succeeded(nil)
		if c.ID == "a" {
			// The server has 1,000 tokens left after a (others share the key).
			o.Quota.Tokens = QuotaLeft{Known: true, Remaining: 1000}
		}
		return 0, o
	})
	d.submit(Call{ID: "a", Service: "s", Tokens: 1000})
	d.run(0)
	// 1,000 left at 0: a 3,000-token call waits for 2,000 at 1,000/s.
	d.submit(Call{ID: "b", Service: "s", Tokens: 3000})
	d.run(time.Minute)
	if got := d.startedOf["b"]; got != 2*time.Second {
		t.Errorf("b started at %v, want 2s", got)
	}
}
