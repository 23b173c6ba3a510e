package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// shardedSweep is the tier3 decision sweep at duration d (0: the
// scenario's) as a person runs it in shards: plan, two shards, plan … until
// the plan is empty. It returns the shards' folders and the rounds taken.
func shardedSweep(t *testing.T, d time.Duration) (dirs []string, rounds int) {
	t.Helper()
	base := t.TempDir()
	cmd := func(out string, dirs []string) *SweepCmd {
		return &SweepCmd{Scenario: "tier3", Dirs: dirs, Duration: positiveDuration(d), Seeds: 3, MaxShare: 0.001, Tolerance: 0.05,
			Out: out, Stdout: &bytes.Buffer{}, cacheFlags: cacheFlags{NoCache: true}}
	}
	for rounds = 1; ; rounds++ {
		if rounds > 30 {
			t.Fatal("the plan is not empty after 30 rounds")
		}
		plan := cmd(filepath.Join(base, "plan"+strconv.Itoa(rounds)), dirs)
		plan.Plan = true
		if err := plan.Run(); err != nil {
			t.Fatalf("round %d: plan: %v", rounds, err)
		}
		// A driver reads the count from the one line printed: no other.
		printed := plan.Stdout.(*bytes.Buffer).String()
		n, err := strconv.Atoi(strings.TrimSuffix(printed, "\n"))
		if err != nil || printed != strconv.Itoa(n)+"\n" {
			t.Fatalf("round %d: plan printed %q, want a count alone on one line", rounds, printed)
		}
		data, err := os.ReadFile(filepath.Join(plan.Out, PlanFile))
		if err != nil {
			t.Fatalf("round %d: %v", rounds, err)
		}
		var p sweepPlan
		if err := json.Unmarshal(data, &p); err != nil || p.Format != planFormat || len(p.Points) != n {
			t.Fatalf("round %d: %s: %v, format %q, %d points, want %q and the %d printed", rounds, PlanFile, err, p.Format, len(p.Points), planFormat, n)
		}
		if n == 0 {
			return dirs, rounds
		}
		var made []string
		for i := range 2 {
			shard := cmd(filepath.Join(base, "round"+strconv.Itoa(rounds)+"-shard"+strconv.Itoa(i)), dirs)
			shard.Shard = memberFlag{i, 2}
			if err := shard.Run(); err != nil {
				t.Fatalf("round %d: shard %d/2: %v", rounds, i, err)
			}
			made = append(made, shard.Out)
		}
		dirs = append(dirs, made...)
	}
}

