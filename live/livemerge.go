package live

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// MemberHistFile is the file beside a fleet member's results.json that
// holds its latency histograms: an HdrHistogram interval log (format 1.3),
// three intervals per strategy in strategy order, tagged turn:, ok-turn:
// and call: with the strategy's name, each over the run's duration.
const MemberHistFile = "histograms.hlog"

// memberHistKinds are the intervals of a strategy in MemberHistFile, in order.
var memberHistKinds = []string{"turn", "ok-turn", "call"}

// WriteMember writes a member's results.json and MemberHistFile into dir,
// each atomically.
func WriteMember(dir string, m *Member) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("live: %w", err)
	}
	var hs []*hdrhistogram.Histogram
	var tags []string
	end := time.Duration(m.Results.DurationS * float64(time.Second)).Milliseconds()
	for _, mh := range m.Hists {
		for i, h := range []*hdrhistogram.Histogram{mh.Turn, mh.OKTurn, mh.Call} {
			c := hdrhistogram.Import(h.Export())
			c.SetStartTimeMs(0)
			c.SetEndTimeMs(end)
			hs = append(hs, c)
			tags = append(tags, memberHistKinds[i]+":"+mh.Strategy)
		}
	}
	var buf bytes.Buffer
	what := fmt.Sprintf("latencies of fleet member %d of %d (run %s)", m.Results.Fleet.Member, m.Results.Fleet.Of, m.Results.Fleet.RunID)
	units := "[Values are latencies in nanoseconds (1 ns … 2^40 µs, 3 significant digits); Interval_Max is in milliseconds; per strategy: turn, ok-turn (answered in full), call]"
	if err := collect.WriteHDRLogTagged(&buf, what, units, tags, hs); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, MemberHistFile), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("live: %w", err)
	}
	return results.Write(dir, m.Results)
}

// ReadMember reads what WriteMember wrote into dir: its results.json as
// results.Read reads and checks it, and MemberHistFile as a file read
// back (readBack: a regular file of at most MaxReadBackBytes) whose
// histograms hold as many turns and calls as the results count
// (checkCounts). An error names the file and what is wrong with it.
func ReadMember(dir string) (*Member, error) {
	res, err := results.Read(dir)
	if err != nil {
		return nil, err
	}
	if res.Fleet == nil {
		return nil, fmt.Errorf("%s: not a fleet member's results (no \"fleet\"): write them with simbench worker", filepath.Join(dir, results.ResultsFile))
	}
	path := filepath.Join(dir, MemberHistFile)
	data, err := sim.ReadBack(path)
	if err != nil {
		return nil, err
	}
	var hs []*hdrhistogram.Histogram
	lr := hdrhistogram.NewHistogramLogReader(bytes.NewReader(data))
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("%s: interval %d: %w", path, len(hs)+1, err)
		}
		if h == nil {
			break
		}
		if err := sim.CheckLayout(fmt.Sprintf("%s: interval %d", path, len(hs)+1), h, int64(collect.HistMax)); err != nil {
			return nil, err
		}
		hs = append(hs, h)
		if len(hs) > len(memberHistKinds)*len(res.Strategies) {
			break // one too many: refused below
		}
	}
	m := &Member{Results: res}
	if want := len(memberHistKinds) * len(res.Strategies); len(hs) > want {
		return nil, fmt.Errorf("%s: more than %d histograms for %d strategies: want %d each", path, want, len(res.Strategies), len(memberHistKinds))
	} else if len(hs) < want {
		return nil, fmt.Errorf("%s: %d histograms for %d strategies: want %d each", path, len(hs), len(res.Strategies), len(memberHistKinds))
	}
	for i := range res.Strategies {
		name := res.Strategies[i].Name
		h := hs[3*i : 3*i+3]
		for k, kind := range memberHistKinds {
			if want := collect.BadTag.ReplaceAllString(kind+":"+name, "_"); h[k].Tag() != want {
				return nil, fmt.Errorf("%s: interval %d is tagged %q: want %q", path, 3*i+k+1, h[k].Tag(), want)
			}
		}
		if err := sim.CheckCounts(filepath.Join(dir, results.ResultsFile), path, &res.Strategies[i], h[0], h[1], h[2]); err != nil {
			return nil, err
		}
		m.Hists = append(m.Hists, MemberHists{Strategy: name, Turn: h[0], OKTurn: h[1], Call: h[2]})
	}
	return m, nil
}

// ErrMissingMembers is wrapped by MergeMembers's error when members of the
// fleet are missing: the merged results cover the others only.
var ErrMissingMembers = errors.New("fleet members missing")

