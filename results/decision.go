package results

// Decision is the one answer to "what do I set?": the settings of the
// strategy a recommendation tuned, what they are expected to give, and the
// evidence. `run`, `sweep`, `recommend` and report.html show it, and
// results.json carries it as "decision". It is part of the results
// contract: add fields, never rename or remove one.
type Decision struct {
	// Sentence is the decision in one line, the one a user acts on.
	Sentence string `json:"sentence"`
	// Strategy names the scenario's strategy whose settings were tuned;
	// Service names the service whose cap was swept, or whose limits bind
	// the turn rate when the global cap was; Knob names the setting varied:
	// "max_in_flight" or "max_in_flight_per_service.<service>".
	Strategy string `json:"strategy"`
	Service  string `json:"service"`
	Knob     string `json:"knob"`
	// MaxInFlight is the global cap to set (0: none; see
	// MaxInFlightPerService). MaxInFlightPerService holds the per-service
	// caps to set, by service name.
	MaxInFlight           int            `json:"max_in_flight"`
	MaxInFlightPerService map[string]int `json:"max_in_flight_per_service,omitempty"`
	// Headroom is the fraction of every service's published limits the
	// client's token buckets pace at (0: no token buckets); Pace gives the
	// resulting rates by service.
	Headroom float64         `json:"headroom"`
	Pace     map[string]Pace `json:"pace,omitempty"`
	// Retry is the retry policy, in words ("full-jitter from 1s to 60s, 5
	// attempts, honouring Retry-After").
	Retry string `json:"retry"`
	// Expected is what the settings gave over the seeds; Baseline is what
	// the scenario's unbounded strategy gave at the first of them (nil when
	// the scenario has none).
	Expected Outcome  `json:"expected"`
	Baseline *Outcome `json:"baseline,omitempty"`
	// Evidence says how the decision was reached.
	Evidence Evidence `json:"evidence"`
}

// Pace is a client-side token bucket's rates for one service.
type Pace struct {
	// RequestsPerMinute and TokensPerMinute are the bucket rates (0: the
	// service has no such limit).
	RequestsPerMinute float64 `json:"requests_per_minute,omitempty"`
	TokensPerMinute   float64 `json:"tokens_per_minute,omitempty"`
	// PerSecond says the service's file wrote its binding request limit
	// per second (key rps): the pace is said in requests/s, the file's unit.
	PerSecond bool `json:"per_second,omitempty"`
}

// Outcome is a setting's figures, means over the seeds.
type Outcome struct {
	// Strategy names what was run (the tuned strategy at the chosen cap, or
	// the baseline).
	Strategy string `json:"strategy"`
	// P50Ms and P95Ms are times to answer in milliseconds (a failed turn
	// counts as never answered: Unanswered, null in JSON, when the
	// percentile falls among those); P95LoMs and P95HiMs bound the p95's
	// 95% interval over the seeds (equal to P95Ms with one seed).
	P50Ms   AnswerMs `json:"p50_ms"`
	P95Ms   AnswerMs `json:"p95_ms"`
	P95LoMs AnswerMs `json:"p95_lo_ms"`
	P95HiMs AnswerMs `json:"p95_hi_ms"`
	// AnsweredShare is the share of the turns that ended (unfinished ones
	// left out) answered in full, among
	// the turns the scheduler could answer when the model's turns may fail
	// (SweepPoint.AnsweredShare);
	// RateLimitedShare is 429 responses ÷ attempts.
	AnsweredShare    float64 `json:"answered_share"`
	RateLimitedShare float64 `json:"rate_limited_share"`
	// CostPerAnsweredTaskUSD is what one completed task cost, in dollars
	// (SweepPoint.CostPerAnsweredTaskUSD): absent when the scenario
	// prices no service or no task was completed.
	CostPerAnsweredTaskUSD float64 `json:"cost_per_answered_task_usd,omitempty"`
	// Cap is the cap the setting ran with (0: none, or as the strategy is
	// written); Headroom the pace of its token buckets as a fraction of the
	// limits (0: it does not pace).
	Cap      int     `json:"cap,omitempty"`
	Headroom float64 `json:"headroom,omitempty"`
	// MeetsRule is set when the setting's 429 share and answered share
	// meet the decision's rule, so that it could have been chosen.
	MeetsRule bool `json:"meets_rule,omitempty"`
	// Stopped, when set, says the run was stopped early, once it could no
	// longer meet the rule: its figures above cover the run up to then
	// only, not the whole duration.
	Stopped *EarlyStop `json:"stopped,omitempty"`
}

