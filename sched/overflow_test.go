package sched

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"testing"
	"time"
)

const forever = time.Duration(math.MaxInt64)

// maxSource makes every draw the largest a *rand.Rand gives: Float64 just
// below 1.
type maxSource struct{}

func (maxSource) Uint64() uint64 { return math.MaxUint64 }

// TestRetryTimeSaturates drives retries whose delay, added to the current
// time, would pass the largest Duration. The retry must wait "forever", not
// wrap around to a time in the past and start at once.
func TestRetryTimeSaturates(t *testing.T) {
	limited := Outcome{Class: ClassRateLimited, Status: 429, RetryAfter: forever, HasRetryAfter: true}
	tests := []struct {
		name string
		cfg  Config
		fail Outcome
	}{
		{
			// The server asks for the longest delay and the client honours
			// delays up to the longest.
			name: "Retry-After at the maximum, MaxRetryAfter at the maximum",
			cfg:  Config{MaxRetryAfter: forever, Retry: RetryPolicy{MaxAttempts: 2}},
			fail: limited,
		},
		{
			name: "the same with a pause of the service",
			cfg:  Config{MaxRetryAfter: forever, Retry: RetryPolicy{MaxAttempts: 2}, Services: map[string]ServiceConfig{"": {PauseOnRetryAfter: true}}},
			fail: limited,
		},
		{
			// An hour's delay plus a draw of almost 1 times the longest jitter.
			name: "huge jitter on a server delay",
			cfg:  Config{Rand: rand.New(maxSource{}), Retry: RetryPolicy{MaxAttempts: 2, RetryAfterJitter: forever}},
			fail: Outcome{Class: ClassRateLimited, Status: 429, RetryAfter: time.Hour, HasRetryAfter: true},
		},
		{
			// float64(MaxInt64) is 2^63: converting it back wraps to MinInt64.
			name: "constant backoff with Base at the maximum",
			cfg:  Config{Retry: RetryPolicy{Backoff: BackoffConstant, Base: forever, MaxAttempts: 2}},
			fail: Outcome{Class: ClassTransient, Status: 503},
		},
		{
			name: "full jitter with Base at the maximum",
			cfg:  Config{Rand: rand.New(maxSource{}), Retry: RetryPolicy{Backoff: BackoffFullJitter, Base: forever, MaxAttempts: 2}},
			fail: Outcome{Class: ClassTransient, Status: 503},
		},
		{
			name: "equal jitter with Base at the maximum",
			cfg:  Config{Rand: rand.New(maxSource{}), Retry: RetryPolicy{Backoff: BackoffEqualJitter, Base: forever, MaxAttempts: 2}},
			fail: Outcome{Class: ClassTransient, Status: 503},
		},
		{
			name: "decorrelated jitter with Base at the maximum",
			cfg:  Config{Rand: rand.New(maxSource{}), Retry: RetryPolicy{Backoff: BackoffDecorrelatedJitter, Base: forever, MaxAttempts: 2}},
			fail: Outcome{Class: ClassTransient, Status: 503},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriver(t, tt.cfg, func(_ *Call, n int, _ time.Duration) (time.Duration, Outcome) {
				if n == 1 {
					return time.Second, tt.fail
				}
				return time.Second, Succeeded(nil)
			})
			d.submit(Call{ID: "a"})
			d.run(forever - 1)
			if len(d.starts) != 1 {
				t.Fatalf("the retry started at %v, 1 s after the first attempt failed; want never", d.starts[1].at)
			}
			if _, ok := d.results["a"]; ok {
				t.Fatalf("call finished early: %+v", d.results["a"])
			}
			if !d.hasWake || d.wake != forever {
				t.Errorf("wake at %v (set %v), want %v", d.wake, d.hasWake, forever)
			}
		})
	}
}

// TestUncappedExponentialBackoffSaturates retries every failure with an
// uncapped exponential backoff from 1 h: each retry waits twice as long as
// the one before until the next start would pass the largest Duration; none
// may come earlier.
func TestUncappedExponentialBackoffSaturates(t *testing.T) {
	cfg := Config{Retry: RetryPolicy{Backoff: BackoffExponential, Base: time.Hour, MaxAttempts: 40}}
	d := newDriver(t, cfg, func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return 0, Outcome{Class: ClassTransient, Status: 503}
	})
	d.submit(Call{ID: "a"})
	d.run(forever - 1)
	// Attempt k (from 1) starts at (2^(k-1) − 1) h while that fits.
	var want []time.Duration
	for k := 1; ; k++ {
		at := time.Duration(1<<(k-1)-1) * time.Hour
		if at < 0 || at/time.Hour != time.Duration(1<<(k-1)-1) {
			break
		}
		want = append(want, at)
	}
	if len(d.starts) != len(want) {
		t.Fatalf("%d attempts before the end of time, want %d; last at %v", len(d.starts), len(want), d.starts[len(d.starts)-1].at)
	}
	for i, s := range d.starts {
		if s.at != want[i] {
			t.Errorf("attempt %d at %v, want %v", i+1, s.at, want[i])
		}
	}
}

