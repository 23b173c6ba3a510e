package reports

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/simbench/simbench/internal/fixtures"
	"github.com/simbench/simbench/reports/plots"
	"github.com/simbench/simbench/results"
)

// allFigures are the figures of tier3Results with tier3Options: no backoff
// figure, since no two of its strategies share a cap.
var allFigures = []string{"latency-cdf", "in-flight", "requests", "attempts", "sweep"}

// TestWriteAll renders everything once (PNG is slow under -race) and checks
// the plots: each PNG decodes, is 800 px wide and is not blank.
func TestWriteAll(t *testing.T) {
	dir := t.TempDir()
	names, err := WriteAll(dir, tier3Results(), tier3Options())
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range allFigures {
		want = append(want, f+".png", f+".svg")
	}
	want = append(want, HTMLFile, MarkdownFile)
	if !slices.Equal(names, want) {
		t.Fatalf("wrote %v, want %v", names, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		t.Errorf("%d files in the directory, want %d (temporary files left?)", len(entries), len(want))
	}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 {
			t.Errorf("%s is empty", name)
		}
		if !strings.HasSuffix(name, ".png") && !strings.HasSuffix(name, ".svg") {
			continue
		}
		if strings.HasSuffix(name, ".svg") {
			if !bytes.HasPrefix(data, []byte("<?xml")) || !bytes.Contains(data, []byte("</svg>")) {
				t.Errorf("%s is not an SVG document", name)
			}
			continue
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b := img.Bounds()
		if b.Dx() != 800 || b.Dy() < 400 {
			t.Errorf("%s is %dx%d px, want 800 wide and at least 400 high", name, b.Dx(), b.Dy())
		}
		if ink := inked(img); ink < 0.02 {
			t.Errorf("%s is %.1f%% ink, nearly blank", name, 100*ink)
		}
	}
}

// inked returns the share of pixels that are not white.
func inked(img image.Image) float64 {
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}

// pixelsOf counts the pixels of exactly colour c.
func pixelsOf(img image.Image, c color.Color) int {
	wr, wg, wb, _ := c.RGBA()
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r == wr && g == wg && bl == wb {
				n++
			}
		}
	}
	return n
}

func TestLatencyCDFDrawsEveryStrategy(t *testing.T) {
	r := tier3Results()
	figs, err := Figures(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := figs[0].PNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range r.Strategies {
		// A line across the plot is hundreds of pixels; the legend alone is a few dozen.
		if n := pixelsOf(img, plots.StrategyColor(i)); n < 300 {
			t.Errorf("%s: %d pixels of its colour, want a line", s.Name, n)
		}
	}
}

func TestFiguresGoldenSVG(t *testing.T) {
	figs, err := Figures(tier3Results(), tier3Options())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
		svg, err := f.SVG()
		if err != nil {
			t.Fatal(err)
		}
		again, err := f.SVG()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(svg, again) {
			t.Errorf("%s: two renderings differ", f.Name)
		}
		golden(t, filepath.Join("svg", f.Name+".svg"), svg)
	}
	if !slices.Equal(names, allFigures) {
		t.Errorf("figures %v, want %v", names, allFigures)
	}
}

func TestFiguresDeterministicAcrossBuilds(t *testing.T) {
	// Maps in the input (peak in flight per service) must not change the bytes.
	a, err := Figures(tier3Results(), tier3Options())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Figures(tier3Results(), tier3Options())
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		sa, _ := a[i].SVG()
		sb, _ := b[i].SVG()
		if !bytes.Equal(sa, sb) {
			t.Errorf("%s differs between two builds from the same input", a[i].Name)
		}
	}
	// PNGs too, for the one figure small enough to render fast under -race.
	pa, err := a[0].PNG()
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b[0].PNG()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pa, pb) {
		t.Errorf("%s.png differs between two builds", a[0].Name)
	}
}

