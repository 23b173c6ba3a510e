package decision

import (
	"bytes"
	"context"
	"encoding/json"
	"go/parser"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/simbench/simbench/scenarios"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A decision whose choice sits at the top of the range extends it and says
// so; the final choice lies strictly inside.
func TestDecisionExtendsRangeAtEdge(t *testing.T) {
	sc, err := scenarios.Builtin("mixed-read-write")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decide(context.Background(), sc, Options{Rule: Rule{MaxShare: 0.001}, Seeds: 1, Duration: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ev := d.Decision.Evidence
	if len(ev.Extended) == 0 || !strings.Contains(ev.Extended[0], "is the largest swept") {
		t.Fatalf("evidence %+v: want the range extended from its top edge", ev)
	}
	if ev.Chosen <= ev.Caps[0] || ev.Chosen >= ev.Caps[len(ev.Caps)-1] {
		t.Errorf("chose %d from caps %v: want a cap strictly inside the final range", ev.Chosen, ev.Caps)
	}
}

// recommend --emit toml prints a strategy block that, pasted into the
// scenario, loads as the strategy the decision verified.
func TestEmitTOMLRoundTrip(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decide(context.Background(), sc, Options{Rule: Rule{MaxShare: 0.001}, Seeds: 1, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../scenarios/tier3.toml")
	if err != nil {
		t.Fatal(err)
	}
	block := TOML(&d.Tuned)
	got, err := scenarios.Parse("tier3.toml", append(append(src, '\n'), block...))
	if err != nil {
		t.Fatalf("the emitted block does not load:\n%s\n%v", block, err)
	}
	st := got.Strategy("bounded-64-tuned")
	if st == nil {
		t.Fatalf("no strategy bounded-64-tuned after pasting:\n%s", block)
	}
	want := d.Tuned
	want.Name = st.Name
	if !strategiesEqual(*st, want) {
		t.Errorf("pasted strategy %+v, want %+v", *st, want)
	}
	if st.MaxInFlight != d.Decision.MaxInFlight {
		t.Errorf("emitted cap %d, decided %d", st.MaxInFlight, d.Decision.MaxInFlight)
	}
	text, err := Go(sc, &d.Tuned)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.ParseExpr(text); err != nil {
		t.Errorf("the emitted Go does not parse: %v\n%s", err, text)
	}
	for _, want := range []string{"MaxInFlight: " + strconv.Itoa(d.Decision.MaxInFlight) + ",", "Backoff: sched.BackoffFullJitter,", "Cap: time.Minute,", `"openai": {`, "Headroom: " + strconv.FormatFloat(d.Decision.Headroom, 'g', -1, 64) + ","} {
		if !strings.Contains(text, want) {
			t.Errorf("emitted Go lacks %q:\n%s", want, text)
		}
	}
}

func strategiesEqual(a, b scenarios.Strategy) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// An adaptive strategy survives --emit: the TOML loads back equal and the
// Go literal parses and names the algorithm.
func TestEmitAdaptive(t *testing.T) {
	src, err := os.ReadFile("../scenarios/tier3.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []string{
		`adaptive = { algorithm = "aimd", initial = 32, max = 256, decrease = 0.5 }`,
		`adaptive = { algorithm = "gradient", initial = 16, min = 2, max = 128, smoothing = 0.3, tolerance = 2, long_window = 300, queue_size = 6, services = ["openai"] }`,
		"adaptive = { algorithm = \"aimd\" }\ntoken_bucket = true\nheader_sync = true\nretry_budget = { ratio = 0.1, min_per_s = 1.5, max = 20 }",
		"adaptive = { algorithm = \"aimd\" }\nretry_budget = { min_per_s = 2 }",
	} {
		with := string(src) + "\n[[strategy]]\nname = \"adaptive\"\n" + extra + "\n"
		sc, err := scenarios.Parse("tier3.toml", []byte(with))
		if err != nil {
			t.Fatalf("%s: %v", extra, err)
		}
		st := sc.Strategy("adaptive")
		block := TOML(st)
		again, err := scenarios.Parse("tier3.toml", []byte(with+"\n"+block))
		if err != nil {
			t.Fatalf("emitted block does not load:\n%s\n%v", block, err)
		}
		got := *again.Strategy("adaptive-tuned")
		want := *st
		want.Name = got.Name
		if !strategiesEqual(got, want) {
			t.Errorf("pasted %+v %+v %v, want %+v %+v %v", got.Adaptive, got.RetryBudget, got.HeaderSync, want.Adaptive, want.RetryBudget, want.HeaderSync)
		}
		text, err := Go(sc, st)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parser.ParseExpr(text); err != nil || !strings.Contains(text, "Adaptive: &sched.AdaptiveConfig{") {
			t.Errorf("emitted Go (%v):\n%s", err, text)
		}
		if r := st.RetryBudget; r != nil && !strings.Contains(text, "RetryBudget: &sched.RetryBudget{") {
			t.Errorf("emitted Go lacks the retry budget:\n%s", text)
		}
		if st.HeaderSync != strings.Contains(text, "HeaderSync: true") {
			t.Errorf("emitted Go and header_sync = %v disagree:\n%s", st.HeaderSync, text)
		}
	}
}
