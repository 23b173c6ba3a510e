package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// simbench runs the command line args as main does and returns the exit
// code and what was printed.
func simbench(args ...string) (code int, stdout, stderr string) {
	var out, errs bytes.Buffer
	code = runMain(args, &out, &errs)
	return code, out.String(), errs.String()
}

// jsonLines writes records, one JSON object a line.
func jsonLines(t *testing.T, path string, records []map[string]any) string {
	t.Helper()
	var b bytes.Buffer
	for _, r := range records {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// attempt is one successful trace record of turn at time at.
func attempt(turn int, service, tool string, at float64) map[string]any {
	return map[string]any{"turn": turn, "service": service, "tool": tool, "start": at, "end": at + 0.1, "outcome": "success", "status": 200}
}

// TestCalibrateRefusesHostileTraces: each trace a stranger could send —
// in each format calibrate reads — is refused with exit 2 and a message
// naming the file and line, and no scenario is written; a FIFO is refused
// at once.
func TestCalibrateRefusesHostileTraces(t *testing.T) {
	dir := t.TempDir()
	many := make([]map[string]any, 0, 3*MaxHostileServices)
	for i := range MaxHostileServices {
		many = append(many, attempt(i, fmt.Sprintf("svc%03d", i), "t", float64(i)))
	}
	fan := make([]map[string]any, 0, 100_000)
	for c := range 100_000 {
		r := attempt(1, "s", "t", 0)
		r["call"] = fmt.Sprint(c)
		fan = append(fan, r)
	}
	tokens := attempt(2, "s", "t", 1)
	tokens["tokens"] = 4.6e18
	limit := attempt(2, "s", "t", 1)
	limit["limit_requests"] = 1e300
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	otelSpan := func(tokens string) string {
		return `{"resourceSpans":[{"scopeSpans":[{"spans":[` + "\n" +
			`{"traceId":"a","spanId":"1","startTimeUnixNano":"1000000000","endTimeUnixNano":"2000000000","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.usage.input_tokens","value":{"intValue":"10"}}]},` + "\n" +
			`{"traceId":"a","spanId":"2","startTimeUnixNano":"1000000000","endTimeUnixNano":"2000000000","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.usage.input_tokens","value":{"intValue":"` + tokens + `"}}]}` + "\n" +
			`]}]}]}` + "\n"
	}
	csvCols := []string{"--csv-columns", "start=ts,latency_ms=dur,service=svc,status=code"}
	tests := []struct {
		name  string
		path  string
		flags []string
		want  string
	}{
		{"fifo", fifo, nil, "fifo.jsonl is a named pipe (FIFO), not a regular file"},
		{"several hundred services", jsonLines(t, filepath.Join(dir, "many.jsonl"), many), nil, fmt.Sprintf("many.jsonl:%d: service \"svc200\" is one more than the 200 services", 201)},
		{"fan-out of 100,000", jsonLines(t, filepath.Join(dir, "fan.jsonl"), fan), nil, "fan.jsonl:10000: turn 1 makes more than 9999 tool calls"},
		{"4.6e18 tokens", jsonLines(t, filepath.Join(dir, "tokens.jsonl"), []map[string]any{attempt(1, "s", "t", 0), tokens}), nil, "tokens.jsonl:2: tokens 4600000000000000000"},
		{"1e-308/s arrivals", jsonLines(t, filepath.Join(dir, "rate.jsonl"), []map[string]any{attempt(1, "s", "t", 0), attempt(2, "s", "t", 1e308)}), nil, "rate.jsonl:2: end 1e+308 s is past"},
		{"more than a year", jsonLines(t, filepath.Join(dir, "years.jsonl"), []map[string]any{attempt(1, "s", "t", 0), attempt(2, "s", "t", 1e9)}), nil, "years.jsonl:2: the traces now span"},
		{"limit 1e300", jsonLines(t, filepath.Join(dir, "limit.jsonl"), []map[string]any{attempt(1, "s", "t", 0), limit}), nil, "limit.jsonl:2: limit_requests 1e+300"},
		{"header limits NaN-like", file("header.jsonl", `{"simbench_trace":1,"strategy":"a","limits":{"s":{"rpm":-5}}}`+"\n"+`{"turn":1,"service":"s","start":0,"end":1,"outcome":"success"}`+"\n"), nil, "header.jsonl:1: header: the limits of \"s\" (rps 0, rpm -5, tpm 0, max_concurrent 0) must not be negative"},
		{"CSV NaN", file("nan.csv", "ts,dur,svc,code\n0,100,s,200\n1,NaN,s,200\n"), csvCols, "nan.csv:3: time NaN"},
		{"CSV huge", file("huge.csv", "ts,dur,svc,code\n0,100,s,200\n1,1e400,s,200\n"), csvCols, `huge.csv:3: latency_ms "1e400" is not a number`},
		{"OTel 4.6e18 tokens", file("otel.json", otelSpan("4600000000000000000")), nil, "otel.json:3: tokens 4600000000000000000"},
		{"OTel every bad span at once", file("otel2.json", strings.Replace(otelSpan("-7"), `"intValue":"10"`, `"intValue":"200000000"`, 1)), nil,
			"otel2.json:2: tokens 200000000\notel2.json:3: tokens -7"},
		{"every bad line at once", file("bad.jsonl", `{"turn":1,"service":"s","start":0,"end":1,"outcome":"success"}`+"\nnot json\n"+
			`{"turn":2,"service":"s","start":2,"end":1,"outcome":"success"}`+"\n"+`{"turn":3,"service":"s","start":0,"end":1,"outcome":"success","tokens":1e15}`+"\n"),
			nil, "bad.jsonl:2: not a JSON object\nbad.jsonl:3: end 1 is before start 2\nbad.jsonl:4: tokens 1000000000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "out", tt.name+".toml")
			code, _, stderr := simbench(append([]string{"calibrate", tt.path, "--out", out}, tt.flags...)...)
			for _, want := range strings.Split(tt.want, "\n") { // each problem, listed at once
				if code != exitInvalid || !strings.Contains(stderr, want) {
					t.Errorf("exit %d\n%.2000s\nwant exit 2 and %q", code, stderr, want)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a scenario was written: %v", err)
			}
		})
	}
}

// MaxHostileServices is how many services the hostile trace of "several
// hundred services" names: past the 200 a calibrated scenario holds.
const MaxHostileServices = 300

// TestCalibrateRoundTripsHostileNames: a service and a tool whose names
// hold a newline, quotes, '=' and brackets come out of calibrate as a
// scenario that loads, whose keys are exactly the expected ones (one
// service, one tool, the usual top-level keys), with the names mapped to
// safe ones and the originals kept in comments.
func TestCalibrateRoundTripsHostileNames(t *testing.T) {
	dir := t.TempDir()
	service, tool := "a\"=1\n[x]\nb = \"c", "t\"\n[tools.evil]\n="
	var recs []map[string]any
	for i := range 20 {
		r := attempt(i, service, tool, float64(i)*0.5)
		r["end"] = float64(i)*0.5 + 0.1 + 0.01*float64(i%7)
		recs = append(recs, r)
	}
	trace := jsonLines(t, filepath.Join(dir, "evil.jsonl"), recs)
	out := filepath.Join(dir, "cal.toml")
	if code, _, stderr := simbench("calibrate", trace, "--out", out); code != 0 {
		t.Fatalf("calibrate exit %d: %s", code, stderr)
	}
	sc, err := scenarios.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m any) []string {
		var ks []string
		for k := range m.(map[string]any) {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	if got, want := keys(doc), []string{"description", "duration", "name", "seed", "services", "strategy", "tools", "workload"}; !slices.Equal(got, want) {
		t.Errorf("top-level keys %q, want %q", got, want)
	}
	if len(sc.Services) != 1 || len(sc.Tools) != 1 || len(keys(doc["services"])) != 1 || len(keys(doc["tools"])) != 1 {
		t.Fatalf("services %q, tools %q; want one of each", keys(doc["services"]), keys(doc["tools"]))
	}
	if s := sc.Services[0].Name; scenarios.ScenarioNameProblem(s) != "" || sc.Tools[0].Service != s {
		t.Errorf("service %q, the tool's service %q: want one safe name", s, sc.Tools[0].Service)
	}
	for _, name := range []string{service, tool} {
		if q, _ := json.Marshal(name); !strings.Contains(string(data), "# named "+strings.ReplaceAll(string(q), `\u003c`, "<")) {
			t.Errorf("the scenario does not record the name %q from the traces:\n%s", name, data)
		}
	}
}

// TestCalibrateNeedsStrategy: a trace of run --trace holds a section per
// strategy; calibrate refuses to merge them without --strategy, naming
// them, and with it fits the one strategy's sessions only.
func TestCalibrateNeedsStrategy(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "tier3.jsonl")
	if code, _, stderr := simbench("run", "tier3", "--duration", "30s", "--no-recommend", "--no-reports", "--trace", trace, "--out", filepath.Join(dir, "run")); code != 0 {
		t.Fatalf("run exit %d: %s", code, stderr)
	}
	code, _, stderr := simbench("calibrate", trace, "--out", filepath.Join(dir, "all.toml"))
	if want := `the traces hold sections of 3 strategies, "sequential", "unbounded", "bounded-64"`; code != exitInvalid || !strings.Contains(stderr, want) {
		t.Errorf("without --strategy: exit %d %s; want exit 2 and %q", code, stderr, want)
	}
	out := filepath.Join(dir, "bounded.toml")
	if code, _, stderr := simbench("calibrate", trace, "--strategy", "bounded-64", "--out", out); code != 0 {
		t.Fatalf("--strategy bounded-64: exit %d %s", code, stderr)
	}
	sc, err := scenarios.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Workload.Sessions != 80 {
		t.Errorf("sessions = %d; want tier3's 80 (one strategy's sessions, not three strategies' merged)", sc.Workload.Sessions)
	}
	if code, _, stderr := simbench("calibrate", trace, "--strategy", "bounded-8", "--out", filepath.Join(dir, "none.toml")); code != exitInvalid ||
		!strings.Contains(stderr, `of strategy "bounded-8" (its sections name "sequential", "unbounded", "bounded-64")`) {
		t.Errorf("--strategy of none: exit %d %s", code, stderr)
	}
}

// TestReportAndCompareRefuseHostileResults: report and compare refuse each
// malformed results file with exit 2 and a message naming the field.
func TestReportAndCompareRefuseHostileResults(t *testing.T) {
	good := fixtureRun(t, "tier3")
	data, err := os.ReadFile(filepath.Join(good, results.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m, s map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		f(m, m["strategies"].([]any)[0].(map[string]any))
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"negative duration", edit(func(m, _ map[string]any) { m["duration_s"] = -600 }), "duration_s: is -600"},
		{"zero duration", edit(func(m, _ map[string]any) { m["duration_s"] = 0 }), "duration_s: is 0"},
		{"1e300 s", edit(func(m, _ map[string]any) { m["duration_s"] = 1e300 }), "duration_s: is 1e+300"},
		{"quantum", edit(func(m, _ map[string]any) { m["mode"] = "quantum" }), `mode: is "quantum"`},
		{"negative turns", edit(func(_, s map[string]any) { s["turns"] = -4 }), "strategies[0].turns: is -4"},
		{"null latencies", edit(func(_, s map[string]any) { s["turn_latency_ms"].(map[string]any)["p95"] = nil }), "strategies[0].turn_latency_ms.p95: is null"},
		{"no scenario", edit(func(m, _ map[string]any) { delete(m, "scenario") }), "scenario: is missing"},
		{"no strategies", edit(func(m, _ map[string]any) { m["strategies"] = []any{} }), "strategies: is empty"},
		{"../ name", edit(func(m, _ map[string]any) { m["scenario"] = "../../etc" }), `scenario: "../../etc" starts with '.'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, results.ResultsFile)
			if err := os.WriteFile(path, tt.body, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"report", dir}, {"compare", good, path}, {"compare", path, good}} {
				code, _, stderr := simbench(args...)
				if code != exitInvalid || !strings.Contains(stderr, path+": "+tt.want) {
					t.Errorf("%s: exit %d\n%.1000s\nwant exit 2 and %q", args[0], code, stderr, path+": "+tt.want)
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("report wrote beside a refused file: %d entries", len(entries))
			}
		})
	}
}

// TestCommandsWriteOnlyUnderOut runs every command that writes, from a
// working directory two levels below a fresh folder, with output folders
// under out/ (or the default, which is out/ too): afterwards nothing new
// exists anywhere in the folder but under out/. A scenario whose name
// climbs out of out/ is refused before anything is written. (serve writes
// nothing and runs until Ctrl-C, so it is not run here.)
func TestCommandsWriteOnlyUnderOut(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(filepath.Join(work, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	pwned := "name = \"../../pwned\"\n"
	evil := filepath.Join("in", "evil.toml")
	if err := os.WriteFile(evil, []byte(pwned+"duration = \"10s\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\" } ]\n[services.s]\nrps = 10\n[tools.t]\nservice = \"s\"\n[[strategy]]\nname = \"a\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bench := filepath.Join("in", "bench.txt")
	if err := os.WriteFile(bench, []byte(gateBaseline), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, root)
	steps := []struct {
		args []string
		code int
	}{
		{[]string{"run", "tier3", "--duration", "20s", "--no-recommend", "--out", "out/run", "--trace", "out/trace.jsonl", "--hdr", "out/hdr"}, 0},
		{[]string{"run", "tier3", "--duration", "10s", "--no-recommend", "--no-reports"}, 0}, // the default folder, out/tier3
		{[]string{"sweep", "tier3", "--duration", "10s", "--cap", "1,2", "--seeds", "1"}, 0},
		{[]string{"recommend", "tier3", "--no-verify"}, 0},
		{[]string{"report", "out/run"}, 0},
		{[]string{"report", "out/tier3-sweep"}, 0},
		{[]string{"compare", "out/run", "out/tier3"}, 0},
		{[]string{"calibrate", "out/trace.jsonl", "--strategy", "bounded-64", "--out", "out/cal/tier3-cal.toml"}, 0},
		{[]string{"validate", "out/cal/tier3-cal.toml", "tier3"}, 0},
		{[]string{"scenarios"}, 0},
		{[]string{"gate", "--baseline", bench, bench}, 0},
		{[]string{"run", evil, "--duration", "5s"}, exitInvalid},
		{[]string{"sweep", evil, "--cap", "1"}, exitInvalid},
	}
	if err := os.MkdirAll("out/cal", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if code, _, stderr := simbench(s.args...); code != s.code {
			t.Errorf("%q: exit %d, want %d\n%.1500s", s.args, code, s.code, stderr)
		}
	}
	out := filepath.Join(work, "out") + string(filepath.Separator)
	var wrote int
	for _, p := range tree(t, root) {
		if slices.Contains(before, p) {
			continue
		}
		if !strings.HasPrefix(p, out) && p != strings.TrimSuffix(out, string(filepath.Separator)) {
			t.Errorf("%s was written outside out/", p)
		}
		wrote++
	}
	if wrote < 20 {
		t.Errorf("only %d files and folders written under out/; the commands did not run", wrote)
	}
}

// tree lists every file and folder below root.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// TestReportRefusesHostileSweep: a sweep file that simbench could not have
// written is refused with exit 2, naming the file and the field, before
// anything is rendered.
func TestReportRefusesHostileSweep(t *testing.T) {
	dir := fixtureRun(t, "tier3")
	sweep := filepath.Join(t.TempDir(), "sweep.json")
	if err := os.WriteFile(sweep, []byte(`{"rows":[{"load":"","points":[{"cap":8,"p95_ms":5,"rate_limited_share":7},{"cap":-1,"p95_ms":null}],"chosen_cap":99}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := simbench("report", dir, "--sweep", sweep)
	for _, want := range []string{"rows[0].points[0].rate_limited_share: is 7", "rows[0].points[1].cap: is -1", "rows[0].chosen_cap: is 99, not one of the row's caps"} {
		if code != exitInvalid || !strings.Contains(stderr, sweep+": "+want) {
			t.Errorf("exit %d\n%s\nwant exit 2 and %q", code, stderr, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("report wrote %d files beside the results after refusing the sweep", len(entries)-1)
	}
}
