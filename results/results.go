package results

// Results is what `simbench run` writes to results.json.
type Results struct {
	// Scenario ("scenario") is the scenario's name.
	Scenario string `json:"scenario"`
	// Description ("description") is the scenario's description, absent
	// when it has none.
	Description string `json:"description,omitempty"`
	// ScenarioDigest identifies the scenario's conditions (its workload,
	// services and tools, not its seed, duration or strategies) so that
	// compare can warn when two runs' files differ: a SHA-256, in hex.
	// Seed ("seed") is the run's random seed (the first, over several);
	// SimbenchVersion ("simbench_version") the version of the simbench
	// that wrote the file.
	ScenarioDigest  string `json:"scenario_digest,omitempty"`
	Seed            uint64 `json:"seed"`
	SimbenchVersion string `json:"simbench_version"`
	// DurationS is the scenario's length in (virtual) seconds.
	DurationS float64 `json:"duration_s"`
	// Mode is "virtual" or "live"; TimeScale is the live run's scale factor.
	Mode      string  `json:"mode"`
	TimeScale float64 `json:"time_scale,omitempty"`
	// Partial is set when the figures cover only part of the run: it was
	// interrupted, or fleet members are missing from it (PartialReason).
	Partial bool `json:"partial,omitempty"`
	// PartialReason says why a partial run is partial when an interrupt
	// is not the whole story: the fleet members missing from a merge, and
	// those interrupted (empty: the run was interrupted).
	PartialReason string `json:"partial_reason,omitempty"`
	// Invalid, when not empty, says why the figures cannot be trusted
	// (a live run the machine could not keep up with, say): every reason
	// of every strategy, each prefixed with its strategy's name, and the
	// reasons that apply to all. StrategyResult.Invalid says it per strategy.
	Invalid string `json:"invalid,omitempty"`
	// Strategies ("strategies") holds each strategy's figures, in the
	// scenario's strategy order.
	Strategies []StrategyResult `json:"strategies"`
	// Seeds lists the seeds of a run over several (run --seeds N): Seed
	// and the ones after it. Each strategy's figures are the first seed's;
	// its SeedRuns hold every seed's and its SeedStats their means and 95%
	// intervals. Empty for a run of one seed.
	Seeds []uint64 `json:"seeds,omitempty"`
	// Limits are the published limits of the services the workload calls,
	// in the scenario's service order, with the calls a turn makes to each:
	// what the reports draw as limit lines, so a report re-rendered from
	// results.json draws what the run drew. Absent from results written
	// before the field existed.
	Limits []ServiceLimits `json:"limits,omitempty"`
	// Recommendation is keyed by service name.
	Recommendation map[string]Recommendation `json:"recommendation,omitempty"`
	// Decision is what to set, verified by simulation (nil when the run
	// made none: --no-recommend, or a scenario without limits).
	Decision *Decision `json:"decision,omitempty"`
	// Events are the scenario's timed events ([[events]]): when each
	// changed which service's conditions, in start order. Reports shade
	// them on every time axis and list them. Absent when the scenario
	// has none.
	Events []EventSpan `json:"events,omitempty"`
	// Fleet, in the results of one member of a fleet whose members run as
	// processes of their own (simbench worker), says which member wrote
	// them; report --merge combines the members into the fleet's results.
	// Absent otherwise.
	Fleet *FleetMember `json:"fleet,omitempty"`
}

// FleetMember names one member of a fleet run: member Member (0-based) of
// Of, of the run RunID (the rendezvous its members met at), and the
// strategies it was to run and has no figures for (Missing: it was stopped
// or its rendezvous failed before them).
type FleetMember struct {
	// Member ("member") is the member's index, from 0.
	Member int `json:"member"`
	// Of ("of") is the number of members in the fleet, at least 1.
	Of int `json:"of"`
	// RunID ("run_id") names the fleet's run at its rendezvous.
	RunID string `json:"run_id"`
	// Missing ("missing") lists the names of the strategies the member has
	// no figures for, in run order; absent when it has them all.
	Missing []string `json:"missing,omitempty"`
}

