package sched

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func calls(n int, mk func(i int) Call) []Call {
	out := make([]Call, n)
	for i := range out {
		out[i] = mk(i)
		if out[i].ID == "" {
			out[i].ID = fmt.Sprintf("c%d", i)
		}
	}
	return out
}

func TestTokenBucketReleaseTimes(t *testing.T) {
	// A 10/s bucket with burst 5 facing 100 simultaneous calls: five start at
	// once, then one every 100 ms, the last at exactly 9.5 s.
	cfg := Config{Services: map[string]ServiceConfig{"api": {RequestsPerMinute: 600, RequestBurst: 5}}}
	d := newDriver(t, cfg, func(*Call, int, time.Duration) (time.Duration, Outcome) { return 0, Succeeded(nil) })
	d.submit(calls(100, func(int) Call { return Call{Service: "api"} })...)
	d.run(time.Hour)
	if len(d.starts) != 100 {
		t.Fatalf("starts = %d, want 100", len(d.starts))
	}
	for i, s := range d.starts {
		want := time.Duration(0)
		if i >= 5 {
			want = time.Duration(i-4) * 100 * time.Millisecond
		}
		if s.at != want || s.id != fmt.Sprintf("c%d", i) {
			t.Errorf("start %d: %s at %v, want c%d at %v", i, s.id, s.at, i, want)
		}
	}
	if last := d.starts[99].at; last != 9500*time.Millisecond {
		t.Errorf("last start at %v, want 9.5s", last)
	}
}

func TestTokensPerMinuteBucketAndSettle(t *testing.T) {
	// 6000 tokens/min = 100/s, burst 1000.
	cfg := Config{Services: map[string]ServiceConfig{"llm": {TokensPerMinute: 6000, TokenBurst: 1000}}}
	used := func(n int64) func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return func(*Call, int, time.Duration) (time.Duration, Outcome) {
			return time.Second, Outcome{Class: ClassSuccess, Tokens: n, HasUsage: true}
		}
	}

	// A call reserves the whole bucket but uses 200: the settle refunds 800,
	// so the next 1000-token call starts at 2 s instead of 10 s.
	d := newDriver(t, cfg, used(200))
	d.submit(Call{ID: "a", Service: "llm", Tokens: 1000})
	d.run(time.Second)
	d.submit(Call{ID: "b", Service: "llm", Tokens: 1000})
	d.run(time.Hour)
	if got := d.startedOf["b"]; got != 2*time.Second {
		t.Errorf("refund: b started at %v, want 2s", got)
	}

	// Usage above the estimate debits the difference: 1000 used on a
	// 500-token reservation leaves the next call waiting 5 s more.
	d = newDriver(t, cfg, used(1000))
	d.submit(Call{ID: "a", Service: "llm", Tokens: 500})
	d.run(time.Second)
	d.submit(Call{ID: "b", Service: "llm", Tokens: 1000})
	d.run(time.Hour)
	if got := d.startedOf["b"]; got != 10*time.Second {
		t.Errorf("extra debit: b started at %v, want 10s", got)
	}

	// A refund reaches a call already admitted for later: c2 was booked
	// for 5 s behind c0 and c1; their refunds of 250 each at 1 s leave
	// 600 tokens then, so c2 is booked again and starts at 1 s.
	d = newDriver(t, cfg, used(250))
	d.submit(calls(3, func(int) Call { return Call{Service: "llm", Tokens: 500} })...)
	d.run(time.Hour)
	want := []time.Duration{0, 0, time.Second}
	for i, s := range d.starts {
		if s.at != want[i] {
			t.Errorf("start %d at %v, want %v", i, s.at, want[i])
		}
	}
	// c2's booking at 1 s moved tat to 10 s; its refund of 250 at 2 s
	// brought it back to 7.5 s, so at 6 s the bucket holds
	// 1000 − (7.5 s − 6 s) × 100 = 850.
	if got := d.core.service("llm").tok.Available(6 * time.Second); got != 850 {
		t.Errorf("tokens at 6s = %v, want 850", got)
	}
}

