package results

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// validResults is a small results file of the shape run writes.
func validResults() *Results {
	s := StrategyResult{Name: "bounded-8", MaxInFlight: 8, Turns: 100, FailedTurns: 2, Calls: 800, Attempts: 840, RateLimited: 40,
		TurnLatencyMs:   Summary{Mean: 900, P50: 800, P95: 1500, P99: 2000, Max: 2500},
		AnswerLatencyMs: AnswerSummary{Mean: 900, P50: 800, P95: 1600, P99: Unanswered, AnsweredShare: 0.98},
		GoodputPerS:     1.3, AchievedTurnsPerS: 0.16, PeakInFlight: map[string]int{"llm": 8},
		LatencyCDF: []CDFPoint{{Ms: 800, P: 0.5}, {Ms: 2500, P: 1}}}
	return &Results{Scenario: "tier3", Seed: 42, SimbenchVersion: "v1", DurationS: 600, Mode: "virtual", Strategies: []StrategyResult{s}}
}

// hostileResults returns results files that are not what simbench writes,
// each with the text its error must hold: the shapes a stranger's file
// takes, and the ones a broken writer would.
func hostileResults(t testing.TB) map[string]struct{ body, want string } {
	data, err := json.Marshal(validResults())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any, s map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		f(m, m["strategies"].([]any)[0].(map[string]any))
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	set := func(k string, v any) string { return edit(func(m, _ map[string]any) { m[k] = v }) }
	setS := func(k string, v any) string { return edit(func(_, s map[string]any) { s[k] = v }) }
	key := func(name string, admitted, limited int, share float64, by map[string]any) map[string]any {
		return map[string]any{"key": name, "admitted": admitted, "rate_limited": limited, "rate_limited_share": share, "rate_limited_by": by}
	}
	type c = struct{ body, want string }
	return map[string]c{
		"negative-duration": {set("duration_s", -5), "duration_s: is -5; want seconds above 0"},
		"zero-duration":     {set("duration_s", 0), "duration_s: is 0"},
		"huge-duration":     {set("duration_s", 1e300), "duration_s: is 1e+300"},
		"overflow-duration": {strings.Replace(set("duration_s", 1), `"duration_s":1`, `"duration_s":1e400`, 1), "duration_s: is 1e400, beyond the range of a number"},
		"quantum-mode":      {set("mode", "quantum"), `mode: is "quantum"; want "virtual" or "live"`},
		"negative-turns":    {setS("turns", -3), "strategies[0].turns: is -3; a count is ≥ 0"},
		"negative-not-sent": {setS("not_sent", -1), "strategies[0].not_sent: is -1; a count is ≥ 0"},
		"fraction-turns":    {setS("turns", 2.5), "strategies[0].turns: is 2.5; want a whole number"},
		"string-turns":      {setS("turns", "100"), `strategies[0].turns: is the string "100"; want a whole number`},
		"null-latencies":    {setS("turn_latency_ms", map[string]any{"mean": nil, "p50": nil, "p95": nil, "p99": nil, "max": nil}), "strategies[0].turn_latency_ms.p95: is null; want a number"},
		"null-summary":      {setS("turn_latency_ms", nil), "strategies[0].turn_latency_ms: is null; want an object"},
		"no-scenario":       {edit(func(m, _ map[string]any) { delete(m, "scenario") }), "scenario: is missing"},
		"empty-scenario":    {set("scenario", ""), "scenario: is empty"},
		"no-strategies":     {set("strategies", []any{}), "strategies: is empty"},
		"null-strategies":   {set("strategies", nil), "strategies: is empty"},
		"dotdot-name":       {set("scenario", "../../x"), `scenario: "../../x" starts with '.'`},
		"slash-strategy":    {setS("name", "a/b\nc"), `strategies[0].name: "a/b\nc" holds the control character U+000A`},
		"no-strategy-name":  {edit(func(_, s map[string]any) { delete(s, "name") }), "strategies[0].name: is missing"},
		"percentiles-order": {setS("turn_latency_ms", map[string]any{"mean": 1, "p50": 900, "p95": 100, "p99": 50, "max": 9}), "p50 900, p95 100, p99 50 are out of order"},
		"share-above-1":     {setS("answer_latency_ms", map[string]any{"mean": 1, "p50": 1, "p95": 2, "p99": 3, "answered_share": 2}), "strategies[0].answer_latency_ms.answered_share: is 2"},
		"more-429s":         {setS("rate_limited", 10_000), "strategies[0].rate_limited: is 10000, more than the 840 attempts"},
		"negative-goodput":  {setS("goodput_per_s", -1), "strategies[0].goodput_per_s: is -1"},
		"seeds-mismatch":    {set("seeds", []any{1, 2, 3}), "strategies[0].seed_runs: holds 0 runs for the 3 seeds"},
		"cdf-share":         {setS("latency_cdf", []any{map[string]any{"ms": 1, "p": 7}}), "strategies[0].latency_cdf[0]: is (1 ms, 7)"},
		"esc-description":   {set("description", "\x1b[2J"), "description: holds the control character U+001B"},
		"esc-partial-why":   {edit(func(m, _ map[string]any) { m["partial"], m["partial_reason"] = true, "\x1b[2J" }), "partial_reason: holds the control character U+001B"},
		"why-not-partial":   {set("partial_reason", "1 of 2 fleet members missing"), "partial_reason: is set on a run that is not partial"},
		"array":             {`[]`, "is an array; want an object"},
		"not-json":          {`{"scenario": "x",`, "not valid JSON"},
		"two-values":        {string(data) + string(data), "more than one JSON value"},
		"negative-seed":     {set("seed", -1), "seed: is -1; want a whole number ≥ 0"},
		"key-share-wrong":   {setS("keys", map[string]any{"llm": []any{key("a", 90, 10, 0.5, map[string]any{"key": 10})}}), `strategies[0].keys."llm"[0].rate_limited_share: is 0.5; its counts give 0.100000`},
		"key-levels-sum":    {setS("keys", map[string]any{"llm": []any{key("a", 90, 10, 0.1, map[string]any{"key": 3, "project": 4})}}), `strategies[0].keys."llm"[0].rate_limited_by: adds up to 7, not the key's 10 429s`},
		"key-level-unknown": {setS("keys", map[string]any{"llm": []any{key("a", 90, 10, 0.1, map[string]any{"galaxy": 10})}}), `strategies[0].keys."llm"[0].rate_limited_by."galaxy": is not a level`},
		"key-negative":      {setS("keys", map[string]any{"llm": []any{key("a", -1, 0, 0, nil)}}), `strategies[0].keys."llm"[0]: admitted -1 and rate_limited 0; counts are ≥ 0`},
		"key-twice":         {setS("keys", map[string]any{"llm": []any{key("a", 1, 0, 0, nil), key("a", 1, 0, 0, nil)}}), `strategies[0].keys."llm"[1].key: "a" appears twice`},
		"key-unnamed":       {setS("keys", map[string]any{"llm": []any{key("", 1, 0, 0, nil)}}), `strategies[0].keys."llm"[0].key: is empty`},
	}
}