// MergeMembers combines the members of one fleet run into the results
// one run of the whole fleet reports: every count summed (turns, calls,
// attempts, 429s, failures, attempts per call), rates and time averages
// summed (they share the duration), the latency summaries and plot series
// computed from the members' histograms pooled bucket for bucket (the
// same code computes them for one process), and each strategy's
// per-process rows the members' own. Peaks in flight (per service and in
// the timeline's buckets) are the sums of the members' peaks: a bound on
// the fleet's, which the members cannot see together
// (PeakInFlightBound says so). The adaptive
// limits' traces, one per process, are left out. When members are
// missing, or a strategy lacks members that did not run it (listed in
// their Fleet.Missing), the results cover the others, Invalid and
// PartialReason say which are missing (and Partial is set, on the
// strategy lacking members), and the error wraps ErrMissingMembers; members of another
// run, duplicates, or results that are not a member's are an error.
func MergeMembers(ms []*Member) (*results.Results, error) {
	if len(ms) == 0 {
		return nil, errors.New("live: no fleet members to merge")
	}
	ms = slices.Clone(ms)
	slices.SortFunc(ms, func(a, b *Member) int { return a.Results.Fleet.Member - b.Results.Fleet.Member })
	first := ms[0].Results
	seen, err := checkMembers(ms)
	if err != nil {
		return nil, err
	}
	out := *first
	out.Fleet = nil
	out.Strategies = nil
	out.Invalid, out.PartialReason = "", ""
	out.Events = slices.Clone(first.Events)
	for _, m := range ms[1:] {
		out.Partial = out.Partial || m.Results.Partial
		for _, e := range m.Results.Events {
			if !slices.Contains(out.Events, e) {
				out.Events = append(out.Events, e)
			}
		}
	}
	var invalid []string
	for _, m := range ms {
		if m.Results.Invalid != "" {
			invalid = append(invalid, fmt.Sprintf("p%d: %s", m.Results.Fleet.Member+1, m.Results.Invalid))
		}
	}
	names, unrun := strategyNames(ms)
	lacking, err := mergeStrategies(ms, names, &out)
	if err != nil {
		return nil, err
	}
	for _, name := range unrun {
		lacking = append(lacking, fmt.Sprintf("strategy %q: every member", name))
	}
	if why := markMissing(&out, ms, seen, lacking); why != "" {
		invalid = append([]string{why + ": the figures cover the others"}, invalid...)
		err = fmt.Errorf("live: run %q: %w: %s", first.Fleet.RunID, ErrMissingMembers, strings.Join(append(missingMembers(seen), lacking...), "; "))
	}
	if len(invalid) > 0 {
		out.Invalid = joinReasons(invalid)
	}
	return &out, err
}

// checkMembers checks that the members, sorted by index, are of one run
// and one scenario, seed, duration and time scale, each once and in
// range, and returns which of the fleet's members are present.
func checkMembers(ms []*Member) (seen []bool, err error) {
	first := ms[0].Results
	of := first.Fleet.Of
	if of < 1 || of > results.MaxFleetMembers {
		return nil, fmt.Errorf("live: a fleet of %d members: want 1 to %d", of, results.MaxFleetMembers)
	}
	seen = make([]bool, of)
	for _, m := range ms {
		r := m.Results
		switch {
		case r.Fleet.RunID != first.Fleet.RunID || r.Fleet.Of != of:
			return nil, fmt.Errorf("live: member %d is of run %q (%d members), member %d of run %q (%d members): merge the members of one run",
				r.Fleet.Member, r.Fleet.RunID, r.Fleet.Of, first.Fleet.Member, first.Fleet.RunID, of)
		case r.Fleet.Member < 0 || r.Fleet.Member >= of:
			return nil, fmt.Errorf("live: member %d of %d: out of range", r.Fleet.Member, of)
		case seen[r.Fleet.Member]:
			return nil, fmt.Errorf("live: member %d of run %q given twice", r.Fleet.Member, r.Fleet.RunID)
		case r.ScenarioDigest != first.ScenarioDigest || r.Seed != first.Seed || r.DurationS != first.DurationS || r.TimeScale != first.TimeScale:
			return nil, fmt.Errorf("live: member %d ran another scenario, seed, duration or time scale than member %d", r.Fleet.Member, first.Fleet.Member)
		}
		seen[r.Fleet.Member] = true
	}
	return seen, nil
}

// strategyNames returns the strategies some member ran, in the order the
// members list them, and those every member present lists as not run
// (Fleet.Missing).
func strategyNames(ms []*Member) (names, unrun []string) {
	for _, m := range ms {
		for _, st := range m.Results.Strategies {
			if !slices.Contains(names, st.Name) {
				names = append(names, st.Name)
			}
		}
	}
	for _, m := range ms {
		for _, name := range m.Results.Fleet.Missing {
			if !slices.Contains(names, name) && !slices.Contains(unrun, name) {
				unrun = append(unrun, name)
			}
		}
	}
	return names, unrun
}