// The fan-out case: four calls reserving 1,000 tokens each on a bucket of
// 1,000 at 100/s are booked for 0, 10, 20 and 30 s. When each reports a
// usage of 100 after 1 s, its refund of 900 lets the next start at once.
func TestSettleMovesQueuedReservationsEarlier(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"llm": {TokensPerMinute: 6000, TokenBurst: 1000, MaxInFlight: 4}}}
	tests := []struct {
		name  string
		usage bool
		want  []time.Duration
	}{
		{"no usage reported", false, []time.Duration{0, 10 * time.Second, 20 * time.Second, 30 * time.Second}},
		{"usage 100 each", true, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriver(t, cfg, func(*Call, int, time.Duration) (time.Duration, Outcome) {
				return time.Second, Outcome{Tokens: 100, HasUsage: tt.usage}
			})
			d.submit(calls(4, func(int) Call { return Call{Service: "llm", Tokens: 1000} })...)
			d.run(time.Hour)
			if len(d.starts) != 4 {
				t.Fatalf("%d starts, want 4", len(d.starts))
			}
			for i, s := range d.starts {
				if s.at != tt.want[i] {
					t.Errorf("start %d (%s) at %v, want %v", i, s.id, s.at, tt.want[i])
				}
			}
		})
	}
}

// A reservation that a later change depends on is not moved: a take for
// usage beyond an estimate came after c1 was booked, so c0's refund cannot
// take c1's booking back without undoing that take too.
func TestSettleLeavesReservationsUnderLaterTakes(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"llm": {TokensPerMinute: 6000, TokenBurst: 1000, MaxInFlight: 4}}}
	d := newDriver(t, cfg, func(c *Call, _ int, _ time.Duration) (time.Duration, Outcome) {
		if c.ID == "over" {
			return 500 * time.Millisecond, Outcome{Tokens: 200, HasUsage: true} // 100 beyond its estimate
		}
		return time.Second, Outcome{Tokens: 100, HasUsage: true}
	})
	d.submit(Call{ID: "over", Service: "llm", Tokens: 100}, Call{ID: "a", Service: "llm", Tokens: 900}, Call{ID: "b", Service: "llm", Tokens: 1000})
	d.run(time.Hour)
	// over and a start at 0 (1000 tokens); b is booked for 10 s. over's
	// extra 100 at 0.5 s is a later take than b's booking, so a's refund
	// of 800 at 1 s applies to the bucket (floored by b's booking at 10 s)
	// but cannot move b.
	if got := d.startedOf["b"]; got != 10*time.Second {
		t.Errorf("b started at %v, want 10s", got)
	}
}

func TestNeverFits(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"llm": {TokensPerMinute: 30000}}}
	d := newDriver(t, cfg, nil)
	d.submit(Call{ID: "big", Service: "llm", Tokens: 45411}, Call{ID: "small", Service: "llm", Tokens: 10})
	d.run(time.Hour)
	r := d.results["big"]
	if !errors.Is(r.Err, ErrNeverFits) || r.State != NotStarted {
		t.Fatalf("big: %+v", r)
	}
	if want := `call "big" needs 45411 tokens but the bucket of service "llm" holds at most 30000`; !strings.Contains(r.Err.Error(), want) {
		t.Errorf("error %q does not contain %q", r.Err, want)
	}
	if d.results["small"].Err != nil {
		t.Errorf("small failed: %v", d.results["small"].Err)
	}
}

func TestFIFOAcrossTurns(t *testing.T) {
	d := newDriver(t, Config{MaxInFlight: 1}, nil)
	d.submit(Call{ID: "a1"}, Call{ID: "a2"})
	d.now = 10 * time.Millisecond
	d.submit(Call{ID: "b1"}, Call{ID: "b2"})
	d.run(time.Hour)
	var got []string
	for _, s := range d.starts {
		got = append(got, s.id)
	}
	if strings.Join(got, ",") != "a1,a2,b1,b2" {
		t.Errorf("start order %v", got)
	}
	if d.peak != 1 {
		t.Errorf("peak in flight %d, want 1", d.peak)
	}
	if len(d.turns) != 2 || d.turns[1].Finished != 400*time.Millisecond {
		t.Errorf("turns %+v", d.turns)
	}
}

