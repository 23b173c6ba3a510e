package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/simbench/simbench/spec"
)

// referenceInputs between them set every key the decoder accepts: the open
// model's keys cannot share a workload with sessions.
var referenceInputs = []string{"testdata/full.toml", "testdata/full-open.toml"}

// formatPage is the reference for scenario files.
const formatPage = "../docs/scenario-format.md"

// TestReference keeps docs/scenario-format.md, the reference for scenario files, complete.
// The decoder itself lists what it accepts: decoding the reference inputs, it
// reports each table's keys as the table finishes (the list unknown keys are
// checked against) and each enum key's values. Every key must appear in the
// format page in backticks, as `key`, and every enum value quoted, as `"value"`.
// Tables keyed by names the file chooses (services, tools, mix,
// max_in_flight_per_service) have no fixed keys and never finish, so their
// names are not listed.
func TestReference(t *testing.T) {
	data, err := os.ReadFile(formatPage)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)

	type key struct {
		paths []string // every path the key was accepted at, first seen first
		set   bool     // some reference input sets it
	}
	keys := map[string]*key{} // by last segment
	var names []string        // keys in the order the decoder asks for them
	values := map[string][]string{}
	var enums []string
	for _, file := range referenceInputs {
		accepts := func(path string, set bool, vals []string) {
			name := lastSegment(path)
			k := keys[name]
			if k == nil {
				k = &key{}
				keys[name] = k
				names = append(names, name)
			}
			if !slices.Contains(k.paths, path) {
				k.paths = append(k.paths, path)
			}
			k.set = k.set || set
			if vals != nil && !slices.Contains(enums, name) {
				enums = append(enums, name)
				values[name] = vals
			}
		}
		if problems := decodeReporting(t, file, accepts); len(problems) > 0 {
			t.Fatalf("%s does not load:\n%s", file, (&Error{Problems: problems}).Error())
		}
	}
	if len(names) < 50 {
		t.Fatalf("the decoder reported %d keys; the hook in table.finish is not being called", len(names))
	}

	for _, name := range names {
		k := keys[name]
		where := k.paths[0]
		if n := len(k.paths) - 1; n > 0 {
			where += fmt.Sprintf(" and %d more", n)
		}
		if !strings.Contains(readme, "`"+name+"`") {
			t.Errorf("%s does not document `%s` (accepted at %s); add it to its section's table", formatPage, name, where)
		}
		if !k.set {
			t.Errorf("no reference input sets %s (accepted at %s); add it to testdata/full.toml and TestFullFile", name, where)
		}
	}
	for _, name := range enums {
		for _, v := range values[name] {
			if !strings.Contains(readme, "`\""+v+"\"`") {
				t.Errorf("%s does not list `\"%s\"`, a value of %s", formatPage, v, name)
			}
		}
	}
}

// TestReferenceExample checks that the README's first TOML block, the
// complete scenario it shows, loads.
func TestReferenceExample(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```toml[^\n]*\n(.*?)```").FindSubmatch(data)
	if m == nil {
		t.Fatal("README.md has no ```toml block")
	}
	if _, err := Parse("README.md", m[1]); err != nil {
		t.Errorf("the README's complete scenario does not load:\n%v", err)
	}
}

// decodeReporting decodes file as Load does, with accepts told every key
// the decoder accepts, and returns the problems found.
func decodeReporting(t *testing.T, file string, accepts func(key string, set bool, values []string)) []Problem {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if _, err := toml.Decode(string(data), &root); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	d := newDecoder(file, indexPositions(data), dirSource{filepath.Dir(file)})
	d.accepts = accepts
	d.decodeScenario(root, strings.TrimSuffix(filepath.Base(file), ".toml"))
	return d.problems
}

// lastSegment returns a dotted key path's last key, without array indices:
// "strategy[1].retry.base" gives "base", "workload.calls" gives "calls".
func lastSegment(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	name, _, _ := strings.Cut(path, "[")
	return name
}

// TestReferenceLimits keeps the format page's table of limits in step with
// the constants: every bound appears there as written.
func TestReferenceLimits(t *testing.T) {
	data, err := os.ReadFile(formatPage)
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "## Limits\n")
	section, _, _ = strings.Cut(section, "\n## ")
	bounds := []string{
		fmt.Sprintf("%d KiB (%d bytes)", MaxFileBytes>>10, MaxFileBytes),
		fmt.Sprintf("at most %d deep", MaxNesting),
		fmt.Sprintf("`%s`", strings.TrimSuffix(MaxDuration.String(), "0m0s")),
		fmt.Sprintf("at least `%s`", MinOverloadEvery),
		fmt.Sprintf("at least `%s`", MinBackoffBase),
		fmt.Sprintf("at least %d an hour", MinRatePerHour),
		fmt.Sprintf("at most %d a second", MaxRequestsPerSecond),
		fmt.Sprintf("at most %d |", MaxRequestsPerMinute),
		fmt.Sprintf("at most %d a second", MaxArrivalRate),
		fmt.Sprintf("`sessions` | at most %d |", MaxSessions),
		fmt.Sprintf("at most %d |", MaxTurns),
		fmt.Sprintf("calls per turn | at most %d |", MaxCallsPerTurn),
		fmt.Sprintf("calls per turn | at most %d |", MaxCallsAtOnce),
		fmt.Sprintf("`count` of `subagents` | at most %d |", MaxSubagents),
		fmt.Sprintf("`max_iterations` | at most %d |", MaxIterations),
		fmt.Sprintf("`attempts` | at most %d |", MaxAttempts),
		fmt.Sprintf("at most %d a call", MaxTokensPerCall),
		fmt.Sprintf("`token_budget` | at most %d |", MaxTokenBudget),
		fmt.Sprintf("at most %d |", MaxCap),
		fmt.Sprintf("at most %d |", MaxLoadFactor),
		fmt.Sprintf("at most %d |", int64(MaxWeight)),
		fmt.Sprintf("at least %s |", spec.ShowAmount(MinHeadroom)),
	}
	if section == "" {
		t.Fatal(formatPage + " has no ## Limits section")
	}
	for _, b := range bounds {
		if !strings.Contains(section, b) {
			t.Errorf("%s's limits do not say %q", formatPage, b)
		}
	}
}