// TestReadRefusesHostile: Read refuses every hostile results file with an
// *Error naming the file and the field, each problem listed.
func TestReadRefusesHostile(t *testing.T) {
	dir := t.TempDir()
	for name, h := range hostileResults(t) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".json")
			if err := os.WriteFile(path, []byte(h.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(path)
			var e *Error
			switch {
			case !errors.As(err, &e):
				t.Fatalf("Read: %v; want an *Error", err)
			case !strings.Contains(err.Error(), path+": ") || !strings.Contains(err.Error(), h.want):
				t.Errorf("error:\n%s\nwant it to name %s and hold %q", err, path, h.want)
			}
		})
	}
}

// TestReadListsEveryProblem: problems in different fields come out
// together, not one per attempt.
func TestReadListsEveryProblem(t *testing.T) {
	r := validResults()
	r.DurationS, r.Mode, r.Strategies[0].Turns, r.Strategies[0].Calls = -1, "quantum", -1, -2
	path := filepath.Join(t.TempDir(), ResultsFile)
	if err := Write(filepath.Dir(path), r); err != nil {
		t.Fatal(err)
	}
	_, err := Read(path)
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) != 4 {
		t.Fatalf("Read: %v; want 4 problems", err)
	}
}

// TestReadRefusesLargeAndSpecialFiles: a 2 GB file (sparse: it takes no
// disk) is refused before it is read, in bounded memory; a named pipe is
// refused at once rather than blocking.
func TestReadRefusesLargeAndSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Read(big)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("2 GB file: %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing the 2 GB file allocated %d bytes; want under 1 MiB", grew)
	}
	if _, err := ReadSweep(big); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("2 GB sweep: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func(string) error{
		func(p string) error { _, err := Read(p); return err },
		func(p string) error { _, err := ReadSweep(p); return err },
	} {
		if err := read(fifo); err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("FIFO: %v; want it refused as a named pipe", err)
		}
	}
}

// TestReadSweepRefusesHostile: ReadSweep checks as Read does.
func TestReadSweepRefusesHostile(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, body, want string }{
		{"cap-0", `{"rows":[{"load":"","points":[{"cap":0,"p95_ms":5}]}]}`, "rows[0].points[0].cap: is 0"},
		{"cap-twice", `{"rows":[{"load":"","points":[{"cap":2,"p95_ms":5},{"cap":2,"p95_ms":6}]}]}`, "rows[0].points[1].cap: 2 appears twice"},
		{"share", `{"rows":[{"load":"","points":[{"cap":2,"p95_ms":5,"rate_limited_share":1.5}]}]}`, "rows[0].points[0].rate_limited_share: is 1.5"},
		{"negative-p95", `[{"cap":1,"p95_ms":-3}]`, "[0].p95_ms: is -3"},
		{"no-cap", `[{"p95_ms":3}]`, "[0].cap: is missing"},
		{"chosen-elsewhere", `{"rows":[{"load":"","points":[{"cap":2,"p95_ms":5}],"chosen_cap":9}]}`, "rows[0].chosen_cap: is 9, not one of the row's caps"},
		{"bad-strategy", `{"strategy":"a\u0000","rows":[{"load":"","points":[{"cap":2,"p95_ms":5}]}]}`, "strategy: \"a\\x00\" holds the control character U+0000"},
		{"no-points", `{"rows":[]}`, "rows: no sweep points"},
		{"rows-number", `{"rows":3}`, "rows: is 3; want an array"},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.name+".json")
		if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadSweep(path)
		if err == nil || !strings.Contains(err.Error(), path+": ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v\nwant it to name the file and hold %q", tt.name, err, tt.want)
		}
	}
}

// TestSchemaSkipsOwnEncodings: a type with its own JSON encoding
// (Interval writes an infinite bound as null) is left to it, so a file
// simbench writes with such a value reads back.
func TestSchemaSkipsOwnEncodings(t *testing.T) {
	type withInterval struct {
		P95 Interval `json:"p95"`
	}
	data, err := json.Marshal(withInterval{P95: IntervalOf([]float64{1, math.Inf(1)})})
	if err != nil {
		t.Fatal(err)
	}
	ps := &problems{file: "x"}
	checkSchema("x", data, reflect.TypeFor[withInterval](), nil, ps)
	if !strings.Contains(string(data), "null") || len(ps.list) > 0 {
		t.Errorf("%s: %v", data, ps.list)
	}
}