// EventSpan is one timed event of a run: from StartS to EndS (seconds
// from the start of the run) Kind changed Service's conditions, as Label
// says in words ("limits ×0.5", "stall", "outage 503").
type EventSpan struct {
	// Service ("service") is the name of the service the event hits.
	Service string `json:"service"`
	// Kind ("kind") names what the event changes, joined by "+" in a fixed
	// order: "limits", "latency", "error_rate", "overload_rate", "stall",
	// "outage" (say "limits+latency").
	Kind string `json:"kind"`
	// StartS ("start_s") and EndS ("end_s") bound the event, in seconds
	// from the start of the run; EndS is cut at the run's end.
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// Label ("label") says in a few words what the event changes.
	Label string `json:"label"`
}

// LimitPoint is one step of an adaptive limit: from T seconds on, the
// strategy allowed Limit attempts in flight to the service.
type LimitPoint struct {
	// T ("t") is when the step took effect, in seconds from the start of
	// the run.
	T float64 `json:"t"`
	// Limit ("limit") is the cap from then on, in attempts in flight.
	Limit int `json:"limit"`
}

// StrategyResult holds one strategy's metrics, defined once in DESIGN.md.
type StrategyResult struct {
	// Name ("name") is the strategy's name in the scenario.
	Name string `json:"name"`
	// MaxInFlight is the strategy's global cap (0: unbounded).
	MaxInFlight int `json:"max_in_flight"`
	// Invalid, when not empty, says why this strategy's figures cannot be
	// trusted (a live run the machine could not keep the timing of); such a
	// strategy is never marked best.
	Invalid string `json:"invalid,omitempty"`
	// Partial is set when this strategy's run was cut short by an
	// interrupt: its figures cover the virtual time simulated so far.
	Partial bool `json:"partial,omitempty"`
	// StoppedAtS, when set, is the virtual time in seconds at which the
	// run was stopped early on purpose (a decision had already ruled the
	// strategy out): its figures cover the run up to then only.
	StoppedAtS float64 `json:"stopped_at_s,omitempty"`
	// Turns and Calls count completed turns and their tool calls (a
	// workload of model calls only: its model calls, which are then its
	// calls in every figure of calls, goodput included); Attempts counts
	// those calls plus retries.
	Turns int64 `json:"turns"`
	// FailedTurns counts turns with a failed or cancelled part;
	// UnfinishedTurns those still running when the run ended at the
	// scenario's duration (a run does not drain: they are in no other
	// figure, latencies included); RefusedTurns those the scheduler
	// refused (queue bound). Calls and Attempts: see Turns.
	FailedTurns     int64 `json:"failed_turns"`
	UnfinishedTurns int64 `json:"unfinished_turns,omitempty"`
	RefusedTurns    int64 `json:"refused_turns,omitempty"`
	Calls           int64 `json:"calls"`
	Attempts        int64 `json:"attempts"`
	// NotSent counts the calls a live run could not send: their part would
	// have taken its calls in flight past the bound its memory budget sets
	// (their turns fail). A run with any is invalid.
	NotSent int64 `json:"not_sent,omitempty"`
	// TurnLatencyMs summarises turn latency in milliseconds, over every
	// finished turn, failed ones included (a failure that comes back fast
	// lowers it: read it with FailedTurns).
	TurnLatencyMs Summary `json:"turn_latency_ms"`
	// OKTurnLatencyMs summarises the latency of the turns whose every call
	// succeeded, in milliseconds.
	OKTurnLatencyMs Summary `json:"ok_turn_latency_ms"`
	// AnswerLatencyMs gives the time to a full answer: turn-latency
	// percentiles over every turn finished within the duration, with
	// failed and cancelled turns counted as never answered (unfinished
	// ones are left out, and counted in UnfinishedTurns). A percentile that falls
	// among those is Unanswered (null in JSON). Compare strategies that fail
	// different shares of turns by it: a turn that fails fast is not a fast
	// answer.
	AnswerLatencyMs AnswerSummary `json:"answer_latency_ms"`
	// TurnsInSystem is L of Little's law for turns: the time-averaged
	// number of agent turns begun and not yet finished over the scenario's
	// duration. AttemptsInService is the time-averaged number of attempts
	// in flight at the services (all services together).
	TurnsInSystem     float64 `json:"turns_in_system"`
	AttemptsInService float64 `json:"attempts_in_service"`
	// CallLatencyMs summarises one call's latency (queueing included) in milliseconds.
	CallLatencyMs Summary `json:"call_latency_ms"`
	// GoodputPerS is every successful call per second of (virtual) time,
	// those of failed turns included, counted when its result reached the
	// agent within the duration. AnsweredGoodputPerS counts only the
	// successful calls of turns answered in full: the work that reached an
	// answer, the goodput to compare strategies by. AnsweredTurnsPerS is
	// turns answered in full per second.
	GoodputPerS         float64 `json:"goodput_per_s"`
	AnsweredGoodputPerS float64 `json:"answered_goodput_per_s"`
	AnsweredTurnsPerS   float64 `json:"answered_turns_per_s"`
	// OfferedTurnsPerS and AchievedTurnsPerS compare the workload's intended
	// turn rate with the one finished within the duration (failed turns
	// included; a run ends at its duration, so achieved never exceeds what
	// the system can finish). Open workloads; closed ones report achieved
	// only.
	OfferedTurnsPerS  float64 `json:"offered_turns_per_s,omitempty"`
	AchievedTurnsPerS float64 `json:"achieved_turns_per_s"`
	// Headroom is the fraction of the published limits the strategy's
	// token buckets pace at (0: it has none).
	Headroom float64 `json:"headroom,omitempty"`
	// RateLimited counts 429 responses the client saw; Failed counts calls whose result was an error.
	RateLimited int64 `json:"rate_limited"`
	Failed      int64 `json:"failed"`
	// EarlyRetries counts attempts sent before the server's retry delay had elapsed.
	EarlyRetries int64 `json:"early_retries"`
	// WastedWorkS and WastedTokens are server-side seconds and tokens spent on
	// attempts whose result nobody read.
	WastedWorkS  float64 `json:"wasted_work_s"`
	WastedTokens int64   `json:"wasted_tokens"`
	// Hedges counts the hedges sent (a strategy's hedge_after or
	// hedge_percentile): second attempts of slow idempotent reads, each an
	// attempt in Attempts too; HedgesWon the calls whose result came from
	// one. CancelledWorkS is the server-side seconds of attempts cancelled
	// at the transport (the losers of hedges among them), from admission
	// to the cancel: the work they cost, none of it after the cancel.
	Hedges         int64   `json:"hedges,omitempty"`
	HedgesWon      int64   `json:"hedges_won,omitempty"`
	CancelledWorkS float64 `json:"cancelled_work_s,omitempty"`
	// DailyQuota is what the strategy's calls did with a spent daily quota
	// (a service's rpd or tpd); nil when no service has one.
	DailyQuota *DailyQuota `json:"daily_quota,omitempty"`
	// WriteRaces counts overlapping writes to one resource seen by the services.
	WriteRaces int64 `json:"write_races"`
	// Conflicts counts writes the services answered 409 Conflict: they
	// arrived while another write to the same resource was in service, on
	// a service with conflict detection (faults.conflict). Each is an
	// attempt that committed nothing; the scheduler retries it.
	Conflicts int64 `json:"conflicts,omitempty"`
	// FinishS is the time to finish a finite workload (sessions that each
	// run a set number of turns), in seconds from the start of the run:
	// when its last turn ended. Absent (0) when the workload has no set
	// number of turns or did not finish them all.
	FinishS float64 `json:"finish_s,omitempty"`
	// PeakInFlight and QuotaUsed are keyed by service; QuotaUsed is the
	// fraction of the binding limit consumed over the run (0..1).
	PeakInFlight map[string]int     `json:"peak_in_flight"`
	QuotaUsed    map[string]float64 `json:"quota_used,omitempty"`
	// Keys is, per service with nested limits (spec.Config.Projects),
	// each API key's share of it: admissions and 429s, split by the level
	// whose limit refused. Absent for services without projects.
	Keys map[string][]KeyShare `json:"keys,omitempty"`
	// PeakInFlightBound says PeakInFlight is a bound, not a measurement:
	// the sum of a fleet's members' peaks (report --merge), which did not
	// all happen at once. A fleet whose provider counted its own peak
	// (run --live --processes) reports that one, and no bound.
	PeakInFlightBound bool `json:"peak_in_flight_bound,omitempty"`
	// AttemptsPerCall is a histogram: AttemptsPerCall[i] calls took i+1
	// attempts (the last bin also holds the calls that took more).
	AttemptsPerCall []int64 `json:"attempts_per_call,omitempty"`
	// AttemptsPerFailedCall splits AttemptsPerCall by outcome:
	// AttemptsPerFailedCall[i] of the AttemptsPerCall[i] calls gave up (their
	// result was an error); the rest succeeded. It is no longer than
	// AttemptsPerCall; empty when no call failed or in results written
	// before the field existed (then the split is unknown when Failed > 0).
	AttemptsPerFailedCall []int64 `json:"attempts_per_failed_call,omitempty"`
	// Retry describes the strategy's retry policy in one line (see
	// setup.RetryText), so reports can tell strategies that differ in backoff.
	Retry string `json:"retry,omitempty"`
	// LatencyCDF samples the turn-latency distribution for plots.
	LatencyCDF []CDFPoint `json:"latency_cdf,omitempty"`
	// AnswerCDF samples the time to answer for plots: P is the share of
	// the turns begun answered in full within Ms, so it levels off at
	// AnswerLatencyMs.AnsweredShare.
	AnswerCDF []CDFPoint `json:"answer_cdf,omitempty"`
	// Timeline is per-second (downsampled when long) activity for plots,
	// from 0 to the run's duration: at most duration ÷ bucket_s buckets and
	// one more for the attempts of the duration's last instant. Attempts
	// started or ended after the duration (a live run's drain) are in no
	// bucket.
	Timeline []TimelinePoint `json:"timeline,omitempty"`
	// ServiceTimelines is Timeline per service, by service name, in a run
	// of two or more services (absent for one: Timeline is that
	// service's), for the figures that draw each service on its own.
	ServiceTimelines map[string][]TimelinePoint `json:"service_timelines,omitempty"`
	// MaxInFlightPerService is the strategy's per-service caps on
	// attempts in flight (max_in_flight_per_service), by service name;
	// absent when it has none.
	MaxInFlightPerService map[string]int `json:"max_in_flight_per_service,omitempty"`
	// LimitTrace is, per service, the adaptive concurrency limit over
	// time (its steps, downsampled when long), for strategies with an
	// adaptive limit; absent otherwise.
	LimitTrace map[string][]LimitPoint `json:"limit_trace,omitempty"`
	// Windows holds the strategy's figures over each timed event's
	// window (collect.EventWindows), in the order of Results.Events: goodput,
	// 429 share and attempts per call while the event's conditions held.
	// Absent when the scenario has no events (and in live runs).
	Windows []WindowResult `json:"windows,omitempty"`
	// Processes holds each agent process's figures when the workload runs
	// more than one (workload.processes, or a live run's --processes); the
	// strategy's own figures are the fleet's totals. Absent for one process.
	Processes []ProcessResult `json:"processes,omitempty"`
	// Classes holds each session class's figures (workload key classes),
	// in the scenario's order; absent without classes.
	Classes []ClassResult `json:"classes,omitempty"`
	// Tasks holds the agent-level outcomes (Tasks): completion, time to
	// answer a task, tokens and cost. Absent unless the scenario models
	// one of them (a model turn's success, context growth, an orchestrator
	// budget, a service's prices).
	Tasks *Tasks `json:"tasks,omitempty"`
	// SeedRuns holds the strategy's figures under each of Results.Seeds,
	// in that order, without the plot series (latency_cdf, answer_cdf,
	// timeline, limit_trace): what means and 95% intervals over seeds are computed
	// from. Empty for a run of one seed.
	SeedRuns []StrategyResult `json:"seed_runs,omitempty"`
	// SeedStats holds, for a run over several seeds, each figure's mean
	// over SeedRuns with its 95% interval (Interval: Student's t, n−1
	// degrees of freedom), keyed by the figure's JSON path in this struct
	// (FigureKeys: "turns", "turn_latency_ms.p95", "peak_in_flight.llm",
	// …): {"mean": …, "lo": …, "hi": …, "n": seeds}, in the figure's unit,
	// null for a time to answer some seed never gave. The terminal table
	// prints these means and half widths. A figure that does not apply
	// under every seed is left out; the whole field is, for one seed.
	SeedStats map[string]Interval `json:"seed_stats,omitempty"`
}

