package sched

import "testing"

// One attempt that stays in flight while a million others pass must not
// make the table grow with the ids between them.
func TestAttemptTableWithALongLivedAttempt(t *testing.T) {
	var x attemptTable
	hung := &callState{attempt: 1}
	x.put(1, hung)
	for id := AttemptID(2); id < 1_000_000; id++ {
		cs := &callState{attempt: id}
		x.put(id, cs)
		if got, ok := x.get(id); !ok || got != cs {
			t.Fatalf("get(%d) = %v, %v", id, got, ok)
		}
		if id%3 != 0 { // most end at once; every third stays for a while
			x.remove(id)
		} else if id > 30 {
			x.remove(id - 30)
		}
	}
	if got, ok := x.get(1); !ok || got != hung {
		t.Fatalf("the long-lived attempt is lost: %v, %v", got, ok)
	}
	if len(x.ring) > 1024 {
		t.Errorf("ring of %d slots for about %d attempts in flight", len(x.ring), x.len())
	}
	x.remove(1)
	if _, ok := x.get(1); ok {
		t.Error("a removed attempt is still found")
	}
	if _, ok := x.get(12345678); ok {
		t.Error("an unknown attempt is found")
	}
}
