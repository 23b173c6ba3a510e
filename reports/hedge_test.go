package reports

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
)

// hedgeResults is a run where one strategy of two hedged.
func hedgeResults() *results.Results {
	return &results.Results{Scenario: "h", Seed: 1, DurationS: 60, Strategies: []results.StrategyResult{
		{Name: "plain", Turns: 100, Calls: 400, Attempts: 400, PeakInFlight: map[string]int{"lookup": 8}},
		{Name: "hedged", Turns: 120, Calls: 480, Attempts: 500, Hedges: 20, HedgesWon: 5, CancelledWorkS: 3.25, PeakInFlight: map[string]int{"lookup": 9}},
	}}
}

func headers(ms []metric) []string {
	var hs []string
	for _, m := range ms {
		hs = append(hs, m.header)
	}
	return hs
}

// When a strategy hedges, the terminal table shows its hedges with their
// share of attempts, and a strategy that did not hedge "–"; the wide
// table's other hedge columns come on request.
func TestTableShowsHedges(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTableWith(&b, hedgeResults(), TableOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if head := strings.Fields(strings.Split(out, "\n")[2]); slices.Index(head, "hedges") != slices.Index(head, "attempts")+1 {
		t.Errorf("no hedges column after attempts in %v", head)
	}
	for _, want := range []string{"20 (4.2%) ", "hedges: second attempts"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hedges won ") || strings.Contains(out, "cancelled s ") {
		t.Errorf("the terminal's default columns show hedges won or cancelled work:\n%s", out)
	}
	if !strings.Contains(strings.Split(out, "\n")[3], "  – ") {
		t.Errorf("plain's row has no – for hedges:\n%s", out)
	}
	b.Reset()
	if err := WriteTableWith(&b, hedgeResults(), TableOptions{Columns: []string{"hedges won", "cancelled s"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "5 (25.0%)") || !strings.Contains(b.String(), " 3.2\n") {
		t.Errorf("hedges won and cancelled work on request:\n%s", b.String())
	}
	// The narrow layout keeps its five columns.
	ms, err := selectMetrics(nil, hedgeResults())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := selectMetrics(nil, &results.Results{Strategies: hedgeResults().Strategies[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := headers(narrowMetrics(ms)), headers(narrowMetrics(plain)); !slices.Equal(got, want) {
		t.Errorf("narrow columns %v; want %v", got, want)
	}
}

// Without a hedging strategy no hedge column is shown by default or in
// "all"; with one, "all" lists each hedge column once; a hedge column can
// still be asked for by name.
func TestHedgeColumnsOnlyWhenHedging(t *testing.T) {
	plain := hedgeResults()
	plain.Strategies = plain.Strategies[:1]
	isHedge := func(h string) bool { return h == "hedges" || h == "hedges won" || h == "cancelled s" }
	for _, names := range [][]string{nil, {"default"}, {"all"}} {
		ms, err := selectMetrics(names, plain)
		if err != nil {
			t.Fatal(err)
		}
		if hs := headers(ms); slices.ContainsFunc(hs, isHedge) {
			t.Errorf("columns %v of a run without hedges: %v", names, hs)
		}
	}
	if hs := headers(metrics(plain)); slices.ContainsFunc(hs, isHedge) {
		t.Errorf("report columns of a run without hedges: %v", hs)
	}
	ms, err := selectMetrics([]string{"all"}, hedgeResults())
	if err != nil {
		t.Fatal(err)
	}
	hs := headers(ms)
	for _, h := range []string{"hedges", "hedges won", "cancelled s"} {
		if n := len(slices.DeleteFunc(slices.Clone(hs), func(x string) bool { return x != h })); n != 1 {
			t.Errorf("all: %q %d times in %v", h, n, hs)
		}
	}
	if _, err := selectMetrics([]string{"hedges"}, plain); err != nil {
		t.Errorf("hedges by name: %v", err)
	}
}

// The reports show hedges, hedges won and cancelled work beside the
// other figures, the least cancelled work marked best.
func TestReportsShowHedges(t *testing.T) {
	var md bytes.Buffer
	if err := WriteMarkdown(&md, hedgeResults(), nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| attempts | hedges |", "| wasted s | hedges won | cancelled s |", "| 20 (4.2%) |", "| 5 (25.0%) | 3.2 |", "| 0.0 | – | – | 0 | 8 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	tb := htmlTableOf(hedgeResults())
	if !slices.Contains(tb.Headers, "hedges won") || !slices.Contains(tb.Headers, "cancelled s") {
		t.Errorf("report.html headers %v", tb.Headers)
	}
}

// compare judges the hedge figures: more cancelled work is worse.
func TestChangesOfHedges(t *testing.T) {
	old, nw := hedgeResults(), hedgeResults()
	nw.Strategies[1].Hedges, nw.Strategies[1].CancelledWorkS = 30, 6.5
	got := map[string]Change{}
	for _, c := range Changes(old, nw, CompareOptions{}) {
		if c.Strategy == "hedged" {
			got[c.Metric] = c
		}
	}
	if c, ok := got["cancelled s"]; !ok || c.Verdict != Worse || c.New != 6.5 {
		t.Errorf("cancelled s change %+v, %v; want worse, 6.5", c, ok)
	}
	if c, ok := got["hedges"]; !ok || c.Verdict != "" || c.Delta != 10 {
		t.Errorf("hedges change %+v, %v; want +10 and no verdict", c, ok)
	}
}