func TestFiguresLeaveOutWhatIsMissing(t *testing.T) {
	r := tier3Results()
	for i := range r.Strategies {
		r.Strategies[i].Timeline = nil
		r.Strategies[i].AttemptsPerCall = nil
	}
	figs, err := Figures(r, Options{}) // no sweep either
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	if want := []string{"latency-cdf"}; !slices.Equal(names, want) {
		t.Errorf("figures %v, want %v", names, want)
	}
	none, err := Figures(&results.Results{Scenario: "empty"}, Options{})
	if err != nil || len(none) != 0 {
		t.Errorf("empty results: %d figures, %v; want none", len(none), err)
	}
}

func TestFiguresPanelPerStrategy(t *testing.T) {
	figs, err := Figures(tier3Results(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Name == "in-flight" || f.Name == "requests" {
			if len(f.plots) != 4 {
				t.Errorf("%s has %d panels, want one per strategy (4)", f.Name, len(f.plots))
			}
			if _, h := f.Size(); h < 4*panelHeight {
				t.Errorf("%s is %v high, too short for 4 panels", f.Name, h)
			}
		}
	}
}

func TestSweepRejectsCapZero(t *testing.T) {
	_, err := Figures(tier3Results(), Options{Sweep: []results.SweepRow{{Points: []results.SweepPoint{{Cap: 0}, {Cap: 4}}}}})
	if err == nil {
		t.Error("no error for a sweep point with cap 0")
	}
}

func TestWritePlotsIntoMissingDir(t *testing.T) {
	_, err := WritePlots(filepath.Join(t.TempDir(), "missing"), tier3Results(), Options{})
	if err == nil {
		t.Error("no error writing into a missing directory")
	}
}

// Edge cases a real run can produce: one turn, one latency for every turn,
// one attempt per call, an empty timeline bucket, a single sweep point.
func TestFiguresDrawDegenerateData(t *testing.T) {
	r := &results.Results{Scenario: "tiny", DurationS: 1, Strategies: []results.StrategyResult{{
		Name: "only", MaxInFlight: 1, Turns: 1, Calls: 1, Attempts: 1,
		TurnLatencyMs:   results.Summary{Mean: 500, P50: 500, P95: 500, P99: 500, Max: 500},
		LatencyCDF:      []results.CDFPoint{{Ms: 500, P: 1}},
		AttemptsPerCall: []int64{1},
		Timeline:        []results.TimelinePoint{{T: 0, BucketS: 1}},
		PeakInFlight:    map[string]int{"llm": 1},
	}, {
		Name: "nothing", Turns: 0,
		LatencyCDF: []results.CDFPoint{{Ms: 0, P: 0}},
	}}}
	figs, err := Figures(r, Options{Sweep: []results.SweepRow{{Points: []results.SweepPoint{{Cap: 4, P50Ms: 100, P95Ms: 200}}, Chosen: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != len(allFigures) {
		t.Errorf("%d figures, want %d", len(figs), len(allFigures))
	}
	for _, f := range figs {
		if _, err := f.SVG(); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}

func TestRenderTurnsPanicsIntoErrors(t *testing.T) {
	p := plots.NewPlot("empty log axis", "x", "y")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{}
	p.X.Min, p.X.Max = 0, 0
	f := newFigure("latency-cdf", false, "", figureHeight, p)
	if _, err := f.SVG(); err == nil || !strings.Contains(err.Error(), "drawing latency-cdf") {
		t.Errorf("error %v, want one naming the figure", err)
	}
}

// With answer CDFs the figure shows turns answered; results written before
// them still get the turn-latency CDF.
func TestLatencyCDFFallsBackWithoutAnswerCDF(t *testing.T) {
	r := tier3Results()
	figs, err := Figures(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(figs[0].Title, "turns answered") {
		t.Errorf("with answer CDFs: %q", figs[0].Title)
	}
	for i := range r.Strategies {
		r.Strategies[i].AnswerCDF = nil
	}
	if figs, err = Figures(r, Options{}); err != nil {
		t.Fatal(err)
	}
	if figs[0].Name != "latency-cdf" || figs[0].Title != "Turn latency CDF" {
		t.Errorf("without answer CDFs: %q %q", figs[0].Name, figs[0].Title)
	}
}

// No legend covers data: every panel's legend lies right of its frame.
// Legends never cover data, and take at most maxLegendShare of the
// width: a legend wider than that goes under its panel, in a strip as
// tall as it is.
func TestLegendsApartFromTheData(t *testing.T) {
	figs, err := Figures(backoffResults(), tier3Options())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		c := vgimg.New(f.w, f.h)
		panels, legends := f.layout(draw.New(c))
		for i, p := range f.plots {
			data := p.DataCanvas(panels[i])
			box := f.legends[i].Rectangle(legends[i])
			w, h := box.Max.X-box.Min.X, box.Max.Y-box.Min.Y
			if w == 0 {
				continue
			}
			at := legends[i].Rectangle // where the legend is drawn: from its top left
			drawn := vg.Rectangle{Min: vg.Point{X: at.Min.X, Y: at.Max.Y - h}, Max: vg.Point{X: at.Min.X + w, Y: at.Max.Y}}
			if drawn.Min.X < data.Max.X && drawn.Max.X > data.Min.X && drawn.Min.Y < data.Max.Y && drawn.Max.Y > data.Min.Y {
				t.Errorf("%s panel %d: legend %v overlaps the data area %v", f.Name, i, drawn, data.Rectangle)
			}
			if drawn.Max.X > f.w || drawn.Min.Y < 0 {
				t.Errorf("%s panel %d: legend %v runs off the figure", f.Name, i, drawn)
			}
			if !f.below && w+legendGap > maxLegendShare*f.w {
				t.Errorf("%s panel %d: legend beside the data %.0f wide, more than %g of the figure's %.0f", f.Name, i, w, maxLegendShare, f.w)
			}
			if f.below && at.Max.Y-at.Min.Y < h {
				t.Errorf("%s panel %d: legend %.0f tall in a strip of %.0f", f.Name, i, h, at.Max.Y-at.Min.Y)
			}
		}
	}
}

// The backoff figure compares retry policies, so it is drawn only when
// strategies sharing a cap retry differently.
func TestBackoffOnlyWhenRetryPoliciesVary(t *testing.T) {
	has := func(r *results.Results) bool {
		figs, err := Figures(r, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(figs, func(f Figure) bool { return f.Name == "backoff" })
	}
	if has(tier3Results()) {
		t.Error("a backoff figure for strategies that differ in cap, not in backoff alone")
	}
	if !has(backoffResults()) {
		t.Error("no backoff figure for two strategies at cap 8 with different retry policies")
	}
}

// figureSVG renders the named figure of r as SVG text.
func figureSVG(t *testing.T, r *results.Results, opts Options, name string) string {
	t.Helper()
	figs, err := Figures(r, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Name == name {
			svg, err := f.SVG()
			if err != nil {
				t.Fatal(err)
			}
			return string(svg)
		}
	}
	t.Fatalf("no %s figure", name)
	return ""
}

func TestAttemptsSplitsSucceededFromGaveUp(t *testing.T) {
	svg := figureSVG(t, tier3Results(), Options{}, "attempts")
	for _, want := range []string{"unbounded: 48,160 calls, 10,160 retried, 212 gave up", "gave up", "succeeded"} {
		if !strings.Contains(svg, want) {
			t.Errorf("attempts.svg lacks %q", want)
		}
	}
	// Without the split, the bars say the outcome is unknown.
	r := tier3Results()
	r.Strategies[1].AttemptsPerFailedCall = nil
	if svg := figureSVG(t, r, Options{}, "attempts"); !strings.Contains(svg, "unbounded: 48,160 calls, 10,160 retried, 212 failed") {
		t.Error("results without the split are drawn as if split")
	}
}

// The requests figure draws the limit the results record, admitted/s
// where 429s open a gap, and shades where the limit is saturated.
func TestRequestsDrawsRecordedLimitAndSaturation(t *testing.T) {
	svg := figureSVG(t, tier3Results(), Options{}, "requests")
	for _, want := range []string{"limit 166.67/s", "admitted/s", "limit saturated"} {
		if !strings.Contains(svg, want) {
			t.Errorf("requests.svg lacks %q", want)
		}
	}
	r := tier3Results()
	r.Limits = nil
	if svg := figureSVG(t, r, Options{}, "requests"); strings.Contains(svg, "limit 166.67/s") {
		t.Error("a limit line with no limit recorded or given")
	}
	if svg := figureSVG(t, r, Options{RateLimitPerS: 50}, "requests"); !strings.Contains(svg, "limit 50/s") {
		t.Error("the option does not set the limit line")
	}
}

// A sweep over several loads draws one labelled line per load, fits its
// axes to the data, and keeps the marks at the edge caps inside the frame.
func TestSweepDrawsEveryLoad(t *testing.T) {
	pts := fixtures.Tier3Sweep()
	var slow []results.SweepPoint
	for _, p := range pts {
		p.P50Ms, p.P95Ms = p.P50Ms*2, p.P95Ms*2
		p.P95LoMs, p.P95HiMs = p.P95Ms*0.9, p.P95Ms*1.1
		slow = append(slow, p)
	}
	rows := []results.SweepRow{
		{Load: "sessions=20", Points: pts, Chosen: 128, Knee: 32},
		{Load: "sessions=160", Points: slow, Chosen: 1, Knee: 32},
	}
	figs, err := Figures(&results.Results{}, Options{Sweep: rows, SweepStrategy: "bounded-64"})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 1 || figs[0].Name != "sweep" {
		t.Fatalf("figures %v, want the sweep alone", figs)
	}
	f := figs[0]
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sessions=20 p95", "sessions=160 p95", "sessions=160 p95 95% interval", "chosen cap", "knee", "max in flight (log scale)"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("sweep.svg lacks %q", want)
		}
	}
	for _, p := range f.plots {
		// The marks at caps 1 and 128 sit inside the frame.
		if !(p.X.Min < plots.Lg(1) && plots.Lg(128) < p.X.Max) {
			t.Errorf("%s: x from %g to %g cuts the caps 1 and 128 at the frame", p.Title.Text, p.X.Min, p.X.Max)
		}
	}
	good := f.plots[1]
	if want := 147.0; good.Y.Max > 1.1*want || good.Y.Max < want {
		t.Errorf("goodput axis up to %g for data up to %g", good.Y.Max, want)
	}
}

func TestCapAxisSaysLog2WhenCapsDouble(t *testing.T) {
	tests := []struct {
		caps []int
		want string
	}{
		{[]int{8, 16, 32, 64, 128, 256}, "max in flight (log₂ scale: each step doubles)"},
		{[]int{1, 2, 4, 8, 16, 32, 48, 64}, "max in flight (log scale)"},
		{[]int{4, 6, 8, 10}, "max in flight"},
	}
	for _, tt := range tests {
		p := plots.NewPlot("", "", "")
		capAxis(p, tt.caps)
		if p.X.Label.Text != tt.want {
			t.Errorf("caps %v: label %q, want %q", tt.caps, p.X.Label.Text, tt.want)
		}
	}
}

// TestPNGAtFastestCompression reads the zlib header of a rendered PNG's
// first IDAT chunk: its FLEVEL bits (the top two of the second byte) are 0
// only for the fastest level; Go's default level writes 2.
func TestPNGAtFastestCompression(t *testing.T) {
	figs, err := Figures(tier3Results(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := figs[0].PNG()
	if err != nil {
		t.Fatal(err)
	}
	const sig = 8 // the PNG signature's bytes
	for p := sig; p+8 <= len(data); {
		n := int(data[p])<<24 | int(data[p+1])<<16 | int(data[p+2])<<8 | int(data[p+3])
		if string(data[p+4:p+8]) == "IDAT" {
			if n < 2 || p+10 > len(data) {
				t.Fatalf("IDAT of %d bytes", n)
			}
			if level := data[p+9] >> 6; level != 0 {
				t.Errorf("zlib FLEVEL %d, want 0 (fastest compression)", level)
			}
			return
		}
		p += 12 + n // length, type, data, CRC
	}
	t.Fatal("no IDAT chunk")
}
