package reports

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

//go:embed report.html.tmpl
var reportHTML string

var reportTemplate = template.Must(template.New("report.html").Parse(reportHTML))

// File names WriteAll writes besides the plots.
const (
	HTMLFile     = "report.html"
	MarkdownFile = "report.md"
)

type htmlKV struct {
	Key, Value string
	Flag       bool // shown as a warning
}

type htmlWarning struct{ Head, Text string }

type htmlCell struct {
	Text string
	Best bool
}

type htmlRow struct {
	Name  string
	Cells []htmlCell
}

// htmlTable is the comparison table: the metrics' headers and a row per
// strategy.
type htmlTable struct {
	Headers []string
	Rows    []htmlRow
}

// htmlSection is a table of text rows under a heading, with its key: the
// per-process, per-class and tasks tables. ID is the heading's anchor and
// the table's class; the first Left columns hold text, aligned left (the
// others, numbers, right).
type htmlSection struct {
	ID, Title string
	Headers   []string
	Rows      [][]string
	Left      int
	Key       string
}

type htmlRec struct {
	Service, Binding, RPM, TPM, Turns, Verified, Reason string
	MaxInFlight                                         int
	// Steps are the reason's lines after the first: the arithmetic.
	Steps []string
}

type htmlPlan struct {
	Name  string
	Lines []string
}

type htmlSweep struct {
	Cap                            int
	P50, P95, Goodput, Share, Note string
}

// htmlSweepRow is one load of the sweep table.
type htmlSweepRow struct {
	Load   string
	Points []htmlSweep
}

// htmlDecision is the decision block at the top of the page: the sentence
// a user acts on, then its evidence, a line each. Nil leaves the block out.
type htmlDecision struct {
	Sentence string
	Evidence []string
}

type htmlFigure struct {
	Name, Title, Caption string
	SVG                  template.HTML
}

type htmlData struct {
	R *results.Results
	// Decision is the one recommendation, shown first (nil: none yet).
	Decision *htmlDecision
	Warnings []htmlWarning
	Params   []htmlKV
	Table    htmlTable
	Key      []string
	// Sections are the tables under the comparison that a run has: per
	// process (several processes), per class (session classes), tasks
	// (agent-level outcomes).
	Sections []htmlSection
	Recs     []htmlRec
	Plans    []htmlPlan
	Sweep    []htmlSweepRow
	Figures  []htmlFigure
	// Events are the run's timed events (Results.Events), a row each.
	Events []eventRow
	// EventTables are the per-event tables (nil: the run had no timed
	// events), with their key and column headers.
	EventTables []eventTable
	EventsKey   string
	EventCols   []string
}

