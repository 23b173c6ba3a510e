package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/simbench/simbench/check"
	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/gate"
	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/mdcheck"
	"github.com/simbench/simbench/internal/racebuild"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// The budget of the documentation's sessions: every command they show runs
// in the race suite, so they stay few and cheap (virtual time; seconds of
// CPU each without the race detector). A page that needs more shows the
// output as ```text, unrun, with the command and date it was measured.
const (
	// maxSessionCommands bounds the commands of every session together.
	maxSessionCommands = 8
	// sessionHang ends a command that has hung (a guard, never a verdict
	// on speed: a busy machine under -race may take a minute).
	sessionHang = 5 * time.Minute
)

// sessionCommands are the commands a session may run: virtual-time work
// and readers of files. serve, check, worker and --live run in real time,
// whose figures depend on the machine's load; gate reads bench files.
var sessionCommands = []string{"run", "sweep", "recommend", "validate", "scenarios", "report", "compare"}

// TestDocSessions runs every session block (```console, lines "$ simbench
// …") of the README and docs/ with this build of simbench, in a folder of
// the page's own that holds the page's files (```toml file=NAME blocks),
// and fails when the output differs from what the page shows (mdcheck.Match:
// "⋯" stands for lines or text the page leaves out) or the exit code from
// the one it states.
//
// Under the race detector every command would run race-instrumented, some
// ten times slower (the README's run: about 29 CPU-s instead of 3), so the
// race suite skips it and make test runs it in its long checks
// (TestLongDocSessions), without the race detector.
func TestDocSessions(t *testing.T) {
	if racebuild.On {
		t.Skip("the documentation's sessions run without the race detector: make test-long runs them (TestLongDocSessions)")
	}
	docSessions(t)
}

// docSessions is TestDocSessions's work.
func docSessions(t *testing.T) {
	exe, err := os.Executable() // runs as simbench: see TestMain
	if err != nil {
		t.Fatal(err)
	}
	commands := 0
	for _, path := range docFiles(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks := mdcheck.FencedBlocks(src)
		dir := ""
		for _, b := range blocks {
			if b.Lang != "console" {
				continue
			}
			if dir == "" {
				dir = pageFolder(t, path, blocks)
			}
			cmds, err := mdcheck.Session(b)
			if err != nil {
				t.Errorf("%s:%d: %v", path, b.Line, err)
				continue
			}
			for _, c := range cmds {
				commands++
				if commands > maxSessionCommands {
					t.Fatalf("%s:%d: more than %d commands in the documentation's sessions: the budget keeps the suite fast; show the output as ```text with the command and date it was measured instead", path, c.Line, maxSessionCommands)
				}
				runSession(t, exe, dir, path, c)
			}
		}
	}
	if commands == 0 {
		t.Fatal("no session block in the documentation")
	}
}

