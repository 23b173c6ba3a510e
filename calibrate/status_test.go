package calibrate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
)

// calibrateStatuses reads a CSV trace of one service whose i-th call, in
// its own turn, is answered statuses[i], and returns the fit and the
// scenario written from it.
func calibrateStatuses(t *testing.T, statuses []int) (*Result, string) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("ts,dur,svc,code,turn_id\n")
	for i, code := range statuses {
		fmt.Fprintf(&b, "%d,%d,api,%d,t%d\n", 1700000000+i, 100+i%7, code, i)
	}
	res := fitCSV(t, dir, b.String(), "start=ts,latency_ms=dur,service=svc,status=code,turn=turn_id")
	out := filepath.Join(dir, "api.toml")
	if _, err := res.WriteScenario(out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(data)
}

// TestStatusClassesAreHTTPTools checks that calibrate classes every
// status from 0 (no answer) to 999 as the scheduler's HTTP reader
// does, httptool.StatusClass, and that a trace holding every status a
// trace record may carry (0 and 100 to 599) counts each in that class:
// calibrate keeps no status classes of its own.
func TestStatusClassesAreHTTPTools(t *testing.T) {
	for s := range 1000 {
		if got, want := outcomeOfStatus(s), httptool.StatusClass(s).String(); got != want {
			t.Errorf("status %d: class %s, httptool's %s", s, got, want)
		}
	}
	statuses := []int{0}
	for s := 100; s < 600; s++ {
		statuses = append(statuses, s)
	}
	var want [classCount]int64
	for _, s := range statuses {
		want[httptool.StatusClass(s)]++
	}
	res, _ := calibrateStatuses(t, statuses)
	if got := res.Services[0].Outcomes; got != want {
		for c := range want {
			if got[c] != want[c] {
				t.Errorf("%s: %d attempts, httptool classes %d so", sched.Class(c), got[c], want[c])
			}
		}
	}
}

// TestConflictTrace calibrates a trace where every 4th of 400 calls is
// answered 409: the written scenario reports the 100 as conflicts, a
// class the scheduler retries, and not as permanent failures nor as
// transient errors in the error rate.
func TestConflictTrace(t *testing.T) {
	statuses := make([]int, 400)
	for i := range statuses {
		statuses[i] = 200
		if i%4 == 3 {
			statuses[i] = 409
		}
	}
	res, toml := calibrateStatuses(t, statuses)
	s := res.Services[0]
	if s.Outcomes[sched.ClassConflict] != 100 || s.Outcomes[sched.ClassSuccess] != 300 || s.ErrorRate != 0 {
		t.Errorf("outcomes %v, error rate %v; want 300 successes, 100 conflicts, no errors", s.Outcomes, s.ErrorRate)
	}
	if !sched.ClassConflict.Retryable() {
		t.Error("the scheduler no longer retries a conflict; this test's premise is gone")
	}
	if want := "# 400 attempts: 300 success (75.0%), 100 conflict (25.0%).\n"; !strings.Contains(toml, want) || strings.Contains(toml, "permanent") {
		t.Errorf("scenario lacks %q or says permanent:\n%s", want, toml)
	}
}
