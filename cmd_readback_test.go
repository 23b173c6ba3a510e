package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/live"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// editEntryTurns sets the turns of the run cached at path to turns,
// leaving its checksum as it was: an edit by hand.
func editEntryTurns(t *testing.T, path string, turns int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // keys hold 64-bit seeds
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	doc["result"].(map[string]any)["turns"] = turns
	if data, err = json.MarshalIndent(doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A cached run edited by hand (999,999 turns) is not printed or written:
// run warns, naming the file, simulates it again, and writes the
// results it wrote before.
func TestRunIgnoresAnEditedCacheEntry(t *testing.T) {
	cache := t.TempDir()
	run := func() (results.Results, string) {
		out := t.TempDir()
		var printed, warned bytes.Buffer
		var mu sync.Mutex
		warn := func(msg string) { mu.Lock(); defer mu.Unlock(); warned.WriteString("warning: " + msg + "\n") }
		c := &RunCmd{Scenario: "burst-8", Duration: positiveDuration(10 * time.Second), Out: out, NoReports: true, NoRecommend: true,
			Stdout: &printed, cacheFlags: cacheFlags{cache: sim.NewCache(cache, "test", warn)}}
		if err := c.Run(); err != nil {
			t.Fatalf("run: %v\n%s", err, printed.String())
		}
		res, err := results.Read(out)
		if err != nil {
			t.Fatal(err)
		}
		return *res, warned.String() + printed.String()
	}
	want, _ := run()
	entries, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	if len(entries) != len(want.Strategies) {
		t.Fatalf("%d cache entries for %d strategies", len(entries), len(want.Strategies))
	}
	editEntryTurns(t, entries[0], 999_999)
	got, out := run()
	if !strings.Contains(out, "ignoring the cached run "+entries[0]) || !strings.Contains(out, "checksum") {
		t.Errorf("no warning naming %s and its checksum in:\n%s", entries[0], out)
	}
	if strings.Contains(out, "999,999") || strings.Contains(out, "999999") {
		t.Errorf("the edited figure is printed:\n%s", out)
	}
	for i := range want.Strategies {
		if g, w := got.Strategies[i].Turns, want.Strategies[i].Turns; g != w {
			t.Errorf("strategy %s: %d turns, want %d as simulated", want.Strategies[i].Name, g, w)
		}
	}
}

// report --merge refuses a member whose fleet size is out of range (-1,
// 2^62, 10^9) as invalid input naming the file and the field, where it
// used to panic or allocate a gigabyte.
func TestReportMergeRefusesFleetOutOfRange(t *testing.T) {
	for _, of := range []string{"-1", "4611686018427387904", "1000000000", "0"} {
		t.Run(of, func(t *testing.T) {
			dir := t.TempDir()
			empty := func() *hdrhistogram.Histogram { return hdrhistogram.New(1, 1<<40, collect.HDRSignificantDigits) }
			m := &live.Member{
				Results: &results.Results{Scenario: "s", Seed: 1, DurationS: 60, Mode: "live", TimeScale: 1,
					Strategies: []results.StrategyResult{{Name: "shared"}}, Fleet: &results.FleetMember{Member: 0, Of: 2, RunID: "r"}},
				Hists: []live.MemberHists{{Strategy: "shared", Turn: empty(), OKTurn: empty(), Call: empty()}},
			}
			if err := live.WriteMember(dir, m); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, results.ResultsFile)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			edited := bytes.Replace(data, []byte(`"of": 2`), []byte(`"of": `+of), 1)
			if bytes.Equal(edited, data) {
				t.Fatalf("no fleet size in %s", data)
			}
			if err := os.WriteFile(path, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := cli("report", "--merge", dir, "--out", t.TempDir())
			if code != exitInvalid || !strings.Contains(stderr, path) || !strings.Contains(stderr, "fleet.of") {
				t.Errorf("exit %d, want %d with a message naming %s and fleet.of\n%s\n%s", code, exitInvalid, path, stdout, stderr)
			}
		})
	}
}
