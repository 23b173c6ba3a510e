package sched

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// creditActs splits actions into starts, credit asks and credit returns.
func creditActs(acts []Action) (starts []*Call, asks, returns []CreditAction) {
	for _, a := range acts {
		switch a.Kind {
		case ActStart:
			starts = append(starts, a.Call)
		case ActCredit:
			asks = append(asks, *a.Credit)
		case ActReturnCredit:
			returns = append(returns, *a.Credit)
		}
	}
	return starts, asks, returns
}

// TestCreditAdmitsWithoutHoldingSlots checks that a service on shared
// credit asks for it once, keeps its calls queued without slots until it
// comes, starts as many calls as the grant covers, returns what a replaced
// or expired grant leaves, and carries token debt into the next ask.
func TestCreditAdmitsWithoutHoldingSlots(t *testing.T) {
	c, err := New(Config{MaxInFlight: 2, Services: map[string]ServiceConfig{
		"api":   {CreditRequests: true},
		"local": {},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var acts []Action
	if _, err := c.Submit(0, Turn{Calls: calls(3, func(int) Call { return Call{Service: "api"} })}); err != nil {
		t.Fatal(err)
	}
	starts, asks, _ := creditActs(c.Actions(acts[:0]))
	if len(starts) != 0 || len(asks) != 1 || asks[0] != (CreditAction{Service: "api", Kind: CreditRequests, Units: 1}) {
		t.Fatalf("before credit: %d starts, asks %+v; want none and one ask for 1 request", len(starts), asks)
	}
	if c.InFlight() != 0 {
		t.Fatalf("calls waiting for credit hold %d slots", c.InFlight())
	}
	// A local call is not held up by the service waiting for credit.
	if _, err := c.Submit(0, Turn{Calls: []Call{{ID: "l", Service: "local"}}}); err != nil {
		t.Fatal(err)
	}
	if starts, asks, _ = creditActs(c.Actions(acts[:0])); len(starts) != 1 || starts[0].ID != "l" || len(asks) != 0 {
		t.Fatalf("local call: starts %v, asks %v; want l alone", starts, asks)
	}

	c.Credit(time.Second, "api", CreditRequests, 2, 10*time.Second, 7)
	starts, asks, _ = creditActs(c.Actions(acts[:0]))
	if len(starts) != 1 || starts[0].ID != "c0" || len(asks) != 0 {
		t.Fatalf("with 2 credits and one free slot: starts %v, asks %v; want c0", starts, asks)
	}
	// The local call ends: c1 takes its slot and the second credit; c2
	// waits for a slot, not for credit, so nothing is asked yet.
	c.Complete(2*time.Second, 1, Succeeded(nil))
	starts, asks, _ = creditActs(c.Actions(acts[:0]))
	if len(starts) != 1 || starts[0].ID != "c1" || len(asks) != 0 {
		t.Fatalf("after a slot frees: starts %v, asks %v; want c1", starts, asks)
	}
	c.Complete(3*time.Second, 2, Succeeded(nil))
	starts, asks, _ = creditActs(c.Actions(acts[:0]))
	if len(starts) != 0 || len(asks) != 1 {
		t.Fatalf("credit spent: starts %v, asks %v; want one ask", starts, asks)
	}
	c.Credit(4*time.Second, "api", CreditRequests, 5, 10*time.Second, 8)
	starts, _, returns := creditActs(c.Actions(acts[:0]))
	if len(starts) != 1 || starts[0].ID != "c2" {
		t.Fatalf("second grant: starts %v, want c2", starts)
	}
	if len(returns) != 1 || returns[0] != (CreditAction{Service: "api", Kind: CreditRequests, Units: 0, Ticket: 7}) {
		t.Fatalf("the spent grant's end: %+v, want ticket 7 ended with 0 units", returns)
	}
	c.Advance(10 * time.Second)
	_, _, returns = creditActs(c.Actions(acts[:0]))
	if len(returns) != 1 || returns[0] != (CreditAction{Service: "api", Kind: CreditRequests, Units: 4, Ticket: 8}) {
		t.Fatalf("expiry returned %+v, want 4 units of ticket 8", returns)
	}
}

// TestCreditTokenDebt checks that tokens used beyond the estimate become
// debt that the next ask adds to its need, and that a stopping driver is
// told to charge it.
func TestCreditTokenDebt(t *testing.T) {
	c, err := New(Config{Services: map[string]ServiceConfig{"llm": {CreditTokens: true}}})
	if err != nil {
		t.Fatal(err)
	}
	var acts []Action
	if _, err := c.Submit(0, Turn{Calls: []Call{{ID: "a", Service: "llm", Tokens: 100}}}); err != nil {
		t.Fatal(err)
	}
	c.Actions(acts[:0])
	c.Credit(0, "llm", CreditTokens, 100, time.Minute, 1)
	c.Actions(acts[:0])
	c.Complete(time.Second, 1, Outcome{Class: ClassSuccess, Tokens: 130, HasUsage: true})
	if _, err := c.Submit(time.Second, Turn{Calls: []Call{{ID: "b", Service: "llm", Tokens: 50}}}); err != nil {
		t.Fatal(err)
	}
	_, asks, _ := creditActs(c.Actions(acts[:0]))
	if len(asks) != 1 || asks[0].Units != 80 {
		t.Fatalf("asks %+v, want one for 50 needed + 30 owed", asks)
	}
	c.DropCredit(2 * time.Second)
	_, _, returns := creditActs(c.Actions(acts[:0]))
	if len(returns) != 1 || returns[0].Units != -30 {
		t.Fatalf("returns %+v, want a charge of the 30 owed", returns)
	}
}

// TestCreditRefusedFailsWaitingCalls checks that a refusal gives every
// waiting call of the service one ClassOverloaded result wrapping the
// quota's error.
func TestCreditRefusedFailsWaitingCalls(t *testing.T) {
	c, err := New(Config{Services: map[string]ServiceConfig{"api": {CreditRequests: true}}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.Submit(0, Turn{Calls: calls(3, func(int) Call { return Call{Service: "api"} })})
	if err != nil {
		t.Fatal(err)
	}
	c.Actions(nil)
	gone := errors.New("redis is gone")
	c.CreditRefused(time.Second, "api", CreditRequests, gone)
	var done *TurnResult
	for _, a := range c.Actions(nil) {
		if a.Kind == ActTurnDone && a.TurnID == id {
			done = a.Turn
		}
	}
	if done == nil {
		t.Fatal("turn not done after the refusal")
	}
	for _, r := range done.Results {
		if r.Class != ClassOverloaded || !errors.Is(r.Err, gone) {
			t.Errorf("%s: %v %v, want overloaded wrapping the refusal", r.ID, r.Class, r.Err)
		}
	}
}

// fakeQuota grants size units per ask, valid for an hour, and keeps the
// books: units granted, returned and charged.
type fakeQuota struct {
	mu                      sync.Mutex
	size                    float64
	granted, returned, asks float64
	outstanding             map[any]bool
}

func (q *fakeQuota) Covers(service string) (bool, bool) { return service == "api", false }

func (q *fakeQuota) Acquire(_ context.Context, service string, kind CreditKind, n float64) (Grant, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asks++
	units := max(q.size, n)
	q.granted += units
	m := new(int)
	q.outstanding[m] = true
	return Grant{Service: service, Kind: kind, Units: units, Until: time.Now().Add(time.Hour), Mark: m}, nil
}

func (q *fakeQuota) Return(_ context.Context, g Grant, n float64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.outstanding[g.Mark] {
		panic("return of an unknown or ended grant")
	}
	delete(q.outstanding, g.Mark)
	q.returned += n
	return nil
}

// TestRunnerSpendsQuotaCredit runs calls through a Runner given a quota:
// every call succeeds, the quota is asked about once per grant's worth,
// what was granted and not spent goes back when the Runner closes, and the
// Runner forgets every grant that ended.
func TestRunnerSpendsQuotaCredit(t *testing.T) {
	q := &fakeQuota{size: 3, outstanding: map[any]bool{}}
	r, err := NewRunner(Config{MaxInFlight: 4, Services: map[string]ServiceConfig{"api": {}}},
		func(context.Context, *Call, int) Outcome { return Succeeded(nil) }, WithQuota(q))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), Turn{Calls: calls(10, func(int) Call { return Call{Service: "api"} })})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res {
		if x.Class != ClassSuccess {
			t.Errorf("%s: %v %v", x.ID, x.Class, x.Err)
		}
	}
	r.Close()
	if spent := q.granted - q.returned; spent != 10 {
		t.Errorf("granted %v, returned %v: %v spent, want 10", q.granted, q.returned, spent)
	}
	if q.asks != 4 || len(q.outstanding) != 0 || len(r.grants) != 0 {
		t.Errorf("%v asks (want 4 of 3 units), %d grants never ended, the Runner remembers %d", q.asks, len(q.outstanding), len(r.grants))
	}
}

// TestCreditArrivingLate checks that a grant whose time has passed when it
// arrives still starts the calls it covers, returns the rest at once, and
// leaves the next call free to ask again (a late grant once left the
// service waiting for an answer that had come).
func TestCreditArrivingLate(t *testing.T) {
	c, err := New(Config{Services: map[string]ServiceConfig{"api": {CreditRequests: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(0, Turn{Calls: calls(3, func(int) Call { return Call{Service: "api"} })}); err != nil {
		t.Fatal(err)
	}
	c.Actions(nil)
	c.Credit(2*time.Second, "api", CreditRequests, 2, time.Second, 1)
	starts, asks, _ := creditActs(c.Actions(nil))
	if len(starts) != 2 || len(asks) != 1 {
		t.Fatalf("late grant of 2: %d starts, asks %+v; want 2 starts and an ask for the third call", len(starts), asks)
	}
	c.Credit(3*time.Second, "api", CreditRequests, 4, 2*time.Second, 2)
	starts, _, _ = creditActs(c.Actions(nil))
	c.Advance(3*time.Second + 1)
	_, _, returns := creditActs(c.Actions(nil))
	if len(starts) != 1 || len(returns) != 1 || returns[0].Units != 3 || returns[0].Ticket != 2 {
		t.Fatalf("second late grant: %d starts, returns %+v; want the third call and 3 units of ticket 2 back", len(starts), returns)
	}
}
