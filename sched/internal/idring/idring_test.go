package idring

import (
	"math/rand/v2"
	"testing"
)

// TurnID, AttemptID, turnState and callState stand for the scheduler's
// ids and the entries they name.
type (
	TurnID    uint64
	AttemptID uint64
	turnState struct{ id TurnID }
	callState struct{ attempt AttemptID }
)

// The turn table finds exactly the turns a map would, whatever the order
// turns finish in, and a turn that stays while a million others pass does
// not make its ring grow with the ids between them.
func TestTurnTableAgreesWithAMap(t *testing.T) {
	var x Ring[TurnID, turnState]
	want := map[TurnID]*turnState{}
	rng := rand.New(rand.NewPCG(1, 2))
	var live []TurnID
	for id := TurnID(1); id <= 1_000_000; id++ {
		ts := &turnState{id: id}
		x.Put(ts.id, ts)
		want[id] = ts
		live = append(live, id)
		// Finish a random live turn most of the time, never turn 1.
		for len(live) > 1 && rng.IntN(100) < 97 {
			i := 1 + rng.IntN(len(live)-1)
			if rng.IntN(4) > 0 {
				i = len(live) - 1 - rng.IntN(min(len(live)-1, 8)) // mostly recent ones
			}
			done := live[i]
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
			x.Remove(done)
			delete(want, done)
		}
		if id%1000 == 0 || id < 200 {
			for _, q := range []TurnID{1, id, id / 2, id + 1} {
				got, ok := x.Get(q)
				if w, wok := want[q]; ok != wok || got != w {
					t.Fatalf("after %d turns: get(%d) = %p, %v; want %p, %v", id, q, got, ok, w, wok)
				}
			}
			if x.Len() != len(want) {
				t.Fatalf("after %d turns: len %d, want %d", id, x.Len(), len(want))
			}
		}
	}
	for q, w := range want {
		if got, ok := x.Get(q); !ok || got != w {
			t.Fatalf("turn %d lost", q)
		}
	}
	if len(x.ring) > 4096 {
		t.Errorf("ring of %d slots for %d turns", len(x.ring), x.Len())
	}
}

// One attempt that stays in flight while a million others pass must not
// make the table grow with the ids between them.
func TestAttemptTableWithALongLivedAttempt(t *testing.T) {
	var x Ring[AttemptID, callState]
	hung := &callState{attempt: 1}
	x.Put(1, hung)
	for id := AttemptID(2); id < 1_000_000; id++ {
		cs := &callState{attempt: id}
		x.Put(id, cs)
		if got, ok := x.Get(id); !ok || got != cs {
			t.Fatalf("get(%d) = %v, %v", id, got, ok)
		}
		if id%3 != 0 { // most end at once; every third stays for a while
			x.Remove(id)
		} else if id > 30 {
			x.Remove(id - 30)
		}
	}
	if got, ok := x.Get(1); !ok || got != hung {
		t.Fatalf("the long-lived attempt is lost: %v, %v", got, ok)
	}
	if len(x.ring) > 1024 {
		t.Errorf("ring of %d slots for about %d attempts in flight", len(x.ring), x.Len())
	}
	x.Remove(1)
	if _, ok := x.Get(1); ok {
		t.Error("a removed attempt is still found")
	}
	if _, ok := x.Get(12345678); ok {
		t.Error("an unknown attempt is found")
	}
}
