package calibrate

import (
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"

	"github.com/simbench/simbench/trace"
)

var benchRecords = flag.Int("calibrate.records", 1_000_000, "attempts in BenchmarkCalibrate's generated trace (4.5 million is about 1 GB)")

// generateTrace writes a simbench trace of n attempts: 200 sessions
// looping turns of 8 lookups over two services, with 429s and retries, as
// a simulated run writes it (in order of end time within a turn).
func generateTrace(tb testing.TB, path string, n int) int64 {
	w, err := trace.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.Header(trace.Header{Scenario: "bench", Strategy: "unbounded", Seed: 1, Mode: "virtual", Limits: map[string]trace.Limits{"openai": {RPM: 10000, TPM: 1e7}}}); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	const sessions = 200
	clock := make([]float64, sessions)
	var turn int64
	written := 0
	for written < n {
		s := rng.IntN(sessions)
		turn++
		now := clock[s]
		end := now
		for c := range 8 {
			svc, tool := "openai", "lookup"
			if c == 7 {
				svc, tool = "search", "search"
			}
			r := trace.Record{Session: int64(s + 1), Turn: turn, Call: strconv.Itoa(c), Service: svc, Tool: tool, Attempt: 1, Intended: now, Start: now + 0.01*rng.Float64(), Tokens: 1000}
			if rng.IntN(20) == 0 {
				r.End, r.Outcome, r.Status, r.RetryAfter, r.HasRetryAfter = r.Start+0.002, trace.OutcomeRateLimited, 429, 1, true
				if err := w.Write(r); err != nil {
					tb.Fatal(err)
				}
				written++
				r.Attempt, r.RetryDelay, r.HasRetryAfter, r.RetryAfter = 2, 1, false, 0
				r.Intended = r.End + 1
				r.Start = r.Intended
			}
			r.End, r.Outcome, r.Status = r.Start+0.4*math.Exp(0.42*rng.NormFloat64()), trace.OutcomeSuccess, 200
			if err := w.Write(r); err != nil {
				tb.Fatal(err)
			}
			written++
			end = max(end, r.End)
		}
		clock[s] = end + 1.2*math.Exp(0.55*rng.NormFloat64())
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return int64(written)
}

// BenchmarkCalibrate streams a generated trace (-calibrate.records
// attempts, 10⁶ by default) through ReadFile and Fit. It reports
// records/s, MB/s and the peak heap in use while reading (sampled every
// 65,536 records), which stays flat as the trace grows: the reader holds a
// line at a time and the calibrator a bounded set of figures.
func BenchmarkCalibrate(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	n := generateTrace(b, path, *benchRecords)
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	progress := func(int64) {
		metrics.Read(sample)
		peak = max(peak, sample[0].Value.Uint64())
	}
	runtime.GC()
	b.ResetTimer()
	for b.Loop() {
		c := New(Options{Progress: progress})
		if err := c.ReadFile(path, ReadOptions{}); err != nil {
			b.Fatal(err)
		}
		res, err := c.Fit()
		if err != nil {
			b.Fatal(err)
		}
		if res.Records != n {
			b.Fatalf("read %d records, wrote %d", res.Records, n)
		}
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(n)*float64(b.N)/secs, "records/s")
	b.ReportMetric(float64(info.Size())*float64(b.N)/secs/1e6, "MB/s")
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(info.Size())/1e6, "trace-MB")
}
