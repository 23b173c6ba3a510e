package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/results"
)

func TestWriteHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, tier3Results(), tier3Options()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.html", b.Bytes())
}

func TestWriteHTMLSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, tier3Results(), tier3Options()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	// SVG namespace names are identifiers, not addresses: nothing loads them.
	rest := strings.NewReplacer(`xmlns="http://www.w3.org/2000/svg"`, "", `xmlns:xlink="http://www.w3.org/1999/xlink"`, "").Replace(page)
	for _, bad := range []string{"<script", "src=", "href=", "url(", "@import", "http:", "https:", "<?xml", "<link"} {
		if strings.Contains(rest, bad) {
			t.Errorf("report.html contains %q", bad)
		}
	}
	if n := strings.Count(page, "<svg "); n != len(allFigures) {
		t.Errorf("%d inline SVGs, want %d", n, len(allFigures))
	}
	for _, want := range []string{
		`<td class="best" title="best in its column">1,540</td>`, // bounded-8's p95
		"floor(64.16) = 64 in flight",                            // the arithmetic
		"<td>32</td><td>860</td><td>1,220</td><td>141.90</td><td>0.00%</td><td class=\"text\">chosen</td>",
		"<dt>seed</dt><dd>42</dd>",
		"<dt>simbench version</dt><dd>v0.3.0</dd>",
		"<dt>duration</dt><dd>1,200 s</dd>",
		"<dt>partial</dt><dd>no</dd>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

func TestWriteHTMLShowsPlans(t *testing.T) {
	r := tier3Results()
	r.Recommendation = nil
	plan, err := decision.Recommend(decision.Service{Name: "search", RPM: 600, MeanLatency: 800 * time.Millisecond, CallsPerTurn: 8})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r, Options{Plans: []PlanLines{{Service: plan.Service.Name, Lines: plan.Lines()}}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"The results carry no recommendation.",
		"<h3>Arithmetic for search</h3>",
		"turns/min sustainable: floor(420 requests/min ÷ 8 calls/turn) = floor(52.5) = 52",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

func TestWriteHTMLFlagsPartialAndInvalid(t *testing.T) {
	r := tier3Results()
	r.Partial = true
	r.Invalid = "live run fell <40%> behind"
	var b bytes.Buffer
	if err := WriteHTML(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<p class="warning" role="alert">PARTIAL: <span>`,
		`<p class="warning" role="alert">INVALID: <span>live run fell &lt;40%&gt; behind</span>`,
		`<dt>partial</dt><dd class="flag">yes: the run was interrupted</dd>`,
		`<dt>invalid</dt><dd class="flag">yes: live run fell &lt;40%&gt; behind</dd>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// The warnings come before the first table.
	if strings.Index(page, "INVALID") > strings.Index(page, "<table") {
		t.Error("the invalid flag is below the tables")
	}
}

func TestWriteHTMLEscapesNames(t *testing.T) {
	r := tier3Results()
	r.Strategies[0].Name = `<img src=x onerror="alert(1)">`
	r.Scenario = "<b>tier3</b>"
	var b bytes.Buffer
	if err := WriteHTML(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<img") || strings.Contains(b.String(), "<b>tier3") {
		t.Error("a name reached the page as markup")
	}
}

func TestWriteMarkdownGolden(t *testing.T) {
	var names []string
	for _, f := range allFigures {
		names = append(names, f+".png", f+".svg")
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, tier3Results(), names); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.md", b.Bytes())
	md := b.String()
	for _, f := range allFigures {
		if !strings.Contains(md, "]("+f+".png)") {
			t.Errorf("report.md does not link %s.png", f)
		}
		if strings.Contains(md, f+".svg") {
			t.Errorf("report.md links %s.svg; PR comments want PNGs", f)
		}
	}
	if !strings.Contains(md, "| bounded-8 | **6,680** |") {
		t.Error("bounded-8's turns are not bold as the best")
	}
}

func TestWriteMarkdownEscapes(t *testing.T) {
	r := tier3Results()
	r.Strategies[0].Name = "a|b"
	r.Invalid = "clock skew"
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `| a\|b |`) {
		t.Errorf("a pipe in a name is not escaped:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "> **INVALID:** clock skew") {
		t.Errorf("the invalid flag is missing:\n%s", b.String())
	}
	if strings.Contains(b.String(), "## Plots") {
		t.Error("a Plots section without plots")
	}
}

// The results files under testdata are the fixtures as results.json; the
// command tests at the repository root read them. They are compared by
// value, not by bytes, so a field added to the contract does not break them.
func TestFixtureFiles(t *testing.T) {
	for name, want := range map[string]*results.Results{
		"tier3/results.json":       tier3Results(),
		"tier3-later/results.json": tier3Later(),
	} {
		path := filepath.Join("testdata", name)
		if *update {
			data, err := json.MarshalIndent(want, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := results.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s differs from the fixture; run go test ./reports -update", path)
		}
	}
}
