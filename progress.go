// Progress bars for run and sweep: one bar per strategy (run) or one for
// the whole sweep, in simulated seconds, with an ETA from each bar's own
// rate. Only shown when standard output is a terminal.

package main

import (
	"io"
	"sync"
	"time"

	"github.com/vbauerster/cupwriter"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// barWidth is the width of a bar, in columns; fallbackColumns is the
// terminal width assumed when the terminal reports none (0 columns: some
// CI consoles and serial terminals), so that the bars still appear.
const (
	barWidth        = 40
	fallbackColumns = 80
)

// sizedConsole is mpb's console writer with a terminal size that is never
// 0: mpb discards every row that does not fit the reported height, so a
// terminal that reports 0×0 would show no bars at all.
type sizedConsole struct{ mpb.ConsoleWriter }

// GetTermSize returns the terminal's size, with fallbackColumns for a width
// the terminal does not report and room for every bar for such a height.
func (c sizedConsole) GetTermSize() (width, height int, err error) {
	width, height, err = c.ConsoleWriter.GetTermSize()
	if err != nil || width <= 0 {
		width = fallbackColumns
	}
	if err != nil || height <= 0 {
		height = width*3/2 + 1 // what mpb assumes for a non-terminal
	}
	return width, height, nil
}

// newBars starts an mpb container writing to cw through sizedConsole.
func newBars(cw mpb.ConsoleWriter) *mpb.Progress {
	return mpb.New(mpb.WithConsoleWriter(sizedConsole{cw}), mpb.WithWidth(barWidth))
}

// eta estimates one bar's time left from its own progress: the rate since
// the bar's first report, so a bar that waited in a queue is not charged
// for the wait, and bars running side by side do not share one average.
// It is safe for concurrent use.
type eta struct {
	mu       sync.Mutex
	now      func() time.Time // nil: time.Now
	reported bool             // a report has come in
	t0       time.Time        // when the first report came in
	v0       int64            // the value it carried
}

// observe notes a report of the bar's value.
func (e *eta) observe(v int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.reported {
		e.reported, e.t0, e.v0 = true, e.clock(), v
	}
}

func (e *eta) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

// text is what the bar shows after its percentage: "queued" before the
// first report, nothing while no progress has been seen since (no rate to
// go by), then "ETA 1m5s" from the bar's own rate, and nothing once done.
func (e *eta) text(s decor.Statistics) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case !e.reported:
		return "queued"
	case s.Completed || s.Aborted || s.Current >= s.Total:
		return ""
	case s.Current <= e.v0:
		return ""
	}
	elapsed := e.clock().Sub(e.t0)
	left := time.Duration(float64(elapsed) * float64(s.Total-s.Current) / float64(s.Current-e.v0))
	return "ETA " + roundETA(left).String()
}

// roundETA rounds an estimate to what is worth reading: whole seconds, and
// at least one second while work is left.
func roundETA(d time.Duration) time.Duration {
	return max(time.Second, d.Round(time.Second))
}

// addBar adds a bar named name of total simulated seconds with its ETA.
func addBar(p *mpb.Progress, name string, total int64, e *eta) *mpb.Bar {
	return p.AddBar(total,
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d s", decor.WCSyncSpace)),
		mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.Any(func(s decor.Statistics) string { return " " + e.text(s) })),
	)
}

// progress shows one bar per strategy: virtual time simulated of the total,
// with an ETA. Only used when standard output is a terminal.
type progress struct {
	p    *mpb.Progress
	mu   sync.Mutex
	bars map[string]*mpb.Bar
	etas map[string]*eta
}

func newProgress(w io.Writer, sc *scenarios.Scenario, opts *sim.Options) *progress {
	return newProgressOn(cupwriter.New(w, false), sc, opts)
}

func newProgressOn(cw mpb.ConsoleWriter, sc *scenarios.Scenario, opts *sim.Options) *progress {
	applied, _ := opts.Apply(sc)
	pr := &progress{p: newBars(cw), bars: map[string]*mpb.Bar{}, etas: map[string]*eta{}}
	for _, st := range applied.Strategies {
		e := &eta{}
		pr.etas[st.Name] = e
		pr.bars[st.Name] = addBar(pr.p, st.Name, int64(applied.Duration/time.Second), e)
	}
	return pr
}

// update is sim.Options.Progress: strategy has simulated done of its total.
func (pr *progress) update(strategy string, done, _ time.Duration) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	v := int64(done / time.Second)
	pr.etas[strategy].observe(v)
	pr.bars[strategy].SetCurrent(v)
}

// wait completes (or, when aborted, abandons) every bar and waits for the
// last frame.
func (pr *progress) wait(aborted bool) {
	for _, b := range pr.bars {
		if aborted {
			b.Abort(false)
		} else {
			b.SetTotal(-1, true)
		}
	}
	pr.p.Wait()
}

// sweepBar is one progress bar for a batch of runs (the whole sweep, or
// one step of the decision's search), in simulated seconds.
type sweepBar struct {
	p    *mpb.Progress
	own  bool // p is the bar's own container, to wait for when it ends
	bar  *mpb.Bar
	eta  eta
	mu   sync.Mutex
	done map[string]time.Duration
	sum  time.Duration
}

func newSweepBar(w io.Writer, points int, each time.Duration) *sweepBar {
	s := barIn(newBars(cupwriter.New(w, false)), "sweep", points, each)
	s.own = true
	return s
}

// barIn adds to p a bar named name for runs runs of each simulated time.
func barIn(p *mpb.Progress, name string, runs int, each time.Duration) *sweepBar {
	s := &sweepBar{p: p, done: map[string]time.Duration{}}
	s.bar = addBar(p, name, int64(runs)*int64(each/time.Second), &s.eta)
	return s
}

// decisionBars shows the decision's search as it goes, a bar per step
// (the strategies as written, each round of caps, the paces), in one
// container. Only used when standard output is a terminal.
type decisionBars struct{ p *mpb.Progress }

func newDecisionBars(w io.Writer) *decisionBars { return newDecisionBarsOn(cupwriter.New(w, false)) }

func newDecisionBarsOn(cw mpb.ConsoleWriter) *decisionBars {
	return &decisionBars{p: newBars(cw)}
}

// stage is decision.Options.Steps: a bar for one step of the search.
func (d *decisionBars) stage(name string, runs int, each time.Duration) (func(string, time.Duration, time.Duration), func(bool)) {
	s := barIn(d.p, "decision: "+name, runs, each)
	return s.update, s.finish
}

// wait waits for the last frame once the decision is made.
func (d *decisionBars) wait() { d.p.Wait() }

// update is sim.Options.Progress for the sweep's runs.
func (s *sweepBar) update(strategy string, done, _ time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.done[strategy]
	if done < prev {
		prev = 0 // the same cap under the next load
	}
	s.sum += done - prev
	s.done[strategy] = done
	v := int64(s.sum / time.Second)
	s.eta.observe(v)
	s.bar.SetCurrent(v)
}

func (s *sweepBar) finish(aborted bool) {
	if aborted {
		s.bar.Abort(false)
	} else {
		s.bar.SetTotal(-1, true)
	}
	if s.own {
		s.p.Wait()
	}
}
