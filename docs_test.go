package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/simbench/simbench/internal/mdcheck"
	"github.com/simbench/simbench/internal/racebuild"
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
// (TestDocFigures).
var figurePages = []string{"README.md", "scenarios/README.md"}

// figure is a measured figure as prose quotes one: a number with a unit of
// time, size or share.
var figure = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?\s?(?:%|(?:ms|s|MB|KB|GB|MiB|GiB|CPU-s)\b)`)

// TestDocFigures holds figurePages to their figures: each time, size or
// share their prose quotes (outside code) appears in the output a session
// of the page shows, which TestDocSessions holds to what the command
// prints, or its paragraph carries the date it was measured (YYYY-MM-DD).
func TestDocFigures(t *testing.T) {
	date := regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)
	for _, path := range figurePages {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var shown strings.Builder
		for _, b := range mdcheck.FencedBlocks(src) {
			if b.Lang == "console" {
				shown.WriteString(b.Text)
			}
		}
		for _, p := range mdcheck.Paragraphs(src) {
			if date.MatchString(p.Text) {
				continue
			}
			for _, f := range figure.FindAllString(p.Text, -1) {
				if !strings.Contains(shown.String(), f) {
					t.Errorf("%s:%d: %q is in no session's output on the page and its paragraph has no date: show the command that prints it, or say when and how it was measured", path, p.Line, f)
				}
			}
		}
	}
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
	parser, err := kong.New(&cli, kong.Name("simbench"), kong.Vars{"version": "test"})
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
