package calibrate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
	"github.com/simbench/simbench/trace"
)

// TestFitLognormalRecovers fits 10⁵ draws of a known lognormal and gets
// μ and σ back within 2%, with a KS distance that calls the fit good.
func TestFitLognormalRecovers(t *testing.T) {
	tests := []struct{ mu, sigma float64 }{
		{math.Log(0.4), 0.42}, // tier3's lookups: p50 400 ms, p95 800 ms
		{math.Log(2.5), 1.1},
		{math.Log(0.02), 0.15},
	}
	for i, tt := range tests {
		d := distuv.LogNormal{Mu: tt.mu, Sigma: tt.sigma, Src: rand.NewPCG(uint64(i), 7)}
		xs := make([]float64, 100_000)
		for j := range xs {
			xs[j] = d.Rand()
		}
		f := FitLognormal(xs, 0)
		if math.Abs(f.Mu-tt.mu) > 0.02*math.Abs(tt.mu) || math.Abs(f.Sigma-tt.sigma) > 0.02*tt.sigma {
			t.Errorf("μ %.4f σ %.4f: fitted μ %.4f σ %.4f, want within 2%%", tt.mu, tt.sigma, f.Mu, f.Sigma)
		}
		if f.Poor || f.KS > 0.01 {
			t.Errorf("μ %.4f σ %.4f: KS %.4f, poor %v (%s); want a good fit", tt.mu, tt.sigma, f.KS, f.Poor, f.Reason)
		}
	}
}

// bimodal draws latencies from two far-apart modes: a cache hit at ~50 ms
// and a miss at ~2 s.
func bimodal(rng *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		if rng.IntN(2) == 0 {
			xs[i] = 0.05 * math.Exp(0.1*rng.NormFloat64())
		} else {
			xs[i] = 2 * math.Exp(0.1*rng.NormFloat64())
		}
	}
	return xs
}

// TestBimodalIsPoorAndEmpirical checks that a bimodal latency is judged a
// poor lognormal fit, and that the written scenario resamples the recorded
// values from an empirical file beside it.
func TestBimodalIsPoorAndEmpirical(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	xs := bimodal(rng, 20_000)
	f := FitLognormal(xs, 0)
	if !f.Poor || f.KS <= DefaultKSMax || !strings.Contains(f.Reason, "Lilliefors") {
		t.Fatalf("bimodal fit: KS %.4f, poor %v, reason %q; want a poor fit", f.KS, f.Poor, f.Reason)
	}

	c := New(Options{})
	c.Section(nil)
	now := 0.0
	for i, x := range xs {
		c.Add(&trace.Record{Turn: int64(i), Service: "cache", Tool: "get", Attempt: 1, Intended: now, Start: now, End: now + x, Outcome: trace.OutcomeSuccess})
		now += 0.01
	}
	res, err := c.Fit()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "cached.toml")
	written, err := res.WriteScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	emp := filepath.Join(dir, "cached-cache-latency.txt")
	if len(written) != 2 || written[0] != emp || written[1] != path {
		t.Errorf("written %q, want the empirical file and the scenario", written)
	}
	sc, err := scenarios.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	lat := sc.Services[0].Latency
	if lat.Kind != spec.DistEmpirical || len(lat.Samples) != empiricalPoints {
		t.Fatalf("latency %v with %d samples, want empirical with %d", lat.Kind, len(lat.Samples), empiricalPoints)
	}
	// The resampled values keep both modes, in the recorded proportions.
	fast := 0
	for _, d := range lat.Samples {
		if d < 500*time.Millisecond {
			fast++
		}
	}
	if share := float64(fast) / float64(len(lat.Samples)); math.Abs(share-0.5) > 0.02 {
		t.Errorf("%.3f of the empirical values are the fast mode, want about 0.5", share)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "the lognormal fit is poor") {
		t.Errorf("the scenario does not say the fit is poor:\n%s", data)
	}
}