func TestPerServiceCapUnderGlobalCap(t *testing.T) {
	cfg := Config{MaxInFlight: 4, Services: map[string]ServiceConfig{"slow": {MaxInFlight: 1}, "fast": {}}}
	d := newDriver(t, cfg, nil)
	d.submit(calls(6, func(i int) Call {
		if i < 3 {
			return Call{Service: "slow"}
		}
		return Call{Service: "fast"}
	})...)
	d.run(time.Hour)
	// At t=0: c0 (slow) and c3,c4,c5 (fast) start: the blocked slow calls do
	// not hold back the fast ones.
	at0 := 0
	for _, s := range d.starts {
		if s.at == 0 {
			at0++
		}
	}
	if at0 != 4 || d.startedOf["c1"] != 100*time.Millisecond || d.startedOf["c2"] != 200*time.Millisecond {
		t.Errorf("at0=%d c1=%v c2=%v", at0, d.startedOf["c1"], d.startedOf["c2"])
	}
}

func TestWritesSerializedReadsParallel(t *testing.T) {
	d := newDriver(t, Config{}, nil)
	d.submit(
		Call{ID: "r1"}, Call{ID: "w1", Write: true, Resource: "doc"}, Call{ID: "r2"},
		Call{ID: "w2", Write: true, Resource: "doc"}, Call{ID: "w3", Write: true, Resource: "other"},
	)
	d.run(time.Hour)
	if d.overlaps != 0 {
		t.Errorf("%d overlapping writes", d.overlaps)
	}
	want := map[string]time.Duration{"r1": 0, "w1": 0, "r2": 0, "w2": 100 * time.Millisecond, "w3": 0}
	for id, at := range want {
		if d.startedOf[id] != at {
			t.Errorf("%s started at %v, want %v", id, d.startedOf[id], at)
		}
	}
}

func TestDependencies(t *testing.T) {
	d := newDriver(t, Config{}, func(c *Call, _ int, _ time.Duration) (time.Duration, Outcome) {
		if c.ID == "bad" {
			return 50 * time.Millisecond, Failed(ClassPermanent, errors.New("boom"))
		}
		return 100 * time.Millisecond, Succeeded(c.ID)
	})
	d.submit(
		Call{ID: "c", After: []string{"a", "b"}},
		Call{ID: "a"}, Call{ID: "b", After: []string{"a"}},
		Call{ID: "bad"}, Call{ID: "x", After: []string{"bad"}}, Call{ID: "y", After: []string{"x"}},
	)
	d.run(time.Hour)
	if d.startedOf["b"] != 100*time.Millisecond || d.startedOf["c"] != 200*time.Millisecond {
		t.Errorf("b at %v, c at %v", d.startedOf["b"], d.startedOf["c"])
	}
	for _, id := range []string{"x", "y"} {
		r := d.results[id]
		if !errors.Is(r.Err, ErrDependencyFailed) || r.State != NotStarted || r.Attempts != 0 {
			t.Errorf("%s: %+v", id, r)
		}
	}
	if !strings.Contains(d.results["x"].Err.Error(), `depends on "bad"`) {
		t.Errorf("x error %q does not name bad", d.results["x"].Err)
	}
	// Results come back in the caller's order.
	got := d.turns[0].Results
	for i, id := range []string{"c", "a", "b", "bad", "x", "y"} {
		if got[i].ID != id || got[i].Index != i {
			t.Errorf("result %d is %s/%d, want %s", i, got[i].ID, got[i].Index, id)
		}
	}
}

