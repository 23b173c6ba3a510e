package sim

import (
	"testing"

	"github.com/simbench/simbench/sched"
)

func TestAttemptIndex(t *testing.T) {
	x := newAttemptIndex()
	// A long-lived attempt (id 1) while thousands come and go: the ring must
	// grow around it rather than lose either.
	x.put(1, 100)
	for id := sched.AttemptID(2); id < 5000; id++ {
		x.put(id, int32(id))
		if ref, ok := x.get(id); !ok || ref != int32(id) {
			t.Fatalf("get(%d) = %d, %v", id, ref, ok)
		}
		if id%3 != 0 {
			x.remove(id)
		}
	}
	if ref, ok := x.get(1); !ok || ref != 100 {
		t.Fatalf("the long-lived attempt was lost: %d, %v", ref, ok)
	}
	if _, ok := x.get(4); ok {
		t.Error("a removed attempt is still found")
	}
	if ref, ok := x.get(4998); !ok || ref != 4998 {
		t.Errorf("get(4998) = %d, %v", ref, ok)
	}
	if x.n != 1+1666 {
		t.Errorf("n = %d, want %d", x.n, 1+1666)
	}
}
