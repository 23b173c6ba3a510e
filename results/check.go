package results

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/simbench/simbench/internal/names"
)

// MaxFileBytes is the largest results.json or sweep.json Read and
// ReadSweep accept, in bytes. The built-in scenarios write under 500 KB.
// Measured: `compare` of two 63.5 MiB files (1,080 strategies each) peaks
// at 272 MiB of resident memory, the reader's share of it about twice the
// files. A larger file is refused before it is read, in a few MiB.
const MaxFileBytes = 64 << 20

// maxProblems is the most problems an Error lists.
const maxProblems = 50

// Problem is one thing wrong with a results or sweep file: the field it
// concerns, as a JSON path ("strategies[0].turns"; "" for the file as a
// whole), and what is wrong.
type Problem struct {
	// File is the path of the file read, as given to Read or ReadSweep.
	File string
	// Field is the JSON path of the value at fault ("": the whole file).
	Field string
	// Message says what is wrong, in words.
	Message string
}

// String is "FILE: FIELD: MESSAGE".
func (p Problem) String() string {
	if p.Field == "" {
		return p.File + ": " + p.Message
	}
	return p.File + ": " + p.Field + ": " + p.Message
}

// Error lists every problem found in a results or sweep file (up to 50,
// then how many more). Read and ReadSweep return it for a file that is not
// what simbench writes: wrong types, missing or null fields, values out of
// range, figures that contradict each other.
type Error struct {
	// Problems are the problems found, at most 50, in the order found.
	Problems []Problem
	// More counts the problems found beyond those listed.
	More int
}

func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.String())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n… and %d more problems", e.More)
	}
	return b.String()
}

// problems collects the problems of one file.
type problems struct {
	file string
	list []Problem
	more int
}