func TestInvalidTurns(t *testing.T) {
	tests := []struct {
		name  string
		give  []Call
		want  string
		isErr error
	}{
		{"cycle", []Call{{ID: "a", After: []string{"c"}}, {ID: "b", After: []string{"a"}}, {ID: "c", After: []string{"b"}}}, "dependency cycle: a → c → b → a", ErrInvalidTurn},
		{"self", []Call{{ID: "a", After: []string{"a"}}}, "dependency cycle: a → a", ErrInvalidTurn},
		{"unknown", []Call{{ID: "a", After: []string{"zz"}}}, `call "a" depends on unknown id "zz"`, ErrInvalidTurn},
		{"duplicate and empty", []Call{{ID: "a"}, {ID: "a"}, {}}, `call id "a" appears more than once; call 2 has an empty id`, ErrInvalidTurn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := New(Config{})
			_, err := c.Submit(0, Turn{Calls: tt.give})
			if !errors.Is(err, tt.isErr) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
			if len(c.Actions(nil)) != 0 || c.Waiting() != 0 {
				t.Error("a refused turn left state behind")
			}
		})
	}
}

func TestMaxQueued(t *testing.T) {
	c, _ := New(Config{MaxInFlight: 1, MaxQueued: 5})
	if _, err := c.Submit(0, Turn{Calls: calls(4, func(int) Call { return Call{} })}); err != nil {
		t.Fatal(err)
	}
	// one started, three waiting; 3 + 3 > 5
	_, err := c.Submit(0, Turn{Calls: calls(3, func(i int) Call { return Call{ID: fmt.Sprint("x", i)} })})
	if !errors.Is(err, ErrQueueFull) || !strings.Contains(err.Error(), "3 calls waiting, the turn adds 3, the bound is 5") {
		t.Errorf("err = %v", err)
	}
}

func TestRetryAfterIsAFloor(t *testing.T) {
	tests := []struct {
		name   string
		jitter time.Duration
		wantAt time.Duration
	}{
		{"no jitter: exactly the server's delay", 0, 100*time.Millisecond + 2*time.Second},
		{"jitter only adds", time.Second, 100*time.Millisecond + 2*time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Retry: RetryPolicy{Backoff: BackoffFullJitter, Base: 10 * time.Millisecond, Cap: 20 * time.Millisecond, MaxAttempts: 3, RetryAfterJitter: tt.jitter}}
			d := newDriver(t, cfg, func(c *Call, n int, _ time.Duration) (time.Duration, Outcome) {
				if n == 1 {
					return 100 * time.Millisecond, Outcome{Class: ClassRateLimited, Status: 429, RetryAfter: 2 * time.Second, HasRetryAfter: true}
				}
				return 100 * time.Millisecond, Succeeded(nil)
			})
			d.submit(Call{ID: "a"})
			d.run(time.Hour)
			second := d.starts[1].at
			if second < tt.wantAt || (tt.jitter == 0 && second != tt.wantAt) || second > tt.wantAt+tt.jitter {
				t.Errorf("retry at %v, want in [%v, %v]", second, tt.wantAt, tt.wantAt+tt.jitter)
			}
			r := d.results["a"]
			if r.Err != nil || r.Attempts != 2 || r.Running != 200*time.Millisecond || r.Queued != second-100*time.Millisecond {
				t.Errorf("result %+v", r)
			}
		})
	}
}

func TestMaxRetryAfter(t *testing.T) {
	rl := func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return 0, Outcome{Class: ClassRateLimited, Status: 429, RetryAfter: time.Hour, HasRetryAfter: true}
	}
	d := newDriver(t, Config{Retry: RetryPolicy{MaxAttempts: 2}, OverMaxRetryAfter: RetryAfterFail}, rl)
	d.submit(Call{ID: "a"})
	d.run(10 * time.Hour)
	if r := d.results["a"]; !errors.Is(r.Err, ErrRetryAfterTooLong) || !strings.Contains(r.Err.Error(), "wait 1h0m0s, above the maximum of 2m0s") || r.Class != ClassRateLimited {
		t.Errorf("fail policy: %+v", r)
	}
	d = newDriver(t, Config{Retry: RetryPolicy{MaxAttempts: 2}}, rl)
	d.submit(Call{ID: "a"})
	d.run(10 * time.Hour)
	if d.starts[1].at != DefaultMaxRetryAfter || !errors.Is(d.results["a"].Err, ErrRetriesExhausted) {
		t.Errorf("clamp policy: second attempt at %v, result %v", d.starts[1].at, d.results["a"].Err)
	}
}

