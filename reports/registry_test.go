package reports

import (
	"bytes"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
)

var (
	mdImage      = regexp.MustCompile(`(?m)^!\[([^\]]*)\]\(([^)]*)\.png\)$`)
	htmlFigureRe = regexp.MustCompile(`(?s)<figure id="([^"]+)">.*?<figcaption><b>(.*?)\.</b>`)
	htmlCompare  = regexp.MustCompile(`(?s)<table class="comparison">\s*<thead><tr><th>strategy</th>(.*?)</tr></thead>`)
	htmlHeader   = regexp.MustCompile(`<th>(.*?)</th>`)
)

// A plot's title in report.md and in report.html, and the comparison
// table's headers in both, come from results' registry: rendered from
// fixtures that draw each plot and its variants, report.md links each plot
// by its Title, report.html heads the same plots with that Title or, for
// the richer variant drawn, the VariantTitle; both tables' headers are the
// registry's, in the same order.
func TestReportsTakeTitlesFromRegistry(t *testing.T) {
	fallback := tier3Results()
	for i := range fallback.Strategies {
		fallback.Strategies[i].AnswerCDF = nil
	}
	fixtures := map[string]*results.Results{
		"tier3": tier3Results(), "turn-latency CDF": fallback, "backoff": backoffResults(),
		"two services": twoServiceResults(), "events": limitDropResults(),
	}
	drawn := map[string]bool{}
	for name, r := range fixtures {
		md, page := renderBoth(t, r)
		mdTitles := map[string]string{}
		for _, m := range mdImage.FindAllStringSubmatch(md, -1) {
			mdTitles[m[2]] = m[1]
			if p, ok := results.Plot(m[2]); !ok || m[1] != p.Title {
				t.Errorf("%s: report.md links %s as %q; the registry's title is %q", name, m[2], m[1], p.Title)
			}
		}
		figs := htmlFigureRe.FindAllStringSubmatch(page, -1)
		if len(figs) == 0 || len(figs) != len(mdTitles) {
			t.Errorf("%s: report.html has %d plots, report.md %d", name, len(figs), len(mdTitles))
		}
		for _, m := range figs {
			title := html.UnescapeString(m[2])
			p, _ := results.Plot(m[1])
			mdTitle, linked := mdTitles[m[1]]
			if !linked || (title != mdTitle && title != p.VariantTitle) {
				t.Errorf("%s: report.html heads %s %q, report.md %q; the registry has %q and variant %q", name, m[1], title, mdTitle, p.Title, p.VariantTitle)
			}
			drawn[m[1]+" "+title] = true
		}
		compareHeaders(t, name, md, page)
	}
	for _, p := range results.Plots() {
		for _, title := range []string{p.Title, p.VariantTitle} {
			if title != "" && !drawn[p.Name+" "+title] {
				t.Errorf("no fixture draws %s headed %q", p.Name, title)
			}
		}
	}
}

// renderBoth renders r's report.md, linking every plot Figures draws, and
// report.html.
func renderBoth(t *testing.T, r *results.Results) (md, page string) {
	t.Helper()
	opts := tier3Options()
	figs, err := Figures(r, opts)
	if err != nil {
		t.Fatal(err)
	}
	var pngs []string
	for _, f := range figs {
		pngs = append(pngs, f.Name+".png")
	}
	var m, h bytes.Buffer
	if err := WriteMarkdown(&m, r, pngs); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&h, r, opts); err != nil {
		t.Fatal(err)
	}
	return m.String(), h.String()
}

// compareHeaders checks that report.md's and report.html's comparison
// tables have the same headers, each a figure's Header in the registry (a
// peak column's header names its service, or is "peak" alone).
func compareHeaders(t *testing.T, name, md, page string) {
	t.Helper()
	row, _, _ := strings.Cut(md[strings.Index(md, "| strategy |"):], "\n")
	mdHeaders := strings.Split(strings.Trim(row, "| "), " | ")[1:]
	var htmlHeaders []string
	if m := htmlCompare.FindStringSubmatch(page); m != nil {
		for _, h := range htmlHeader.FindAllStringSubmatch(m[1], -1) {
			htmlHeaders = append(htmlHeaders, html.UnescapeString(h[1]))
		}
	}
	if !slices.Equal(mdHeaders, htmlHeaders) {
		t.Errorf("%s: report.md's table headers %q, report.html's %q", name, mdHeaders, htmlHeaders)
	}
	var registered []string
	for _, f := range results.Figures() {
		registered = append(registered, f.Header)
	}
	for _, h := range mdHeaders {
		if !slices.Contains(registered, h) && !strings.HasPrefix(h, "peak") {
			t.Errorf("%s: column %q is no figure's header in the registry", name, h)
		}
	}
	if len(mdHeaders) < 10 {
		t.Errorf("%s: only %d headers read from report.md", name, len(mdHeaders))
	}
}
