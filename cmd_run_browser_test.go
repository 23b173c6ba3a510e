package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestRunReportShowsTheSweep runs `run tier3` as a user would and opens
// its report.html in headless Chromium: the page defends the decision on
// its own, with the sweep figure drawn, the sweep's table, the arithmetic
// and the rule.
func TestRunReportShowsTheSweep(t *testing.T) {
	t.Parallel() // a browser process and a decision: share the cores with the other slow ones
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("%s not found: install Debian's chromium (apt-get install chromium) to run the browser test", chromium)
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()
	cmd := &RunCmd{Scenario: "tier3", Duration: positiveDuration(time.Minute), Seeds: 1, Out: dir, Stdout: io.Discard}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 900))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	// The first call starts the browser: no timeout on it.
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+filepath.Join(dir, "report.html"))); err != nil {
		t.Fatal(err)
	}
	runCtx, cancelRun := context.WithTimeout(ctx, 60*time.Second)
	defer cancelRun()
	type page struct {
		W, H      float64
		Paths     int
		SweepRows int
		Text      string
	}
	got, err := chromedp.Run(runCtx, chromedp.Evaluate[page](`(() => {
		const s = document.querySelector("figure#sweep svg");
		const r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
		const h = Array.from(document.querySelectorAll("h3")).find(e => e.textContent === "Sweep");
		let t = h ? h.nextElementSibling : null;
		while (t && t.tagName !== "TABLE") t = t.nextElementSibling;
		return {W: r.width, H: r.height, Paths: s ? s.querySelectorAll("path").length : 0,
			SweepRows: t ? t.querySelectorAll("tbody tr").length : 0, Text: document.body.innerText};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got.W < 400 || got.H <= 0 || got.Paths < 10 {
		t.Errorf("the sweep figure rendered %.0fx%.0f px with %d paths; want it drawn", got.W, got.H, got.Paths)
	}
	if got.SweepRows < 3 {
		t.Errorf("the sweep table has %d rows; want one per cap swept", got.SweepRows)
	}
	for _, want := range []string{"Little's-law cap", "rule: the smallest cap shown no worse than every better-scoring cap", "with strategy bounded-64, set max_in_flight ="} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
