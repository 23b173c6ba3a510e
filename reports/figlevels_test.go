package reports

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/simbench/simbench/reports/plots"
	"github.com/simbench/simbench/results"
)

// onLevel is one strategy that starts requests exactly at its pace (90/s:
// 100/s at headroom 0.9) and holds exactly its cap of 10 in flight: the
// lines sit on the levels the figures draw for them.
func onLevel() *results.Results {
	s := results.StrategyResult{Name: "paced", MaxInFlight: 10, Headroom: 0.9}
	for k := range 120 {
		s.Timeline = append(s.Timeline, results.TimelinePoint{T: float64(k), BucketS: 1, Started: 90, InFlight: 10})
	}
	return &results.Results{Scenario: "levels", DurationS: 120, Strategies: []results.StrategyResult{s}}
}

// levelPixels renders figure name of onLevel and returns, along y = level
// on its first panel, how many pixels of the data area's width show the
// colour want (within 40 per channel) and how many show the strategy's
// colour: a level drawn over the line shows in places, and so does the
// line.
func levelPixels(t *testing.T, name string, level float64, want [3]uint8) (levelPx, linePx, width int) {
	t.Helper()
	figs, err := Figures(onLevel(), Options{RateLimitPerS: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Name != name {
			continue
		}
		data, err := f.PNG()
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		c := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(pngDPI))
		panels, _ := f.layout(draw.New(c))
		dc := f.plots[0].DataCanvas(panels[0])
		trX, trY := f.plots[0].Transforms(&dc)
		scale := float64(pngDPI) / float64(vg.Inch)
		h := img.Bounds().Dy()
		py := h - int(float64(trY(level))*scale+0.5)
		x0, x1 := int(float64(trX(10))*scale), int(float64(trX(110))*scale)
		line := plots.StrategyColor(0)
		lr, lg, lb, _ := line.RGBA()
		for x := x0; x < x1; x++ {
			hitLevel, hitLine := false, false
			for dy := -1; dy <= 1; dy++ {
				r, g, b := rgb(img, x, py+dy)
				hitLevel = hitLevel || near(r, g, b, want[0], want[1], want[2])
				hitLine = hitLine || near(r, g, b, uint8(lr>>8), uint8(lg>>8), uint8(lb>>8))
			}
			if hitLevel {
				levelPx++
			}
			if hitLine {
				linePx++
			}
		}
		return levelPx, linePx, x1 - x0
	}
	t.Fatalf("no %s figure", name)
	return 0, 0, 0
}

func rgb(img image.Image, x, y int) (r, g, b uint8) {
	cr, cg, cb, _ := img.At(x, y).RGBA()
	return uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8)
}

func near(r, g, b, wr, wg, wb uint8) bool {
	d := func(a, b uint8) int {
		if a > b {
			return int(a - b)
		}
		return int(b - a)
	}
	return d(r, wr) <= 40 && d(g, wg) <= 40 && d(b, wb) <= 40
}

// The pace is visible over a started/s line that keeps it, and the cap
// over an in-flight line that sits at it, and the lines show through
// them: the level is seen in at least a fifth of the width, the line in
// half of it.
func TestLevelsVisibleOverTheirLines(t *testing.T) {
	black := [3]uint8{0, 0, 0}
	for _, tt := range []struct {
		figure string
		level  float64
	}{{"requests", 90}, {"in-flight", 10}} {
		levelPx, linePx, width := levelPixels(t, tt.figure, tt.level, black)
		if levelPx < width/5 || linePx < width/2 {
			t.Errorf("%s: at the level %g, the level shows in %d of %d pixels, the line in %d; want a fifth and half", tt.figure, tt.level, levelPx, width, linePx)
		}
	}
}

// The sweep figure zooms on the best p95 so that the tolerance band, which
// the first panel's axis (scaled to the slowest cap) makes a hairline, is
// a tenth of a panel's height or more.
func TestSweepShowsTheToleranceBand(t *testing.T) {
	o := tier3Options()
	o.Tolerance = 0.05
	figs, err := Figures(tier3Results(), o)
	if err != nil {
		t.Fatal(err)
	}
	best := math.Inf(1)
	for _, p := range o.Sweep[0].Points {
		if p.P95Ms.Answered() && p.RateLimitedShare <= o.maxShare() {
			best = min(best, float64(p.P95Ms))
		}
	}
	for _, f := range figs {
		if f.Name != "sweep" {
			continue
		}
		var shares []float64
		for _, p := range f.plots {
			if p.Y.Min <= best && best*(1+o.Tolerance) <= p.Y.Max {
				shares = append(shares, best*o.Tolerance/(p.Y.Max-p.Y.Min))
			}
		}
		if len(shares) == 0 || slices.Max(shares) < 0.1 {
			t.Errorf("the band within 5%% of the best p95 (%g ms) takes at most %v of a panel's height; want a tenth", best, shares)
		}
		return
	}
	t.Fatal("no sweep figure")
}
