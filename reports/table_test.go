package reports

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simbench/simbench/results"
)

func TestWriteTableGolden(t *testing.T) {
	for _, tt := range []struct {
		name  string
		color bool
	}{{"table.txt", false}, {"table-color.txt", true}} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteTable(&b, tier3Results(), tt.color); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, b.Bytes())
		})
	}
}

func TestWriteTableColorOnlyWhenAsked(t *testing.T) {
	var plain, colored bytes.Buffer
	if err := WriteTable(&plain, tier3Results(), false); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&colored, tier3Results(), true); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Error("colour escapes without color")
	}
	if !bytes.Contains(colored.Bytes(), []byte(ansiBest+"1,540*"+ansiReset)) {
		t.Errorf("bounded-8's p95 is not bold green:\n%s", colored.String())
	}
	// Without the escapes the two are the same text.
	stripped := colored.String()
	for _, esc := range []string{ansiBest, ansiWarn, ansiReset} {
		stripped = strings.ReplaceAll(stripped, esc, "")
	}
	if stripped != plain.String() {
		t.Errorf("coloured table differs beyond the escapes:\n%s\nplain:\n%s", stripped, plain.String())
	}
}

// columns splits an aligned table line into its fields.
func columns(line string) []string { return strings.Fields(line) }

func TestWriteTableAlignedAndMarked(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, tier3Results(), false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "strategy") })
	if i < 0 {
		t.Fatalf("no header line:\n%s", b.String())
	}
	table := lines[i : i+5]
	// Right-aligned columns end at the same place on every row.
	width := len([]rune(table[0]))
	for _, l := range table[1:] {
		if n := len([]rune(l)); n != width {
			t.Errorf("row %q is %d wide, header %d", l, n, width)
		}
	}
	row := map[string][]string{}
	for _, l := range table[1:] {
		f := columns(l)
		row[f[0]] = f[1:]
	}
	// Columns: turns, failed turns, calls, attempts, p50, p95, p99, answer
	// p95, goodput, 429s, failed, early, wasted, races, peak.
	if got := row["bounded-8"][5]; got != "1,540*" {
		t.Errorf("bounded-8 p95 %q, want the best, 1,540*", got)
	}
	if got := row["unbounded"][5]; got != "9,870" {
		t.Errorf("unbounded p95 %q, want unmarked 9,870", got)
	}
	if got := row["unbounded"][3]; strings.HasSuffix(got, "*") {
		t.Errorf("attempts has no direction but %q is marked", got)
	}
	if got := row["sequential"][9]; got != "0*" {
		t.Errorf("sequential 429s %q, want 0* (lowest, shared)", got)
	}
	if !strings.Contains(b.String(), "llm: Little's-law cap 64 (binding limit: rpm)") {
		t.Errorf("no recommendation:\n%s", b.String())
	}
}

