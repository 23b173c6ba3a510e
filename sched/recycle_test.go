package sched

import (
	"fmt"
	"testing"
)

// recycler runs turns on a Core with no limits: every call starts at once,
// and run completes them with the outcomes it is given.
type recycler struct {
	t    *testing.T
	c    *Core
	acts []Action
}

func newRecycler(t *testing.T) *recycler {
	c, err := New(Config{Services: map[string]ServiceConfig{"s": {}}})
	if err != nil {
		t.Fatal(err)
	}
	return &recycler{t: t, c: c}
}

// run submits a turn of calls named prefix0, prefix1, … (call i after the
// calls after[i] names) and completes the attempt of call i with outs[i],
// as attempts start; it returns the turn's TurnResult.
func (r *recycler) run(prefix string, outs []Outcome, after ...map[int]int) *TurnResult {
	calls := make([]Call, len(outs))
	for i := range calls {
		calls[i] = Call{ID: fmt.Sprint(prefix, i), Service: "s"}
		for _, a := range after {
			if j, ok := a[i]; ok {
				calls[i].After = []string{fmt.Sprint(prefix, j)}
			}
		}
	}
	if _, err := r.c.Submit(r.c.Now(), Turn{Calls: calls}); err != nil {
		r.t.Fatal(err)
	}
	var started []Action
	var done *TurnResult
	for {
		r.acts = r.c.Actions(r.acts[:0])
		for _, a := range r.acts {
			switch a.Kind {
			case ActStart:
				started = append(started, a)
			case ActTurnDone:
				done = a.Turn
			}
		}
		if done != nil {
			return done
		}
		if len(started) == 0 {
			r.t.Fatal("no attempt in flight and no ActTurnDone")
		}
		a := started[0]
		started = started[1:]
		r.c.Complete(r.c.Now(), a.Attempt, outs[a.Index])
	}
}

func successes(n int, value string) []Outcome {
	o := make([]Outcome, n)
	for i := range o {
		o[i] = Outcome{Value: value}
	}
	return o
}

// A TurnResult given back is handed, with its Results, to the next turn of
// as many calls, which reads as if its storage were new: nothing of the
// earlier turn's results shows through.
func TestRecycledResultsGoToTheNextTurnOfTheSameSize(t *testing.T) {
	r := newRecycler(t)
	a := r.run("a", []Outcome{{Value: "from a", Status: 200}, {Value: "from a", Status: 201}, {Value: "from a", Status: 200}})
	first := &a.Results[0]
	r.c.Recycle(a)

	// A turn of another size does not take it.
	if two := r.run("two", successes(2, "x")); two == a {
		t.Fatal("a turn of 2 calls was handed the TurnResult of a turn of 3")
	}
	// b1 waits on b0, which fails: b1 never starts, so nothing of a1's
	// result (its status, its attempts) may remain in its place.
	b := r.run("b", []Outcome{{Class: ClassPermanent, Status: 400}, {Value: "never"}, {Value: "from b", Status: 200}}, map[int]int{1: 0})
	if b != a || &b.Results[0] != first {
		t.Fatalf("the next turn of 3 calls got new storage (%p, %p), not the storage given back (%p, %p)", b, &b.Results[0], a, first)
	}
	for i, res := range b.Results {
		if want := fmt.Sprint("b", i); res.ID != want || res.Index != i {
			t.Errorf("result %d is %q at %d, want %q at %d", i, res.ID, res.Index, want, i)
		}
	}
	if got := b.Results[1]; got.Value != nil || got.Status != 0 || got.Attempts != 0 || got.State != NotStarted {
		t.Errorf("the call that never started has result %+v: want no value, status or attempt", got)
	}
	if got := b.Results[2]; got.Value != "from b" || got.Err != nil || got.Status != 200 || got.Attempts != 1 {
		t.Errorf("the last call's result is %+v, want b's value from one attempt", got)
	}
}

// Giving a TurnResult back twice keeps it once: two later turns never
// share storage. A turn of more results than the Core keeps, and nil, are
// not kept.
func TestRecycleTwiceOrTooLargeKeepsNothingExtra(t *testing.T) {
	r := newRecycler(t)
	a := r.run("a", successes(2, "v"))
	r.c.Recycle(a)
	r.c.Recycle(a)
	r.c.Recycle(nil)
	b := r.run("b", successes(2, "v"))
	c := r.run("c", successes(2, "v"))
	if b != a || c == a || &c.Results[0] == &b.Results[0] {
		t.Errorf("after two Recycles of one TurnResult, two turns got %p and %p (given back: %p): want it once", b, c, a)
	}
	big := r.run("big", successes(maxRecycledCalls+1, "v"))
	r.c.Recycle(big)
	if again := r.run("again", successes(maxRecycledCalls+1, "v")); again == big {
		t.Errorf("a turn of %d results was kept for reuse; the most kept is %d", maxRecycledCalls+1, maxRecycledCalls)
	}
}

// A driver that gives every TurnResult back allocates nothing per call in
// steady state: against TestAllocationsPerCall's one chunk every 16 turns.
func TestAllocationsPerCallRecycled(t *testing.T) {
	s := newSteady(t, 100)
	s.recycle = true
	for range 1000 {
		s.step(t)
	}
	const calls = 16 * 1024
	allocs := testing.AllocsPerRun(1, func() {
		for range calls {
			s.step(t)
		}
	}) / calls
	if allocs > 0.01 {
		t.Errorf("%.4f allocations per call in steady state with every TurnResult recycled, want none (≤ 0.01)", allocs)
	}
}