// pageFolder makes the folder a page's sessions run in and writes the
// page's files into it.
func pageFolder(t *testing.T, path string, blocks []mdcheck.Block) string {
	t.Helper()
	dir := t.TempDir()
	for _, b := range blocks {
		name := b.Attrs["file"]
		if name == "" {
			continue
		}
		if filepath.Base(name) != name {
			t.Fatalf("%s:%d: file=%s: a page's file is a plain name", path, b.Line, name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.Text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runSession runs one command of a session in dir and checks its standard
// output and exit code against the page.
func runSession(t *testing.T, exe, dir, path string, c mdcheck.Command) {
	t.Helper()
	where := fmt.Sprintf("%s:%d", path, c.Line)
	if c.Args[0] != "simbench" || len(c.Args) < 2 || !slices.Contains(sessionCommands, c.Args[1]) {
		t.Errorf("%s: %q: a session runs simbench %s", where, strings.Join(c.Args, " "), strings.Join(sessionCommands, "|"))
		return
	}
	if slices.Contains(c.Args, "--live") {
		t.Errorf("%s: a session runs in virtual time: --live depends on the machine's load", where)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sessionHang)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, c.Args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if ps := cmd.ProcessState; ps != nil {
		t.Logf("%s: %s: %.2f CPU-s", where, strings.Join(c.Args, " "), (ps.UserTime() + ps.SystemTime()).Seconds())
	}
	if code != c.Exit {
		t.Errorf("%s: %s exited %d, the page says %d; standard error:\n%s", where, strings.Join(c.Args, " "), code, c.Exit, stderr.String())
	}
	if diff := mdcheck.Match(c.Want, stdout.String()); diff != "" {
		t.Errorf("%s: %s: the page's output has drifted: %s\nthe command printed:\n%s", where, strings.Join(c.Args, " "), diff, stdout.String())
	}
}

// figurePages are the pages whose prose quotes no measured figure that
// neither a session of the page shows nor a date in its paragraph dates
// (TestDocFigures); docs/*.md are held too.
var figurePages = []string{"README.md", "scenarios/README.md"}

// figure is a measured figure as prose quotes one: a number with a unit of
// time, size or share, standing on its own ("p95s" and "float32s" are
// names). A status code's plural ("429s", "5xx") is no figure:
// statusPlural tells it.
var figure = regexp.MustCompile(`\b\d[\d,]*(?:\.\d+)?\s?(?:%|(?:ms|s|MB|KB|GB|MiB|GiB|CPU-s)\b)`)

// statusPlural is an HTTP status code's plural ("429s": the 429 answers),
// which figure matches as seconds.
var statusPlural = regexp.MustCompile(`^[45]\d\ds$`)

// figureNote is a note in a paragraph's source that a figure in it is no
// measurement (Markdown renders it as nothing):
//
//	<!-- default 5%: sweep --tolerance -->   a flag's default, held to --help's
//	<!-- const 250 ms: check.DefaultAbandonGrace -->   a constant of docConstants
//	<!-- defined 95%: the intervals' confidence -->   a definition, by its reason
//
// "default" notes are checked against the flag's default as the parser
// has it, "const" notes against the constant's value; "defined" notes are few (maxDefinedNotes) and each names its
// reason for a reviewer.
var figureNote = regexp.MustCompile(`<!-- (default|const|defined) ([^:]+): ([^>]*?) -->`)

// maxDefinedNotes bounds the "defined" notes of every page together, at
// the count the pages hold: a note the compiler cannot check is added only
// by raising it, in the same change, for a reviewer to see.
const maxDefinedNotes = 39

// TestDocFigures holds figurePages and docs/*.md to their figures: each
// time, size or share their prose quotes (outside code) appears in the
// output a session of the page shows, which TestDocSessions holds to what
// the command prints, or its paragraph carries the date it was measured
// (YYYY-MM-DD), or a note in the paragraph (figureNote) shows it is a flag's
// default or a definition rather than a measurement.
func TestDocFigures(t *testing.T) {
	date := regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)
	defaults := flagDefaults(t)
	defined := 0
	used := map[string]bool{} // docConstants a note names
	for _, path := range append(figurePages, docFiles(t)[4:]...) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		var shown strings.Builder
		for _, b := range mdcheck.FencedBlocks(src) {
			if b.Lang == "console" {
				shown.WriteString(b.Text)
			}
		}
		paras := mdcheck.Paragraphs(src)
		onLine := map[int][]string{} // a table row's cells share a line
		for _, p := range paras {
			onLine[p.Line] = append(onLine[p.Line], figure.FindAllString(p.Text, -1)...)
		}
		for _, p := range paras {
			if date.MatchString(p.Text) {
				continue
			}
			noted := map[string]bool{}
			for _, n := range figureNote.FindAllStringSubmatch(paragraphSource(lines, p.Line), -1) {
				kind, fig, why := n[1], n[2], n[3]
				if !slices.Contains(onLine[p.Line], fig) {
					t.Errorf("%s:%d: the note on %q names no figure of its paragraph", path, p.Line, fig)
					continue
				}
				if !slices.Contains(figure.FindAllString(p.Text, -1), fig) {
					continue // another cell's
				}
				switch kind {
				case "defined":
					defined++
				case "default":
					if err := isDefault(defaults, fig, why); err != nil {
						t.Errorf("%s:%d: %v", path, p.Line, err)
						continue
					}
				case "const":
					v, ok := docConstants[why]
					used[why] = true
					if !ok {
						t.Errorf("%s:%d: const %s: %q is not in docConstants", path, p.Line, fig, why)
						continue
					}
					if err := isDefault(map[string]string{why: v}, fig, why); err != nil {
						t.Errorf("%s:%d: %v", path, p.Line, err)
						continue
					}
				}
				noted[fig] = true
			}
			for _, f := range figure.FindAllString(p.Text, -1) {
				if statusPlural.MatchString(f) || noted[f] {
					continue
				}
				if !strings.Contains(shown.String(), f) && !inOutput(shown.String(), f) {
					t.Errorf("%s:%d: %q is in no session's output on the page and its paragraph has no date: show the command that prints it, or say when and how it was measured", path, p.Line, f)
				}
			}
		}
	}
	for name := range docConstants {
		if !used[name] {
			t.Errorf("docConstants holds %s, which no page's note names: remove it", name)
		}
	}
	if defined > maxDefinedNotes {
		t.Errorf("%d figures are noted as definitions, more than maxDefinedNotes (%d): date the measured ones, note a constant or a flag's default as one, or raise it for a reviewer to see", defined, maxDefinedNotes)
	}
}

// inOutput reports whether the number of figure f ("2,349 ms", "87.0%")
// stands in a session's output as a number of its own ("2,349*" in a
// table): a number of at least three digits, so that a "1%" or a "5 s" is
// not found in any output.
func inOutput(shown, f string) bool {
	num := strings.TrimRight(f, "%abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ- ")
	if len(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, num)) < 3 {
		return false
	}
	return regexp.MustCompile(`(?:^|[^\d.,])` + regexp.QuoteMeta(num) + `(?:[^\d.,]|[.,]\D|$)`).MatchString(shown)
}

// docConstants are the constants a page's figure may be noted as
// ("<!-- const 250 ms: check.DefaultAbandonGrace -->"), by their Go names,
// with their values as the compiler has them: a duration as a Go
// duration, a share as a fraction, a size in bytes with its unit.
var docConstants = map[string]string{
	"check.DefaultRateLimitedWarn":      fmt.Sprint(check.DefaultRateLimitedWarn),
	"check.DefaultRateLimitedFail":      fmt.Sprint(check.DefaultRateLimitedFail),
	"check.DefaultJitterWindow":         check.DefaultJitterWindow.String(),
	"check.DefaultJitterMinSpread":      check.DefaultJitterMinSpread.String(),
	"check.DefaultAbandonGrace":         check.DefaultAbandonGrace.String(),
	"check.DefaultRetryGap":             check.DefaultRetryGap.String(),
	"check.CommandGrace":                check.CommandGrace.String(),
	"check.DefaultAnswerGapWarn":        check.DefaultAnswerGapWarn.String(),
	"sim.WindowSettle":                  collect.WindowSettle.String(),
	"results.MaxFileBytes":              fmt.Sprintf("%dMiB", results.MaxFileBytes>>20),
	"sim.MaxReadBackBytes":              fmt.Sprintf("%dMiB", sim.MaxReadBackBytes>>20),
	"sim.DefaultMaxMemory":              fmt.Sprintf("%dGiB", sim.DefaultMaxMemory>>30),
	"decision.MinAnsweredShare":         fmt.Sprint(decision.MinAnsweredShare),
	"scenarios.DefaultQuotaRTT":         scenarios.DefaultQuotaRTT.String(),
	"scenarios.DefaultQuotaTimeout":     scenarios.DefaultQuotaTimeout.String(),
	"scenarios.DefaultNetworkDelay.P50": scenarios.DefaultNetworkDelay.P50.String(),
	"scenarios.DefaultNetworkDelay.P95": scenarios.DefaultNetworkDelay.P95.String(),
	"gate p95-turn-ms":                  gateTolerance("p95-turn-ms"),
	"gate wasted-s":                     gateTolerance("wasted-s"),
}

// gateTolerance is the tolerance of a deterministic unit of the gate, as a
// fraction ("" for a unit it has none of).
func gateTolerance(unit string) string {
	t, ok := gate.Lookup(unit)
	if !ok {
		return ""
	}
	return fmt.Sprint(t.MaxWorse)
}

// paragraphSource returns the source of the paragraph whose text starts on
// line (1-based): a table row's own line, or the lines up to a blank one,
// a fence or the next list item.
func paragraphSource(lines []string, line int) string {
	if line < 1 || line > len(lines) {
		return ""
	}
	if strings.HasPrefix(strings.TrimSpace(lines[line-1]), "|") {
		return lines[line-1]
	}
	end := line
	for end < len(lines) {
		l := strings.TrimSpace(lines[end])
		if l == "" || strings.HasPrefix(l, "```") || listItem.MatchString(lines[end]) {
			break
		}
		end++
	}
	return strings.Join(lines[line-1:end], "\n")
}

// listItem is the first line of a list item.
var listItem = regexp.MustCompile(`^\s*(?:[-*+]|\d+\.)\s`)

// flagDefaults returns each visible flag's default as the parser has it,
// by "COMMAND --FLAG".
func flagDefaults(t *testing.T) map[string]string {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("simbench"), kong.Vars{"version": "test"}, decisionVars)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range parser.Model.Node.Children {
		for _, f := range n.Flags {
			out[n.Name+" --"+f.Name] = f.Default
		}
	}
	return out
}

