package slabs

import "testing"

// TestPool checks that a slice given back is reused, cleared, for a later
// request of its class it is large enough for, and that each class keeps a
// bounded number of slices.
func TestPool(t *testing.T) {
	var p Pool[int]
	if p.Get(0) != nil {
		t.Error("Get(0) is not nil")
	}
	s := p.Get(5) // class 3: up to 8
	if len(s) != 5 || cap(s) != 5 {
		t.Fatalf("Get(5): len %d cap %d", len(s), cap(s))
	}
	s[4] = 7
	p.Put(s)
	if r := p.Get(5); &r[0] != &s[0] || len(r) != 5 || r[4] != 0 {
		t.Errorf("Get(5) after Put of 5: %v, not the cleared slice given back", r)
	}
	p.Put(s)
	if r := p.Get(6); &r[0] == &s[0] {
		t.Error("Get(6) reused a slice of capacity 5")
	}
	for range 10_000 {
		p.Put(make([]int, 1))
	}
	if n := len(p.free[0]); n != keep(0) {
		t.Errorf("class 0 keeps %d slices, want %d", n, keep(0))
	}
	big := make([]int, 1<<maxClass+1)
	p.Put(big)
	if r := p.Get(len(big)); &r[0] == &big[0] {
		t.Error("a slice above the largest class was kept")
	}
}
