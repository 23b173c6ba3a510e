package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/sched"
)

func sample() []Record {
	return []Record{
		{Session: 3, Turn: 17, Call: "c1", Service: "openai", Tool: "lookup", Attempt: 1, Intended: 1.5, Start: 1.75, End: 2.125, Outcome: OutcomeRateLimited, Status: 429, RetryAfter: 0, HasRetryAfter: true, LimitRequests: 10000, LimitTokens: 1e7},
		{Session: 3, Turn: 17, Call: "c1", Service: "openai", Tool: "lookup", Attempt: 2, Intended: 3.125, Start: 3.125, End: 3.5, Outcome: OutcomeSuccess, Status: 200, Tokens: 1000, RetryDelay: 1},
		{Turn: 18, Call: "m", Kind: KindModel, Service: "llm", Attempt: 1, Intended: 0.1, Start: 0.1, End: 0.1, Outcome: OutcomeTransient},
		{Turn: -1, Call: "quote\" back\\slash\nnew\x01line ünï\xff", Service: "s", Attempt: 1, Start: 1e-7, End: 86400.000001, Outcome: OutcomeCancelled},
	}
}

// TestRoundTrip writes records under two headers and reads them back equal,
// in their sections.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := sample()
	h1 := Header{Scenario: "tier3", Strategy: "a", Seed: 42, Mode: "virtual", Limits: map[string]Limits{"openai": {RPM: 10000, TPM: 1e7}}}
	h2 := Header{Scenario: "tier3", Strategy: "b", Seed: 42}
	if err := w.Header(h1); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[:2] {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Header(h2); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[2:] {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the trace exists before Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewReader(f, path)
	var got []Record
	var sections []int
	for r.Next() {
		got = append(got, *r.Record())
		sections = append(sections, r.Section())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := recs
	want[3].Start = 0                                           // 1e-7 s, written to the microsecond
	want[3].Call = "quote\" back\\slash\nnew\x01line ünï\ufffd" // invalid UTF-8 is replaced
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back:\n%+v\nwant:\n%+v", got, want)
	}
	if !reflect.DeepEqual(sections, []int{1, 1, 2, 2}) {
		t.Errorf("sections %v, want [1 1 2 2]", sections)
	}
	h1.Format, h2.Format = FormatVersion, FormatVersion
	if !reflect.DeepEqual(*r.Header(), h2) {
		t.Errorf("last header %+v, want %+v", *r.Header(), h2)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after Close, want the trace alone", len(entries))
	}
}

// TestAbortLeavesNothing checks that an aborted trace leaves neither the
// path nor a temporary file, and keeps an earlier file at the path.
func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(sample()[0]); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if err := w.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}
	if err := w.Write(sample()[0]); err == nil {
		t.Error("Write after Abort succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want the old file alone", len(entries))
	}
	if data, _ := os.ReadFile(path); string(data) != "old\n" {
		t.Errorf("old file now holds %q", data)
	}
}

// TestOutcomesAreSchedClasses checks that the outcome names are the
// scheduler's, in its order, so a driver can write Class.String().
func TestOutcomesAreSchedClasses(t *testing.T) {
	for i, name := range Outcomes {
		if got := sched.Class(i).String(); got != name {
			t.Errorf("Outcomes[%d] = %q, sched.Class(%d) = %q", i, name, i, got)
		}
	}
	if got := sched.Class(len(Outcomes)).String(); !strings.HasPrefix(got, "class(") {
		t.Errorf("sched has a class %q that Outcomes lacks", got)
	}
}

// TestAppendJSONIsJSON checks, for arbitrary records, that each line is
// valid JSON that encoding/json reads to the same values, and that the
// Reader reads it back equal.
func TestAppendJSONIsJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rec := Record{
			Session:  rapid.Int64Range(0, 1<<40).Draw(t, "session"),
			Turn:     rapid.Int64().Draw(t, "turn"),
			Call:     rapid.String().Draw(t, "call"),
			Service:  rapid.StringN(1, 20, -1).Draw(t, "service"),
			Tool:     rapid.String().Draw(t, "tool"),
			Attempt:  rapid.IntRange(1, 100).Draw(t, "attempt"),
			Intended: rapid.Float64Range(0, 1e6).Draw(t, "intended"),
			Outcome:  rapid.SampledFrom(Outcomes).Draw(t, "outcome"),
			Status:   rapid.OneOf(rapid.Just(0), rapid.IntRange(100, 599)).Draw(t, "status"),
			Tokens:   rapid.Int64Range(0, 1<<50).Draw(t, "tokens"),
		}
		rec.Start = rec.Intended + rapid.Float64Range(0, 100).Draw(t, "queued")
		rec.End = rec.Start + rapid.Float64Range(0, 100).Draw(t, "latency")
		if rapid.Bool().Draw(t, "has retry after") {
			rec.RetryAfter, rec.HasRetryAfter = rapid.Float64Range(0, 60).Draw(t, "retry after"), true
		}
		line := rec.AppendJSON(nil)
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		for _, k := range []struct {
			key  string
			want string
		}{{"call", rec.Call}, {"service", rec.Service}, {"tool", rec.Tool}} {
			if got, _ := m[k.key].(string); got != strings.ToValidUTF8(k.want, "\ufffd") {
				t.Fatalf("%s = %q, want %q", k.key, got, k.want)
			}
		}
		r := NewReader(bytes.NewReader(append(line, '\n')), "x")
		if !r.Next() {
			t.Fatalf("%s: %v", line, r.Err())
		}
		got := *r.Record()
		want := rec
		for _, x := range []*float64{&want.Intended, &want.Start, &want.End, &want.RetryAfter} {
			*x = math.Round(*x*1e6) / 1e6 // written to the microsecond
		}
		want.Call = strings.ToValidUTF8(rec.Call, "\ufffd")
		want.Service = strings.ToValidUTF8(rec.Service, "\ufffd")
		want.Tool = strings.ToValidUTF8(rec.Tool, "\ufffd")
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read back %+v\nwant %+v", got, want)
		}
	})
}