// isDefault reports whether fig ("5%", "250 ms") is the default of flag
// ("sweep --tolerance"): a share as a fraction or a percent, a time as a
// Go duration.
func isDefault(defaults map[string]string, fig, flag string) error {
	def, ok := defaults[flag]
	if !ok {
		return fmt.Errorf("default %s: no flag %q (COMMAND --FLAG)", fig, flag)
	}
	f := strings.ReplaceAll(strings.ReplaceAll(fig, " ", ""), ",", "")
	if pct, ok := strings.CutSuffix(f, "%"); ok {
		want, err1 := strconv.ParseFloat(pct, 64)
		got, err2 := strconv.ParseFloat(strings.TrimSuffix(def, "%"), 64)
		if err1 == nil && err2 == nil && (got == want || math.Abs(got*100-want) < 1e-9) {
			return nil
		}
	} else if want, err := time.ParseDuration(f); err == nil {
		if got, err := time.ParseDuration(def); err == nil && got == want {
			return nil
		}
	}
	if f == strings.ReplaceAll(def, " ", "") { // a size: "4GiB"
		return nil
	}
	return fmt.Errorf("%s is not %s, which is %q", fig, flag, def)
}

// flagPages names the page that documents each command's flags, under the
// heading "### `simbench NAME` flags".
var flagPages = map[string]string{
	"run": "docs/commands.md", "sweep": "docs/commands.md", "recommend": "docs/commands.md",
	"report": "docs/commands.md", "compare": "docs/commands.md", "calibrate": "docs/commands.md",
	"validate": "docs/commands.md", "scenarios": "docs/commands.md", "install-completions": "docs/commands.md",
	"serve": "docs/serve-and-check.md", "check": "docs/serve-and-check.md",
	"gate":   "docs/gate.md",
	"worker": "docs/fleets-and-sweeps.md",
}