func TestNonRetryableAndWrites(t *testing.T) {
	tests := []struct {
		give     Class
		call     Call
		attempts int
	}{
		{ClassQuotaExhausted, Call{ID: "q"}, 1},
		{ClassTooLarge, Call{ID: "l"}, 1},
		{ClassPermanent, Call{ID: "p"}, 1},
		{ClassTransient, Call{ID: "t"}, 3},
		{ClassOverloaded, Call{ID: "o"}, 3},
		{ClassTransient, Call{ID: "w", Write: true}, 1},
		{ClassTransient, Call{ID: "wi", Write: true, Idempotent: true}, 3},
	}
	for _, tt := range tests {
		d := newDriver(t, Config{Retry: RetryPolicy{Backoff: BackoffConstant, Base: time.Second, MaxAttempts: 3}}, func(*Call, int, time.Duration) (time.Duration, Outcome) {
			return time.Millisecond, Failed(tt.give, errors.New("nope"))
		})
		d.submit(tt.call)
		d.run(time.Hour)
		if r := d.results[tt.call.ID]; r.Attempts != tt.attempts || r.Class != tt.give || r.State != Completed {
			t.Errorf("%s %v: attempts %d class %v state %v, want %d", tt.call.ID, tt.give, r.Attempts, r.Class, r.State, tt.attempts)
		}
	}
}

func TestSlotDuringBackoff(t *testing.T) {
	// Cap 1; call a is rate limited once with a 1 s delay. Keeping the slot
	// makes b wait for a's retry; releasing it lets b run meanwhile.
	exec := func(c *Call, n int, _ time.Duration) (time.Duration, Outcome) {
		if c.ID == "a" && n == 1 {
			return 100 * time.Millisecond, Outcome{Class: ClassRateLimited, RetryAfter: time.Second, HasRetryAfter: true}
		}
		return 100 * time.Millisecond, Succeeded(nil)
	}
	for _, keep := range []bool{true, false} {
		d := newDriver(t, Config{MaxInFlight: 1, KeepSlotDuringBackoff: keep, Retry: RetryPolicy{MaxAttempts: 2}}, exec)
		d.submit(Call{ID: "a"}, Call{ID: "b"})
		d.run(time.Hour)
		want := 100 * time.Millisecond
		if keep {
			want = 1200 * time.Millisecond
		}
		if got := d.startedOf["b"]; got != want {
			t.Errorf("keep=%v: b started at %v, want %v", keep, got, want)
		}
	}
}

func TestServiceWidePause(t *testing.T) {
	// Four parallel calls; the first returns a 429 with a 2 s delay at 50 ms.
	// With the pause, calls admitted after that wait until 2.05 s.
	exec := func(c *Call, n int, _ time.Duration) (time.Duration, Outcome) {
		if c.ID == "c0" && n == 1 {
			return 50 * time.Millisecond, Outcome{Class: ClassRateLimited, RetryAfter: 2 * time.Second, HasRetryAfter: true}
		}
		return 100 * time.Millisecond, Succeeded(nil)
	}
	cfg := Config{MaxInFlight: 2, Retry: RetryPolicy{MaxAttempts: 2}, Services: map[string]ServiceConfig{"api": {PauseOnRetryAfter: true}}}
	d := newDriver(t, cfg, exec)
	d.submit(calls(4, func(int) Call { return Call{Service: "api"} })...)
	d.run(time.Hour)
	for _, id := range []string{"c0", "c2", "c3"} {
		if d.endOf[id] < 2050*time.Millisecond {
			t.Errorf("%s ended at %v, before the pause ended", id, d.endOf[id])
		}
	}
	if d.startedOf["c1"] != 0 {
		t.Errorf("c1 started at %v", d.startedOf["c1"])
	}
}

