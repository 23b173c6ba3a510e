package reports

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/simbench/simbench/results"
)

// Options tune the plots and the HTML report. The zero value draws every
// plot the results allow, with the limits the results record.
type Options struct {
	// RateLimitPerS is the service's request limit in requests per second,
	// drawn on the requests-per-second plot; 0 takes it from the results'
	// Limits (the service a turn calls most), which is what a run records.
	RateLimitPerS float64
	// ConcurrencyLimit is the service's limit on requests in flight, drawn
	// on the in-flight plot; 0 takes it from the results' Limits.
	ConcurrencyLimit int
	// Sweep holds a sweep of one strategy over a range of caps, one row per
	// load; when a row has points the sweep plot is drawn, one line per load,
	// with each row's knee and chosen cap marked.
	Sweep []results.SweepRow
	// SweepStrategy names the strategy the sweep varied, for titles.
	SweepStrategy string
	// MaxRateLimitedShare is the 429 share the sweep's chosen cap could
	// have, drawn as a threshold line; 0 means results.DefaultMaxRateLimitedShare.
	MaxRateLimitedShare float64
	// Tolerance is the fraction of the best p95 within which the sweep's
	// rule counts caps as equal, drawn as a band on a panel zoomed on the
	// best (0 or below: no such panel).
	Tolerance float64
	// MaxPoints bounds the points of each timeline line (see Downsample);
	// 0 means DefaultMaxPoints.
	MaxPoints int
	// Plans are the recommendation arithmetic to show in the HTML report,
	// one per service.
	Plans []PlanLines
}

// withDecision returns o with the decision's own sweep when o has none
// and r carries a decision with its points: so report.html from `run`
// draws and tabulates the sweep the decision rests on, and `report DIR`
// re-renders it from results.json.
func (o Options) withDecision(r *results.Results) Options {
	if len(o.Sweep) > 0 || r == nil || r.Decision == nil || len(r.Decision.Evidence.Points) == 0 {
		return o
	}
	d := r.Decision
	o.Sweep = []results.SweepRow{{Load: "as written", Points: d.Evidence.Points, Chosen: d.Evidence.Chosen, Knee: d.Evidence.Knee}}
	o.SweepStrategy = d.Strategy
	if d.Evidence.MaxShare > 0 {
		o.MaxRateLimitedShare = d.Evidence.MaxShare
	}
	o.Tolerance = d.Evidence.Tolerance
	return o
}

// maxPoints is MaxPoints, or DefaultMaxPoints when it is 0.
func (o Options) maxPoints() int {
	if o.MaxPoints == 0 {
		return DefaultMaxPoints
	}
	return o.MaxPoints
}

// maxShare is MaxRateLimitedShare, or results.DefaultMaxRateLimitedShare when it
// is 0.
func (o Options) maxShare() float64 {
	if o.MaxRateLimitedShare == 0 {
		return results.DefaultMaxRateLimitedShare
	}
	return o.MaxRateLimitedShare
}

// drawnLimits are the limits the timeline figures draw: the options' when
// set, else those of the service a turn calls most among the results'
// Limits that have one (the first such service on a tie), so a report
// re-rendered from results.json draws what the run drew.
type drawnLimits struct {
	ratePerS float64 // requests/s, 0: none
	inFlight int     // 0: none
	service  string  // whose limits they are ("": the options')
	// tokensPerMin is the service's token limit (0: none), named beside
	// the request limit: 429s below the request line are the tokens'.
	tokensPerMin float64
}

// limits are the limits the timeline figures of r draw (see drawnLimits).
func (o Options) limits(r *results.Results) drawnLimits {
	var d drawnLimits
	var best *results.ServiceLimits
	for i := range r.Limits {
		l := &r.Limits[i]
		if l.RequestsPerMinute <= 0 && l.TokensPerMinute <= 0 && l.MaxConcurrent <= 0 {
			continue
		}
		if best == nil || l.CallsPerTurn > best.CallsPerTurn {
			best = l
		}
	}
	if best != nil {
		d = drawnLimits{ratePerS: best.RequestsPerMinute / 60, inFlight: best.MaxConcurrent, service: best.Service, tokensPerMin: best.TokensPerMinute}
	}
	if o.RateLimitPerS > 0 {
		d.ratePerS = o.RateLimitPerS
	}
	if o.ConcurrencyLimit > 0 {
		d.inFlight = o.ConcurrencyLimit
	}
	return d
}

// Figures builds every plot the results and options allow, in report order:
// time-to-answer CDF, in flight over time, requests per second over time,
// the adaptive limits over time (only when a strategy has a limit trace),
// attempts per call, the backoff comparison (only when strategies that
// share a cap differ in their retry policy), and the sweep. A figure whose
// data is missing from the results (no timeline, say) is left out. No
// figure ranks strategies by speed or volume without their failures beside
// it. Every figure whose x axis is run time shades the run's timed events
// (Results.Events).
func Figures(r *results.Results, opts Options) ([]Figure, error) {
	if r == nil {
		return nil, errors.New("reports: no results")
	}
	opts = opts.withDecision(r)
	builders := []func(*results.Results, Options) (*Figure, error){
		latencyCDF, inFlight, requestRate, limitsFigure, attemptsHistogram, backoffComparison, sweepFigure,
	}
	r, note := figureStrategies(r)
	var figs []Figure
	for _, build := range builders {
		f, err := build(r, opts)
		if err != nil {
			return nil, err
		}
		if f != nil {
			f.Caption += note
			figs = append(figs, *f)
		}
	}
	return figs, nil
}

// MaxFigureStrategies is the most strategies a figure draws (a panel or a
// series each): results with more are drawn for their first
// MaxFigureStrategies, and every figure's caption says how many the
// tables list beside them. Without the bound, a panel per strategy makes a
// figure of thousands of strategies gigabytes of pixels.
const MaxFigureStrategies = 24

// figureStrategies returns r with at most MaxFigureStrategies strategies,
// and the sentence the captions then end with ("" when r has no more).
func figureStrategies(r *results.Results) (*results.Results, string) {
	n := len(r.Strategies)
	if n <= MaxFigureStrategies {
		return r, ""
	}
	c := *r
	c.Strategies = r.Strategies[:MaxFigureStrategies]
	return &c, fmt.Sprintf(" Drawn: the first %d of the %d strategies; the tables list all of them.", MaxFigureStrategies, n)
}

// WritePlots writes every figure of Figures into dir as NAME.png and
// NAME.svg, each file atomically, and returns the file names written,
// relative to dir, PNG before SVG for each figure.
func WritePlots(dir string, r *results.Results, opts Options) ([]string, error) {
	figs, err := Figures(r, opts)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range figs {
		if !slices.Contains(FigureNames, f.Name) {
			// A stale copy of its files would never be removed.
			return names, fmt.Errorf("reports: figure %s is not in FigureNames", f.Name)
		}
		for _, ext := range []string{"png", "svg"} {
			render := f.PNG
			if ext == "svg" {
				render = f.SVG
			}
			data, err := render()
			if err != nil {
				return names, err
			}
			name := f.Name + "." + ext
			if err := WriteFileAtomic(filepath.Join(dir, name), data, 0o644); err != nil {
				return names, err
			}
			names = append(names, name)
		}
	}
	return names, nil
}