func TestWriteTableFlagsPartialAndInvalid(t *testing.T) {
	r := tier3Results()
	r.Partial = true
	r.Invalid = "the machine fell 40% behind the time scale"
	var b bytes.Buffer
	if err := WriteTable(&b, r, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PARTIAL:", "INVALID: the machine fell 40% behind the time scale"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// A run partial because fleet members are missing says so, not that it
// was interrupted, in the table and in the HTML report.
func TestWriteTablePartialReason(t *testing.T) {
	r := tier3Results()
	r.Partial, r.PartialReason = true, "1 of 2 fleet members missing (member 1 (p2))"
	var b bytes.Buffer
	if err := WriteTable(&b, r, false); err != nil {
		t.Fatal(err)
	}
	if want := "PARTIAL: 1 of 2 fleet members missing (member 1 (p2)); the figures cover only what was measured."; !strings.Contains(b.String(), want) || strings.Contains(b.String(), "interrupted") {
		t.Errorf("table lacks %q or says interrupted:\n%s", want, b.String())
	}
	for _, kv := range runParams(r) {
		if kv.Key == "partial" && kv.Value != "yes: "+r.PartialReason {
			t.Errorf("HTML partial %q, want %q", kv.Value, "yes: "+r.PartialReason)
		}
	}
}

func TestBest(t *testing.T) {
	ss := []results.StrategyResult{
		{Name: "a", Turns: 10, GoodputPerS: 5, AnsweredGoodputPerS: 5, RateLimited: 3, TurnLatencyMs: results.Summary{P95: 900}},
		{Name: "b", Turns: 12, GoodputPerS: 7, AnsweredGoodputPerS: 7, RateLimited: 3, TurnLatencyMs: results.Summary{P95: 700}},
		{Name: "c", Turns: 12, GoodputPerS: 6, AnsweredGoodputPerS: 6, RateLimited: 9, TurnLatencyMs: results.Summary{P95: 800}},
		// No turn finished: its latency of 0 is not a best.
		{Name: "d", Turns: 0, GoodputPerS: 0, RateLimited: 3},
	}
	byHeader := metricsByHeader()
	tests := []struct {
		metric string
		want   []bool
	}{
		{"p95 ms", []bool{false, true, false, false}},
		{"goodput/s", []bool{false, true, false, false}},
		{"turns", []bool{false, true, true, false}},      // a tie: both marked
		{"429s", []bool{true, true, false, true}},        // lower is better
		{"failed", []bool{false, false, false, false}},   // all equal: nothing to say
		{"attempts", []bool{false, false, false, false}}, // no direction
	}
	for _, tt := range tests {
		if got := best(byHeader[tt.metric], ss); !slices.Equal(got, tt.want) {
			t.Errorf("best %s = %v, want %v", tt.metric, got, tt.want)
		}
	}
}

func TestBestIgnoresStrategiesThatFailFast(t *testing.T) {
	// "herd" fails 40% of its turns, which makes them short and lets it
	// finish more: it must not take the latency or turns marks, though it
	// still competes for what failing cannot buy (goodput, 429s). Its
	// successful calls are the most, but those inside its failed turns
	// answered nothing: the goodput of answered turns is paced's.
	ss := []results.StrategyResult{
		{Name: "herd", Turns: 100, FailedTurns: 40, GoodputPerS: 9, AnsweredGoodputPerS: 5.4, RateLimited: 500, TurnLatencyMs: results.Summary{P95: 300}},
		{Name: "paced", Turns: 80, FailedTurns: 0, GoodputPerS: 8, AnsweredGoodputPerS: 8, RateLimited: 0, TurnLatencyMs: results.Summary{P95: 900}},
		{Name: "capped", Turns: 70, FailedTurns: 0, GoodputPerS: 7, AnsweredGoodputPerS: 7, RateLimited: 10, TurnLatencyMs: results.Summary{P95: 1200}},
	}
	byHeader := metricsByHeader()
	tests := []struct {
		metric string
		want   []bool
	}{
		{"p95 ms", []bool{false, true, false}},
		{"turns", []bool{false, true, false}},
		{"failed turns", []bool{false, true, true}},
		{"goodput/s", []bool{false, true, false}},
		{"calls ok/s", []bool{false, false, false}}, // every success: shown, never marked
		{"429s", []bool{false, true, false}},
	}
	for _, tt := range tests {
		if got := best(byHeader[tt.metric], ss); !slices.Equal(got, tt.want) {
			t.Errorf("best %s = %v, want %v", tt.metric, got, tt.want)
		}
	}
}

func TestMetricsOneColumnPerService(t *testing.T) {
	r := &results.Results{Strategies: []results.StrategyResult{
		{Name: "a", PeakInFlight: map[string]int{"llm": 8, "db": 2}},
		{Name: "b", PeakInFlight: map[string]int{"llm": 16}},
	}}
	var headers []string
	for _, m := range metrics(r) {
		headers = append(headers, m.header)
	}
	if got := headers[len(headers)-2:]; !slices.Equal(got, []string{"peak db", "peak llm"}) {
		t.Errorf("peak columns %v, want [peak db peak llm]", got)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, r, false); err != nil {
		t.Fatal(err)
	}
	// b never used db: its cell says so rather than 0.
	if !strings.Contains(b.String(), "–") {
		t.Errorf("missing service not shown as –:\n%s", b.String())
	}
}

// metricsByHeader returns the table's metrics keyed by column header.
func metricsByHeader() map[string]metric {
	by := map[string]metric{}
	for _, m := range metrics() {
		by[m.header] = m
	}
	return by
}

func TestTableColumnsAndSeedIntervals(t *testing.T) {
	r := &results.Results{Scenario: "x", Seed: 1, Seeds: []uint64{1, 2}, DurationS: 60, Strategies: []results.StrategyResult{{
		Name: "s", Turns: 10, TurnsInSystem: 2.5,
		SeedRuns: []results.StrategyResult{{Name: "s", Turns: 10, TurnsInSystem: 2.5}, {Name: "s", Turns: 14, TurnsInSystem: 3.5}},
	}}}
	var b bytes.Buffer
	if err := WriteTableWith(&b, r, TableOptions{Columns: []string{"turns", "L turns"}}); err != nil {
		t.Fatal(err)
	}
	// Mean 12, sd 2.83, t(0.975, 1) = 12.71: ±25.4 → "±25"; L: 3 ±6.35.
	for _, want := range []string{"turns", "L turns", "12 ±25", "3.00 ±6.35"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "goodput/s") {
		t.Errorf("a column not asked for is shown:\n%s", b.String())
	}
	if err := WriteTableWith(&b, r, TableOptions{Columns: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "L attempts") {
		t.Errorf("unknown column: %v, want an error listing the columns", err)
	}
}

// A strategy whose live run is invalid is never marked best, and its row
// says it is invalid; the mark goes to the best valid strategy.
func TestWriteTableNeverStarsInvalid(t *testing.T) {
	r := tier3Results()
	i := slices.IndexFunc(r.Strategies, func(s results.StrategyResult) bool { return s.Name == "bounded-8" })
	r.Strategies[i].Invalid = "timers fired 40ms late"
	var b bytes.Buffer
	if err := WriteTable(&b, r, false); err != nil {
		t.Fatal(err)
	}
	row := map[string][]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if f := columns(l); len(f) > 2 {
			row[f[0]] = f[1:]
		}
	}
	inv := row["bounded-8"]
	if len(inv) == 0 || inv[0] != "(INVALID)" {
		t.Fatalf("the invalid row is not marked:\n%s", b.String())
	}
	for _, cell := range inv {
		if strings.HasSuffix(cell, "*") {
			t.Errorf("invalid bounded-8 has a best mark (%s):\n%s", cell, b.String())
		}
	}
	// p95 (column 5) now goes to the best valid strategy.
	if got := row["bounded-32-nojitter"][5]; got != "2,480*" {
		t.Errorf("bounded-32-nojitter p95 %q, want 2,480* once bounded-8 is out:\n%s", got, b.String())
	}
}

// A spread between seeds too small for the column's format still shows,
// to two significant digits, rather than as "±0": a cell without "±" says
// the seeds agree.
func TestCellShowsATinySpread(t *testing.T) {
	s := results.StrategyResult{Name: "s", SeedRuns: []results.StrategyResult{{AnsweredGoodputPerS: 10}, {AnsweredGoodputPerS: 10.001}, {AnsweredGoodputPerS: 10.002}}}
	m := metrics()[8] // goodput/s, two decimals
	if m.header != "goodput/s" {
		t.Fatalf("metric 8 is %q", m.header)
	}
	if got := cellText(m, &s); got != "10.00 ±0.0025" {
		t.Errorf("cell %q, want 10.00 ±0.0025", got)
	}
	same := results.StrategyResult{Name: "s", SeedRuns: []results.StrategyResult{{AnsweredGoodputPerS: 10}, {AnsweredGoodputPerS: 10}}}
	if got := cellText(m, &same); got != "10.00" {
		t.Errorf("equal seeds: cell %q, want 10.00", got)
	}
}

// The table's key explains only the columns the table shows, at every
// width; the * rule it states is the one best applies; and the narrow
// layout names the width the default columns need.
// tableKeyLines returns the columns of a terminal table's header and its
// key: the lines after the table's, up to the next blank one, each with
// its wrapped continuation lines joined.
func tableKeyLines(out string) (columns, lines []string) {
	all := strings.Split(out, "\n")
	h := slices.IndexFunc(all, func(l string) bool { return strings.HasPrefix(l, "strategy ") })
	e := h + slices.Index(all[h:], "")
	for _, l := range all[e+1:] {
		if l == "" {
			break
		}
		if strings.HasPrefix(l, "  ") && len(lines) > 0 {
			lines[len(lines)-1] += " " + strings.TrimSpace(l)
			continue
		}
		lines = append(lines, l)
	}
	return regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(all[h]), -1), lines // headers are apart by two spaces or more
}

func TestTableKeySaysWhatTheTableShows(t *testing.T) {
	r := tier3Results()
	for _, width := range []int{0, 80, 119} {
		var b bytes.Buffer
		if err := WriteTableWith(&b, r, TableOptions{Width: width}); err != nil {
			t.Fatal(err)
		}
		columns, lines := tableKeyLines(b.String())
		shown := func(name string) bool { return slices.Contains(columns, name) }
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "* best"):
				_, rule, _ := strings.Cut(l, "); ")
				for _, name := range regexp.MustCompile(`([a-z0-9 ]+?)(?:,| are marked)`).FindAllStringSubmatch(rule, -1) {
					if n := strings.TrimSpace(name[1]); !shown(n) {
						t.Errorf("width %d: the * rule names column %q, which the table does not show (%q)", width, n, columns)
					}
				}
			case regexp.MustCompile(`^[a-z0-9 /]+: `).MatchString(l):
				for _, part := range strings.Split(l, "; ") {
					name, _, ok := strings.Cut(part, ": ")
					if name == "goodput" {
						name = "goodput/s"
					}
					if ok && !strings.Contains(name, "(") && !shown(name) {
						t.Errorf("width %d: the key explains %q, which the table does not show (%q)", width, name, columns)
					}
				}
			}
			if strings.Contains(l, "calls ok/s") && !shown("calls ok/s") {
				t.Errorf("width %d: the key names the column 'calls ok/s', which the table does not show", width)
			}
		}
		if width > 0 {
			var full bytes.Buffer
			if err := WriteTableWith(&full, r, TableOptions{}); err != nil {
				t.Fatal(err)
			}
			need := 0
			for _, l := range strings.Split(full.String(), "\n") {
				if strings.HasPrefix(l, "strategy ") || strings.HasPrefix(l, "unbounded ") {
					need = max(need, utf8.RuneCountInString(l))
				}
			}
			if want := fmt.Sprintf("a terminal of %d columns shows the default ones", max(need, NarrowWidth)); !strings.Contains(strings.Join(strings.Fields(b.String()), " "), want) {
				t.Errorf("width %d: the narrow note does not say %q:\n%s", width, want, b.String())
			}
		}
	}

}