// EarlyStop is why and when a run was stopped before its end: by AtS
// seconds of virtual time (of DurationS), FailedTurns of the Turns ended
// had failed, and at most MaxMoreAnswered more turns could have been
// answered by the end (what the limits admit), so that its answered share
// could no longer reach MinAnsweredShare.
type EarlyStop struct {
	AtS              float64 `json:"at_s"`
	DurationS        float64 `json:"duration_s"`
	Turns            int64   `json:"turns"`
	FailedTurns      int64   `json:"failed_turns"`
	MaxMoreAnswered  int64   `json:"max_more_answered"`
	MinAnsweredShare float64 `json:"min_answered_share"`
}

// Evidence is how a Decision was reached.
type Evidence struct {
	// ArithmeticCap is the Little's-law cap of the binding service at the
	// headroom: where the sweep started.
	ArithmeticCap int `json:"arithmetic_cap"`
	// Points are the sweep's figures at every cap simulated, ascending: what
	// the rule chose from and the sweep figure of report.html draws.
	Points []SweepPoint `json:"points,omitempty"`
	// Caps lists every cap simulated, ascending; Chosen is the cap the rule
	// picked (0: none qualified), Best the one with the lowest p95, Knee
	// where goodput stops paying (0: none found).
	Caps   []int `json:"caps"`
	Chosen int   `json:"chosen_cap"`
	Best   int   `json:"best_cap,omitempty"`
	Knee   int   `json:"knee,omitempty"`
	// Extended says, a line per round, why the swept range was extended.
	Extended []string `json:"extended,omitempty"`
	// Rule is the choice rule in words; MaxShare and Tolerance its settings.
	Rule      string  `json:"rule"`
	MaxShare  float64 `json:"max_share"`
	Tolerance float64 `json:"tolerance"`
	// Seeds lists the seeds each cap ran with; DurationS the virtual
	// seconds of each run.
	Seeds     []uint64 `json:"seeds"`
	DurationS float64  `json:"duration_s"`
	// Verdict compares the arithmetic with the simulation in a sentence.
	Verdict string `json:"verdict,omitempty"`
	// Load is the workload's demand against what the limits sustain, a
	// step a line (empty when not measured).
	Load []string `json:"load,omitempty"`
	// Strategies holds every strategy of the scenario as written, under
	// the same seeds (the unbounded baseline at the first only): the
	// configurations the decision must not be worse than. Paces holds the headrooms tried at the chosen cap.
	Strategies []Outcome `json:"strategies,omitempty"`
	Paces      []Outcome `json:"paces,omitempty"`
	// Search says, a step a line, how the strategy, the cap and the pace
	// were chosen.
	Search []string `json:"search,omitempty"`
	// Cheapest is, when the scenario prices a service, the configuration
	// with the lowest cost per answered task among those that meet the
	// rule: the chosen one and the strategies as written (nil when the
	// scenario prices none, or none that meets the rule completed a task).
	// The rule chooses on time to answer; this says what the cheapest
	// choice that also meets it would be.
	Cheapest *Outcome `json:"cheapest,omitempty"`
	// CapFlat is set when every cap swept that meets the rule answers
	// within the tolerance of the best: the cap does not bind there, and
	// the pace, not the cap, sets the figures.
	CapFlat bool `json:"cap_flat,omitempty"`
}

// Recommendation is the cap advised for one service, with its reasoning.
type Recommendation struct {
	// MaxInFlight ("max_in_flight") is the cap advised: the most attempts
	// to the service in flight at once, from Little's law on the binding
	// limit with headroom.
	MaxInFlight int `json:"max_in_flight"`
	// BindingLimit names the limit that binds: "rpm", "rps" (the request
	// limit, written per second in the scenario), "tpm" or "concurrency".
	BindingLimit string `json:"binding_limit"`
	// RequestsPerMinute and TokensPerMinute are the bucket settings advised
	// (the service's limits times the headroom).
	RequestsPerMinute float64 `json:"requests_per_minute,omitempty"`
	TokensPerMinute   float64 `json:"tokens_per_minute,omitempty"`
	// TurnsPerMinute is the sustainable turn rate.
	TurnsPerMinute float64 `json:"turns_per_minute,omitempty"`
	// OfferedTurnsPerMinute is the turn rate the workload offers with no
	// limit holding it back (Demand × 60), set on the service whose limits
	// bind the turn rate; 0 when not measured.
	OfferedTurnsPerMinute float64 `json:"offered_turns_per_minute,omitempty"`
	// VerifiedCap is the cap a simulated sweep chose (0: not verified).
	VerifiedCap int `json:"verified_cap,omitempty"`
	// Reason is the conclusion in one line, then the arithmetic, a step a
	// line.
	Reason string `json:"reason"`
}
