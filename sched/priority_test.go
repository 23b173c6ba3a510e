package sched

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// admissionOrder runs calls on a Core with cfg, every call submitted at 0
// (each a turn of its own, in the given order, or all in one turn) and
// each attempt taking 100 ms, and returns the ids in the order they were
// admitted.
func admissionOrder(t *testing.T, cfg Config, calls []Call, oneTurn bool) []string {
	t.Helper()
	var order []string
	cfg.Hook = func(e Event) {
		if e.Kind == EventAdmitted {
			order = append(order, e.CallID)
		}
	}
	d := newDriver(t, cfg, nil)
	if oneTurn {
		d.submit(calls...)
	}
	for _, c := range calls {
		if !oneTurn {
			d.submit(c)
		}
	}
	d.run(1 << 62)
	if len(d.results) != len(calls) {
		t.Fatalf("%d results for %d calls", len(d.results), len(calls))
	}
	return order
}

// classCalls returns n calls of priority p named prefix0, prefix1, …
func classCalls(prefix string, p, n int) []Call {
	cs := make([]Call, n)
	for i := range cs {
		cs[i] = Call{ID: fmt.Sprint(prefix, i), Service: "api", Priority: p}
	}
	return cs
}

func TestPriorityAdmitsHigherClassFirst(t *testing.T) {
	tests := []struct {
		name   string
		limits ServiceConfig
		share  float64 // the batch class's
		want   string  // the admission order, one letter per call
	}{
		// Batch was submitted first: without a share the one batch call
		// in flight is the only one ahead of the interactive calls.
		{"cap strict", ServiceConfig{MaxInFlight: 1}, 0, "biiiibbbbbbb"},
		// A quarter share: every fourth admission is a batch call's.
		{"cap quarter share", ServiceConfig{MaxInFlight: 1}, 0.25, "biiibibbbbbb"},
		// A request bucket of 1 a second holds calls in the queue until
		// they can start, so the later interactive calls still go first.
		{"bucket strict", ServiceConfig{RequestsPerMinute: 60, RequestBurst: 1}, 0, "biiiibbbbbbb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{
				Services:   map[string]ServiceConfig{"api": tt.limits},
				Priorities: []PriorityClass{{Name: "interactive"}, {Name: "batch", Share: tt.share}},
			}
			calls := append(classCalls("b", 1, 8), classCalls("i", 0, 4)...)
			var got string
			for _, id := range admissionOrder(t, cfg, calls, false) {
				got += id[:1]
			}
			if got != tt.want {
				t.Fatalf("admission order %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPriorityWithoutClassesIsFIFO(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"api": {MaxInFlight: 1}}}
	calls := append(classCalls("b", 0, 3), classCalls("i", 0, 2)...)
	got := admissionOrder(t, cfg, calls, false)
	want := []string{"b0", "b1", "b2", "i0", "i1"}
	if !slices.Equal(got, want) {
		t.Fatalf("admission order %v, want %v", got, want)
	}
}

func TestPriorityRejectsBadClasses(t *testing.T) {
	if _, err := New(Config{Priorities: []PriorityClass{{Share: 0.7}, {Share: 0.6}}}); err == nil {
		t.Fatal("shares summing to 1.3 accepted")
	}
	if _, err := New(Config{Priorities: []PriorityClass{{Share: -0.1}}}); err == nil {
		t.Fatal("a negative share accepted")
	}
	c, err := New(Config{Priorities: []PriorityClass{{Name: "a"}, {Name: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Submit(0, Turn{Calls: []Call{{ID: "x", Priority: 2}}})
	if !errors.Is(err, ErrInvalidTurn) {
		t.Fatalf("priority 2 of 2 classes: got %v, want ErrInvalidTurn", err)
	}
	c, _ = New(Config{})
	if _, err = c.Submit(0, Turn{Calls: []Call{{ID: "x", Priority: 1}}}); !errors.Is(err, ErrInvalidTurn) {
		t.Fatalf("priority 1 without classes: got %v, want ErrInvalidTurn", err)
	}
}

// TestPriorityShares checks the guarantee over random class tables, caps,
// buckets and call mixes: in every run of K consecutive admissions to a
// service during which a class had calls waiting, the class got at least
// Share×K − (number of classes) of them; and caps held.
func TestPriorityShares(t *testing.T) {
	forSeeds(t, propertyChecks, func(rt *testing.T, g *draws) {
		n := g.intRange("classes", 1, 4)
		classes := make([]PriorityClass, n)
		left := 1.0
		for i := range classes {
			s := float64(g.intRange(fmt.Sprint("share ", i), 0, 100)) / 100 * left
			classes[i] = PriorityClass{Name: fmt.Sprint("p", i), Share: s}
			left -= s
		}
		cfg := Config{
			MaxInFlight: g.intRange("global cap", 0, 4),
			Services: map[string]ServiceConfig{"api": {
				MaxInFlight:       g.intRange("cap", 1, 3),
				RequestsPerMinute: float64(g.zeroOr("rpm", 60, 600)),
				TokensPerMinute:   float64(g.zeroOr("tpm", 6000, 60000)),
			}},
			Priorities: classes,
		}
		calls := make([]Call, g.intRange("calls", 1, 80))
		for i := range calls {
			calls[i] = Call{ID: fmt.Sprint("c", i), Service: "api", Priority: g.intRange("priority", 0, n-1), Tokens: int64(g.intRange("tokens", 0, 2000))}
		}
		order := admissionOrder(rt, cfg, calls, true)
		class := map[string]int{}
		last := make([]int, n) // each class's last admission: it waits until then
		for i := range last {
			last[i] = -1
		}
		for _, c := range calls {
			class[c.ID] = c.Priority
		}
		for k, id := range order {
			last[class[id]] = k
		}
		for i := range n {
			// Every call was submitted in one turn, so class i has
			// calls waiting at every admission up to its last.
			for a := 0; a <= last[i]; a++ {
				got := 0
				for b := a; b <= last[i]; b++ {
					if class[order[b]] == i {
						got++
					}
					k := b - a + 1
					if float64(got) < classes[i].Share*float64(k)-float64(n) {
						rt.Fatalf("class %d (share %.3f) got %d of admissions %d…%d (%d), below the guarantee", i, classes[i].Share, got, a, b, k)
					}
				}
			}
		}
	})
}