// TestHugeTimeoutsMeanNoTimeout sets deadlines and timeouts so long that
// adding them to the submission time passes the largest Duration: the call
// must run, not time out at once.
func TestHugeTimeoutsMeanNoTimeout(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"turn timeout", Config{TurnTimeout: forever}},
		{"call timeout", Config{CallTimeout: forever}},
		{"attempt timeout", Config{AttemptTimeout: forever}},
		{"all of them", Config{TurnTimeout: forever, CallTimeout: forever - 1, AttemptTimeout: forever - 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriver(t, tt.cfg, nil)
			d.now = time.Second
			d.submit(Call{ID: "a"})
			d.run(time.Hour)
			if r, ok := d.results["a"]; !ok || r.Err != nil || r.Attempts != 1 {
				t.Errorf("result %+v (decided %v), want one successful attempt", r, ok)
			}
		})
	}
}

// TestTinyRateNeverRefills gives a bucket a rate so small that refilling one
// request takes longer than the largest Duration: after the first request
// the bucket is empty for good. New refuses a rate below MinRatePerMinute;
// a tiny headroom scales the floor itself further down (and the burst,
// which 1/headroom brings back to one request).
func TestTinyRateNeverRefills(t *testing.T) {
	for _, h := range []float64{1e-12, 1e-300} {
		t.Run(fmt.Sprint(h), func(t *testing.T) {
			cfg := Config{Services: map[string]ServiceConfig{"api": {RequestsPerMinute: MinRatePerMinute, RequestBurst: 1 / h, Headroom: h}}}
			d := newDriver(t, cfg, nil)
			d.submit(Call{ID: "a", Service: "api"}, Call{ID: "b", Service: "api"})
			d.run(forever - 1)
			if len(d.starts) != 1 || d.starts[0].id != "a" {
				t.Fatalf("starts %+v, want a alone", d.starts)
			}
		})
	}
}

// TestHugeTokenCountsSaturate gives a turn a token budget and calls whose
// token counts sum past MaxInt64: the sum must not wrap below the budget.
func TestHugeTokenCountsSaturate(t *testing.T) {
	d := newDriver(t, Config{MaxInFlight: 1}, nil)
	d.submitTurn(Turn{TokenBudget: math.MaxInt64 - 1, Calls: []Call{
		{ID: "a", Tokens: math.MaxInt64 - 1},
		{ID: "b", Tokens: math.MaxInt64 - 1},
	}})
	d.run(time.Hour)
	if r := d.results["a"]; r.Err != nil {
		t.Errorf("a: %v", r.Err)
	}
	if r := d.results["b"]; !errors.Is(r.Err, ErrBudgetExhausted) {
		t.Errorf("b: %+v, want the budget exhausted", r)
	}
	// Usage reported far above the reservation debits, saturated: the next
	// call's tokens must not wrap the sum back under the budget.
	// (The Core settles usage with calls to a service that has a token bucket.)
	tpm := Config{MaxInFlight: 1, Services: map[string]ServiceConfig{"": {TokensPerMinute: 60_000}}}
	d = newDriver(t, tpm, func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return time.Second, Outcome{Class: ClassSuccess, Tokens: math.MaxInt64, HasUsage: true}
	})
	d.submitTurn(Turn{TokenBudget: 1000, Calls: []Call{{ID: "a", Tokens: 10}, {ID: "b", Tokens: 1}}})
	d.run(time.Hour)
	if r := d.results["b"]; !errors.Is(r.Err, ErrBudgetExhausted) {
		t.Errorf("after a huge usage report, b: %+v, want the budget exhausted", r)
	}
}

