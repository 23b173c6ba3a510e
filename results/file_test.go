package results

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestWriteRead: what Write writes, Read reads back the same, from the
// file or its directory; an unanswered percentile survives as null.
func TestWriteRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	want := &Results{Scenario: "tier3", Seed: 42, SimbenchVersion: "v1", Mode: "virtual", DurationS: 60,
		Strategies: []StrategyResult{{Name: "a", Turns: 3, AnswerLatencyMs: AnswerSummary{P50: 10, P95: Unanswered, P99: Unanswered}, PeakInFlight: map[string]int{"llm": 4}}}}
	if err := Write(dir, want); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), "}\n") || !strings.Contains(string(data), `"p95": null`) {
		t.Errorf("results.json:\n%s", data)
	}
	fromFile, err := Read(filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	fromDir, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromFile, want) || !reflect.DeepEqual(fromFile, fromDir) {
		t.Errorf("read back %+v\nfrom the directory %+v\nwant %+v", fromFile, fromDir, want)
	}
}

// TestWriteReadSweep: sweep.json reads back as written; a bare array of
// points reads as one row marked PointsOnly; a sweep without points is an
// error.
func TestWriteReadSweep(t *testing.T) {
	dir := t.TempDir()
	want := &Sweep{Scenario: "s", Strategy: "b", Seeds: []uint64{1, 2}, MaxShare: 0.001,
		Rows:   []SweepRow{{Load: "as written", Points: []SweepPoint{{Cap: 4, P95Ms: 100, P95HiMs: Unanswered, Seeds: 2}}, Chosen: 4}},
		Chosen: map[string]int{"as written": 4}, Knee: map[string]int{}}
	if err := WriteSweep(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSweep(filepath.Join(dir, SweepFile))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v, %v\nwant %+v", got, err, want)
	}
	bare := filepath.Join(dir, "bare.json")
	if err := os.WriteFile(bare, []byte(` [{"cap":1,"p95_ms":null},{"cap":2,"p95_ms":5}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = ReadSweep(bare)
	if err != nil || !got.PointsOnly || len(got.Rows) != 1 || len(got.Rows[0].Points) != 2 || got.Rows[0].Points[0].P95Ms.Answered() {
		t.Errorf("bare array: %+v, %v", got, err)
	}
	for name, data := range map[string]string{"empty.json": `{"rows":[]}`, "none.json": `[]`, "broken.json": `{`, "wrong.json": `{"rows": 3}`} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSweep(path); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestReadToleratesUnknownFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	data := `{"scenario":"x","seed":7,"mode":"virtual","duration_s":60,"future_field":{"a":1},"strategies":[{"name":"s","turns":3,"calls":0,"attempts":0,` +
		`"turn_latency_ms":{"mean":0,"p50":0,"p95":0,"p99":0,"max":0},"new_metric":9}]}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scenario != "x" || r.Seed != 7 || len(r.Strategies) != 1 || r.Strategies[0].Turns != 3 {
		t.Errorf("read %+v", r)
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"scenario": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(dir, "missing.json"), dir} {
		if _, err := Read(path); err == nil {
			t.Errorf("%s: no error", path)
		}
	}
}
