package reports

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/simbench/simbench/results"
)

// limitDropResults is the tier3 fixture with timed events filled in by hand
// (the limit halves at minute 3, a 30 s outage at minute 6) and an AIMD
// sawtooth limit trace on the unbounded strategy.
func limitDropResults() *results.Results {
	r := tier3Results()
	r.Events = []results.EventSpan{
		{Service: "llm", Kind: "limits", StartS: 180, EndS: 1200, Label: "limits ×0.5"},
		{Service: "llm", Kind: "outage", StartS: 360, EndS: 390, Label: "outage 503"},
	}
	var trace []results.LimitPoint
	limit, t := 8, 0.0
	for t < 1150 {
		trace = append(trace, results.LimitPoint{T: t, Limit: limit})
		ceiling := 40
		if t >= 180 {
			ceiling = 20
		}
		if limit >= ceiling || (t >= 360 && t < 390) {
			limit = max(1, limit/2)
		} else {
			limit++
		}
		t += 2.5
	}
	r.Strategies[1].LimitTrace = map[string][]results.LimitPoint{"llm": trace}
	return r
}

// TestEventBands: each event becomes a band over its span, clipped to the
// axis; events outside the axis or of another service are left out; labels
// name the service only when several services have events.
func TestEventBands(t *testing.T) {
	r := &results.Results{Events: []results.EventSpan{
		{Service: "llm", Kind: "limits", StartS: 180, EndS: 1500, Label: "limits ×0.5"},
		{Service: "search", Kind: "stall", StartS: 50, EndS: 51},
		{Service: "llm", Kind: "outage", StartS: 2000, EndS: 2030, Label: "outage"},
	}}
	tests := []struct {
		service string
		want    []band
	}{
		{"", []band{{180, 1200, "llm: limits ×0.5"}, {50, 51, "search: stall"}}},
		{"llm", []band{{180, 1200, "limits ×0.5"}}},
		{"search", []band{{50, 51, "stall"}}},
		{"other", nil},
	}
	for _, tt := range tests {
		if got := eventBands(r, tt.service, 0, 1200); !slices.Equal(got, tt.want) {
			t.Errorf("bands of %q: got %v, want %v", tt.service, got, tt.want)
		}
	}
	r.Events = r.Events[:1]
	if got := eventBands(r, "", 0, 1200); len(got) != 1 || got[0].label != "limits ×0.5" {
		t.Errorf("one service's events: got %v, want the label without the service", got)
	}
}

// eventFillSVG is how the SVG writer spells the band colour: its
// un-premultiplied components in hex, then its opacity.
func eventFillSVG() string {
	r, g, b, a := eventFill.RGBA()
	un := func(v uint32) int { return int(float64(v) * 255 / float64(a)) }
	return fmt.Sprintf("fill:#%02X%02X%02X;fill-opacity:", un(r), un(g), un(b))
}

// TestTimeFiguresShadeEvents: every figure over run time draws the bands
// (with the events' labels and a legend entry); the others do not, and the
// same figures without events draw none.
func TestTimeFiguresShadeEvents(t *testing.T) {
	with, without := limitDropResults(), limitDropResults()
	without.Events = nil
	for _, name := range []string{"in-flight", "requests", "limits"} {
		svg := figureSVG(t, with, Options{}, name)
		if !strings.Contains(svg, eventFillSVG()) {
			t.Errorf("%s: no band in the colour %s", name, eventFillSVG())
		}
		for _, text := range []string{"outage 503", "limits ×0.5", "timed event"} {
			if !strings.Contains(svg, text) {
				t.Errorf("%s: %q not written", name, text)
			}
		}
		if svg := figureSVG(t, without, Options{}, name); strings.Contains(svg, eventFillSVG()) || strings.Contains(svg, "timed event") {
			t.Errorf("%s without events draws a band", name)
		}
	}
	for _, name := range []string{"latency-cdf", "attempts"} {
		if svg := figureSVG(t, with, Options{}, name); strings.Contains(svg, eventFillSVG()) {
			t.Errorf("%s has no time axis but draws a band", name)
		}
	}
}

// TestBandsInPNG: the rendered limits figure has many light-blue pixels
// (the bands over the white data area) with events, and next to none
// without.
func TestBandsInPNG(t *testing.T) {
	with, without := limitDropResults(), limitDropResults()
	without.Events = nil
	count := func(r *results.Results) int {
		f := figureNamed(t, r, "limits")
		png, err := f.PNG()
		if err != nil {
			t.Fatal(err)
		}
		img := decodePNG(t, png)
		n := 0
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if bl > g+0x0800 && bl > r+0x1000 && r > 0xc000 { // light blue: the band over white
					n++
				}
			}
		}
		return n
	}
	if w, wo := count(with), count(without); w < 1000 || wo > w/10 {
		t.Errorf("light-blue pixels: %d with events, %d without; want the band to tint many", w, wo)
	}
}

