package live

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/results"
)

// fakeMember builds member i of n from raw turn and call latencies as a
// member's run records them: its histograms and the summaries its results
// carry (the same code computes both for one process).
func fakeMember(i, n int, turns, calls []time.Duration) *Member {
	turn, ok, call := collect.NewHistogram(), collect.NewHistogram(), collect.NewHistogram()
	for _, d := range turns {
		turn.Add(d)
		ok.Add(d)
	}
	for _, d := range calls {
		call.Add(d)
	}
	st := results.StrategyResult{
		Name: "shared", Turns: int64(len(turns)), Calls: int64(len(calls)), Attempts: int64(len(calls) + i), RateLimited: int64(i),
		TurnLatencyMs: turn.Summary(), OKTurnLatencyMs: ok.Summary(), CallLatencyMs: call.Summary(),
		AnswerLatencyMs: ok.AnswerSummary(uint64(len(turns))), GoodputPerS: float64(len(calls)) / 60,
		PeakInFlight: map[string]int{"api": 4}, AttemptsPerCall: []int64{int64(len(calls))},
		Processes: []results.ProcessResult{{Name: memberDirName(i), Turns: int64(len(turns)), Calls: int64(len(calls))}},
	}
	return &Member{
		Results: &results.Results{Scenario: "s", Seed: 1, DurationS: 60, Mode: "live", TimeScale: 1, Strategies: []results.StrategyResult{st},
			Fleet: &results.FleetMember{Member: i, Of: n, RunID: "r"}},
		Hists: []MemberHists{{Strategy: "shared", Turn: turn.Full(), OKTurn: ok.Full(), Call: call.Full()}},
	}
}

// nearestRank is the q-quantile of sorted raw values by nearest rank.
func nearestRank(sorted []time.Duration, q float64) time.Duration {
	return sorted[max(int(math.Ceil(q*float64(len(sorted))))-1, 0)]
}

// Three members' latencies, of uneven counts and spreads, merge into the
// percentiles of the pooled raw latencies within 1% (in fact within the
// histogram's 0.1%), into exactly what one histogram of them all reports,
// and through the files members write, to the same results.
func TestMergeMembersPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var all []time.Duration
	var ms []*Member
	one := collect.NewHistogram()
	for i, spec := range []struct {
		n     int
		scale float64
	}{{900, 300}, {500, 1200}, {150, 4000}} {
		var turns, calls []time.Duration
		for range spec.n {
			d := time.Duration(math.Exp(rng.NormFloat64()*0.6) * spec.scale * float64(time.Millisecond))
			turns = append(turns, d)
			calls = append(calls, d/2)
			one.Add(d)
		}
		all = append(all, turns...)
		ms = append(ms, fakeMember(i, 3, turns, calls))
	}
	res, err := MergeMembers(ms)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Strategies[0]
	slices.Sort(all)
	for _, tt := range []struct {
		q   float64
		got float64
	}{{0.5, st.TurnLatencyMs.P50}, {0.95, st.TurnLatencyMs.P95}, {0.99, st.TurnLatencyMs.P99}} {
		want := float64(nearestRank(all, tt.q)) / 1e6
		if math.Abs(tt.got-want) > 0.01*want {
			t.Errorf("p%.0f: merged %.3f ms, pooled raw %.3f ms: more than 1%% apart", tt.q*100, tt.got, want)
		}
	}
	if w := one.Summary(); st.TurnLatencyMs.P50 != w.P50 || st.TurnLatencyMs.P95 != w.P95 || st.TurnLatencyMs.P99 != w.P99 || st.TurnLatencyMs.Max != w.Max || math.Abs(st.TurnLatencyMs.Mean-w.Mean) > 0.001 {
		t.Errorf("merged %+v, one process's histogram %+v", st.TurnLatencyMs, w)
	}
	if st.Turns != 1550 || st.Calls != 1550 || st.Attempts != 1553 || st.RateLimited != 3 || st.PeakInFlight["api"] != 12 || !st.PeakInFlightBound || st.AttemptsPerCall[0] != 1550 || len(st.Processes) != 3 {
		t.Errorf("merged counts %+v", st)
	}
	if st.AnswerLatencyMs.AnsweredShare != 1 || float64(st.AnswerLatencyMs.P95) != st.TurnLatencyMs.P95 {
		t.Errorf("answer %+v, turn %+v: every turn answered, so the same percentiles", st.AnswerLatencyMs, st.TurnLatencyMs)
	}
	// Through the files: the same merge.
	var read []*Member
	for _, m := range ms {
		dir := t.TempDir()
		if err := WriteMember(dir, m); err != nil {
			t.Fatal(err)
		}
		back, err := ReadMember(dir)
		if err != nil {
			t.Fatal(err)
		}
		read = append(read, back)
	}
	again, err := MergeMembers(read)
	if err != nil {
		t.Fatal(err)
	}
	a, b := again.Strategies[0], st
	if a.TurnLatencyMs != b.TurnLatencyMs || a.CallLatencyMs != b.CallLatencyMs || a.AnswerLatencyMs != b.AnswerLatencyMs || a.Attempts != b.Attempts {
		t.Errorf("merged from files %+v, from memory %+v", a.TurnLatencyMs, b.TurnLatencyMs)
	}
}

