package decision

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

func TestCheckLoad(t *testing.T) {
	p, err := Recommend(Service{Name: "openai", RPM: 10_000, MeanLatency: 400 * time.Millisecond, CallsPerTurn: 8, Headroom: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	small, err := Recommend(Service{Name: "search", RPM: 600, MeanLatency: time.Second, CallsPerTurn: 2, Headroom: 0.7})
	if err != nil {
		t.Fatal(err)
	}

	// 80 sessions offering 37 turns/s = 2,220 turns/min against 875
	// sustainable (7,000 ÷ 8) and 1,250 at the full limit.
	l, ok := CheckLoad(37, 80, []Plan{p})
	if !ok || l.OfferedPerMinute != 2220 || l.SustainedPerMinute != 875 || l.FullPerMinute != 1250 || l.LimitedBy != "openai" {
		t.Fatalf("CheckLoad = %+v, %v", l, ok)
	}
	if math.Abs(l.Ratio-2220.0/875) > 1e-12 || l.FitSessions != 31 || l.Fits() {
		t.Errorf("ratio %v, fit sessions %d, fits %v; want %v, 31, false", l.Ratio, l.FitSessions, l.Fits(), 2220.0/875)
	}
	text := strings.Join(l.Lines(), "\n")
	for _, want := range []string{"offers 2,220 turns/min", "sustain 875 turns/min", "1,250 at the full limit of openai", "exceeds even the full limit", "serve about 31 of the 80 sessions"} {
		if !strings.Contains(text, want) {
			t.Errorf("lines lack %q:\n%s", want, text)
		}
	}

	// Between the headroom and the full limit: the headroom is being spent.
	mid, _ := CheckLoad(1000.0/60, 80, []Plan{p})
	if text := strings.Join(mid.Lines(), "\n"); !strings.Contains(text, "eats into the headroom") {
		t.Errorf("1,000 turns/min:\n%s", text)
	}

	// The tighter service binds: 420 ÷ 2 = 210 turns/min; an open workload
	// is told the arrival rate that fits.
	open, _ := CheckLoad(5, 0, []Plan{p, small})
	if open.LimitedBy != "search" || open.SustainedPerMinute != 210 || open.FitArrivalPerS != 3.5 || open.Fits() {
		t.Errorf("open workload: %+v", open)
	}
	if text := strings.Join(open.Lines(), "\n"); !strings.Contains(text, "serve about 3.5 turns/s") {
		t.Errorf("open lines:\n%s", text)
	}

	fits, _ := CheckLoad(1, 10, []Plan{p})
	if !fits.Fits() || !strings.Contains(strings.Join(fits.Lines(), "\n"), "the load fits") {
		t.Errorf("60 turns/min against 875 does not fit: %+v", fits)
	}
	if _, ok := CheckLoad(0, 10, []Plan{p}); ok {
		t.Error("no demand gave a check")
	}
	if _, ok := CheckLoad(1, 10, nil); ok {
		t.Error("no plans gave a check")
	}
}

func TestAnnotatePutsTheCheckUnderTheBindingService(t *testing.T) {
	p, _ := Recommend(Service{Name: "openai", RPM: 10_000, MeanLatency: 400 * time.Millisecond, CallsPerTurn: 8})
	q, _ := Recommend(Service{Name: "search", RPM: 60_000, MeanLatency: 400 * time.Millisecond, CallsPerTurn: 1})
	recs := map[string]results.Recommendation{"openai": p.Recommendation(), "search": q.Recommendation()}
	l, _ := CheckLoad(37, 80, []Plan{p, q})
	l.Annotate(recs)
	if got := recs["openai"]; got.OfferedTurnsPerMinute != 2220 || !strings.HasSuffix(got.Reason, strings.Join(l.Lines(), "\n")) {
		t.Errorf("openai: %+v", got)
	}
	if got := recs["search"]; got != q.Recommendation() {
		t.Errorf("search changed: %+v", got)
	}
	var b strings.Builder
	if err := reports.WriteTable(&b, &results.Results{Recommendation: recs}, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "875 turns/min sustainable (the workload offers 2,220: it does not fit)") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestLoadCheckWhenNoSessionFits(t *testing.T) {
	p, err := Recommend(Service{Name: "api", RPM: 60, MeanLatency: time.Second, CallsPerTurn: 10})
	if err != nil {
		t.Fatal(err)
	}
	// 4 sessions offer 40 turns/min against 4.2 sustained: one session alone
	// offers 10, 2.38× what the limits sustain.
	l, ok := CheckLoad(40.0/60, 4, []Plan{p})
	if !ok || l.FitSessions != 0 {
		t.Fatalf("check %+v, %v", l, ok)
	}
	last := l.Lines()[len(l.Lines())-1]
	if strings.Contains(last, "about 0 of") || !strings.Contains(last, "even one session offers 2.38×") {
		t.Errorf("advice %q", last)
	}
}

// Arithmetic sets tier3's demand against its plans, unless NoLoad leaves
// the load check, and the demand's simulation, out; the plans are the same
// either way.
func TestArithmeticNoLoad(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	with, err := Arithmetic(context.Background(), sc, Options{Duration: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if with.Load == nil || with.Load.OfferedPerMinute <= 0 {
		t.Fatalf("Arithmetic gave load check %+v, want tier3's demand", with.Load)
	}
	without, err := Arithmetic(context.Background(), sc, Options{Duration: 2 * time.Minute, NoLoad: true})
	if err != nil {
		t.Fatal(err)
	}
	if without.Load != nil {
		t.Errorf("NoLoad gave load check %+v, want none", without.Load)
	}
	if len(without.Plans) == 0 || len(without.Plans) != len(with.Plans) || without.Plans[0].MaxInFlight != with.Plans[0].MaxInFlight {
		t.Errorf("NoLoad changed the plans: %+v, want %+v", without.Plans, with.Plans)
	}
}