// TestSteps: a trace becomes a step line that holds each limit until the
// next step and the last until the end of the axis.
func TestSteps(t *testing.T) {
	got := steps([]results.LimitPoint{{T: 0, Limit: 8}, {T: 1.5, Limit: 9}, {T: 3, Limit: 4}}, 10, 800)
	want := plotter.XYs{{X: 0, Y: 8}, {X: 1.5, Y: 8}, {X: 1.5, Y: 9}, {X: 3, Y: 9}, {X: 3, Y: 4}, {X: 10, Y: 4}}
	if !slices.Equal(got, want) {
		t.Errorf("steps\n got %v\nwant %v", got, want)
	}
	long := make([]results.LimitPoint, 5000)
	for i := range long {
		long[i] = results.LimitPoint{T: float64(i), Limit: 10 + i%7}
	}
	long[2500].Limit = 99
	got = steps(long, 5000, 800)
	if len(got) > 802 {
		t.Errorf("%d corners for a bound of 800", len(got))
	}
	if !slices.ContainsFunc(got, func(p plotter.XY) bool { return p.Y == 99 }) {
		t.Error("the highest limit was lost")
	}
}

// TestLimitsFigure: drawn when a strategy has a limit trace, with a panel
// per service traced, the adaptive strategy's line and the static caps in
// the legend; absent otherwise.
func TestLimitsFigure(t *testing.T) {
	r := limitDropResults()
	f := figureNamed(t, r, "limits")
	if len(f.plots) != 1 {
		t.Errorf("%d panels, want one for llm", len(f.plots))
	}
	svg := figureSVG(t, r, Options{}, "limits")
	for _, want := range []string{"unbounded (adaptive)", "bounded-8: cap 8", "bounded-32-nojitter: cap 32", "sequential: cap 1", "Concurrency limit: llm"} {
		if !strings.Contains(svg, want) {
			t.Errorf("limits figure lacks %q", want)
		}
	}
	figs, err := Figures(tier3Results(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(figs, func(f Figure) bool { return f.Name == "limits" }) {
		t.Error("a limits figure without any limit trace")
	}
}

// TestReportsListEvents: report.md, report.html and the terminal table
// list each event with its service, what it did and its span, and link the
// limits figure; without events they say nothing of events.
func TestReportsListEvents(t *testing.T) {
	r := limitDropResults()
	var md, html, table bytes.Buffer
	if err := WriteMarkdown(&md, r, []string{"limits.png"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&table, r, false); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"report.md": {"## Timed events", "| llm | limits ×0.5 | 180 s | 1,200 s |", "| llm | outage 503 | 360 s | 390 s |",
			"![Adaptive concurrency limits over time](limits.png)"},
		"report.html": {`<h2 id="events">Timed events</h2>`, "<td>llm</td><td style=\"text-align: left\">outage 503</td><td>360 s</td><td>390 s</td>",
			`<figure id="limits">`, "Adaptive concurrency limits over time."},
		"table": {"timed events", "llm      outage 503   360 s    390 s"},
	} {
		got := map[string]string{"report.md": md.String(), "report.html": html.String(), "table": table.String()}[name]
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
	}
	r.Events = nil
	md.Reset()
	table.Reset()
	if err := WriteMarkdown(&md, r, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&table, r, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "event") || strings.Contains(table.String(), "event") {
		t.Error("a report without events mentions events")
	}
}

// TestResultsBeforeLimitTraceRender: a results.json written before limit
// traces and events existed reads and renders every report, without a
// limits figure or an events section.
func TestResultsBeforeLimitTraceRender(t *testing.T) {
	r, err := results.Read(filepath.Join("testdata", "tier3", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	names, err := WriteAll(t.TempDir(), r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names, "limits.png") {
		t.Errorf("wrote %v: a limits figure from a file without traces", names)
	}
	if !slices.Contains(names, "requests.png") {
		t.Errorf("wrote %v: the timeline figures are missing", names)
	}
}

// figureNamed returns the named figure of r.
func figureNamed(t *testing.T, r *results.Results, name string) Figure {
	t.Helper()
	figs, err := Figures(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no %s figure", name)
	return Figure{}
}

// decodePNG decodes a rendered figure.
func decodePNG(t *testing.T, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestTracedServices: the limits figure's panels follow the results'
// service order, then names, and leave out services whose traces are empty.
func TestTracedServices(t *testing.T) {
	r := &results.Results{
		Limits: []results.ServiceLimits{{Service: "search"}, {Service: "llm"}},
		Strategies: []results.StrategyResult{
			{Name: "a", LimitTrace: map[string][]results.LimitPoint{"zeta": {{T: 0, Limit: 1}}, "llm": {{T: 0, Limit: 2}}, "empty": nil}},
			{Name: "b", LimitTrace: map[string][]results.LimitPoint{"alpha": {{T: 0, Limit: 1}}, "search": {{T: 0, Limit: 3}}}},
		},
	}
	if got, want := tracedServices(r), []string{"search", "llm", "alpha", "zeta"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestLimitDropGoldenSVG: the figures the events and the limit trace change
// render as the golden files under testdata/svg/events, the same bytes
// each time.
func TestLimitDropGoldenSVG(t *testing.T) {
	for _, name := range []string{"in-flight", "requests", "limits"} {
		f := figureNamed(t, limitDropResults(), name)
		svg, err := f.SVG()
		if err != nil {
			t.Fatal(err)
		}
		again, err := figureNamed(t, limitDropResults(), name).SVG()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(svg, again) {
			t.Errorf("%s: two renderings differ", name)
		}
		golden(t, filepath.Join("svg", "events", name+".svg"), svg)
	}
}
