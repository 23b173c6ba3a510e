package results

// DefaultMaxRateLimitedShare is the largest share of attempts answered
// with 429 (0.001 = 0.1%) that the choice rule accepts by default: the
// threshold a sweep plot draws for a sweep that records none (MaxShare 0).
const DefaultMaxRateLimitedShare = 0.001

// SweepPoint is one strategy run at one concurrency cap, the means over its
// seeds: what the choice rule, the knee and the sweep plot read.
type SweepPoint struct {
	// Cap is the max in flight the point ran with (≥ 1).
	Cap int `json:"cap"`
	// P50Ms and P95Ms are time-to-answer percentiles in milliseconds (the
	// strategy's AnswerLatencyMs, or Tasks.SchedulerAnswerLatencyMs when
	// present: turns failed for reasons of the model are left out of the
	// turns counted, as no cap answers them): a turn that failed counts as never
	// answered, and a percentile that falls among such turns is
	// Unanswered (null in JSON). A cap that fails turns fast therefore
	// does not look fast.
	P50Ms AnswerMs `json:"p50_ms"`
	P95Ms AnswerMs `json:"p95_ms"`
	// P95LoMs and P95HiMs bound P95Ms's 95% confidence interval when the
	// point is the mean of several seeds (zero with one seed; P95HiMs is
	// Unanswered when some seed's p95 turn got no answer).
	P95LoMs AnswerMs `json:"p95_lo_ms,omitempty"`
	P95HiMs AnswerMs `json:"p95_hi_ms,omitempty"`
	// Seeds is the number of seeds the point's figures are the mean of (0
	// or 1: one run).
	Seeds int `json:"seeds,omitempty"`
	// AnsweredShare is the share of turns that were answered in full,
	// among the same turns as P50Ms and P95Ms.
	AnsweredShare float64 `json:"answered_share"`
	// GoodputPerS is successful calls per second.
	GoodputPerS float64 `json:"goodput_per_s"`
	// RateLimitedShare is 429 responses ÷ attempts, in [0, 1].
	RateLimitedShare float64 `json:"rate_limited_share"`
	// CostPerAnsweredTaskUSD is the run's cost over the tasks it
	// completed, in dollars (Tasks.CostPerAnsweredTaskUSD; the mean over
	// the seeds): absent when the scenario prices no service or no task
	// was completed.
	CostPerAnsweredTaskUSD float64 `json:"cost_per_answered_task_usd,omitempty"`
	// PerSeed holds each seed's own figures, in the order of the seeds,
	// when the point is the mean of several: the decision's rule compares
	// points seed by seed (a paired test). Not written to files.
	PerSeed []SeedFigures `json:"-"`
}

// SeedFigures are one seed's figures of a sweep point: its p95 time to
// answer in milliseconds (Unanswered when its p95 turn got no answer),
// its answered share in [0, 1] and its cost per answered task in dollars
// (0: none).
type SeedFigures struct {
	// P95Ms is the p95 time to answer, in milliseconds (Unanswered: none).
	P95Ms AnswerMs
	// AnsweredShare is the fraction, 0–1, of turns answered in full.
	AnsweredShare float64
	// CostPerAnsweredTaskUSD is the cost of one answered task, in dollars
	// (0: none answered, or nothing priced).
	CostPerAnsweredTaskUSD float64
}

// SweepRow is one load of a sweep: the strategy's points at every cap, with
// the chosen cap (0: none qualified) and the knee (0: none found).
type SweepRow struct {
	// Load ("load") names the row's workload size as --by writes it
	// ("sessions=20", "arrival_rate=2/s", or "as written").
	Load string `json:"load"`
	// Points ("points") holds one point per cap, in the order swept.
	Points []SweepPoint `json:"points"`
	// Chosen ("chosen_cap") is the cap the rule chose, in attempts in
	// flight; absent (0) when none qualified.
	Chosen int `json:"chosen_cap,omitempty"`
	// Knee ("knee") is the cap where goodput stops paying (the Kneedle
	// point of goodput against cap), in attempts in flight; absent (0)
	// when none was found.
	Knee int `json:"knee,omitempty"`
}

// Sweep is what `simbench sweep` writes to sweep.json (and prints with
// --json): the strategy's rows, one per load, and the decision when the
// sweep made one. It holds everything the sweep plot draws, so `simbench
// report DIR` re-renders the plot byte for byte. Field names are an
// interface, as Results' are: add fields, never rename or remove one.
type Sweep struct {
	// Scenario ("scenario") is the scenario's name.
	Scenario string `json:"scenario"`
	// Partial is set when the sweep was interrupted (Ctrl-C): Rows hold
	// only the points measured before it, each over the seeds that
	// finished (SweepPoint.Seeds), a cap none of whose seeds finished left
	// out; Chosen and Knee are those of the points held, and Decision is
	// nil.
	Partial bool `json:"partial,omitempty"`
	// Strategy names the strategy whose cap was varied.
	Strategy string `json:"strategy"`
	// Decision is what to set, when the sweep ran over the decision's own
	// range (nil for caps or loads given by hand).
	Decision *Decision `json:"decision,omitempty"`
	// Seeds lists the seeds each cap ran with; Rows ("rows") holds one row
	// per load, in the order given.
	Seeds []uint64   `json:"seeds,omitempty"`
	Rows  []SweepRow `json:"rows"`
	// MaxShare is the 429 share the chosen caps could have (the sweep
	// plot's threshold line).
	MaxShare float64 `json:"max_rate_limited_share"`
	// Chosen and Knee hold each row's chosen cap and knee by load, for the
	// rows that have one.
	Chosen map[string]int `json:"chosen_cap"`
	Knee   map[string]int `json:"knee"`
	// PointsOnly is set by ReadSweep for a file that held a bare array of
	// points: one row with no load, chosen cap, knee or share recorded.
	PointsOnly bool `json:"-"`
}