func (ps *problems) add(field, format string, args ...any) {
	if len(ps.list) >= maxProblems {
		ps.more++
		return
	}
	ps.list = append(ps.list, Problem{File: ps.file, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (ps *problems) full() bool { return len(ps.list) >= maxProblems }

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return &Error{Problems: ps.list, More: ps.more}
}

// required lists the fields every results or sweep file holds.
var required = map[reflect.Type][]string{
	reflect.TypeFor[Results]():        {"scenario", "mode", "duration_s", "strategies"},
	reflect.TypeFor[StrategyResult](): {"name", "turns", "calls", "attempts", "turn_latency_ms"},
	reflect.TypeFor[Summary]():        {"mean", "p50", "p95", "p99", "max"},
	reflect.TypeFor[Sweep]():          {"rows"},
	reflect.TypeFor[SweepRow]():       {"points"},
	reflect.TypeFor[SweepPoint]():     {"cap", "p95_ms"},
	reflect.TypeFor[CDFPoint]():       {"ms", "p"},
}

// maxSeconds is the longest time a results file may give, two years: a
// scenario's duration is at most one (scenarios.MaxDuration), which leaves
// room for a drain.
const maxSeconds = 2 * 365 * 24 * 3600.0

// MaxFleetMembers is the most members a fleet run may have (fleet.of):
// scenarios.MaxProcesses, each member being one of the fleet's processes.
const MaxFleetMembers = 1024

// maxCap is the largest cap a sweep point may have (scenarios.MaxCap).
const maxCap = math.MaxInt32

// Check lists what is wrong with res, as read from file: the checks Read
// makes after the types. The run's duration, mode and names; per strategy
// (and per seed run), counts ≥ 0, rates and times finite, within range and
// in order (p50 ≤ p95 ≤ p99), shares within [0, 1], 429s no more than
// attempts; one seed run per seed.
func Check(file string, res *Results) []Problem {
	ps := &problems{file: file}
	checkResults(ps, res)
	return ps.list
}

func checkResults(ps *problems, r *Results) {
	if msg := names.Scenario(r.Scenario); msg != "" {
		ps.add("scenario", "%s", msg)
	}
	if msg := names.Text(r.Description); msg != "" {
		ps.add("description", "%s", msg)
	}
	if !(r.DurationS > 0 && r.DurationS <= maxSeconds) {
		ps.add("duration_s", "is %v; want seconds above 0 and at most %.0f (two years)", r.DurationS, maxSeconds)
	}
	switch r.Mode {
	case "virtual", "live":
	default:
		ps.add("mode", "is %q; want \"virtual\" or \"live\"", r.Mode)
	}
	if msg := names.Text(r.PartialReason); msg != "" {
		ps.add("partial_reason", "%s", msg)
	} else if r.PartialReason != "" && !r.Partial {
		ps.add("partial_reason", "is set on a run that is not partial")
	}
	if !(r.TimeScale >= 0 && r.TimeScale <= 1e9) {
		ps.add("time_scale", "is %v; want a factor ≥ 0", r.TimeScale)
	}
	if len(r.Strategies) == 0 {
		ps.add("strategies", "is empty; a run has at least one strategy")
	}
	checkStrategies(ps, r)
	checkFleet(ps, r)
	for i, l := range r.Limits {
		at := fmt.Sprintf("limits[%d]", i)
		nameOK(ps, at+".service", "service", l.Service)
		nonNegative(ps, at, map[string]float64{"requests_per_minute": l.RequestsPerMinute, "tokens_per_minute": l.TokensPerMinute,
			"max_concurrent": float64(l.MaxConcurrent), "calls_per_turn": l.CallsPerTurn})
	}
	for _, name := range slices.Sorted(maps.Keys(r.Recommendation)) {
		nameOK(ps, fmt.Sprintf("recommendation.%q", name), "service", name)
	}
	for i, e := range r.Events {
		at := fmt.Sprintf("events[%d]", i)
		if !(e.StartS >= 0 && e.StartS <= e.EndS && e.EndS <= maxSeconds) {
			ps.add(at, "runs from %v s to %v s; want 0 ≤ start_s ≤ end_s ≤ %v", e.StartS, e.EndS, maxSeconds)
		}
		if msg := names.Text(e.Label); msg != "" {
			ps.add(at+".label", "%s", msg)
		}
	}
}

// checkStrategies checks each strategy's figures and those of each of its
// seeds' runs, and that no two strategies share a name.
func checkStrategies(ps *problems, r *Results) {
	seen := map[string]int{}
	for i := range r.Strategies {
		s := &r.Strategies[i]
		at := fmt.Sprintf("strategies[%d]", i)
		if first, dup := seen[s.Name]; dup && s.Name != "" {
			ps.add(at+".name", "%q is also strategies[%d]'s name", s.Name, first)
		}
		seen[s.Name] = i
		checkStrategy(ps, at, s, r.DurationS)
		if len(r.Seeds) > 0 && len(s.SeedRuns) != len(r.Seeds) {
			ps.add(at+".seed_runs", "holds %d runs for the %d seeds of seeds", len(s.SeedRuns), len(r.Seeds))
		}
		for j := range s.SeedRuns {
			sr := &s.SeedRuns[j]
			at := fmt.Sprintf("%s.seed_runs[%d]", at, j)
			if len(sr.SeedRuns) > 0 {
				ps.add(at+".seed_runs", "a seed's run holds no seed runs of its own")
			}
			checkStrategy(ps, at, sr, r.DurationS)
		}
	}
}

// checkFleet checks a fleet member's results: its place in the fleet
// and the strategies it names as missing.
func checkFleet(ps *problems, r *Results) {
	f := r.Fleet
	if f == nil {
		return
	}
	if !(f.Of >= 1 && f.Of <= MaxFleetMembers) {
		ps.add("fleet.of", "is %d; want 1 to %d members", f.Of, MaxFleetMembers)
	} else if !(f.Member >= 0 && f.Member < f.Of) {
		ps.add("fleet.member", "is %d; want 0 to %d, a member of the %d", f.Member, f.Of-1, f.Of)
	}
	if msg := names.Text(f.RunID); msg != "" {
		ps.add("fleet.run_id", "%s", msg)
	}
	for i, name := range f.Missing {
		at := fmt.Sprintf("fleet.missing[%d]", i)
		nameOK(ps, at, "strategy", name)
		if r.Strategy(name) != nil {
			ps.add(at, "names %q, which has figures: a missing strategy has none", name)
		}
	}
}

// CheckStrategy checks one strategy's figures (or one seed's run of it)
// as Read checks each of a results file's strategies, in a run of
// durationS seconds: an *Error naming file and each field at (such as
// "result") that is wrong, or nil. It is how files that hold a strategy's
// results without a whole results file (a cached run) are checked.
func CheckStrategy(file, at string, s *StrategyResult, durationS float64) error {
	ps := &problems{file: file}
	checkStrategy(ps, at, s, durationS)
	return ps.err()
}

// checkStrategy checks one strategy's figures (or one seed's run of it).
func checkStrategy(ps *problems, at string, s *StrategyResult, duration float64) {
	nameOK(ps, at+".name", "strategy", s.Name)
	for _, t := range []string{s.Invalid, s.Retry} {
		if msg := names.Text(t); msg != "" {
			ps.add(at, "%s", msg)
		}
	}
	counts := map[string]int64{"turns": s.Turns, "failed_turns": s.FailedTurns, "unfinished_turns": s.UnfinishedTurns,
		"refused_turns": s.RefusedTurns, "not_sent": s.NotSent, "calls": s.Calls, "attempts": s.Attempts, "rate_limited": s.RateLimited,
		"failed": s.Failed, "early_retries": s.EarlyRetries, "wasted_tokens": s.WastedTokens, "write_races": s.WriteRaces,
		"conflicts": s.Conflicts, "max_in_flight": int64(s.MaxInFlight), "hedges": s.Hedges, "hedges_won": s.HedgesWon}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if counts[k] < 0 {
			ps.add(at+"."+k, "is %d; a count is ≥ 0", counts[k])
		}
	}
	if s.RateLimited > s.Attempts && s.Attempts >= 0 {
		ps.add(at+".rate_limited", "is %d, more than the %d attempts: every 429 answers an attempt", s.RateLimited, s.Attempts)
	}
	nonNegative(ps, at, map[string]float64{"goodput_per_s": s.GoodputPerS, "offered_turns_per_s": s.OfferedTurnsPerS,
		"achieved_turns_per_s": s.AchievedTurnsPerS, "wasted_work_s": s.WastedWorkS, "turns_in_system": s.TurnsInSystem,
		"attempts_in_service": s.AttemptsInService, "finish_s": s.FinishS, "cancelled_work_s": s.CancelledWorkS})
	if s.FinishS > maxSeconds {
		ps.add(at+".finish_s", "is %v; want at most %v", s.FinishS, maxSeconds)
	}
	checkSummary(ps, at+".turn_latency_ms", s.TurnLatencyMs)
	checkSummary(ps, at+".ok_turn_latency_ms", s.OKTurnLatencyMs)
	checkSummary(ps, at+".call_latency_ms", s.CallLatencyMs)
	checkAnswer(ps, at+".answer_latency_ms", s.AnswerLatencyMs)
	if d := s.DailyQuota; d != nil {
		if d.FailedFastTurns < 0 {
			ps.add(at+".daily_quota.failed_fast_turns", "is %d; a count is ≥ 0", d.FailedFastTurns)
		}
		nonNegative(ps, at+".daily_quota", map[string]float64{"spin_s": d.SpinS})
	}
	if t := s.Tasks; t != nil {
		if t.ModelFailedTurns < 0 {
			ps.add(at+".tasks.model_failed_turns", "is %d; a count is ≥ 0", t.ModelFailedTurns)
		}
		if a := t.SchedulerAnswerLatencyMs; a != nil {
			checkAnswer(ps, at+".tasks.scheduler_answer_latency_ms", *a)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.PeakInFlight)) {
		n := s.PeakInFlight[name]
		nameOK(ps, fmt.Sprintf("%s.peak_in_flight.%q", at, name), "service", name)
		if n < 0 {
			ps.add(fmt.Sprintf("%s.peak_in_flight.%q", at, name), "is %d; a count is ≥ 0", n)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.QuotaUsed)) {
		if q := s.QuotaUsed[name]; !finite(q) || q < 0 {
			ps.add(fmt.Sprintf("%s.quota_used.%q", at, name), "is %v; want a fraction ≥ 0", q)
		}
	}
	checkKeys(ps, at, s.Keys)
	for i, n := range s.AttemptsPerCall {
		if n < 0 {
			ps.add(fmt.Sprintf("%s.attempts_per_call[%d]", at, i), "is %d; a count is ≥ 0", n)
		}
	}
	checkSeries(ps, at, s)
	for i := range s.Processes {
		p := &s.Processes[i]
		pat := fmt.Sprintf("%s.processes[%d]", at, i)
		counts := map[string]int64{"turns": p.Turns, "failed_turns": p.FailedTurns, "calls": p.Calls, "attempts": p.Attempts, "rate_limited": p.RateLimited}
		for _, k := range slices.Sorted(maps.Keys(counts)) {
			if counts[k] < 0 {
				ps.add(pat+"."+k, "is %d; a count is ≥ 0", counts[k])
			}
		}
		if !(p.Share >= 0 && p.Share <= 1) {
			ps.add(pat+".share", "is %v; want a fraction in [0, 1]", p.Share)
		}
		checkAnswer(ps, pat+".answer_latency_ms", p.AnswerLatencyMs)
	}
}

// keyLevels are the levels a nested limit's 429 can name
// (KeyShare.RateLimitedBy).
var keyLevels = []string{"key", "project", "organization"}

// checkKeys checks each service's per-key shares: counts ≥ 0, each key
// once, the share its counts give, and 429s split by a known level into
// parts that add up to them.
func checkKeys(ps *problems, at string, keys map[string][]KeyShare) {
	for _, svc := range slices.Sorted(maps.Keys(keys)) {
		sat := fmt.Sprintf("%s.keys.%q", at, svc)
		nameOK(ps, sat, "service", svc)
		seen := map[[2]string]bool{}
		for i, k := range keys[svc] {
			kat := fmt.Sprintf("%s[%d]", sat, i)
			if k.Key == "" {
				ps.add(kat+".key", "is empty; name the API key")
			}
			if seen[[2]string{k.Project, k.Key}] {
				ps.add(kat+".key", "%q appears twice in project %q; one entry a key", k.Key, k.Project)
			}
			seen[[2]string{k.Project, k.Key}] = true
			if k.Admitted < 0 || k.RateLimited < 0 {
				ps.add(kat, "admitted %d and rate_limited %d; counts are ≥ 0", k.Admitted, k.RateLimited)
				continue
			}
			want := 0.0
			if n := k.Admitted + k.RateLimited; n > 0 {
				want = float64(k.RateLimited) / float64(n)
			}
			if !finite(k.RateLimitedShare) || math.Abs(k.RateLimitedShare-want) > 1e-6 {
				ps.add(kat+".rate_limited_share", "is %v; its counts give %.6f (rate_limited over admitted + rate_limited)", k.RateLimitedShare, want)
			}
			var sum int64
			for _, lvl := range slices.Sorted(maps.Keys(k.RateLimitedBy)) {
				n := k.RateLimitedBy[lvl]
				if !slices.Contains(keyLevels, lvl) {
					ps.add(fmt.Sprintf("%s.rate_limited_by.%q", kat, lvl), "is not a level; want one of %s", strings.Join(keyLevels, ", "))
				}
				if n < 0 {
					ps.add(fmt.Sprintf("%s.rate_limited_by.%q", kat, lvl), "is %d; a count is ≥ 0", n)
				}
				sum += n
			}
			if k.RateLimitedBy != nil && sum != k.RateLimited {
				ps.add(kat+".rate_limited_by", "adds up to %d, not the key's %d 429s", sum, k.RateLimited)
			}
		}
	}
}

// checkSeries checks the plot series: finite, times within the run, CDF
// shares within [0, 1].
func checkSeries(ps *problems, at string, s *StrategyResult) {
	for k, cdf := range [][]CDFPoint{s.LatencyCDF, s.AnswerCDF} {
		for i, p := range cdf {
			if !(p.Ms >= 0 && p.Ms <= maxSeconds*1000 && p.P >= 0 && p.P <= 1) {
				ps.add(fmt.Sprintf("%s.%s[%d]", at, []string{"latency_cdf", "answer_cdf"}[k], i), "is (%v ms, %v); want a time ≥ 0 and a share in [0, 1]", p.Ms, p.P)
				break
			}
		}
	}
	for i, p := range s.Timeline {
		if !(p.T >= 0 && p.T <= maxSeconds && p.BucketS >= 0 && p.Started >= 0 && p.RateLimited >= 0 && p.InFlight >= 0 && finite(p.Started) && finite(p.RateLimited)) {
			ps.add(fmt.Sprintf("%s.timeline[%d]", at, i), "holds a negative or out-of-range figure")
			break
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.LimitTrace)) {
		for i, p := range s.LimitTrace[name] {
			if !(p.T >= 0 && p.T <= maxSeconds && p.Limit >= 0) {
				ps.add(fmt.Sprintf("%s.limit_trace.%q[%d]", at, name, i), "is (%v s, %d); want a time ≥ 0 and a limit ≥ 0", p.T, p.Limit)
				break
			}
		}
	}
}

// checkSummary checks a latency summary: finite times ≥ 0 and at most
// two years (maxSeconds), percentiles in order.
func checkSummary(ps *problems, at string, s Summary) {
	figures := map[string]float64{"mean": s.Mean, "p50": s.P50, "p95": s.P95, "p99": s.P99, "max": s.Max}
	nonNegative(ps, at, figures)
	for _, k := range slices.Sorted(maps.Keys(figures)) {
		if v := figures[k]; v > maxSeconds*1000 && finite(v) {
			ps.add(at+"."+k, "is %v ms; want at most %.0f (two years)", v, maxSeconds*1000)
		}
	}
	if s.P50 > s.P95 || s.P95 > s.P99 {
		ps.add(at, "p50 %v, p95 %v, p99 %v are out of order; want p50 ≤ p95 ≤ p99", s.P50, s.P95, s.P99)
	}
}

// checkAnswer checks a time-to-answer summary: times ≥ 0 or null, in
// order, the answered share within [0, 1].
func checkAnswer(ps *problems, at string, a AnswerSummary) {
	nonNegative(ps, at, map[string]float64{"mean": a.Mean})
	for i, v := range []AnswerMs{a.P50, a.P95, a.P99} {
		if x := float64(v); v.Answered() && !(x >= 0 && x <= maxSeconds*1000) {
			ps.add(at+"."+[]string{"p50", "p95", "p99"}[i], "is %v; want milliseconds ≥ 0, or null for a percentile among unanswered turns", x)
		}
	}
	if a.P50 > a.P95 || a.P95 > a.P99 {
		ps.add(at, "p50, p95 and p99 are out of order; want p50 ≤ p95 ≤ p99 (null, unanswered, last)")
	}
	if !(a.AnsweredShare >= 0 && a.AnsweredShare <= 1) {
		ps.add(at+".answered_share", "is %v; want a share in [0, 1]", a.AnsweredShare)
	}
}

// nonNegative adds a problem for each figure that is negative or beyond
// a float64's finite range (the JSON reader maps 1e400 to +Inf).
func nonNegative(ps *problems, at string, figures map[string]float64) {
	for _, k := range slices.Sorted(maps.Keys(figures)) {
		if v := figures[k]; !finite(v) || v < 0 {
			ps.add(at+"."+k, "is %v; want a figure ≥ 0", v)
		}
	}
}

// nameOK adds a problem for a name a scenario could not have given.
func nameOK(ps *problems, at, what, name string) {
	if msg := names.Name(what, name); msg != "" {
		ps.add(at, "%s", msg)
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