// mergeStrategies merges each named strategy over the members that ran it
// into out.Strategies, marking Partial and Invalid one that some member
// did not run, and returns those, as "strategy "x": member i (pN), …".
func mergeStrategies(ms []*Member, names []string, out *results.Results) (lacking []string, err error) {
	for _, name := range names {
		var parts []*results.StrategyResult
		var hs []*MemberHists
		var without []string
		for _, m := range ms {
			if st := m.Results.Strategy(name); st != nil {
				parts = append(parts, st)
				hs = append(hs, m.hists(name))
			} else {
				without = append(without, memberName(m.Results.Fleet.Member))
			}
		}
		st, err := mergeStrategy(parts, hs)
		if err != nil {
			return nil, fmt.Errorf("live: strategy %q: %w", name, err)
		}
		if len(without) > 0 {
			st.Partial = true
			why := fmt.Sprintf("%s did not run it: the figures cover the others", strings.Join(without, ", "))
			st.Invalid = joinReasons(append([]string{why}, nonEmpty(st.Invalid)...))
			lacking = append(lacking, fmt.Sprintf("strategy %q: %s", name, strings.Join(without, ", ")))
		}
		out.Strategies = append(out.Strategies, st)
	}
	return lacking, nil
}

// missingMembers names the fleet's members not present (seen false).
func missingMembers(seen []bool) []string {
	var missing []string
	for i, ok := range seen {
		if !ok {
			missing = append(missing, memberName(i))
		}
	}
	return missing
}

// markMissing marks the merged results out Partial when members are
// missing or strategies lacking (not run by every member), saying why in
// PartialReason with the members present but interrupted, and every
// strategy Partial when members are missing. It returns why ("" when
// nothing is missing).
func markMissing(out *results.Results, ms []*Member, seen []bool, lacking []string) string {
	missing := missingMembers(seen)
	if len(missing) == 0 && len(lacking) == 0 {
		return ""
	}
	var whys []string
	if len(missing) > 0 {
		whys = append(whys, fmt.Sprintf("%d of %d fleet members missing (%s)", len(missing), len(seen), strings.Join(missing, ", ")))
	}
	if len(lacking) > 0 {
		whys = append(whys, "strategies not run by every member ("+strings.Join(lacking, "; ")+")")
	}
	why := strings.Join(whys, "; ")
	reason := why
	var stopped []string // members present but interrupted
	for _, m := range ms {
		if m.Results.Partial {
			stopped = append(stopped, memberName(m.Results.Fleet.Member))
		}
	}
	if len(stopped) > 0 {
		reason += "; interrupted: " + strings.Join(stopped, ", ")
	}
	out.Partial, out.PartialReason = true, reason
	if len(missing) > 0 {
		for i := range out.Strategies {
			out.Strategies[i].Partial = true
		}
	}
	return why
}

// memberName names member i (0-based) of a fleet as reports do: "member
// 1 (p2)".
func memberName(i int) string { return fmt.Sprintf("member %d (p%d)", i, i+1) }

// nonEmpty returns s as a list of one reason, or none when s is "".
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// hists returns the member's histograms of strategy name (nil: none).
func (m *Member) hists(name string) *MemberHists {
	for i := range m.Hists {
		if m.Hists[i].Strategy == name {
			return &m.Hists[i]
		}
	}
	return nil
}

// addFigures adds a member's figures p of a strategy to the fleet's r:
// counts, rates, peaks, quota used, the attempts' distributions, the
// timelines and the per-process rows.
func addFigures(r, p *results.StrategyResult) {
	r.Turns += p.Turns
	r.FailedTurns += p.FailedTurns
	r.UnfinishedTurns += p.UnfinishedTurns
	r.RefusedTurns += p.RefusedTurns
	r.NotSent += p.NotSent
	r.Calls += p.Calls
	r.Attempts += p.Attempts
	r.RateLimited += p.RateLimited
	r.Failed += p.Failed
	r.EarlyRetries += p.EarlyRetries
	r.WastedWorkS += p.WastedWorkS
	r.WastedTokens += p.WastedTokens
	r.WriteRaces += p.WriteRaces
	r.Conflicts += p.Conflicts
	r.GoodputPerS += p.GoodputPerS
	r.AnsweredGoodputPerS += p.AnsweredGoodputPerS
	r.AnsweredTurnsPerS += p.AnsweredTurnsPerS
	r.AchievedTurnsPerS += p.AchievedTurnsPerS
	r.TurnsInSystem += p.TurnsInSystem
	r.AttemptsInService += p.AttemptsInService
	for svc, n := range p.PeakInFlight {
		r.PeakInFlight[svc] += n
	}
	for svc, u := range p.QuotaUsed {
		r.QuotaUsed[svc] += u
	}
	r.AttemptsPerCall = addCounts(r.AttemptsPerCall, p.AttemptsPerCall)
	r.AttemptsPerFailedCall = addCounts(r.AttemptsPerFailedCall, p.AttemptsPerFailedCall)
	r.Timeline = addTimeline(r.Timeline, p.Timeline)
	for svc, tl := range p.ServiceTimelines {
		if r.ServiceTimelines == nil {
			r.ServiceTimelines = map[string][]results.TimelinePoint{}
		}
		r.ServiceTimelines[svc] = addTimeline(r.ServiceTimelines[svc], tl)
	}
	r.Keys = collect.AddKeys(r.Keys, p.Keys)
	r.Processes = append(r.Processes, p.Processes...)
}

