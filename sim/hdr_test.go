package sim

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/scenarios"
)

// TestHistogramToHDR: the HdrHistogram converted from a histogram holds
// every value, and its quantiles are the histogram's within 0.1% (its own
// precision) and a microsecond.
func TestHistogramToHDR(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := collect.NewHistogram()
	for range 100000 {
		h.Add(time.Duration(rng.ExpFloat64() * float64(300*time.Millisecond)))
	}
	out := h.Hdr(time.Minute)
	if out.TotalCount() != int64(h.N) || out.EndTimeMs() != 60000 {
		t.Fatalf("count %d, end %d ms; want %d, 60000", out.TotalCount(), out.EndTimeMs(), h.N)
	}
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
		want := float64(h.Quantile(q).Microseconds())
		got := float64(out.ValueAtQuantile(q * 100))
		if d := got - want; d > want*0.001+1 || d < -(want*0.001+1) {
			t.Errorf("q%g: HDR %g µs, histogram %g µs", q, got, want)
		}
	}
}

// TestRunCallsHDR: Options.HDR is called once per strategy, in order, with
// as many turn and call latencies as the results count.
func TestRunCallsHDR(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	var got []collect.HDRLatencies
	res, err := Run(context.Background(), sc, Options{Duration: 10 * time.Second, HDR: func(l collect.HDRLatencies) { got = append(got, l) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(res.Strategies) {
		t.Fatalf("HDR called %d times for %d strategies", len(got), len(res.Strategies))
	}
	for i, s := range res.Strategies {
		l := got[i]
		if l.Strategy != s.Name || l.Turn.TotalCount() != s.Turns || l.Call.TotalCount() != s.Calls || s.Calls == 0 {
			t.Errorf("%s: HDR %s with %d turns, %d calls; results %d, %d", s.Name, l.Strategy, l.Turn.TotalCount(), l.Call.TotalCount(), s.Turns, s.Calls)
		}
	}
}

// TestWriteHDRLogRoundTrip: a log written with two intervals reads back
// with the library's reader as two intervals in sequence, tagged, with
// their counts; a tag's spaces and commas become '_'.
func TestWriteHDRLogRoundTrip(t *testing.T) {
	a, b := hdrhistogram.New(1, 1<<40, 3), hdrhistogram.New(1, 1<<40, 3)
	a.SetEndTimeMs(1000)
	b.SetEndTimeMs(1000)
	_ = a.RecordValues(1500, 3)
	_ = b.RecordValues(2500, 5)
	var buf bytes.Buffer
	if err := collect.WriteHDRLog(&buf, "test", "a b,c", []*hdrhistogram.Histogram{a, b}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "microseconds") {
		t.Errorf("no unit in the header:\n%s", buf.String())
	}
	r := hdrhistogram.NewHistogramLogReader(&buf)
	var hs []*hdrhistogram.Histogram
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		hs = append(hs, h)
	}
	if len(hs) != 2 || hs[0].TotalCount() != 3 || hs[1].TotalCount() != 5 || hs[1].Tag() != "a_b_c" ||
		hs[1].StartTimeMs() != 1000 || hs[1].EndTimeMs() != 2000 {
		t.Fatalf("read back %d intervals: %+v", len(hs), hs)
	}
}

// BenchmarkHistogramToHDR measures the one-off conversion of a strategy's
// histogram into an HdrHistogram when the run ends (the whole cost of
// --hdr to a run: nothing is recorded while it simulates).
func BenchmarkHistogramToHDR(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := collect.NewHistogram()
	for range 100000 {
		h.Add(time.Duration(rng.ExpFloat64() * float64(300*time.Millisecond)))
	}
	b.ReportAllocs()
	for b.Loop() {
		h.Hdr(time.Minute)
	}
}