// session simulates a closed-model trace: sessions agents each loop turns
// of fanOut lookups against one service, with lognormal latency and think
// time, and a 429 now and then.
func writeClosedTrace(t testing.TB, path string, sessions, turns, fanOut int) {
	w, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	lat := distuv.LogNormal{Mu: math.Log(0.4), Sigma: 0.42, Src: rand.NewPCG(1, 1)}
	think := distuv.LogNormal{Mu: math.Log(1.2), Sigma: 0.55, Src: rand.NewPCG(2, 2)}
	if err := w.Header(trace.Header{Scenario: "x", Strategy: "unbounded", Limits: map[string]trace.Limits{"api": {RPM: 6000, TPM: 6e6}}}); err != nil {
		t.Fatal(err)
	}
	turn := int64(0)
	for s := 1; s <= sessions; s++ {
		now := 0.0
		for range turns {
			turn++
			end := now
			for c := range fanOut {
				r := trace.Record{Session: int64(s), Turn: turn, Call: fmt.Sprint(c), Service: "api", Tool: "lookup", Attempt: 1, Intended: now, Start: now, Tokens: 1000}
				if rng.IntN(50) == 0 {
					r.End, r.Outcome, r.Status, r.RetryAfter, r.HasRetryAfter = now+0.001, trace.OutcomeRateLimited, 429, 1, true
					if err := w.Write(r); err != nil {
						t.Fatal(err)
					}
					r.Attempt, r.RetryDelay = 2, 1
					r.Intended = r.End + 1
					r.Start = r.Intended
				}
				r.End, r.Outcome, r.Status = r.Start+lat.Rand(), trace.OutcomeSuccess, 200
				if err := w.Write(r); err != nil {
					t.Fatal(err)
				}
				end = max(end, r.End)
			}
			now = end + think.Rand()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestClosedTraceCalibrates reads a simbench trace of sessions and checks
// the fitted workload and service, and that the scenario loads.
func TestClosedTraceCalibrates(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "run.jsonl")
	writeClosedTrace(t, in, 20, 50, 8)
	c := New(Options{})
	if err := c.ReadFile(in, ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Fit()
	if err != nil {
		t.Fatal(err)
	}
	wl := res.Workload
	if !wl.Closed || wl.Sessions != 20 || wl.TurnsPerSession != 0 || wl.Turns != 1000 {
		t.Errorf("workload: closed %v, %d sessions, %d turns per session, %d turns; want closed, 20, 0 (until the end), 1000 (%s)", wl.Closed, wl.Sessions, wl.TurnsPerSession, wl.Turns, wl.SessionsReason)
	}
	if wl.FanOutMin != 8 || wl.FanOutMax != 8 {
		t.Errorf("fan-out %d..%d, want 8", wl.FanOutMin, wl.FanOutMax)
	}
	if math.Abs(wl.Think.Mu-math.Log(1.2)) > 0.05 || math.Abs(wl.Think.Sigma-0.55) > 0.05 || wl.Think.Poor {
		t.Errorf("think: μ %.3f σ %.3f poor %v; want about %.3f, 0.55, good", wl.Think.Mu, wl.Think.Sigma, wl.Think.Poor, math.Log(1.2))
	}
	svc := res.Services[0]
	if svc.Name != "api" || svc.Limits.RPM != 6000 || svc.Limits.TPM != 6e6 || svc.Headers != "standard" {
		t.Errorf("service %+v", svc)
	}
	if math.Abs(svc.Latency.Mu-math.Log(0.4)) > 0.02 || svc.Latency.Poor {
		t.Errorf("latency μ %.4f poor %v, want about %.4f and good", svc.Latency.Mu, svc.Latency.Poor, math.Log(0.4))
	}
	if svc.RateLimitedShare < 0.01 || svc.RateLimitedShare > 0.03 {
		t.Errorf("429 share %.4f, want about 1/51", svc.RateLimitedShare)
	}
	out := filepath.Join(dir, "calibrated.toml")
	if _, err := res.WriteScenario(out); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Workload.Sessions != 20 || sc.Workload.Calls[0].Count.Value != 8 || sc.Tools[0].Tokens.Value != 1000 || len(sc.Strategies) != 3 {
		t.Errorf("scenario: %d sessions, count %v, tokens %v, %d strategies", sc.Workload.Sessions, sc.Workload.Calls[0].Count, sc.Tools[0].Tokens, len(sc.Strategies))
	}
}

// TestOpenModel checks that turns without sessions give an open workload
// at the recorded rate, and evenly spaced turns a constant one.
func TestOpenModel(t *testing.T) {
	for _, tt := range []struct {
		name string
		gap  func(*rand.Rand) float64
		want string
	}{
		{"poisson", func(r *rand.Rand) float64 { return r.ExpFloat64() / 5 }, "poisson"},
		{"constant", func(*rand.Rand) float64 { return 0.2 }, "constant"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Options{})
			c.Section(nil)
			rng := rand.New(rand.NewPCG(5, 5))
			now := 0.0
			for i := range 5000 {
				c.Add(&trace.Record{Turn: int64(i), Service: "s", Attempt: 1, Intended: now, Start: now, End: now + 0.1, Outcome: trace.OutcomeSuccess})
				now += tt.gap(rng)
			}
			res, err := c.Fit()
			if err != nil {
				t.Fatal(err)
			}
			wl := res.Workload
			if wl.Closed || wl.Arrival != tt.want || math.Abs(wl.ArrivalRate-5) > 0.25 {
				t.Errorf("closed %v, arrival %s at %.3f/s (CV %.2f); want open, %s at 5/s", wl.Closed, wl.Arrival, wl.ArrivalRate, wl.ArrivalCV, tt.want)
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCSV reads a CSV trace through a column mapping.
func TestCSV(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("ts,dur,svc,code,turn_id,tool_name\n")
	for turn := range 100 {
		for call := range 3 + turn%2 { // 3 or 4 calls
			code := 200
			if call == 0 && turn%10 == 0 {
				code = 500
			}
			fmt.Fprintf(&b, "%d.%03d,%d,search-api,%d,t%d,search\n", 1700000000+turn, call, 100+10*call+turn%7, code, turn)
		}
	}
	res := fitCSV(t, dir, b.String(), "start=ts,latency_ms=dur,service=svc,status=code,turn=turn_id,tool=tool_name")
	if res.Records != 350 || res.Workload.Turns != 100 || res.Workload.FanOutMin != 3 || res.Workload.FanOutMax != 4 || res.Workload.FanOutMean != 3.5 {
		t.Errorf("%d records, %d turns, fan-out %d..%d mean %v; want 350, 100, 3..4 mean 3.5", res.Records, res.Workload.Turns, res.Workload.FanOutMin, res.Workload.FanOutMax, res.Workload.FanOutMean)
	}
	if got := res.Services[0].ErrorRate; got != 10.0/350 {
		t.Errorf("error rate %v, want 10/350", got)
	}
	if res.Sources[0].Format != FormatCSV {
		t.Errorf("format %q", res.Sources[0].Format)
	}
	out := filepath.Join(dir, "from-csv.toml")
	if _, err := res.WriteScenario(out); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if count := sc.Workload.Calls[0].Count; count.Kind != spec.DistEmpirical || len(count.Samples) != 100 {
		t.Errorf("count %v with %d samples, want empirical from calls-per-turn", count.Kind, len(count.Samples))
	}
	if _, err := os.Stat(filepath.Join(dir, "from-csv-calls-per-turn.txt")); err != nil {
		t.Error(err)
	}
	if sc.Services[0].Faults.ErrorRate == 0 || sc.Services[0].Name != "search-api" {
		t.Errorf("service %+v", sc.Services[0])
	}
}

// TestBadInput checks that bad traces give errors naming the file and,
// where there is one, the line.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	csvCols := map[string]string{"start": "ts", "latency_ms": "dur", "service": "svc", "status": "code"}
	tests := []struct {
		name string
		file string
		data string
		opts ReadOptions
		want string
	}{
		{"unknown format", "x.log", "GET /search 200 12ms\n", ReadOptions{}, "x.log:1: unknown trace format"},
		{"empty", "e.jsonl", "", ReadOptions{}, "e.jsonl: no attempts in the trace"},
		{"header only", "h.jsonl", `{"simbench_trace":1}` + "\n", ReadOptions{}, "h.jsonl: no attempts in the trace"},
		{"bad simbench line", "b.jsonl", `{"service":"s","start":1,"end":2,"outcome":"success"}` + "\n" + `{"service":"s","start":1,"end":2}` + "\n", ReadOptions{}, `b.jsonl:2: no "outcome"`},
		{"missing column", "m.csv", "ts,latency,svc,code\n1,2,s,200\n", ReadOptions{CSVColumns: csvCols}, `m.csv:1: no column "dur" (mapped to latency_ms); the header has ts, latency, svc, code`},
		{"bad csv value", "v.csv", "ts,dur,svc,code\n1,2,s,200\n2,fast,s,200\n", ReadOptions{CSVColumns: csvCols}, `v.csv:3: latency_ms "fast" is not a number`},
		{"csv without mapping", "n.csv", "ts,dur\n", ReadOptions{}, "n.csv: a CSV trace needs a column mapping"},
		{"csv header only", "o.csv", "ts,dur,svc,code\n", ReadOptions{CSVColumns: csvCols}, "o.csv: no attempts in the trace"},
		{"bad otel", "o.json", "{\"resourceSpans\": [\n {\"scopeSpans\": [ {\"spans\": [ {\"spanId\": 12} ]}]}]}\n", ReadOptions{}, "o.json:2: json: cannot unmarshal number"},
		// A span or attempt that ends before it starts is refused by every
		// reader with the same message (trace.Record.Check).
		{"jsonl ends before it starts", "s.jsonl", `{"service":"s","start":3,"end":2,"outcome":"success"}` + "\n", ReadOptions{}, "s.jsonl:1: end 2 is before start 3"},
		{"csv ends before it starts", "s.csv", "ts,dur,svc,code\n1,2,s,200\n3,-1000,s,200\n", ReadOptions{CSVColumns: csvCols}, "s.csv:3: end 2 is before start 3"},
		{"otel span ends before it starts", "s.json", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"02","startTimeUnixNano":"3000000000","endTimeUnixNano":"2000000000",` +
			`"attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"server.address","value":{"stringValue":"s"}}]}]}]}]}` + "\n", ReadOptions{}, "s.json:1: end 2 is before start 3"},
		{"named format", "f.jsonl", `{"resourceSpans":[]}`, ReadOptions{Format: "zipkin"}, `f.jsonl: unknown format "zipkin"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, dir, tt.file, tt.data)
			err := New(Options{}).ReadFile(p, tt.opts)
			if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), strings.Replace(tt.want, tt.file, p, 1)) {
				t.Errorf("ReadFile = %v\nwant it to contain %q", err, strings.Replace(tt.want, tt.file, p, 1))
			}
		})
	}
	if _, err := New(Options{}).Fit(); !errors.Is(err, ErrEmpty) {
		t.Errorf("Fit with nothing read = %v, want ErrEmpty", err)
	}
	for _, spec := range []string{"start=ts,latency=dur", "start=ts,latency_ms=dur,service=svc,status=code,turn", "start=ts,latency_ms=dur,service=svc"} {
		if _, err := ParseCSVColumns(spec); err == nil {
			t.Errorf("ParseCSVColumns(%q) accepted", spec)
		}
	}
}

// TestSessionsCloseInOrder calibrates the same records ten times: the
// sessions, closed together at the end, must enter the figures in the same
// order every time (not Go's map order), so the running mean of turns per
// session, whose rounding depends on that order, comes out the same.
func TestSessionsCloseInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	turnsOf := make([]int, 300)
	for i := range turnsOf {
		turnsOf[i] = 1 + rng.IntN(97)
	}
	fit := func() float64 {
		c := New(Options{})
		c.Section(nil)
		turn := int64(0)
		for s, n := range turnsOf {
			for k := range n {
				turn++
				at := float64(k)
				c.Add(&trace.Record{Session: int64(s + 1), Turn: turn, Service: "api", Attempt: 1, Intended: at, Start: at, End: at + 0.5, Outcome: trace.OutcomeSuccess})
			}
		}
		res, err := c.Fit()
		if err != nil {
			t.Fatal(err)
		}
		return res.Workload.MeanTurnsPerSession
	}
	want := fit()
	for range 9 {
		if got := fit(); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("mean turns per session %v, then %v: the order sessions close in changed", want, got)
		}
	}
}

// fitCSV writes body to calls.csv in dir, reads it with the CSV columns
// given (ParseCSVColumns' syntax) and returns the fit.
func fitCSV(t *testing.T, dir, body, columns string) *Result {
	t.Helper()
	in := writeFile(t, dir, "calls.csv", body)
	cols, err := ParseCSVColumns(columns)
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{})
	if err := c.ReadFile(in, ReadOptions{CSVColumns: cols}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Fit()
	if err != nil {
		t.Fatal(err)
	}
	return res
}
