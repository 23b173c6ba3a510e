package bucket

import (
	"testing"
	"time"
)

// A refund of nothing — a call that used exactly what it reserved — must
// leave the bucket where it is; it used to raise tat to the refund floor.
func TestRefundOfNothingKeepsTheBucket(t *testing.T) {
	b := New(60, 10, 1) // 1 token/s, 10 held
	mA := b.Take(0, 10) // A at 0: tat 10 s
	b.Take(100*time.Second, 10)
	mB := b.spent // B at 100 s: tat 110 s
	b.Refund(10, mB)
	if b.tat != 100*time.Second {
		t.Fatalf("after B's refund tat = %v, want 100s", b.tat)
	}
	b.Refund(0, mA)
	if b.tat != 100*time.Second {
		t.Errorf("a refund of 0 moved tat to %v, want 100s", b.tat)
	}
}