// The * rule as stated: a strategy whose share of failed turns is
// within the stated points of the lowest competes for p95 ms; one beyond
// them does not.
func TestTableKeyStatesTheStarRule(t *testing.T) {
	r := tier3Results()
	var key bytes.Buffer
	if err := WriteTable(&key, r, false); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`within (\d+(?:\.\d+)?) percentage point`).FindStringSubmatch(key.String())
	if m == nil {
		t.Fatalf("the key states no slack for the * rule:\n%s", key.String())
	}
	slack, _ := strconv.ParseFloat(m[1], 64)
	p95 := metricsByHeader()["p95 ms"]
	for _, tt := range []struct {
		points float64 // the fast strategy's failed turns above the other's, in percentage points
		marked bool
	}{{slack - 0.2, true}, {slack + 0.2, false}} {
		failed := int64(math.Round(tt.points * 100)) // of 10,000 turns
		ss := []results.StrategyResult{
			{Name: "fast", Turns: 10_000, FailedTurns: failed, TurnLatencyMs: results.Summary{P95: 300}},
			{Name: "slow", Turns: 10_000, TurnLatencyMs: results.Summary{P95: 900}},
		}
		if got := best(p95, ss)[0]; got != tt.marked {
			t.Errorf("a strategy failing %g points more turns: marked %v, the key's rule says %v", tt.points, got, tt.marked)
		}
	}
}