// A missing member leaves the others' merge, partial, naming it; members
// of two runs, or one given twice, do not merge.
func TestMergeMembersRefuses(t *testing.T) {
	d := []time.Duration{time.Second, 2 * time.Second}
	m0, m2 := fakeMember(0, 3, d, d), fakeMember(2, 3, d, d)
	res, err := MergeMembers([]*Member{m2, m0})
	if !errors.Is(err, ErrMissingMembers) || !strings.Contains(err.Error(), "member 1 (p2)") {
		t.Fatalf("err %v, want the missing member 1 (p2) named", err)
	}
	if res == nil || !res.Partial || res.Strategies[0].Turns != 4 || res.Strategies[0].Processes[0].Name != "p1" || !strings.Contains(res.Invalid, "member 1 (p2)") {
		t.Fatalf("results %+v: want the others' figures, partial, the missing member named", res)
	}
	// Partial because a member is missing, not because of an interrupt;
	// an interrupted member present is named too.
	if want := "1 of 3 fleet members missing (member 1 (p2))"; res.PartialReason != want {
		t.Errorf("partial reason %q, want %q", res.PartialReason, want)
	}
	m2.Results.Partial = true
	res, _ = MergeMembers([]*Member{m0, m2})
	if want := "1 of 3 fleet members missing (member 1 (p2)); interrupted: member 2 (p3)"; res == nil || res.PartialReason != want {
		t.Errorf("merged %+v, want partial reason %q", res, want)
	}
	other := fakeMember(1, 3, d, d)
	other.Results.Fleet.RunID = "another"
	if _, err := MergeMembers([]*Member{m0, other}); err == nil || !strings.Contains(err.Error(), "merge the members of one run") {
		t.Errorf("two runs: err %v", err)
	}
	if _, err := MergeMembers([]*Member{m0, fakeMember(0, 3, d, d)}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a member twice: err %v", err)
	}
}

