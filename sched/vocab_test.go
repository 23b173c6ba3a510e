package sched

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// roundTrip checks that every choice of one enumeration parses back from
// its String and survives JSON as its name, and that names are unique.
func roundTrip[T interface {
	~uint8
	fmt.Stringer
}](t *testing.T, choices []T, parse func(string) (T, error)) {
	t.Helper()
	if len(choices) == 0 {
		t.Fatal("no choices")
	}
	seen := map[string]bool{}
	for _, x := range choices {
		name := x.String()
		if seen[name] || name == "" || strings.Contains(name, "(") {
			t.Errorf("value %d has name %q: empty, unnamed or a duplicate", uint8(x), name)
		}
		seen[name] = true
		if y, err := parse(name); err != nil || y != x {
			t.Errorf("parse(%q) = %v, %v; want %d", name, y, err, uint8(x))
		}
		b, err := json.Marshal(x)
		if err != nil || string(b) != `"`+name+`"` {
			t.Errorf("json of %q = %s, %v", name, b, err)
		}
		var y T
		if err := json.Unmarshal(b, &y); err != nil || y != x {
			t.Errorf("json %s read back as %v, %v", b, y, err)
		}
	}
	if _, err := parse("no-such-name"); err == nil || !strings.Contains(err.Error(), choices[0].String()) {
		t.Errorf("parse of an unknown name: %v; want an error listing the choices", err)
	}
}

func TestVocabularies(t *testing.T) {
	roundTrip(t, Backoffs(), ParseBackoff)
	roundTrip(t, FanOutModes(), ParseFanOutMode)
	roundTrip(t, JoinModes(), ParseJoinMode)
	roundTrip(t, OverMaxRetryAfters(), ParseOverMaxRetryAfter)
	roundTrip(t, Algorithms(), ParseAlgorithm)
	roundTrip(t, RoutePolicies(), ParseRoutePolicy)
}

// TestVocabularyChoices checks what the lists callers pick from leave
// out: JoinDefault, which only defers to another mode, and the zero
// Algorithm, which names none; and that an unnamed value has no text.
func TestVocabularyChoices(t *testing.T) {
	if got := joinNames(JoinModes()); got != "partial all-or-nothing" {
		t.Errorf("join modes %q, want the default left out", got)
	}
	if got := joinNames(Algorithms()); got != "aimd gradient" {
		t.Errorf("algorithms %q, want the zero left out", got)
	}
	if s := JoinDefault.String(); s != "default" {
		t.Errorf("JoinDefault is %q", s)
	}
	if s := Algorithm(0).String(); s != "adaptive algorithm(0)" {
		t.Errorf("zero Algorithm is %q", s)
	}
	if _, err := json.Marshal(Algorithm(0)); err == nil {
		t.Error("the zero Algorithm marshalled; it names no algorithm")
	}
	if _, err := json.Marshal(Backoff(200)); err == nil {
		t.Error("Backoff(200) marshalled; it names no policy")
	}
}

// joinNames returns the names of xs, joined by spaces.
func joinNames[T fmt.Stringer](xs []T) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return strings.Join(out, " ")
}

// TestEveryBackoffDelays checks that every policy Backoffs lists but
// BackoffNone waits: a name added without a case in Delay fails here.
func TestEveryBackoffDelays(t *testing.T) {
	for _, b := range Backoffs() {
		p := RetryPolicy{Backoff: b, Base: time.Second, Cap: time.Minute}
		d := p.Delay(2, time.Second, 0.5)
		if (b == BackoffNone) != (d == 0) {
			t.Errorf("%s: Delay(2) = %v", b, d)
		}
	}
	if !slices.Contains(Backoffs(), BackoffDecorrelatedJitter) {
		t.Error("Backoffs leaves out decorrelated-jitter")
	}
}
