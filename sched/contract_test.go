package sched

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestUnknownServiceIsInvalidTurn(t *testing.T) {
	c, err := New(Config{Services: map[string]ServiceConfig{"search": {RequestsPerMinute: 60, RequestBurst: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Submit(0, Turn{Calls: []Call{{ID: "a", Service: "search"}, {ID: "b", Service: "serach"}, {ID: "c", Service: "serach"}, {ID: "d"}}})
	var inv *InvalidTurnError
	if !errors.Is(err, ErrInvalidTurn) || !errors.As(err, &inv) {
		t.Fatalf("err = %v, want an *InvalidTurnError", err)
	}
	if !slices.Equal(inv.UnknownServices, []string{"serach"}) {
		t.Errorf("unknown services %q, want [serach]", inv.UnknownServices)
	}
	if msg := err.Error(); !strings.Contains(msg, `service "serach"`) || !strings.Contains(msg, `"search"`) {
		t.Errorf("message %q should name the unknown service and the listed ones", msg)
	}
	if c.Waiting() != 0 || c.Turns() != 0 {
		t.Errorf("a refused turn left %d waiting, %d turns", c.Waiting(), c.Turns())
	}
	// Calls naming no service stay allowed.
	if _, err := c.Submit(0, Turn{Calls: []Call{{ID: "x"}}}); err != nil {
		t.Errorf("a call with no service: %v", err)
	}
}

// jitterDraws returns the backoff delays of three retries of one call under
// cfg's Rand.
func jitterDraws(t *testing.T, r *rand.Rand) []time.Duration {
	cfg := Config{Rand: r, Retry: RetryPolicy{Backoff: BackoffFullJitter, Base: 10 * time.Millisecond, Cap: time.Second, MaxAttempts: 4}}
	var delays []time.Duration
	cfg.Hook = func(e Event) {
		if e.Kind == EventRetry {
			delays = append(delays, e.Delay)
		}
	}
	d := newDriver(t, cfg, func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return time.Millisecond, Failed(ClassOverloaded, errors.New("busy"))
	})
	d.submit(Call{ID: "a"})
	d.run(time.Hour)
	if len(delays) != 3 {
		t.Fatalf("%d retries, want 3", len(delays))
	}
	return delays
}

func TestNilRandSeedsItself(t *testing.T) {
	a, b := jitterDraws(t, nil), jitterDraws(t, nil)
	if slices.Equal(a, b) {
		t.Errorf("two cores with a nil Rand drew the same jitter %v: a fleet would retry in step", a)
	}
	s1, s2 := jitterDraws(t, rand.New(rand.NewPCG(3, 4))), jitterDraws(t, rand.New(rand.NewPCG(3, 4)))
	if !slices.Equal(s1, s2) {
		t.Errorf("the same seed drew %v and %v", s1, s2)
	}
}

func TestTypedErrors(t *testing.T) {
	c, _ := New(Config{MaxQueued: 2, Services: map[string]ServiceConfig{"llm": {TokensPerMinute: 1000}}})
	_, err := c.Submit(0, Turn{Calls: calls(3, func(int) Call { return Call{} })})
	var full *QueueFullError
	if !errors.As(err, &full) || !errors.Is(err, ErrQueueFull) || *full != (QueueFullError{Waiting: 0, Adding: 3, Bound: 2}) {
		t.Errorf("queue full: %v (%+v)", err, full)
	}
	d := newDriver(t, Config{Services: map[string]ServiceConfig{"llm": {TokensPerMinute: 1000, Headroom: 0.5}}}, nil)
	d.submit(Call{ID: "big", Service: "llm", Tokens: 600})
	var nf *NeverFitsError
	if err := d.results["big"].Err; !errors.As(err, &nf) || !errors.Is(err, ErrNeverFits) || nf.Need != 600 || nf.Capacity != 500 || nf.Service != "llm" {
		t.Errorf("never fits: %v (%+v)", err, nf)
	}
	busy := errors.New("busy")
	d = newDriver(t, Config{Retry: RetryPolicy{MaxAttempts: 3}}, func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return time.Millisecond, Failed(ClassOverloaded, busy)
	})
	d.submit(Call{ID: "a"})
	d.run(time.Hour)
	var ex *RetriesExhaustedError
	if err := d.results["a"].Err; !errors.As(err, &ex) || !errors.Is(err, ErrRetriesExhausted) || !errors.Is(err, busy) || ex.Attempts != 3 {
		t.Errorf("retries exhausted: %v (%+v)", err, ex)
	}
	// An executor that reports a class without an error gets an
	// *AttemptError carrying the attempt's numbers.
	d = newDriver(t, Config{}, func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return time.Millisecond, Outcome{Class: ClassPermanent, Status: 404}
	})
	d.submit(Call{ID: "p"})
	d.run(time.Hour)
	var ae *AttemptError
	if err := d.results["p"].Err; !errors.As(err, &ae) || *ae != (AttemptError{Call: "p", Attempt: 1, Class: ClassPermanent, Status: 404}) {
		t.Errorf("attempt error: %v (%+v)", err, ae)
	}
}
