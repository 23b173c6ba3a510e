package check

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/scenarios"
)

// memoryRecords is how many records the memory measurement keeps.
const memoryRecords = 100_000

// heapNow is the live heap after a collection, in bytes.
func heapNow() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// recordMemory measures check's memory per request of a log of n: kept is
// the live heap per record the Recorder holds; graded the live heap per
// record once Records has copied them and Grade has graded them (what
// check holds as it prints), and gradeAlloc the bytes per record Grade
// allocates on its way, a bound on what it holds for a while beyond that.
// Every record has strings of its own, as a server's records do: a client
// name (100 clients), an API key, a path and an Idempotency-Key; one
// attempt in ten is answered 429 and retried.
func recordMemory(t testing.TB, n int) (kept, graded, gradeAlloc float64) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	rules := RulesFor(sc, nil)
	base := heapNow()
	rec := new(Recorder)
	for i := range n {
		r := fakeapi.Record{
			Service: "openai", Client: fmt.Sprintf("agent-%d", i%100), Key: strings.Clone("sk-simbench"),
			Method: "POST", Path: strings.Clone("/v1/chat/completions"), Model: true,
			Arrived: time.Duration(i) * time.Millisecond, Answered: time.Duration(i)*time.Millisecond + 800*time.Millisecond,
			Status: 200, Kind: fakeapi.KindOK, Admitted: true, Attempt: 1, Identity: uint64(i / 2),
			IdempotencyKey: fmt.Sprintf("stainless-python-retry-%08x-%08x", i/2, i),
		}
		if i%10 == 0 {
			r.Status, r.Kind, r.Admitted, r.RetryAfter, r.HasRetryAfter = 429, fakeapi.KindRateLimited, false, time.Second, true
		}
		rec.Add(r)
	}
	kept = float64(heapNow()-base) / float64(n)
	recs, dropped := rec.Records()
	if dropped != 0 || len(recs) != n {
		t.Fatalf("%d records kept, %d dropped; want %d kept", len(recs), dropped, n)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep := Grade(sc.Name, recs, rules)
	runtime.ReadMemStats(&after)
	gradeAlloc = float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	graded = float64(heapNow()-base) / float64(n)
	runtime.KeepAlive(rec)
	runtime.KeepAlive(recs)
	runtime.KeepAlive(rep)
	return kept, graded, gradeAlloc
}

// TestCheckRecordMemoryFitsTheCap measures check's memory per recorded
// request and holds MaxRecords to what RecordBudget allows: the most
// check holds, records, their copy, the report and what Grade allocates,
// times MaxRecords, stays within RecordBudget.
func TestCheckRecordMemoryFitsTheCap(t *testing.T) {
	kept, graded, gradeAlloc := recordMemory(t, memoryRecords)
	t.Logf("per record: %.0f B kept, %.0f B held while printing, %.0f B allocated by Grade", kept, graded, gradeAlloc)
	if peak := (graded + gradeAlloc) * MaxRecords; peak > RecordBudget {
		t.Errorf("MaxRecords %d × (%.0f + %.0f) B per record = %.2f GiB, above the %.2f GiB budget", MaxRecords, graded, gradeAlloc, peak/(1<<30), float64(RecordBudget)/(1<<30))
	}
}

// BenchmarkCheckRecordMemory reports check's memory per recorded request
// (see recordMemory): kept-B/record, graded-B/record, grade-alloc-B/record.
func BenchmarkCheckRecordMemory(b *testing.B) {
	for b.Loop() {
		kept, graded, gradeAlloc := recordMemory(b, memoryRecords)
		b.ReportMetric(kept, "kept-B/record")
		b.ReportMetric(graded, "graded-B/record")
		b.ReportMetric(gradeAlloc, "grade-alloc-B/record")
	}
}