// TestLongFailedChain fails the first call of a turn of 200,000 calls, each
// depending on the one before. Every call must get exactly one result, in
// the turn's order, without finish recursing once per link: the test caps
// the stack far below what recursion would need.
func TestLongFailedChain(t *testing.T) {
	const n = 200_000
	defer debug.SetMaxStack(debug.SetMaxStack(16 << 20))
	cs := make([]Call, n)
	for i := range cs {
		cs[i].ID = fmt.Sprintf("c%d", i)
		if i > 0 {
			cs[i].After = []string{cs[i-1].ID}
		}
	}
	d := newDriver(t, Config{}, func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return time.Millisecond, Outcome{Class: ClassPermanent, Status: 400}
	})
	d.submit(cs...)
	d.run(time.Hour)
	if len(d.turns) != 1 {
		t.Fatalf("%d turns done, want 1", len(d.turns))
	}
	res := d.turns[0].Results
	if len(res) != n || len(d.results) != n || len(d.starts) != 1 {
		t.Fatalf("%d results in the turn, %d emitted, %d starts; want %d, %d, 1", len(res), len(d.results), len(d.starts), n, n)
	}
	for i := range res {
		r := &res[i]
		if r.ID != cs[i].ID || r.Index != i {
			t.Fatalf("result %d is %q (index %d)", i, r.ID, r.Index)
		}
		if i > 0 && (!errors.Is(r.Err, ErrDependencyFailed) || r.State != NotStarted) {
			t.Fatalf("result %d: %+v, want a not-started dependency failure", i, r)
		}
	}
	if res[0].Class != ClassPermanent {
		t.Errorf("first call: %+v", res[0])
	}
}

// TestLongChainAllOrNothing is the same chain in all-or-nothing mode, whose
// cancel of the siblings also used to recurse down the chain.
func TestLongChainAllOrNothing(t *testing.T) {
	const n = 200_000
	defer debug.SetMaxStack(debug.SetMaxStack(16 << 20))
	cs := make([]Call, n)
	for i := range cs {
		cs[i].ID = fmt.Sprintf("c%d", i)
		if i > 1 {
			cs[i].After = []string{cs[i-1].ID}
		}
	}
	// c0 and c1 run at once; c1 fails, cancelling c0 and the chain behind c1.
	d := newDriver(t, Config{Join: JoinAllOrNothing}, func(c *Call, _ int, _ time.Duration) (time.Duration, Outcome) {
		if c.ID == "c1" {
			return time.Millisecond, Outcome{Class: ClassPermanent, Status: 400}
		}
		return time.Second, Succeeded(nil)
	})
	d.submit(cs...)
	d.run(time.Hour)
	if len(d.turns) != 1 || len(d.results) != n {
		t.Fatalf("%d turns, %d results; want 1, %d", len(d.turns), len(d.results), n)
	}
	res := d.turns[0].Results
	if res[0].State != CancelledInFlight || !errors.Is(res[0].Err, ErrCancelled) {
		t.Errorf("c0: %+v", res[0])
	}
	for i := 2; i < n; i++ {
		if res[i].Err == nil || res[i].State != NotStarted {
			t.Fatalf("result %d: %+v", i, res[i])
		}
	}
}

func TestNewRunnerRefusesNilExecutor(t *testing.T) {
	r, err := NewRunner(Config{}, nil)
	if err == nil {
		res, runErr := r.Run(context.Background(), Turn{Calls: []Call{{ID: "a"}}})
		r.Close()
		t.Fatalf("NewRunner(cfg, nil) succeeded; a call then gave %v, %v", res, runErr)
	}
	if r != nil {
		t.Errorf("runner %v with error %v", r, err)
	}
}

// TestDelayNeverNegative checks every backoff policy at the largest Base and
// previous delay, for the draws 0, 0.25, 0.5 and 1: a delay is never
// negative, and a policy whose delay grows with Base gives the largest one.
func TestDelayNeverNegative(t *testing.T) {
	for b := BackoffNone; b <= BackoffDecorrelatedJitter; b++ {
		for _, draw := range []float64{0, 0.25, 0.5, 1} {
			p := RetryPolicy{Backoff: b, Base: forever}
			for _, retry := range []int{1, 2, 64, math.MaxInt} {
				got := p.Delay(retry, forever, draw)
				if got < 0 {
					t.Errorf("%v retry %d draw %v: delay %v", b, retry, draw, got)
				}
				if (b == BackoffConstant || b == BackoffExponential || b == BackoffDecorrelatedJitter || (b == BackoffFullJitter && draw == 1)) && got != forever {
					t.Errorf("%v retry %d draw %v: delay %v, want %v", b, retry, draw, got, forever)
				}
			}
		}
	}
	p := RetryPolicy{RetryAfterJitter: forever}
	o := Outcome{HasRetryAfter: true, RetryAfter: forever}
	for _, draw := range []float64{0, 0.25, 0.5, 1} {
		if got := p.RetryDelay(&o, 1, 0, draw); got != forever {
			t.Errorf("RetryDelay(forever + %v×forever) = %v, want %v", draw, got, forever)
		}
	}
}