// A member that ran the first of two strategies and not the second (its
// results list it as missing) leaves the second merged from the others,
// partial and naming it; the first is whole. A strategy no member ran is
// named too.
func TestMergeMembersStrategyMissing(t *testing.T) {
	d := []time.Duration{time.Second, 2 * time.Second}
	ms := []*Member{fakeMember(0, 2, d, d), fakeMember(1, 2, d, d)}
	for _, m := range ms { // a second strategy, "later"
		st := m.Results.Strategies[0]
		st.Name = "later"
		m.Results.Strategies = append(m.Results.Strategies, st)
		h := m.Hists[0]
		h.Strategy = "later"
		m.Hists = append(m.Hists, h)
	}
	m1 := ms[1]
	m1.Results.Strategies, m1.Hists = m1.Results.Strategies[:1], m1.Hists[:1]
	m1.Results.Fleet.Missing = []string{"later", "never"}
	ms[0].Results.Fleet.Missing = []string{"never"}
	res, err := MergeMembers(ms)
	if !errors.Is(err, ErrMissingMembers) || !strings.Contains(err.Error(), `strategy "later": member 1 (p2)`) || !strings.Contains(err.Error(), `strategy "never": every member`) {
		t.Fatalf("err %v, want member 1 (p2) named for strategy later, and strategy never", err)
	}
	first, later := res.Strategies[0], res.Strategies[1]
	if first.Partial || first.Invalid != "" || first.Turns != 4 || len(first.Processes) != 2 {
		t.Errorf("shared: %+v, want both members' figures, whole", first)
	}
	if !later.Partial || !strings.Contains(later.Invalid, "member 1 (p2) did not run it") || later.Turns != 2 || len(later.Processes) != 1 {
		t.Errorf("later: partial %v, invalid %q, %d turns over %d processes: want member 0's alone, naming member 1 (p2)", later.Partial, later.Invalid, later.Turns, len(later.Processes))
	}
	if !res.Partial || !strings.Contains(res.PartialReason, "member 1 (p2)") {
		t.Errorf("partial %v (%q), want the member that did not run later named", res.Partial, res.PartialReason)
	}
}

// TestMergeMembersAddsKeys: each member counts the requests it sent on
// each key; the fleet's row for a key is their sum, its 429 share worked
// out again from the sums (not an average of the members' shares), and the
// merged results pass results.Check.
func TestMergeMembersAddsKeys(t *testing.T) {
	d := []time.Duration{time.Second, 2 * time.Second}
	m0, m1 := fakeMember(0, 2, d, d), fakeMember(1, 2, d, d)
	levels := func(k, p, o int64) map[string]int64 {
		return map[string]int64{"key": k, "project": p, "organization": o}
	}
	m0.Results.Strategies[0].Keys = map[string][]results.KeyShare{"api": {
		{Key: "heavy", Project: "p", Admitted: 90, RateLimited: 10, RateLimitedShare: 0.1, RateLimitedBy: levels(0, 10, 0)},
		{Key: "light", Project: "p", Admitted: 20, RateLimitedBy: levels(0, 0, 0)},
	}}
	m1.Results.Strategies[0].Keys = map[string][]results.KeyShare{"api": {
		{Key: "heavy", Project: "p", Admitted: 10, RateLimited: 90, RateLimitedShare: 0.9, RateLimitedBy: levels(5, 80, 5)},
		{Key: "solo", Admitted: 3, RateLimitedBy: levels(0, 0, 0)},
	}}
	res, err := MergeMembers([]*Member{m0, m1})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Strategies[0].Keys["api"]
	want := []results.KeyShare{
		{Key: "heavy", Project: "p", Admitted: 100, RateLimited: 100, RateLimitedShare: 100.0 / 200, RateLimitedBy: levels(5, 90, 5)},
		{Key: "light", Project: "p", Admitted: 20, RateLimitedBy: levels(0, 0, 0)},
		{Key: "solo", Admitted: 3, RateLimitedBy: levels(0, 0, 0)},
	}
	if len(got) != len(want) {
		t.Fatalf("merged keys %+v, want %+v", got, want)
	}
	for i, w := range want {
		g := got[i]
		if g.Key != w.Key || g.Project != w.Project || g.Admitted != w.Admitted || g.RateLimited != w.RateLimited || g.RateLimitedShare != w.RateLimitedShare ||
			g.RateLimitedBy["key"] != w.RateLimitedBy["key"] || g.RateLimitedBy["project"] != w.RateLimitedBy["project"] || g.RateLimitedBy["organization"] != w.RateLimitedBy["organization"] {
			t.Errorf("key %d: %+v, want %+v", i, g, w)
		}
	}
	if ps := results.Check("merged", res); len(ps) > 0 {
		t.Errorf("merged results fail their own check: %v", ps)
	}
	if m0.Results.Strategies[0].Keys["api"][0].Admitted != 90 {
		t.Error("the merge changed a member's own figures")
	}
}