func TestCancelTurn(t *testing.T) {
	d := newDriver(t, Config{MaxInFlight: 2}, func(*Call, int, time.Duration) (time.Duration, Outcome) { return time.Second, Succeeded(nil) })
	id := d.submit(calls(4, func(int) Call { return Call{} })...)
	d.run(500 * time.Millisecond)
	d.now = 500 * time.Millisecond
	d.core.Cancel(d.now, id)
	d.drain()
	if len(d.cancels) != 2 {
		t.Errorf("%d transport cancels, want 2", len(d.cancels))
	}
	for i, want := range []State{CancelledInFlight, CancelledInFlight, NotStarted, NotStarted} {
		r := d.results[fmt.Sprint("c", i)]
		if r.State != want || !errors.Is(r.Err, ErrCancelled) || r.Class != ClassCancelled {
			t.Errorf("c%d: %+v, want state %v", i, r, want)
		}
	}
	if d.core.InFlight() != 0 || d.core.Waiting() != 0 || d.core.Turns() != 0 {
		t.Errorf("state left: inflight %d waiting %d turns %d", d.core.InFlight(), d.core.Waiting(), d.core.Turns())
	}
}

func TestAttemptTimeoutFreesSlot(t *testing.T) {
	// The first attempt of a hangs; the 1 s attempt timeout cancels it at the
	// transport, frees the slot for b, and a's retry succeeds.
	exec := func(c *Call, n int, _ time.Duration) (time.Duration, Outcome) {
		if c.ID == "a" && n == 1 {
			return -1, Outcome{}
		}
		return 100 * time.Millisecond, Succeeded(nil)
	}
	d := newDriver(t, Config{MaxInFlight: 1, AttemptTimeout: time.Second, Retry: RetryPolicy{MaxAttempts: 2}}, exec)
	d.submit(Call{ID: "a"}, Call{ID: "b"})
	d.run(time.Hour)
	if len(d.cancels) != 1 || d.startedOf["b"] != time.Second {
		t.Errorf("cancels %v, b started %v", d.cancels, d.startedOf["b"])
	}
	if r := d.results["a"]; r.Err != nil || r.Attempts != 2 {
		t.Errorf("a: %+v", r)
	}
}

func TestDeadlines(t *testing.T) {
	// 1 request/s, burst 1: the second call would wait 1 s but has 500 ms,
	// so it fails at admission without spending the bucket.
	cfg := Config{Services: map[string]ServiceConfig{"api": {RequestsPerMinute: 60}}}
	d := newDriver(t, cfg, nil)
	d.submit(Call{ID: "a", Service: "api"}, Call{ID: "b", Service: "api", Timeout: 500 * time.Millisecond}, Call{ID: "c", Service: "api"})
	d.run(time.Hour)
	if r := d.results["b"]; !errors.Is(r.Err, ErrDeadline) || r.State != NotStarted || r.Finished != 0 {
		t.Errorf("b: %+v", r)
	}
	if d.startedOf["c"] != time.Second {
		t.Errorf("c started at %v, want 1s (b's reservation refunded)", d.startedOf["c"])
	}

	// A turn deadline cancels in flight and queued calls.
	d = newDriver(t, Config{MaxInFlight: 1}, func(*Call, int, time.Duration) (time.Duration, Outcome) { return time.Second, Succeeded(nil) })
	d.submitTurn(Turn{Calls: []Call{{ID: "x"}, {ID: "y"}}, Timeout: 1500 * time.Millisecond})
	d.run(time.Hour)
	if r := d.results["y"]; r.State != CancelledInFlight || !errors.Is(r.Err, ErrDeadline) || r.Finished != 1500*time.Millisecond {
		t.Errorf("y: %+v", r)
	}
	if r := d.results["x"]; r.Err != nil {
		t.Errorf("x: %v", r.Err)
	}
}

