package reports

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath is where Debian's chromium package installs the browser.
const chromiumPath = "/usr/bin/chromium"

// TestReportInBrowser opens report.html in headless Chromium from a file://
// URL in a 1,400 px wide window and checks that the decision is the first
// block, that every plot renders with a non-zero size, that the strategy
// table fits without scrolling sideways,
// that the page logs no error and fetches nothing, and saves a screenshot. Set
// SIMBENCH_SCREENSHOT_DIR to keep the screenshot.
func TestReportInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("%s not found: install Debian's chromium (apt-get install chromium) to run the browser test", chromiumPath)
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()
	var html bytes.Buffer
	res := tier3Results()
	decision := tier3Decision(t)
	res.Decision = &decision
	if err := WriteHTML(&html, res, tier3Options()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, HTMLFile), html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	page := "file://" + filepath.Join(dir, HTMLFile)

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()

	var (
		mu       sync.Mutex
		problems []string
	)
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	// Listen starts the browser; no timeout on this first call (see chromedp.Run).
	err := chromedp.Listen(ctx, problemListener(report))
	if err != nil {
		t.Fatal(err)
	}

	runCtx, cancelRun := context.WithTimeout(ctx, 60*time.Second)
	defer cancelRun()
	if err := chromedp.Do(runCtx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	checkPlots(t, runCtx)
	checkDecisionFirst(t, runCtx, decision.Sentence)
	checkTableFits(t, runCtx)
	saveScreenshot(t, runCtx)

	// Stop the browser before reading what it reported.
	cancelRun()
	cancel()
	cancelAlloc()
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
}

// checkPlots checks that every plot on the page renders with a non-zero
// size and some paths.
func checkPlots(t *testing.T, runCtx context.Context) {
	t.Helper()
	type box struct {
		ID    string  `json:"id"`
		W     float64 `json:"w"`
		H     float64 `json:"h"`
		Paths int     `json:"paths"`
	}
	boxes, err := chromedp.Run(runCtx, chromedp.Evaluate[[]box](`Array.from(document.querySelectorAll("figure svg")).map(s => {
		const r = s.getBoundingClientRect();
		return {id: s.parentElement.id, w: r.width, h: r.height, paths: s.querySelectorAll("path").length};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	if len(boxes) != len(allFigures) {
		t.Errorf("%d plots on the page, want %d", len(boxes), len(allFigures))
	}
	for _, b := range boxes {
		// The CSS makes a plot as wide as the column, at most 800 px plus
		// its 1 px border on either side.
		if b.W < 400 || b.W > 802 || b.H <= 0 || b.Paths < 10 {
			t.Errorf("plot %s rendered %.0fx%.0f px with %d paths", b.ID, b.W, b.H, b.Paths)
		}
	}
}

// checkDecisionFirst checks that the decision is the page's first block
// and shows sentence.
func checkDecisionFirst(t *testing.T, runCtx context.Context, sentence string) {
	t.Helper()
	type block struct {
		First    string  `json:"first"`
		Sentence string  `json:"sentence"`
		H        float64 `json:"h"`
	}
	db, err := chromedp.Run(runCtx, chromedp.Evaluate[block](`(() => {
		const d = document.querySelector("section.decision");
		const first = Array.from(document.body.children).find(e => !["H1", "P"].includes(e.tagName));
		return {first: first ? first.className : "", sentence: d ? d.querySelector(".sentence").textContent : "",
			h: d ? d.getBoundingClientRect().height : 0};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if db.First != "decision" || db.Sentence != sentence || db.H <= 0 {
		t.Errorf("decision block: first block %q, sentence %q, %.0f px high; want the decision first, showing %q", db.First, db.Sentence, db.H, sentence)
	}
}

// checkTableFits checks that the strategy table fits a 1,400 px window
// without scrolling sideways.
func checkTableFits(t *testing.T, runCtx context.Context) {
	t.Helper()
	type overflow struct {
		Table  float64 `json:"table"`
		Box    float64 `json:"box"`
		Page   float64 `json:"page"`
		Window float64 `json:"window"`
	}
	ov, err := chromedp.Run(runCtx, chromedp.Evaluate[overflow](`(() => {
		const t = document.querySelector("table.comparison");
		return {table: t.scrollWidth, box: t.parentElement.clientWidth,
			page: document.documentElement.scrollWidth, window: document.documentElement.clientWidth};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if ov.Window < 1300 {
		t.Errorf("the page is %.0f px wide; the check wants a 1,400 px window", ov.Window)
	}
	if ov.Table > ov.Box || ov.Page > ov.Window {
		t.Errorf("at 1,400 px the strategy table is %.0f px in a %.0f px box (page %.0f px in a %.0f px window): it scrolls sideways", ov.Table, ov.Box, ov.Page, ov.Window)
	}
}

// saveScreenshot takes a screenshot of the whole page, checks that the
// report is long, and saves it in SIMBENCH_SCREENSHOT_DIR (or a temporary
// folder).
func saveScreenshot(t *testing.T, runCtx context.Context) {
	t.Helper()
	shot, err := chromedp.Run(runCtx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 2000 {
		t.Errorf("screenshot is %dx%d px; the report should be long", b.Dx(), b.Dy())
	}
	shotDir := os.Getenv("SIMBENCH_SCREENSHOT_DIR")
	if shotDir == "" {
		shotDir = t.TempDir()
	}
	path := filepath.Join(shotDir, "report.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// problemListener is a chromedp listener that reports console errors,
// exceptions, error log entries and any fetch beyond the page's own file.
func problemListener(report func(format string, args ...any)) func(ev any) {
	return func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				report("console.%s: %v", ev.Type, ev.Args)
			}
		case *runtime.EventExceptionThrown:
			report("exception: %s", ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				report("log error: %s (%s)", ev.Entry.Text, ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			if u := ev.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
				report("the page fetched %s", u)
			}
		}
	}
}
