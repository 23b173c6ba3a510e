package check

import (
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
)

const msec = time.Millisecond

// TestInFlightEndsWhereTheClientLeft: an attempt the client closed at 1 s
// is not in flight when its successor arrives at 1 s, however long the
// server worked on it; one it kept open is.
func TestInFlightEndsWhereTheClientLeft(t *testing.T) {
	for _, tc := range []struct {
		left time.Duration
		want float64
	}{{1000 * msec, 1}, {0, 2}, {1001 * msec, 2}} {
		a := &fakeapi.Record{Arrived: 0, Answered: 10 * time.Second, Left: tc.left}
		b := &fakeapi.Record{Arrived: 1000 * msec, Answered: 2000 * msec}
		if l := inFlight([]*fakeapi.Record{a, b}, 1, "test"); l.Value != tc.want {
			t.Errorf("left at %v: peak %v in flight, want %v (%s)", tc.left, l.Value, tc.want, l.Figure)
		}
	}
}

// TestWritesExcusesOnlyWritesLetGo: a write admitted while the server
// still served the client's previous write to the document is a race
// unless the client had closed that write, the server seeing it within
// the grace; a race with a write the client does not own is its race.
func TestWritesExcusesOnlyWritesLetGo(t *testing.T) {
	grace := 250 * msec
	for _, tc := range []struct {
		name      string
		left      time.Duration
		cancelled bool
		prevDoc   string
		want      Verdict
	}{
		{"closed before the next arrived", 1000 * msec, false, "doc", Pass},
		{"closed, seen within the grace", 1200 * msec, true, "doc", Pass},
		{"closed, seen after the grace", 1300 * msec, true, "doc", Fail},
		{"kept open", 0, false, "doc", Fail},
		{"the overlapped write is not the client's", 1000 * msec, false, "other", Fail},
	} {
		prev := &fakeapi.Record{Write: true, Resource: tc.prevDoc, Kind: fakeapi.KindOK, Admitted: true, Status: 200,
			Arrived: 0, Answered: 5 * time.Second, Left: tc.left, Cancelled: tc.cancelled, IdempotencyKey: "k1"}
		next := &fakeapi.Record{Write: true, Resource: "doc", WriteRace: true, Kind: fakeapi.KindOK, Admitted: true, Status: 200,
			Arrived: 1000 * msec, Answered: 1500 * msec, IdempotencyKey: "k2"}
		recs := []*fakeapi.Record{prev, next}
		calls := []*call{{attempts: recs[:1]}, {attempts: recs[1:]}}
		l, ok := writes(recs, calls, grace)
		if !ok || l.Verdict != tc.want {
			t.Errorf("%s: writes %s (%s), want %s", tc.name, l.Verdict, l.Figure, tc.want)
		}
	}
}