func TestFanOut(t *testing.T) {
	d := newDriver(t, Config{FanOut: 3}, nil)
	d.submit(calls(7, func(int) Call { return Call{} })...)
	d.run(time.Hour)
	if d.peak != 3 || d.startedOf["c6"] != 200*time.Millisecond {
		t.Errorf("batch: peak %d, c6 at %v", d.peak, d.startedOf["c6"])
	}
	d = newDriver(t, Config{FanOut: 3, FanOutMode: FanOutTruncate}, nil)
	d.submit(calls(7, func(int) Call { return Call{} })...)
	d.run(time.Hour)
	r := d.results["c5"]
	if len(d.starts) != 3 || !errors.Is(r.Err, ErrTruncated) || !strings.Contains(r.Err.Error(), "number 6 of 7, beyond the turn's fan-out cap of 3") {
		t.Errorf("truncate: %d starts, c5 %v", len(d.starts), r.Err)
	}
}

func TestBudgets(t *testing.T) {
	d := newDriver(t, Config{MaxInFlight: 1, TurnTokenBudget: 250}, nil)
	d.submit(calls(4, func(int) Call { return Call{Tokens: 100} })...)
	d.run(time.Hour)
	if len(d.starts) != 2 || !errors.Is(d.results["c2"].Err, ErrBudgetExhausted) || !errors.Is(d.results["c3"].Err, ErrBudgetExhausted) {
		t.Errorf("token budget: %d starts, c2 %v", len(d.starts), d.results["c2"].Err)
	}
	d = newDriver(t, Config{TurnAttemptBudget: 3, Retry: RetryPolicy{MaxAttempts: 5}}, func(c *Call, _ int, _ time.Duration) (time.Duration, Outcome) {
		if c.ID == "c0" {
			return 10 * time.Millisecond, Failed(ClassTransient, errors.New("flaky"))
		}
		return 100 * time.Millisecond, Succeeded(nil)
	})
	d.submit(calls(2, func(int) Call { return Call{} })...)
	d.run(time.Hour)
	if r := d.results["c0"]; r.Attempts != 2 || !errors.Is(r.Err, ErrBudgetExhausted) {
		t.Errorf("attempt budget: c0 %+v", r)
	}
}

func TestRetryAfterBudgetRanOut(t *testing.T) {
	// Budget 2: a and b start, c finds the budget spent. Then a fails and
	// its retry must end with the budget error, not wait forever.
	d := newDriver(t, Config{TurnAttemptBudget: 2, Retry: RetryPolicy{MaxAttempts: 3}}, func(c *Call, _ int, _ time.Duration) (time.Duration, Outcome) {
		if c.ID == "a" {
			return 10 * time.Millisecond, Failed(ClassTransient, errors.New("flaky"))
		}
		return time.Second, Succeeded(nil)
	})
	d.submit(Call{ID: "a"}, Call{ID: "b"}, Call{ID: "c"})
	d.run(time.Hour)
	if len(d.turns) != 1 {
		t.Fatalf("the turn never finished: %d results", len(d.results))
	}
	for id, want := range map[string]error{"a": ErrBudgetExhausted, "b": nil, "c": ErrBudgetExhausted} {
		if r := d.results[id]; !errors.Is(r.Err, want) && !(want == nil && r.Err == nil) {
			t.Errorf("%s: %v, want %v", id, r.Err, want)
		}
	}
	if r := d.results["a"]; r.Attempts != 1 || r.State != Completed {
		t.Errorf("a: %+v", r)
	}
}

func TestAllOrNothing(t *testing.T) {
	d := newDriver(t, Config{Join: JoinAllOrNothing}, func(c *Call, _ int, _ time.Duration) (time.Duration, Outcome) {
		if c.ID == "c1" {
			return 50 * time.Millisecond, Failed(ClassPermanent, errors.New("bad input"))
		}
		return time.Second, Succeeded(nil)
	})
	d.submit(calls(3, func(int) Call { return Call{} })...)
	d.run(time.Hour)
	if len(d.cancels) != 2 || d.turns[0].Finished != 50*time.Millisecond {
		t.Errorf("cancels %d, turn finished %v", len(d.cancels), d.turns[0].Finished)
	}
	if r := d.results["c0"]; r.State != CancelledInFlight || !strings.Contains(r.Err.Error(), `call "c1" failed and the turn is all-or-nothing`) {
		t.Errorf("c0: %+v", r)
	}
}

