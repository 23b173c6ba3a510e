package reports

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

// WriteMarkdown writes report.md: the run's parameters and warnings, its
// timed events (when it had any), the comparison table with the best value per column in bold, the
// recommendation with its arithmetic, and the plots as images linked by the names in pngs
// (relative to the report, as WritePlots returns them; names not ending in
// .png are skipped). GitHub renders it as a pull-request comment.
func WriteMarkdown(w io.Writer, r *results.Results, pngs []string) error {
	if r == nil {
		return errors.New("reports: no results")
	}
	var b strings.Builder
	mdHeader(&b, r)
	mdStrategies(&b, r)
	if d := r.Decision; d != nil {
		b.WriteString("## Decision\n\n")
		fmt.Fprintf(&b, "**%s**\n\n", mdEscape(d.Sentence))
		for _, l := range decisionEvidence(d) {
			fmt.Fprintf(&b, "- %s\n", mdEscape(l))
		}
		b.WriteByte('\n')
	}
	mdRecommendation(&b, r)
	mdPlots(&b, pngs)
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

// mdHeader writes the report's title, the scenario's description, the
// run's warnings and parameters, and its timed events.
func mdHeader(b *strings.Builder, r *results.Results) {
	fmt.Fprintf(b, "# simbench: %s\n\n", mdEscape(r.Scenario))
	if r.Description != "" {
		fmt.Fprintf(b, "%s\n\n", mdEscape(r.Description))
	}
	for _, warn := range warnings(r) {
		head, rest, _ := strings.Cut(warn, ": ")
		fmt.Fprintf(b, "> [!WARNING]\n> **%s:** %s\n\n", head, mdEscape(rest))
	}
	fmt.Fprintf(b, "%s\n\n", mdEscape(runLine(r)))
	if rows := eventRows(r); len(rows) > 0 {
		b.WriteString("## Timed events\n\n| service | what | from | to |\n| :-- | :-- | --: | --: |\n")
		for _, e := range rows {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdEscape(e.Service), mdEscape(e.What), e.From, e.To)
		}
		b.WriteString("\nShaded as bands on every plot over time.\n\n")
	}
}

// mdStrategies writes the comparison table, the best value per column in
// bold, with its key, and the per-process and per-event tables.
func mdStrategies(b *strings.Builder, r *results.Results) {
	b.WriteString("## Strategies\n\n")
	if len(r.Strategies) == 0 {
		b.WriteString("No strategies in the results.\n\n")
		return
	}
	ms := metrics(r)
	b.WriteString("| strategy |")
	for _, m := range ms {
		fmt.Fprintf(b, " %s |", m.header)
	}
	b.WriteString("\n| :-- |" + strings.Repeat(" --: |", len(ms)) + "\n")
	marks := bestMarks(ms, r.Strategies)
	for i := range r.Strategies {
		s := &r.Strategies[i]
		fmt.Fprintf(b, "| %s |", mdEscape(s.Name))
		for j, m := range ms {
			if marks[j][i] {
				fmt.Fprintf(b, " **%s** |", cellText(m, s))
			} else {
				fmt.Fprintf(b, " %s |", cellText(m, s))
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString("\nBest value per column in **bold**.")
	for _, l := range tableKey(r)[1:] {
		b.WriteString(" " + mdEscape(sentence(l)))
	}
	b.WriteString("\n\n")
	if t := processTableOf(r); t != nil {
		processTableMarkdown(b, t)
	}
	if rows := keyRows(r); rows != nil {
		keyTableMarkdown(b, rows)
	}
	if rows := classRows(r); rows != nil {
		classTableMarkdown(b, rows)
	}
	if ms := taskColumns(r, true); taskRows(r, ms) != nil {
		taskTableMarkdown(b, ms, taskRows(r, ms))
	}
	if ts := eventTables(r); ts != nil {
		eventTablesMarkdown(b, ts)
	}
}

// mdRecommendation writes each service's recommendation as a table row,
// then its reason and arithmetic; nothing when the results carry none.
func mdRecommendation(b *strings.Builder, r *results.Results) {
	if len(r.Recommendation) == 0 {
		return
	}
	b.WriteString("## Recommendation\n\n")
	b.WriteString("| service | max in flight | binding limit | requests/min | tokens/min | turns/min | verified by sweep |\n")
	b.WriteString("| :-- | --: | :-- | --: | --: | --: | --: |\n")
	names := slices.Sorted(maps.Keys(r.Recommendation))
	for _, name := range names {
		rec := r.Recommendation[name]
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s |\n", mdEscape(name), rec.MaxInFlight,
			mdEscape(rec.BindingLimit), orDash(rec.RequestsPerMinute), orDash(rec.TokensPerMinute),
			orDash(rec.TurnsPerMinute), verifiedText(rec))
	}
	b.WriteByte('\n')
	for _, name := range names {
		reason, steps := splitReason(r.Recommendation[name].Reason)
		if reason != "" {
			fmt.Fprintf(b, "**%s:** %s\n\n", mdEscape(name), mdEscape(reason))
		}
		if len(steps) > 0 {
			fmt.Fprintf(b, "```\n%s\n```\n\n", strings.Join(steps, "\n"))
		}
	}
}

// mdPlots links the PNGs among names as images, titled by results' plot
// registry (PlotSpec.Title; a name it lacks by itself).
func mdPlots(b *strings.Builder, names []string) {
	var images []string
	for _, p := range names {
		if strings.HasSuffix(p, ".png") {
			images = append(images, p)
		}
	}
	if len(images) == 0 {
		return
	}
	b.WriteString("## Plots\n\n")
	for _, p := range images {
		name := strings.TrimSuffix(path.Base(p), ".png")
		title := name
		if p, ok := results.Plot(name); ok {
			title = p.Title
		}
		fmt.Fprintf(b, "![%s](%s)\n\n", mdEscape(title), p)
	}
}

// bestMarks says, per metric of ms and per strategy of ss, whether the
// strategy's value is the best in the metric's column (see best).
func bestMarks(ms []metric, ss []results.StrategyResult) [][]bool {
	marks := make([][]bool, len(ms))
	for j, m := range ms {
		marks[j] = best(m, ss)
	}
	return marks
}

// decisionEvidence is the decision's evidence, a line each, after the
// sentence DecisionLines starts with.
func decisionEvidence(d *results.Decision) []string {
	var out []string
	for _, l := range DecisionLines(d)[1:] {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// verifiedText is the cap a sweep verified for rec, or "not verified".
func verifiedText(rec results.Recommendation) string {
	if rec.VerifiedCap > 0 {
		return fmt.Sprint(rec.VerifiedCap)
	}
	return "not verified"
}

// mdTable writes a Markdown table: the headers, the first left columns
// aligned left and the others right, then the rows with every cell
// escaped.
func mdTable(b *strings.Builder, headers []string, left int, rows [][]string) {
	b.WriteString("| " + strings.Join(headers, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat(" :-- |", left) + strings.Repeat(" --: |", len(headers)-left) + "\n")
	for _, row := range rows {
		cells := make([]string, len(row))
		for j, c := range row {
			cells[j] = mdEscape(c)
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
}

// orDash formats v, or "–" when it is zero (not set).
func orDash(v float64) string {
	if v == 0 {
		return "–"
	}
	return num(v)
}

// sentence capitalises s and ends it with a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// mdEscape keeps text from being read as Markdown table or emphasis syntax.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`, "`", "\\`").Replace(s)
}