// TestReaderErrors checks that bad lines are reported with their line
// number and what is wrong.
func TestReaderErrors(t *testing.T) {
	good := `{"turn":1,"service":"s","start":1,"end":2,"outcome":"success"}`
	tests := []struct {
		name string
		give string
		want string
	}{
		{"not an object", good + "\n[1,2]\n", "t.jsonl:2: not a JSON object"},
		{"no service", "\n" + `{"turn":1,"start":1,"end":2,"outcome":"success"}`, `t.jsonl:2: no "service"`},
		{"no end", `{"turn":1,"service":"s","start":1,"outcome":"success"}`, `t.jsonl:1: no "end"`},
		{"unknown outcome", `{"service":"s","start":1,"end":2,"outcome":"ok"}`, `t.jsonl:1: outcome "ok" is not one of success, rate_limited`},
		{"end before start", `{"service":"s","start":3,"end":2,"outcome":"success"}`, "t.jsonl:1: end 2 is before start 3"},
		{"start before intended", `{"service":"s","intended":4,"start":3,"end":5,"outcome":"success"}`, "t.jsonl:1: start 3 is before intended 4"},
		{"attempt 0", `{"service":"s","attempt":0,"start":1,"end":2,"outcome":"success"}`, "t.jsonl:1: attempt 0: attempts count from 1"},
		{"string for a number", `{"service":"s","start":"1","end":2,"outcome":"success"}`, `t.jsonl:1: "start": want a number at column 24`},
		{"fraction for a whole number", `{"service":"s","status":200.5,"start":1,"end":2,"outcome":"success"}`, `t.jsonl:1: "status": "200.5" is not a whole number`},
		{"truncated", `{"service":"s","start":1,`, "t.jsonl:1: want a string at column 26"},
		{"trailing text", good + " x", "t.jsonl:1: text after the object at column 64"},
		{"header version", `{"simbench_trace":2}`, "t.jsonl:1: header: format version 2; this reader reads version 1"},
		{"negative time", `{"service":"s","start":-1,"end":2,"outcome":"success"}`, "t.jsonl:1: time -1: times are seconds ≥ 0"},
		{"status 42", `{"service":"s","status":42,"start":1,"end":2,"outcome":"success"}`, "t.jsonl:1: status 42 is not an HTTP status"},
		{"status 1e4", `{"service":"s","status":10000,"start":1,"end":2,"outcome":"success"}`, "t.jsonl:1: status 10000 is not an HTTP status"},
		{"negative tokens", `{"service":"s","tokens":-5,"start":1,"end":2,"outcome":"success"}`, "t.jsonl:1: tokens -5: a count of tokens is ≥ 0"},
		{"negative limit", `{"service":"s","limit_requests":-1,"start":1,"end":2,"outcome":"success"}`, "t.jsonl:1: limit_requests -1, limit_tokens 0: limits are ≥ 0"},
		{"infinite limit", `{"service":"s","limit_tokens":1e400,"start":1,"end":2,"outcome":"success"}`, `t.jsonl:1: "limit_tokens": "1e400" is not a number`},
		{"negative header limit", `{"simbench_trace":1,"limits":{"s":{"rpm":-1}}}`, `t.jsonl:1: header: the limits of "s" (rps 0, rpm -1, tpm 0, max_concurrent 0) must not be negative`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.give), "t.jsonl")
			for r.Next() {
			}
			var le *Error
			if err := r.Err(); !errors.As(err, &le) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Err() = %v, want it to start with %q", err, tt.want)
			}
		})
	}
}

