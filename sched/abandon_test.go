package sched

import (
	"testing"
	"time"
)

// TestMayAbandon lists what lets the Core decide a call while its attempt
// runs, each alone, and turns where nothing does: the Runner runs only
// these on the caller of Run (see Runner.submit).
func TestMayAbandon(t *testing.T) {
	hedge := &HedgePolicy{After: time.Second}
	tests := []struct {
		name string
		cfg  Config
		turn Turn
		want bool
	}{
		{"nothing", Config{}, Turn{Calls: []Call{{ID: "a"}, {ID: "b"}}}, false},
		{"partial join", Config{Join: JoinPartial}, Turn{Calls: []Call{{ID: "a"}}}, false},
		{"attempt timeout", Config{AttemptTimeout: time.Second}, Turn{Calls: []Call{{ID: "a"}}}, true},
		{"call timeout in the config", Config{CallTimeout: time.Second}, Turn{Calls: []Call{{ID: "a"}}}, true},
		{"one call's timeout", Config{}, Turn{Calls: []Call{{ID: "a"}, {ID: "b", Timeout: time.Second}}}, true},
		{"turn timeout in the config", Config{TurnTimeout: time.Second}, Turn{Calls: []Call{{ID: "a"}}}, true},
		{"the turn's timeout", Config{}, Turn{Calls: []Call{{ID: "a"}}, Timeout: time.Second}, true},
		{"all-or-nothing in the config", Config{Join: JoinAllOrNothing}, Turn{Calls: []Call{{ID: "a"}}}, true},
		{"an all-or-nothing turn", Config{}, Turn{Calls: []Call{{ID: "a"}}, Join: JoinAllOrNothing}, true},
		{"hedge, an idempotent read", Config{Hedge: hedge}, Turn{Calls: []Call{{ID: "a"}, {ID: "b", Idempotent: true}}}, true},
		{"hedge, no idempotent read", Config{Hedge: hedge}, Turn{Calls: []Call{{ID: "a"}, {ID: "b", Idempotent: true, Write: true}}}, false},
	}
	for _, tt := range tests {
		c, err := New(tt.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		id, err := c.Submit(0, tt.turn)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := c.mayAbandon(id); got != tt.want {
			t.Errorf("%s: mayAbandon %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestMayAbandonDoneTurn: a turn decided at submission starts no attempt.
func TestMayAbandonDoneTurn(t *testing.T) {
	c, err := New(Config{CallTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.Submit(0, Turn{})
	if err != nil {
		t.Fatal(err)
	}
	if c.mayAbandon(id) {
		t.Error("mayAbandon true for a turn already done")
	}
}