// ServiceLimits is one service's published limits and its share of the
// workload, as results.json records them.
type ServiceLimits struct {
	// Service ("service") is the service's name in the scenario.
	Service string `json:"service"`
	// RequestsPerMinute is the tighter of the service's rps and rpm limits,
	// per minute; TokensPerMinute its token limit; MaxConcurrent its limit on
	// requests in flight. Zero: no such limit.
	RequestsPerMinute float64 `json:"requests_per_minute,omitempty"`
	TokensPerMinute   float64 `json:"tokens_per_minute,omitempty"`
	MaxConcurrent     int     `json:"max_concurrent,omitempty"`
	// CallsPerTurn is the mean number of calls one turn makes to the service
	// (model calls included).
	CallsPerTurn float64 `json:"calls_per_turn"`
}

// WindowResult is one strategy's figures over the window of one timed
// event (see collect.EventWindows): what it got done and how many 429s and
// attempts it spent while the event's conditions held. The figures count
// every service, as the strategy's own do.
type WindowResult struct {
	// Label says what the event changed, as EventSpan.Label; Service is
	// the service it changed.
	Label   string `json:"label"`
	Service string `json:"service"`
	// StartS and EndS bound the window, in seconds from the start of the
	// run: from collect.WindowSettle after the event's start to its end, or to
	// the start of the next event, whichever comes first.
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// GoodputPerS is the successful tool calls (as the strategy's Calls
	// counts them) finished in the window per second of it.
	GoodputPerS float64 `json:"goodput_per_s"`
	// Attempts counts the tool-call attempts started in the window and
	// RateLimited the 429 responses received in it; RateLimitedShare is
	// RateLimited ÷ Attempts (0 when no attempt started), as the
	// strategy's rate_limited_share over the whole run.
	Attempts         int64   `json:"attempts"`
	RateLimited      int64   `json:"rate_limited"`
	RateLimitedShare float64 `json:"rate_limited_share"`
	// Calls counts the tool calls whose result was decided in the window,
	// failed ones included; AttemptsPerCall is their mean number of
	// attempts (0 when none finished).
	Calls           int64   `json:"calls"`
	AttemptsPerCall float64 `json:"attempts_per_call"`
	// LimitPerS is the request limit in force on Service during the
	// window, in requests per second: the tighter of its rps and rpm
	// after the events then active (0: the service has no request limit).
	// Headroom is the fraction of the published limits the strategy's
	// token buckets pace at (1 without token buckets). Goodput against
	// LimitPerS × Headroom says how much of what it could use the
	// strategy got.
	LimitPerS float64 `json:"limit_per_s,omitempty"`
	Headroom  float64 `json:"headroom"`
}