// TestReaderLenient checks what a reader accepts beyond what the writer
// writes: unknown keys of any shape, nulls, defaults, white space, long
// lines, no final newline.
func TestReaderLenient(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	give := ` { "extra": {"a":[1,{"b":"}"}]}, "n": null, "t": true, "service" : "s", "status": null, "start": 2, "end": 2.5, "outcome": "success", "tokens": 1e3 }` + "\n\n" +
		`{"service":"s","start":1,"end":2,"outcome":"success","call":"` + long + `"}`
	r := NewReader(strings.NewReader(give), "t")
	var got []Record
	for r.Next() {
		got = append(got, *r.Record())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{Service: "s", Attempt: 1, Intended: 2, Start: 2, End: 2.5, Outcome: OutcomeSuccess, Tokens: 1000},
		{Service: "s", Attempt: 1, Intended: 1, Start: 1, End: 2, Outcome: OutcomeSuccess, Call: long},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got[:1], want[:1])
	}
	if r.Line() != 3 || r.Header() != nil || r.Section() != 0 {
		t.Errorf("line %d, header %v, section %d; want 3, nil, 0", r.Line(), r.Header(), r.Section())
	}
}

// TestConcurrentWrites checks that lines written from several goroutines
// never interleave.
func TestConcurrentWrites(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	done := make(chan struct{})
	const n, writers = 2000, 4
	for g := range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range n {
				if err := w.Write(Record{Turn: int64(g*n + i), Service: "s", Start: 1, End: 2, Outcome: OutcomeSuccess}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range writers {
		<-done
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&buf, "buf")
	seen := map[int64]bool{}
	for r.Next() {
		seen[r.Record().Turn] = true
	}
	if r.Err() != nil || len(seen) != n*writers {
		t.Errorf("read %d distinct turns, err %v; want %d", len(seen), r.Err(), n*writers)
	}
}

// TestFastFloat checks that the fast path parses what it accepts to the
// value strconv.ParseFloat gives, and leaves the rest to it.
func TestFastFloat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.Float64Range(-1e9, 1e9).Draw(t, "x")
		prec := rapid.IntRange(-1, 9).Draw(t, "decimals")
		s := strconv.FormatFloat(x, 'f', prec, 64)
		want, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := fastFloat([]byte(s)); ok && got != want {
			t.Fatalf("fastFloat(%q) = %v, ParseFloat = %v", s, got, want)
		}
	})
	for _, s := range []string{"1e3", "1.", "", "-", "1234567890123456", ".5", "0x10"} {
		if x, ok := fastFloat([]byte(s)); ok && s != ".5" {
			t.Errorf("fastFloat(%q) = %v, took it; want it left to ParseFloat", s, x)
		}
	}
	if x, ok := fastFloat([]byte("0.000001")); !ok || x != 1e-6 {
		t.Errorf("fastFloat(0.000001) = %v, %v", x, ok)
	}
}

// endless is a trace that never ends: it makes each line when asked.
type endless struct {
	n    int
	line []byte
	rest []byte
}

func (e *endless) Read(p []byte) (int, error) {
	if len(e.rest) == 0 {
		e.n++
		r := Record{Session: 1, Turn: int64(e.n), Service: "s", Attempt: 1, Start: float64(e.n), End: float64(e.n) + 0.5, Outcome: OutcomeSuccess}
		e.line = append(r.AppendJSON(e.line[:0]), '\n')
		e.rest = e.line
	}
	n := copy(p, e.rest)
	e.rest = e.rest[n:]
	return n, nil
}

// TestReaderStreams reads records from a trace without end: a reader
// that loaded the whole input before giving the first record would never
// return.
func TestReaderStreams(t *testing.T) {
	src := &endless{}
	r := NewReader(src, "endless")
	for i := 1; i <= 100_000; i++ {
		if !r.Next() {
			t.Fatalf("record %d: %v", i, r.Err())
		}
		if got := r.Record().Turn; got != int64(i) {
			t.Fatalf("record %d has turn %d", i, got)
		}
	}
	if ahead := src.n - 100_000; ahead > 1000 {
		t.Errorf("the reader read %d lines ahead of the records it gave; want a buffer's worth", ahead)
	}
}

// TestSkipGoesOnPastBadLines: Skip lets a reader list every bad line of a
// trace and read the good ones between them; an overlong line stops it.
func TestSkipGoesOnPastBadLines(t *testing.T) {
	good := `{"turn":1,"service":"s","start":1,"end":2,"outcome":"success"}`
	in := good + "\nnot json\n" + good + "\n" + `{"service":"s","start":3,"end":2,"outcome":"success"}` + "\n" + good + "\n"
	r := NewReader(strings.NewReader(in), "t.jsonl")
	var records int
	var lines []int
	for {
		for r.Next() {
			records++
		}
		var e *Error
		if !errors.As(r.Err(), &e) {
			break
		}
		lines = append(lines, e.Line)
		if !r.Skip() {
			t.Fatalf("Skip refused %v", e)
		}
	}
	if records != 3 || !slices.Equal(lines, []int{2, 4}) || r.Err() != nil {
		t.Errorf("read %d records, bad lines %v, error %v; want 3, [2 4], nil", records, lines, r.Err())
	}
	long := NewReader(strings.NewReader(`{"call":"`+strings.Repeat("x", MaxLine+10)+`"}`+"\n"+good+"\n"), "t.jsonl")
	if long.Next() || long.Err() == nil || long.Skip() {
		t.Errorf("an overlong line: Next, Err %v, and Skip allowed", long.Err())
	}
}
