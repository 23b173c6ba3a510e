package results

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the strict results reader that report
// and compare use (Read past the file's opening, which
// TestReadRefusesLargeAndSpecialFiles covers): it never panics; it returns results or an error, and an
// error for content is an *Error naming the file. What it accepts passes
// Check and reads back the same once written again.
func FuzzRead(f *testing.F) {
	valid, err := json.Marshal(validResults())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	for _, h := range hostileResults(f) {
		f.Add([]byte(h.body))
	}
	f.Add([]byte(`{"scenario":"x","seed":1,"strategies":[{"name":"s","answer_latency_ms":{"p95":null}}]}`))
	f.Add([]byte(`{"strategies":[{"seed_runs":[{"seed_runs":[]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "fuzz/" + ResultsFile
		r, err := decode(path, data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || len(e.Problems) == 0 || e.Problems[0].File != path {
				t.Fatalf("error %v is not an *Error naming the file", err)
			}
			return
		}
		if ps := Check(path, r); len(ps) > 0 {
			t.Fatalf("Read accepted results that Check refuses: %v", ps)
		}
		data, err = Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decode(path, data); err != nil {
			t.Fatalf("accepted results, written again, do not read: %v", err)
		}
	})
}

// FuzzReadSweep does the same for sweep files and bare arrays of points.
func FuzzReadSweep(f *testing.F) {
	f.Add([]byte(`{"scenario":"s","strategy":"b","rows":[{"load":"","points":[{"cap":2,"p95_ms":5,"p95_lo_ms":4,"p95_hi_ms":null,"seeds":3}],"chosen_cap":2}]}`))
	f.Add([]byte(`[{"cap":1,"p95_ms":null},{"cap":2,"p95_ms":5}]`))
	f.Add([]byte(`{"rows":[{"points":[{"cap":0}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "fuzz/" + SweepFile
		sw, err := decodeSweep(path, data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || len(e.Problems) == 0 || e.Problems[0].File != path {
				t.Fatalf("error %v is not an *Error naming the file", err)
			}
			return
		}
		if ps := CheckSweep(path, sw); len(ps) > 0 {
			t.Fatalf("ReadSweep accepted a sweep that CheckSweep refuses: %v", ps)
		}
	})
}