// KeyShare is one API key's share of a service with nested limits
// (organisation ⊃ project ⊃ key).
type KeyShare struct {
	// Key is the API key; Project its project ("": directly under the
	// organisation).
	Key     string `json:"key"`
	Project string `json:"project,omitempty"`
	// Admitted counts the key's admitted requests, RateLimited its 429s.
	Admitted    int64 `json:"admitted"`
	RateLimited int64 `json:"rate_limited"`
	// RateLimitedShare is RateLimited over Admitted + RateLimited, a
	// fraction (0 when the key sent nothing).
	RateLimitedShare float64 `json:"rate_limited_share"`
	// RateLimitedBy splits RateLimited by the level whose limit refused:
	// "key", "project" and "organization".
	RateLimitedBy map[string]int64 `json:"rate_limited_by"`
}

// DailyQuota sets the turns a strategy gave up at once on a spent daily
// quota against the time its calls spent retrying one: a quota spent for
// the day answers every request with a 429 until its reset, hours away,
// so retrying it is spinning.
type DailyQuota struct {
	// FailedFastTurns counts the turns ended within the run that failed
	// with a call that gave up at its first daily-quota 429.
	FailedFastTurns int64 `json:"failed_fast_turns"`
	// SpinS is virtual seconds, summed over the calls that met a spent
	// daily quota, from the call's first daily-quota 429 to the call's
	// end (its success after a reset, its failure, or the run's end).
	SpinS float64 `json:"spin_s"`
}