// mergeStrategy combines one strategy's figures from several members.
func mergeStrategy(parts []*results.StrategyResult, hs []*MemberHists) (results.StrategyResult, error) {
	p0 := parts[0]
	r := results.StrategyResult{
		Name: p0.Name, MaxInFlight: p0.MaxInFlight, Retry: p0.Retry, Headroom: p0.Headroom, OfferedTurnsPerS: p0.OfferedTurnsPerS,
		MaxInFlightPerService: p0.MaxInFlightPerService, PeakInFlight: map[string]int{}, QuotaUsed: map[string]float64{},
	}
	turn, ok, call := collect.NewHistogram(), collect.NewHistogram(), collect.NewHistogram()
	finish := 0.0
	var invalid []string
	for i, p := range parts {
		if hs[i] == nil {
			return r, fmt.Errorf("a member has no histograms for it")
		}
		r.Partial = r.Partial || p.Partial
		if p.Invalid != "" {
			who := "a member"
			if len(p.Processes) > 0 {
				who = p.Processes[0].Name
			}
			invalid = append(invalid, who+": "+p.Invalid)
		}
		addFigures(&r, p)
		if p.FinishS == 0 || (finish < 0) {
			finish = -1 // a member that did not finish leaves the fleet unfinished
		} else {
			finish = max(finish, p.FinishS)
		}
		for _, m := range []struct {
			to   *collect.Histogram
			from *hdrhistogram.Histogram
			sum  results.Summary
			n    int64
		}{{turn, hs[i].Turn, p.TurnLatencyMs, p.Turns}, {ok, hs[i].OKTurn, p.OKTurnLatencyMs, p.Turns - p.FailedTurns}, {call, hs[i].Call, p.CallLatencyMs, p.Calls}} {
			if err := m.to.Pool(m.from, m.sum, m.n); err != nil {
				return r, err
			}
		}
	}
	if len(invalid) > 0 {
		r.Invalid = joinReasons(invalid)
	}
	r.PeakInFlightBound = len(parts) > 1 // the members' peaks, summed, need not have come at once
	if finish > 0 {
		r.FinishS = finish
	}
	r.TurnLatencyMs, r.OKTurnLatencyMs, r.CallLatencyMs = turn.Summary(), ok.Summary(), call.Summary()
	r.AnswerLatencyMs = ok.AnswerSummary(uint64(r.Turns))
	r.LatencyCDF, r.AnswerCDF = turn.Cdf(100), ok.CdfAmong(100, uint64(r.Turns))
	for _, x := range []*float64{&r.WastedWorkS, &r.GoodputPerS, &r.AnsweredGoodputPerS, &r.AnsweredTurnsPerS, &r.AchievedTurnsPerS, &r.TurnsInSystem, &r.AttemptsInService} {
		*x = setup.Round6(*x)
	}
	for svc := range r.QuotaUsed {
		r.QuotaUsed[svc] = setup.Round6(r.QuotaUsed[svc])
	}
	if len(r.QuotaUsed) == 0 {
		r.QuotaUsed = nil
	}
	return r, nil
}

// addCounts adds b to a element by element, growing a as needed.
func addCounts(a, b []int64) []int64 {
	for i, n := range b {
		if i == len(a) {
			a = append(a, 0)
		}
		a[i] += n
	}
	return a
}

// addTimeline adds timeline b to a bucket by bucket: rates and peaks in
// flight summed (the peaks' sum bounds the fleet's).
func addTimeline(a, b []results.TimelinePoint) []results.TimelinePoint {
	for i, p := range b {
		if i == len(a) {
			a = append(a, results.TimelinePoint{T: p.T, BucketS: p.BucketS})
		}
		a[i].Started = setup.Round6(a[i].Started + p.Started)
		a[i].RateLimited = setup.Round6(a[i].RateLimited + p.RateLimited)
		a[i].InFlight += p.InFlight
	}
	return a
}

// memberDirName is the folder of member i of a fleet run under a
// directory of members (RunLive's processes).
func memberDirName(i int) string { return "p" + strconv.Itoa(i+1) }
