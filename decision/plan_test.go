package decision

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/fixtures"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

func TestRecommendWorkedNumbers(t *testing.T) {
	tests := []struct {
		name        string
		give        Service
		wantBinding string
		wantUsable  float64 // requests/min
		wantReserve float64 // requests/min
		wantCap     int
		wantTurns   int // per minute
	}{
		{
			// 600 RPM, 8 calls per query, headroom 0.7: 420 usable, 52 queries/min, 180 reserved.
			name:        "600 rpm, 8 calls per turn",
			give:        Service{RPM: 600, MeanLatency: time.Second, CallsPerTurn: 8, Headroom: 0.7},
			wantBinding: LimitRPM, wantUsable: 420, wantReserve: 180, wantCap: 7, wantTurns: 52,
		},
		{
			// 10,000 RPM at 400 ms, headroom 0.7: 166.67/s × 0.7 × 0.4 s = 46.67 → 46.
			name:        "10,000 rpm at 400 ms",
			give:        Service{RPM: 10000, MeanLatency: 400 * time.Millisecond, CallsPerTurn: 8, Headroom: 0.7},
			wantBinding: LimitRPM, wantUsable: 7000, wantReserve: 3000, wantCap: 46, wantTurns: 875,
		},
		{
			// The same with 3.2 ms of network round trip: 116.67/s × 0.4032 s = 47.04 → 47.
			name:        "10,000 rpm at 400 ms plus the network",
			give:        Service{RPM: 10000, MeanLatency: 400 * time.Millisecond, RoundTrip: 3200 * time.Microsecond, CallsPerTurn: 8, Headroom: 0.7},
			wantBinding: LimitRPM, wantUsable: 7000, wantReserve: 3000, wantCap: 47, wantTurns: 875,
		},
		{
			// 50 requests/s at 200 ms, headroom 1: 50 × 0.2 = 10 exactly, not 9.
			name:        "50 requests/s at 200 ms",
			give:        Service{RPM: 50 * 60, MeanLatency: 200 * time.Millisecond, CallsPerTurn: 1, Headroom: 1},
			wantBinding: LimitRPM, wantUsable: 3000, wantReserve: 0, wantCap: 10, wantTurns: 3000,
		},
		{
			// 166.67/s × 0.3 × 0.3 s is 15 exactly, but 14.999999999999996 in
			// floating point: rounding down must not lose the 15th slot.
			name:        "floating-point error",
			give:        Service{RPM: 10000, MeanLatency: 300 * time.Millisecond, CallsPerTurn: 1, Headroom: 0.3},
			wantBinding: LimitRPM, wantUsable: 3000, wantReserve: 7000, wantCap: 15, wantTurns: 3000,
		},
		{
			// Tokens bind: 2,000,000 tokens/min ÷ 1,000 tokens/call = 2,000 requests/min < 10,000.
			name:        "tokens per minute binds",
			give:        Service{RPM: 10000, TPM: 2_000_000, TokensPerCall: 1000, MeanLatency: 600 * time.Millisecond, CallsPerTurn: 4, Headroom: 0.5},
			wantBinding: LimitTPM, wantUsable: 1000, wantReserve: 1000, wantCap: 10, wantTurns: 250,
		},
		{
			// 10 in flight at 1 s is 600 requests/min, below the 10,000 RPM; the cap is 10 × 0.7.
			name:        "concurrency binds",
			give:        Service{RPM: 10000, MaxConcurrent: 10, MeanLatency: time.Second, CallsPerTurn: 3, Headroom: 0.7},
			wantBinding: LimitConcurrency, wantUsable: 420, wantReserve: 180, wantCap: 7, wantTurns: 140,
		},
		{
			// Zero headroom means the default, 0.7.
			name:        "default headroom",
			give:        Service{RPM: 600, MeanLatency: time.Second, CallsPerTurn: 8},
			wantBinding: LimitRPM, wantUsable: 420, wantReserve: 180, wantCap: 7, wantTurns: 52,
		},
		{
			// 1 request/s × 0.7 × 0.1 s = 0.07 rounds down to 0, which would mean unbounded: raised to 1.
			name:        "cap below one",
			give:        Service{RPM: 60, MeanLatency: 100 * time.Millisecond, CallsPerTurn: 1},
			wantBinding: LimitRPM, wantUsable: 42, wantReserve: 18, wantCap: 1, wantTurns: 42,
		},
		{
			// A tie between rpm and tpm goes to rpm.
			name:        "tie",
			give:        Service{RPM: 1000, TPM: 100_000, TokensPerCall: 100, MeanLatency: time.Second, CallsPerTurn: 1, Headroom: 1},
			wantBinding: LimitRPM, wantUsable: 1000, wantReserve: 0, wantCap: 16, wantTurns: 1000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Recommend(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			if p.BindingLimit != tt.wantBinding {
				t.Errorf("binding limit %q, want %q", p.BindingLimit, tt.wantBinding)
			}
			if !near(p.UsableRPM, tt.wantUsable) {
				t.Errorf("usable %v requests/min, want %v", p.UsableRPM, tt.wantUsable)
			}
			if !near(p.ReservedRPM, tt.wantReserve) {
				t.Errorf("reserved %v requests/min, want %v", p.ReservedRPM, tt.wantReserve)
			}
			if p.MaxInFlight != tt.wantCap {
				t.Errorf("cap %d (from %v), want %d", p.MaxInFlight, p.LittleCap, tt.wantCap)
			}
			if p.TurnsPerMinute != tt.wantTurns {
				t.Errorf("turns/min %d (from %v), want %d", p.TurnsPerMinute, p.Turns, tt.wantTurns)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestRecommendLittleCapUnrounded(t *testing.T) {
	p, err := Recommend(Service{RPM: 10000, MeanLatency: 400 * time.Millisecond, CallsPerTurn: 1, Headroom: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.LittleCap-46.6667) > 1e-3 {
		t.Errorf("Little's-law cap before rounding %v, want 46.67", p.LittleCap)
	}
}

func TestRecommendLines(t *testing.T) {
	p, err := Recommend(Service{Name: "search", RPM: 600, MeanLatency: 800 * time.Millisecond, CallsPerTurn: 8, Headroom: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"search: limits 600 requests/min; 800 ms mean latency, 8 calls/turn",
		"requests/min allowed by rpm: 600",
		"binding limit: rpm at 600 requests/min",
		"usable with headroom 0.7: 600 × 0.7 = 420 requests/min",
		"reserved for retries: 600 − 420 = 180 requests/min",
		"Little's-law cap: floor(10 requests/s × 0.7 × 0.8 s) = floor(5.6) = 5 in flight",
		"turns/min sustainable: floor(420 requests/min ÷ 8 calls/turn) = floor(52.5) = 52",
		"token bucket: 420 requests/min",
	}
	if got := p.Lines(); !slices.Equal(got, want) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRecommendLinesEveryLimit(t *testing.T) {
	p, err := Recommend(Service{RPM: 10000, TPM: 2_000_000, TokensPerCall: 1000, MaxConcurrent: 50,
		MeanLatency: 500 * time.Millisecond, CallsPerTurn: 4, Headroom: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(p.Lines(), "\n")
	for _, want := range []string{
		"service: limits 10,000 requests/min, 2,000,000 tokens/min, 50 in flight",
		"requests/min allowed by tpm: 2,000,000 tokens/min ÷ 1,000 tokens/call = 2,000",
		"requests/min allowed by concurrency: 50 in flight ÷ 0.5 s × 60 = 6,000",
		"binding limit: tpm at 2,000 requests/min",
		"token bucket: 1,000 requests/min, 1,000,000 tokens/min",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("lines lack %q:\n%s", want, text)
		}
	}
}

func TestRecommendRaisedCapSaysSo(t *testing.T) {
	p, err := Recommend(Service{RPM: 60, MeanLatency: 100 * time.Millisecond, CallsPerTurn: 1})
	if err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(p.Lines(), "\n"); !strings.Contains(text, "raised to 1 in flight") {
		t.Errorf("lines do not say the cap was raised to 1:\n%s", text)
	}
}

func TestRecommendRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		give Service
		want []string // every one must be in the error
	}{
		{"zero value", Service{}, []string{"no rpm, tpm or concurrency limit", "mean latency", "calls per turn"}},
		{"headroom above 1", Service{RPM: 600, MeanLatency: time.Second, CallsPerTurn: 1, Headroom: 1.5}, []string{"headroom must be in (0, 1], have 1.5"}},
		{"negative headroom", Service{RPM: 600, MeanLatency: time.Second, CallsPerTurn: 1, Headroom: -0.1}, []string{"headroom"}},
		{"tpm without tokens per call", Service{TPM: 1000, MeanLatency: time.Second, CallsPerTurn: 1}, []string{"tokens per call"}},
		{"negative limit", Service{RPM: -1, MaxConcurrent: 4, MeanLatency: time.Second, CallsPerTurn: 1}, []string{"must not be negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Recommend(tt.give)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestPlanRecommendation(t *testing.T) {
	p, err := Recommend(tier3Service())
	if err != nil {
		t.Fatal(err)
	}
	got := p.Recommendation()
	// 10,000/60 × 0.7 × 0.55 s = 64.17 → 64; 7,000 ÷ 8 = 875 turns/min.
	want := results.Recommendation{MaxInFlight: 64, BindingLimit: "rpm", RequestsPerMinute: 7000, TokensPerMinute: 7_000_000, TurnsPerMinute: 875}
	reason := got.Reason
	got.Reason = ""
	if got != want {
		t.Errorf("recommendation %+v, want %+v", got, want)
	}
	lines := strings.Split(reason, "\n")
	if !strings.HasPrefix(lines[0], "rpm binds at 10,000 requests/min") || !slices.Equal(lines[1:], p.Lines()) {
		t.Errorf("reason is not the conclusion then the arithmetic:\n%s", reason)
	}
}

func TestChooseCap(t *testing.T) {
	sweep := fixtures.Tier3Sweep()
	tests := []struct {
		name     string
		give     []results.SweepPoint
		maxShare float64
		wantCap  int
		wantOK   bool
	}{
		// 64 has the lowest p95 (1,170 ms) but 0.61% 429s; 48 has 0.04% and
		// the best p95 left (1,190 ms), but 32 is within 5% of it (1,220 ms).
		{"default threshold", sweep, DefaultMaxRateLimitedShare, 32, true},
		// No 429 at all: the best of caps 1–32 is 32 (1,220 ms); 16 is 7% slower.
		{"no 429s", sweep, 0, 32, true},
		// 64 is best (1,170 ms); 32 is 4.3% slower, so the smaller cap wins.
		{"one percent", sweep, 0.01, 32, true},
		{"nothing qualifies", []results.SweepPoint{{Cap: 8, P95Ms: 100, RateLimitedShare: 0.2}}, 0.001, 0, false},
		{"empty", nil, 0.001, 0, false},
		{"tie goes to the smaller cap", []results.SweepPoint{{Cap: 16, P95Ms: 900, AnsweredShare: 1}, {Cap: 8, P95Ms: 900, AnsweredShare: 1}, {Cap: 32, P95Ms: 950, AnsweredShare: 1}}, 0.001, 8, true},
		{"cap 0 (unbounded) is ignored", []results.SweepPoint{{Cap: 0, P95Ms: 10, AnsweredShare: 1}, {Cap: 4, P95Ms: 900, AnsweredShare: 1}}, 0.001, 4, true},
		{"share at the threshold qualifies", []results.SweepPoint{{Cap: 4, P95Ms: 900, AnsweredShare: 1}, {Cap: 8, P95Ms: 800, RateLimitedShare: 0.001, AnsweredShare: 1}}, 0.001, 8, true},
		// A cap failing more than 5% of its turns has no p95 answer, however
		// fast its answered turns were.
		{"an unanswered p95 does not qualify", []results.SweepPoint{{Cap: 4, P95Ms: 900, AnsweredShare: 1}, {Cap: 64, P95Ms: results.Unanswered, AnsweredShare: 0.5}}, 0.001, 4, true},
		{"only unanswered", []results.SweepPoint{{Cap: 64, P95Ms: results.Unanswered}}, 0.001, 0, false},
		// The case: 128 is 0.7% faster than 64, within the tolerance.
		{"smaller cap within the tolerance", []results.SweepPoint{{Cap: 64, P95Ms: 1159, AnsweredShare: 1}, {Cap: 128, P95Ms: 1151, AnsweredShare: 1}}, 0.001, 64, true},
		{"smaller cap beyond the tolerance", []results.SweepPoint{{Cap: 64, P95Ms: 1220, AnsweredShare: 1}, {Cap: 128, P95Ms: 1151, AnsweredShare: 1}}, 0.001, 128, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ChooseCap(tt.give, tt.maxShare)
			if got != tt.wantCap || ok != tt.wantOK {
				t.Errorf("ChooseCap = %d, %v; want %d, %v", got, ok, tt.wantCap, tt.wantOK)
			}
		})
	}
}

func TestRuleTolerance(t *testing.T) {
	pts := []results.SweepPoint{{Cap: 64, P95Ms: 1159, AnsweredShare: 1}, {Cap: 128, P95Ms: 1151, AnsweredShare: 1}}
	if c, b, ok := (Rule{MaxShare: 0.001}).Choose(pts); c != 64 || b != 128 || !ok {
		t.Errorf("default tolerance: chosen %d, best %d, %v; want 64, 128", c, b, ok)
	}
	if c, _, _ := (Rule{MaxShare: 0.001, Tolerance: -1}).Choose(pts); c != 128 {
		t.Errorf("no tolerance: chosen %d, want the strictly lowest, 128", c)
	}
	if c, _, _ := (Rule{MaxShare: 0.001, Tolerance: 0.001}).Choose(pts); c != 128 {
		t.Errorf("tolerance 0.1%%: chosen %d, want 128 (64 is 0.7%% slower)", c)
	}
}

func TestExtend(t *testing.T) {
	pts := []results.SweepPoint{{Cap: 1}, {Cap: 2}, {Cap: 4}, {Cap: 6}}
	tests := []struct {
		name   string
		chosen int
		want   []int
	}{
		{"top edge grows by 1.5 and 2", 6, []int{9, 12}},
		{"inside stays", 4, nil},
		{"bottom edge at 1 cannot shrink", 1, nil},
		{"none chosen", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := Extend(pts, tt.chosen)
			if !slices.Equal(got, tt.want) || (got != nil) != (why != "") {
				t.Errorf("Extend(%d) = %v, %q; want %v", tt.chosen, got, why, tt.want)
			}
		})
	}
	if got, _ := Extend([]results.SweepPoint{{Cap: 8}, {Cap: 16}}, 8); !slices.Equal(got, []int{4}) {
		t.Errorf("bottom edge at 8: %v, want [4]", got)
	}
	if got, _ := Extend([]results.SweepPoint{{Cap: MaxSweepCap / 2}, {Cap: MaxSweepCap}}, MaxSweepCap); got != nil {
		t.Errorf("at the bound: %v, want nil", got)
	}
}

func TestKnee(t *testing.T) {
	shuffled := fixtures.Tier3Sweep()
	slices.Reverse(shuffled)
	tests := []struct {
		name    string
		give    []results.SweepPoint
		wantCap int
		wantOK  bool
	}{
		// Goodput doubles up to 8, then creeps; 128 fails 9% of its turns and
		// is left out, so the curve ends at 96: scaled, 16 stands farthest
		// above the chord.
		{"tier3 sweep", fixtures.Tier3Sweep(), 16, true},
		{"order does not matter", shuffled, 16, true},
		{"saturating", answeredAll([]results.SweepPoint{{Cap: 1, GoodputPerS: 10}, {Cap: 2, GoodputPerS: 20}, {Cap: 4, GoodputPerS: 40},
			{Cap: 8, GoodputPerS: 78}, {Cap: 16, GoodputPerS: 80}, {Cap: 32, GoodputPerS: 80}, {Cap: 64, GoodputPerS: 79}}), 8, true},
		{"straight line has no knee", answeredAll([]results.SweepPoint{{Cap: 1, GoodputPerS: 1}, {Cap: 2, GoodputPerS: 2}, {Cap: 3, GoodputPerS: 3}}), 0, false},
		{"flat", answeredAll([]results.SweepPoint{{Cap: 1, GoodputPerS: 5}, {Cap: 2, GoodputPerS: 5}, {Cap: 4, GoodputPerS: 5}}), 0, false},
		{"two points", answeredAll([]results.SweepPoint{{Cap: 1, GoodputPerS: 1}, {Cap: 8, GoodputPerS: 8}}), 0, false},
		{"duplicate caps count once", []results.SweepPoint{{Cap: 1, GoodputPerS: 1, AnsweredShare: 1}, {Cap: 1, GoodputPerS: 1, AnsweredShare: 1}, {Cap: 8, GoodputPerS: 8, AnsweredShare: 1}}, 0, false},
		// 64 fails a third of its turns: without it the curve 1, 2, 4 is a
		// straight line, with no knee.
		{"caps that fail turns are left out", []results.SweepPoint{{Cap: 1, GoodputPerS: 1, AnsweredShare: 1}, {Cap: 2, GoodputPerS: 2, AnsweredShare: 1}, {Cap: 4, GoodputPerS: 4, AnsweredShare: 1}, {Cap: 64, P95Ms: results.Unanswered, GoodputPerS: 5, AnsweredShare: 0.66}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Knee(tt.give)
			if got != tt.wantCap || ok != tt.wantOK {
				t.Errorf("Knee = %d, %v; want %d, %v", got, ok, tt.wantCap, tt.wantOK)
			}
		})
	}
}

func TestSweepPointOf(t *testing.T) {
	s := results.StrategyResult{Attempts: 2000, RateLimited: 5, GoodputPerS: 12.5,
		TurnLatencyMs:   results.Summary{P50: 700, P95: 1000},
		AnswerLatencyMs: results.AnswerSummary{P50: 900, P95: 1400, AnsweredShare: 0.96}}
	got := SweepPointOf(16, s)
	want := results.SweepPoint{Cap: 16, P50Ms: 900, P95Ms: 1400, AnsweredShare: 0.96, GoodputPerS: 12.5, RateLimitedShare: 0.0025}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SweepPointOf = %+v, want %+v", got, want)
	}
	if got := SweepPointOf(1, results.StrategyResult{}); got.RateLimitedShare != 0 {
		t.Errorf("no attempts gives share %v, want 0", got.RateLimitedShare)
	}
}

// Counts of a thousand or more carry separators in every line, the
// conclusion's included.
func TestPlanLinesSeparateThousands(t *testing.T) {
	p, err := Recommend(Service{Name: "api", RPM: 6000, MeanLatency: 100 * time.Millisecond, CallsPerTurn: 2})
	if err != nil {
		t.Fatal(err)
	}
	text := p.Recommendation().Reason
	for _, want := range []string{"gives 7 in flight and 2,100 turns/min", "= floor(2,100) = 2,100"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
}

// answeredAll marks every point as answering all its turns.
func answeredAll(ps []results.SweepPoint) []results.SweepPoint {
	for i := range ps {
		ps[i].AnsweredShare = 1
	}
	return ps
}

// One call per turn reads "1 call/turn", not "1 calls/turn".
func TestRecommendLinesSingular(t *testing.T) {
	p, err := Recommend(Service{Name: "search", RPM: 600, MeanLatency: 800 * time.Millisecond, CallsPerTurn: 1, Headroom: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.Lines(), "\n")
	if strings.Contains(got, "1 calls/turn") || !strings.Contains(got, "800 ms mean latency, 1 call/turn") || !strings.Contains(got, "÷ 1 call/turn)") {
		t.Errorf("lines:\n%s", got)
	}
}

// TestPlanAnswersInTheFilesUnit holds a service whose file wrote rps = 5 to
// the per-second unit in every line of its arithmetic: 5 requests/s at
// headroom 0.7 is 3.5 usable and 1.5 reserved, 3.5 × 2 s = 7 in flight and
// floor(3.5 × 60 ÷ 8) = 26 turns/min; no line speaks per minute of a
// request rate.
func TestPlanAnswersInTheFilesUnit(t *testing.T) {
	sc, err := scenarios.Parse("rps.toml", []byte(`
name = "rps"
duration = "1m"

[workload]
sessions = 4
calls = [ { tool = "search", count = 8 } ]

[services.search_api]
rps = 5
latency = { dist = "constant", value = "2s" }

[tools.search]
service = "search_api"

[[strategy]]
name = "s"
`))
	if err != nil {
		t.Fatal(err)
	}
	plans, unplanned := PlanServices(sc, 0.7)
	if len(plans) != 1 || len(unplanned) > 0 {
		t.Fatalf("plans %v, unplanned %v", plans, unplanned)
	}
	p := plans[0]
	if p.BindingLimit != LimitRPS || p.MaxInFlight != 7 || p.TurnsPerMinute != 26 {
		t.Errorf("binding %s, cap %d, turns/min %d; want rps, 7, 26", p.BindingLimit, p.MaxInFlight, p.TurnsPerMinute)
	}
	text := strings.Join(p.Lines(), "\n")
	for _, want := range []string{
		"search_api: limits 5 requests/s;",
		"requests/s allowed by rps: 5",
		"binding limit: rps at 5 requests/s",
		"usable with headroom 0.7: 5 × 0.7 = 3.5 requests/s",
		"reserved for retries: 5 − 3.5 = 1.5 requests/s",
		"turns/min sustainable: floor(3.5 requests/s × 60 ÷ 8 calls/turn) = floor(26.25) = 26",
		"token bucket: 3.5 requests/s",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the arithmetic lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "requests/min") {
		t.Errorf("a request rate per minute in the arithmetic of an rps service:\n%s", text)
	}
	if r := p.Recommendation(); !strings.HasPrefix(r.Reason, "rps binds at 5 requests/s;") || r.BindingLimit != "rps" {
		t.Errorf("recommendation: binding %q, reason %q", r.BindingLimit, r.Reason)
	}
}