func TestEvents(t *testing.T) {
	var kinds []string
	cfg := Config{Retry: RetryPolicy{MaxAttempts: 2}, Hook: func(e Event) { kinds = append(kinds, e.Kind.String()) }}
	d := newDriver(t, cfg, func(_ *Call, n int, _ time.Duration) (time.Duration, Outcome) {
		if n == 1 {
			return time.Millisecond, Outcome{Class: ClassRateLimited, RetryAfter: time.Second, HasRetryAfter: true}
		}
		return time.Millisecond, Succeeded(nil)
	})
	d.submit(Call{ID: "a"})
	d.run(time.Hour)
	want := "queued admitted started finished retry admitted started finished result"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
}

func TestDeterminism(t *testing.T) {
	run := func() string {
		cfg := Config{MaxInFlight: 4, Rand: rand.New(rand.NewPCG(7, 7)), Retry: RetryPolicy{Backoff: BackoffFullJitter, Base: 100 * time.Millisecond, Cap: time.Second}}
		d := newDriver(t, cfg, func(c *Call, n int, now time.Duration) (time.Duration, Outcome) {
			if (len(c.ID)+n+int(now/time.Millisecond))%3 == 0 {
				return 30 * time.Millisecond, Failed(ClassOverloaded, errors.New("busy"))
			}
			return 70 * time.Millisecond, Succeeded(nil)
		})
		d.submit(calls(50, func(int) Call { return Call{} })...)
		d.run(time.Hour)
		return fmt.Sprint(d.starts)
	}
	if a, b := run(), run(); a != b {
		t.Error("two runs of the same inputs differ")
	}
}

func TestWriteDependingOnALaterWrite(t *testing.T) {
	// w writes doc after y, which also writes doc but comes later in the
	// turn: y must run first, then w, without either waiting on the other.
	d := newDriver(t, Config{}, nil)
	d.submit(Call{ID: "w", Write: true, Resource: "doc", After: []string{"y"}}, Call{ID: "y", Write: true, Resource: "doc"}, Call{ID: "z", Write: true, Resource: "doc"})
	d.run(time.Hour)
	if len(d.turns) != 1 {
		t.Fatalf("the turn never finished: %d of 3 results", len(d.results))
	}
	if d.overlaps != 0 {
		t.Errorf("%d overlapping writes", d.overlaps)
	}
	// y and z are ready at once and go in submission order; w waits for y.
	want := map[string]time.Duration{"y": 0, "z": 100 * time.Millisecond, "w": 200 * time.Millisecond}
	for id, at := range want {
		if got := d.startedOf[id]; got != at {
			t.Errorf("%s started at %v, want %v", id, got, at)
		}
	}
}

func TestWritesStaySerialAcrossTurnsWhileOneWaitsForADependency(t *testing.T) {
	// Turn 1: a write to doc waits for a slow read; another write to doc
	// runs and finishes meanwhile. Turn 2's write to doc arrives before the
	// read ends: it must not run alongside turn 1's waiting write.
	d := newDriver(t, Config{}, func(c *Call, _ int, _ time.Duration) (time.Duration, Outcome) {
		if c.ID == "slow" {
			return time.Second, Succeeded(nil)
		}
		return 500 * time.Millisecond, Succeeded(nil)
	})
	d.submit(Call{ID: "slow"}, Call{ID: "w1", Write: true, Resource: "doc", After: []string{"slow"}}, Call{ID: "w0", Write: true, Resource: "doc"})
	d.run(800 * time.Millisecond)
	d.now = 800 * time.Millisecond
	d.submit(Call{ID: "w2", Write: true, Resource: "doc"})
	d.run(time.Hour)
	if d.overlaps != 0 {
		t.Errorf("%d overlapping writes to doc", d.overlaps)
	}
	if len(d.turns) != 2 {
		t.Fatalf("%d turns finished, want 2", len(d.turns))
	}
}
