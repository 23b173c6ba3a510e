package reports

import (
	"cmp"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/simbench/simbench/reports/plots"
	"github.com/simbench/simbench/results"
)

// eventRow is one timed event as the report tables list it.
type eventRow struct {
	Service, What, From, To string
}

// eventRows lists the run's timed events (Results.Events) in their order:
// the service, what changed (the event's label, else its kind) and when, in
// seconds from the start of the run. Empty when the run had none.
func eventRows(r *results.Results) []eventRow {
	var out []eventRow
	for _, e := range r.Events {
		out = append(out, eventRow{Service: e.Service, What: eventWhat(e), From: num(e.StartS) + " s", To: num(e.EndS) + " s"})
	}
	return out
}

// eventWhat says what an event changed: its label, else its kind.
func eventWhat(e results.EventSpan) string {
	if e.Label != "" {
		return e.Label
	}
	return e.Kind
}

// eventLines are the events as the terminal table prints them, after a
// heading; nil when the run had none.
func eventLines(r *results.Results) []string {
	rows := eventRows(r)
	if len(rows) == 0 {
		return nil
	}
	t := textTable{aligns: []align{alignLeft, alignLeft, alignRight, alignRight}}
	t.add(cell{text: "service"}, cell{text: "what"}, cell{text: "from"}, cell{text: "to"})
	for _, e := range rows {
		t.add(cell{text: e.Service}, cell{text: e.What}, cell{text: e.From}, cell{text: e.To})
	}
	return t.lines()
}

// eventFill is the colour of a timed event's band: translucent, so the
// lines and the saturation shading under it still show.
var eventFill = color.NRGBA{R: 70, G: 110, B: 210, A: 48}

// labelGround is the pale ground under a band's label.
var labelGround = color.NRGBA{R: 255, G: 255, B: 255, A: 210}

// band is one timed event's span on a time axis, in seconds, with the text
// drawn on it.
type band struct {
	x0, x1 float64
	label  string
}

// eventBands returns the bands of the run's events for a time axis: those
// of service, or of every service when service is "", clipped to [t0, t1]
// and left out when they fall outside it. A label names the service when
// the run's events touch more than one, and when service is "".
func eventBands(r *results.Results, service string, t0, t1 float64) []band {
	services := map[string]bool{}
	for _, e := range r.Events {
		services[e.Service] = true
	}
	var out []band
	for _, e := range r.Events {
		if service != "" && e.Service != service {
			continue
		}
		a, b := max(e.StartS, t0), min(e.EndS, t1)
		if !(b > a) && !(e.EndS == e.StartS && a >= t0 && a <= t1) {
			continue // outside the axis (an instant event on it is kept)
		}
		label := eventWhat(e)
		if service == "" && len(services) > 1 {
			label = e.Service + ": " + label
		}
		out = append(out, band{x0: a, x1: max(a, b), label: label})
	}
	return out
}

// minBandWidth is the narrowest a band is drawn, in points, so a short
// stall still shows at the scale of an hour's run.
const minBandWidth = vg.Length(1.5)

// eventShading is a plotter of timed events: each a translucent band over
// the panel's full height.
type eventShading struct{ bands []band }

// shadeEvents adds the bands to p, under whatever is added after, with one
// legend entry. It does nothing when there are no bands.
func shadeEvents(p *plot.Plot, bands []band) {
	if len(bands) == 0 {
		return
	}
	s := &eventShading{bands: bands}
	p.Add(s)
	p.Legend.Add("timed event", s)
}

// bandRect returns where a band is drawn on c, at least minBandWidth wide
// and within c; ok is false when none of it is on c.
func bandRect(c draw.Canvas, trX func(float64) vg.Length, b band) (x0, x1 vg.Length, ok bool) {
	x0, x1 = trX(b.x0), trX(b.x1)
	if x1-x0 < minBandWidth {
		mid := (x0 + x1) / 2
		x0, x1 = mid-minBandWidth/2, mid+minBandWidth/2
	}
	x0, x1 = max(x0, c.Min.X), min(x1, c.Max.X)
	return x0, x1, x1 > x0
}

// Plot implements plot.Plotter.
func (s *eventShading) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	c.SetColor(eventFill)
	for _, b := range s.bands {
		if x0, x1, ok := bandRect(c, trX, b); ok {
			c.Fill(vg.Rectangle{Min: vg.Point{X: x0, Y: c.Min.Y}, Max: vg.Point{X: x1, Y: c.Max.Y}}.Path())
		}
	}
}

// eventLabels is a plotter that writes each band's label at its top left,
// on a pale ground, in the first row of labels its start is clear of. It
// is added last, so no line crosses a label out.
type eventLabels struct{ bands []band }

// labelEvents adds the bands' labels to p; add it after the data.
func labelEvents(p *plot.Plot, bands []band) {
	if len(bands) > 0 {
		p.Add(&eventLabels{bands: bands})
	}
}

// Plot implements plot.Plotter.
func (s *eventLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := draw.TextStyle{Color: color.Gray{Y: 50}, Font: plots.Sans(9), XAlign: draw.XLeft, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
	var rows []vg.Length // per row of labels, where its last label ends
	for _, b := range s.bands {
		x0, _, ok := bandRect(c, trX, b)
		if !ok || b.label == "" {
			continue
		}
		w, h := sty.Width(b.label)+4, sty.Height(b.label)+2
		row := 0
		for row < len(rows) && rows[row] > x0 {
			row++
		}
		if row == len(rows) {
			rows = append(rows, 0)
		}
		rows[row] = x0 + w + 2
		top := c.Max.Y - 1 - vg.Length(row)*h
		c.SetColor(labelGround)
		c.Fill(vg.Rectangle{Min: vg.Point{X: x0 + 1, Y: top - h}, Max: vg.Point{X: x0 + 1 + w, Y: top}}.Path())
		c.FillText(sty, vg.Point{X: x0 + 3, Y: top - 1}, b.label)
	}
}

// Thumbnail implements plot.Thumbnailer.
func (s *eventShading) Thumbnail(c *draw.Canvas) {
	c.SetColor(eventFill)
	c.Fill(c.Rectangle.Path())
}

// timeAxis is the run-time range every time-axis figure spans, in
// seconds: the timelines' when the results have them, else the run's
// duration; widened to cover the limit traces and the events that start
// inside the run. ok is false when there is nothing on a time axis.
func timeAxis(r *results.Results) (t0, t1 float64, ok bool) {
	t0, t1, ok = timelineSpan(r)
	if !ok {
		t0, t1 = 0, r.DurationS
	}
	for _, s := range r.Strategies {
		for _, pts := range s.LimitTrace {
			if n := len(pts); n > 0 {
				t0, t1 = min(t0, pts[0].T), max(t1, pts[n-1].T)
			}
		}
	}
	return t0, t1, t1 > t0
}

// tracedServices returns the services the strategies' limit traces hold
// steps for, in the order of the results' Limits, then by name.
func tracedServices(r *results.Results) []string {
	var names []string
	for _, s := range r.Strategies {
		for name, pts := range s.LimitTrace {
			if len(pts) > 0 && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	order := func(name string) int {
		if i := slices.IndexFunc(r.Limits, func(l results.ServiceLimits) bool { return l.Service == name }); i >= 0 {
			return i
		}
		return len(r.Limits)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(order(a), order(b)), strings.Compare(a, b))
	})
	return names
}