// checkShardedMerge checks that the merge of the shards' folders dirs,
// made in rounds rounds, writes the sweep.json, and prints the decision,
// of the sweep run in one piece.
func checkShardedMerge(t *testing.T, d time.Duration, dirs []string, rounds int) {
	if rounds < 2 {
		t.Fatalf("%d rounds: the adaptive sweep should need more than the one plan", rounds)
	}
	var wholeOut, mergedOut bytes.Buffer
	whole := &SweepCmd{Scenario: "tier3", Duration: positiveDuration(d), Seeds: 3, MaxShare: 0.001, Tolerance: 0.05, Out: t.TempDir(), Stdout: &wholeOut, cacheFlags: cacheFlags{NoCache: true}}
	if err := whole.Run(); err != nil {
		t.Fatal(err)
	}
	merged := &SweepCmd{Scenario: "tier3", Dirs: dirs, Merge: true, Duration: positiveDuration(d), Seeds: 3, MaxShare: 0.001, Tolerance: 0.05, Out: t.TempDir(), Stdout: &mergedOut, cacheFlags: cacheFlags{NoCache: true}}
	if err := merged.Run(); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(filepath.Join(whole.Out, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(merged.Out, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("the merged sweep.json differs from the sweep's in one piece")
	}
	if !bytes.Contains(a, []byte(`"decision"`)) {
		t.Errorf("sweep.json holds no decision")
	}
	// The printouts differ only in the folder named on the last line.
	w := strings.ReplaceAll(wholeOut.String(), whole.Out, "DIR")
	m := strings.ReplaceAll(mergedOut.String(), merged.Out, "DIR")
	if w != m {
		t.Errorf("merge printed\n%s\nthe sweep in one piece\n%s", m, w)
	}
	t.Logf("%d rounds, %d shard folders", rounds, len(dirs))
}

// Shards and a merge of the tier3 decision sweep, as many rounds as it
// takes, give the sweep's own sweep.json and decision, byte for byte; and
// a merge of those same shards' folders refuses folders that miss a run,
// hold one twice or hold a file that is no run, naming the file. (One
// sharded sweep for both: it is the cost of the test.)
func TestShardedSweep(t *testing.T) {
	t.Parallel() // minutes under the race detector: share the cores with the other slow ones
	dirs, rounds := shardedSweep(t, 20*time.Second)
	t.Run("MatchesWhole", func(t *testing.T) { checkShardedMerge(t, 20*time.Second, dirs, rounds) })
	t.Run("MergeRefuses", func(t *testing.T) { checkMergeRefuses(t, dirs) })
}

// checkMergeRefuses checks that a merge refuses a part of the shards'
// folders dirs, a run in two folders and a file that is no run.
func checkMergeRefuses(t *testing.T, dirs []string) {
	merge := func(dirs []string) error {
		c := &SweepCmd{Scenario: "tier3", Dirs: dirs, Merge: true, Duration: positiveDuration(20 * time.Second), Seeds: 3, MaxShare: 0.001, Tolerance: 0.05,
			Out: t.TempDir(), Stdout: &bytes.Buffer{}, cacheFlags: cacheFlags{NoCache: true}}
		return c.Run()
	}
	if err := merge(dirs[:2]); err == nil || !strings.Contains(err.Error(), "the shards hold no run") || !strings.Contains(err.Error(), "--plan") {
		t.Errorf("merge of the first round only: %v, want the missing runs named", err)
	}
	ents, err := os.ReadDir(dirs[0])
	if err != nil || len(ents) == 0 {
		t.Fatalf("%s: %v, %d files", dirs[0], err, len(ents))
	}
	dup := filepath.Join(t.TempDir(), "copy")
	if err := os.MkdirAll(dup, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dirs[0], ents[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dup, ents[0].Name()), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := merge(append(dirs[:len(dirs):len(dirs)], dup)); err == nil || !strings.Contains(err.Error(), "a point run by two shards") {
		t.Errorf("a run in two folders: %v, want it named", err)
	}
	foreign := filepath.Join(dup, "notes.txt")
	if err := os.WriteFile(foreign, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dup, ents[0].Name())); err != nil {
		t.Fatal(err)
	}
	if err := merge(append(dirs[:len(dirs):len(dirs)], dup)); err == nil || !strings.Contains(err.Error(), foreign) {
		t.Errorf("a file that is no run: %v, want it named", err)
	}
	// The first folder again, one run in it edited by hand.
	edited := filepath.Join(t.TempDir(), "edited")
	if err := os.CopyFS(edited, os.DirFS(dirs[0])); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(edited, ents[0].Name())
	editEntryTurns(t, path, 999_999)
	if err := merge(append([]string{edited}, dirs[1:]...)); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a run edited by hand: %v, want it named", err)
	}
}

// An interrupted --shard exits 130 with a message that says so, as every
// other command does, not 1 with "context canceled". The parent context
// is cancelled before the command starts (a Ctrl-C in its place): the
// sweep over the empty union needs no run, so the interrupt is met by
// the first run of the shard.
func TestShardedSweepInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	c := &SweepCmd{Scenario: "tier3", Seeds: 3, MaxShare: 0.001, Tolerance: 0.05, Out: t.TempDir(), Shard: memberFlag{0, 2},
		Stdout: &bytes.Buffer{}, cacheFlags: cacheFlags{NoCache: true}, parent: ctx}
	err := c.Run()
	if want := "interrupted: 0 of shard 0/2's 3 runs finished"; codeOf(err) != exitInterrupted || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run() = %v (exit %d), want exit %d and %q", err, codeOf(err), exitInterrupted, want)
	}
}