// flagRow is a row of a flags table: "| `-s, --strategy=NAME` | …".
var flagRow = regexp.MustCompile("(?m)^\\| `(?:-[a-zA-Z], )?--([a-z0-9-]+)")

// TestHelpMatchesDocs holds each command's flags table to its --help: the
// parser is built from the CLI struct, as runMain builds it, and each
// command's visible flags (its --help's, but --help and --version, which
// every command takes) must be the flags its page's table lists, no more
// and no fewer.
func TestHelpMatchesDocs(t *testing.T) {
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("simbench"), kong.Vars{"version": "test"}, decisionVars)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range parser.Model.Node.Children {
		if n.Hidden {
			continue
		}
		page, ok := flagPages[n.Name]
		if !ok {
			t.Errorf("command %s has no page in flagPages: document its flags", n.Name)
			continue
		}
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		heading := "### `simbench " + n.Name + "` flags\n"
		_, section, found := strings.Cut(string(src), "\n"+heading)
		if !found {
			t.Errorf("%s: no heading %q", page, strings.TrimSpace(heading))
			continue
		}
		if i := strings.Index(section, "\n#"); i >= 0 {
			section = section[:i]
		}
		var documented, help []string
		for _, m := range flagRow.FindAllStringSubmatch(section, -1) {
			documented = append(documented, m[1])
		}
		for _, f := range n.Flags {
			if !f.Hidden {
				help = append(help, f.Name)
			}
		}
		for _, f := range help {
			if !slices.Contains(documented, f) {
				t.Errorf("%s: simbench %s --help lists --%s, which the page's table does not", page, n.Name, f)
			}
		}
		for _, f := range documented {
			if !slices.Contains(help, f) {
				t.Errorf("%s: the table of simbench %s lists --%s, which its --help does not", page, n.Name, f)
			}
		}
		if len(help) == 0 && !strings.Contains(section, "None besides") {
			t.Errorf("%s: simbench %s has no flags of its own: say so under its heading", page, n.Name)
		}
	}
}