// WriteHTML writes report.html: one self-contained page — inline SVG plots
// and CSS, no scripts, nothing fetched — with the run's parameters (seed,
// version, duration, mode; partial and invalid runs flagged at the top),
// the run's timed events (when it had any), the comparison table with the
// best value per column marked, the
// recommendation with its arithmetic (from the reasons in the results, and
// from opts.Plans for plans the results do not carry), the sweep of
// opts.Sweep (one table per load, each row's knee and chosen cap marked),
// and every figure of Figures(r, opts) with its one-line caption.
func WriteHTML(w io.Writer, r *results.Results, opts Options) error {
	if r == nil {
		return errors.New("reports: no results")
	}
	opts = opts.withDecision(r)
	d := htmlData{R: r, Params: runParams(r), Events: eventRows(r), Table: htmlTableOf(r), Key: tableKey(r),
		Recs: htmlRecs(r), Sweep: htmlSweepRows(opts.Sweep)}
	if r.Decision != nil {
		d.Decision = &htmlDecision{Sentence: r.Decision.Sentence, Evidence: decisionEvidence(r.Decision)}
	}
	for _, warn := range warnings(r) {
		head, text, _ := strings.Cut(warn, ": ")
		d.Warnings = append(d.Warnings, htmlWarning{head, text})
	}
	if t := processTableOf(r); t != nil {
		ct := processTextTable(t)
		d.Sections = append(d.Sections, htmlSection{ID: "processes", Title: "Per process", Headers: ct.headers, Rows: ct.rows, Left: ct.left, Key: sentence(t.key)})
	}
	if rows := keyRows(r); rows != nil {
		ct := keyTextTable(rows)
		d.Sections = append(d.Sections, htmlSection{ID: "keys", Title: "Per key", Headers: ct.headers, Rows: ct.rows, Left: ct.left, Key: sentence(keyKey)})
	}
	if rows := classRows(r); rows != nil {
		ct := classTextTable(rows)
		d.Sections = append(d.Sections, htmlSection{ID: "classes", Title: "Per class", Headers: ct.headers, Rows: ct.rows, Left: ct.left, Key: sentence(classKey)})
	}
	if ms := taskColumns(r, true); taskRows(r, ms) != nil {
		d.Sections = append(d.Sections, htmlSection{ID: "tasks", Title: "Tasks", Headers: taskHeaders(ms), Rows: taskRows(r, ms), Left: taskTextTable(nil).left, Key: sentence(taskKeyOf(ms))})
	}
	if ts := eventTables(r); ts != nil {
		d.EventTables, d.EventsKey, d.EventCols = ts, sentence(windowKey), windowHeaders
	}
	for _, p := range opts.Plans {
		d.Plans = append(d.Plans, htmlPlan{Name: p.Service, Lines: p.Lines})
	}
	figs, err := Figures(r, opts)
	if err != nil {
		return err
	}
	for _, f := range figs {
		svg, err := f.SVG()
		if err != nil {
			return err
		}
		d.Figures = append(d.Figures, htmlFigure{Name: f.Name, Title: f.Title, Caption: f.Caption, SVG: inlineSVG(svg, f.Title)})
	}
	var b bytes.Buffer
	if err := reportTemplate.Execute(&b, d); err != nil {
		return fmt.Errorf("reports: rendering HTML: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// htmlTableOf is the comparison table of r's strategies, the best value
// per column marked.
func htmlTableOf(r *results.Results) htmlTable {
	var t htmlTable
	ms := metrics(r)
	for _, m := range ms {
		t.Headers = append(t.Headers, m.header)
	}
	marks := bestMarks(ms, r.Strategies)
	for i := range r.Strategies {
		s := &r.Strategies[i]
		row := htmlRow{Name: s.Name}
		for j, m := range ms {
			row.Cells = append(row.Cells, htmlCell{Text: cellText(m, s), Best: marks[j][i]})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// htmlRecs lists r's recommendations, services in name order, each with
// its reason split from the arithmetic.
func htmlRecs(r *results.Results) []htmlRec {
	var out []htmlRec
	for _, name := range slices.Sorted(maps.Keys(r.Recommendation)) {
		rec := r.Recommendation[name]
		reason, steps := splitReason(rec.Reason)
		out = append(out, htmlRec{
			Service: name, MaxInFlight: rec.MaxInFlight, Binding: rec.BindingLimit,
			RPM: orDash(rec.RequestsPerMinute), TPM: orDash(rec.TokensPerMinute), Turns: orDash(rec.TurnsPerMinute),
			Verified: verifiedText(rec), Reason: reason, Steps: steps,
		})
	}
	return out
}

// htmlSweepRows is the sweep's table, one per load with points, the caps
// ascending and each row's knee and chosen cap noted.
func htmlSweepRows(sweep []results.SweepRow) []htmlSweepRow {
	var out []htmlSweepRow
	for _, row := range sweep {
		if len(row.Points) == 0 {
			continue
		}
		hr := htmlSweepRow{Load: row.Load}
		for _, p := range sortedByCap(row.Points) {
			var notes []string
			if p.Cap == row.Knee {
				notes = append(notes, "knee")
			}
			if p.Cap == row.Chosen {
				notes = append(notes, "chosen")
			}
			p95 := answerMillis(p.P95Ms)
			if p.P95LoMs > 0 {
				p95 += " (" + answerMillis(p.P95LoMs) + "–" + answerMillis(p.P95HiMs) + ")"
			}
			hr.Points = append(hr.Points, htmlSweep{
				Cap: p.Cap, P50: answerMillis(p.P50Ms), P95: p95, Goodput: dec2(p.GoodputPerS),
				Share: fixed(100*p.RateLimitedShare, 2, false) + "%", Note: strings.Join(notes, ", "),
			})
		}
		out = append(out, hr)
	}
	return out
}

// splitReason splits a recommendation's reason into its first line, the
// conclusion, and the rest, the arithmetic (see Plan.Recommendation).
func splitReason(reason string) (first string, rest []string) {
	lines := strings.Split(strings.TrimSpace(reason), "\n")
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(l); l != "" {
			rest = append(rest, l)
		}
	}
	return strings.TrimSpace(lines[0]), rest
}

// runParams lists the run's parameters for the report's summary.
func runParams(r *results.Results) []htmlKV {
	mode := r.Mode
	if mode == "" {
		mode = "virtual"
	}
	ps := []htmlKV{
		{Key: "scenario", Value: r.Scenario},
		{Key: "seed", Value: fmt.Sprint(r.Seed)},
		{Key: "simbench version", Value: r.SimbenchVersion},
		{Key: "duration", Value: num(r.DurationS) + " s"},
		{Key: "mode", Value: mode},
	}
	if r.Mode == "live" {
		ps = append(ps, htmlKV{Key: "time scale", Value: num(r.TimeScale)})
	}
	partial := "no"
	if r.Partial {
		partial = "yes: " + partialReason(r)
	}
	invalid := "no"
	if r.Invalid != "" {
		invalid = "yes: " + r.Invalid
	}
	return append(ps,
		htmlKV{Key: "strategies", Value: fmt.Sprint(len(r.Strategies))},
		htmlKV{Key: "partial", Value: partial, Flag: r.Partial},
		htmlKV{Key: "invalid", Value: invalid, Flag: r.Invalid != ""},
	)
}

// inlineSVG turns an SVG document into an element for an HTML page: the
// XML declaration and comments go, and the image gets an accessible name.
// The SVG is drawn by gonum from values, with its text escaped, so it is
// trusted as HTML.
func inlineSVG(svg []byte, title string) template.HTML {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	s = strings.Replace(s, "<svg ", `<svg role="img" aria-label="`+template.HTMLEscapeString(title)+`" `, 1)
	return template.HTML(strings.TrimRight(s, "\n")) //nolint:gosec // generated by gonum/plot with escaped text
}

// WriteAll writes a run's reports into dir: every plot as PNG and SVG
// (WritePlots), report.html (WriteHTML) and report.md (WriteMarkdown), each
// file atomically. It returns the names written, relative to dir.
func WriteAll(dir string, r *results.Results, opts Options) ([]string, error) {
	names, err := WritePlots(dir, r, opts)
	if err != nil {
		return names, err
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, r, opts); err != nil {
		return names, err
	}
	if err := WriteFileAtomic(filepath.Join(dir, HTMLFile), html.Bytes(), 0o644); err != nil {
		return names, err
	}
	names = append(names, HTMLFile)
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r, names); err != nil {
		return names, err
	}
	if err := WriteFileAtomic(filepath.Join(dir, MarkdownFile), md.Bytes(), 0o644); err != nil {
		return names, err
	}
	return append(names, MarkdownFile), nil
}
