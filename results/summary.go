package results

import (
	"encoding/json"
	"math"
)

// Summary is a latency distribution's summary, in milliseconds.
type Summary struct {
	// Mean ("mean") is the mean, in milliseconds; P50, P95 and P99
	// ("p50", "p95", "p99") the 50th, 95th and 99th percentiles; Max
	// ("max") the largest value.
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// AnswerSummary gives time-to-answer percentiles in milliseconds, with the
// share of turns that got an answer.
type AnswerSummary struct {
	// Mean is the mean time to answer of the turns answered in full, in
	// milliseconds (0 when none was); P50, P95 and P99 the percentiles of
	// time to answer over the turns that ended, in milliseconds
	// (Unanswered when the percentile falls among turns not answered).
	Mean float64  `json:"mean"`
	P50  AnswerMs `json:"p50"`
	P95  AnswerMs `json:"p95"`
	P99  AnswerMs `json:"p99"`
	// AnsweredShare is the share of the turns that ended whose every call
	// succeeded, in [0, 1]; turns still running when the run ended
	// (unfinished) are left out, as from every latency figure.
	AnsweredShare float64 `json:"answered_share"`
}

// AnswerMs is a time to answer in milliseconds, or Unanswered.
type AnswerMs float64

// Unanswered is the AnswerMs of a percentile that falls among turns that got
// no answer: +Inf in Go, null in JSON.
var Unanswered = AnswerMs(math.Inf(1))

// Answered reports whether a is a time rather than Unanswered.
func (a AnswerMs) Answered() bool { return !math.IsInf(float64(a), 1) }

// MarshalJSON writes Unanswered as null and any other value as a number.
func (a AnswerMs) MarshalJSON() ([]byte, error) {
	if !a.Answered() {
		return []byte("null"), nil
	}
	return json.Marshal(float64(a))
}

// UnmarshalJSON reads null as Unanswered and a number as itself.
func (a *AnswerMs) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*a = Unanswered
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*a = AnswerMs(f)
	return nil
}

// CDFPoint is one point of a cumulative distribution: a fraction P of turns
// finished within Ms milliseconds.
type CDFPoint struct {
	// Ms ("ms") is the latency, in milliseconds; P ("p") the fraction, 0–1,
	// of turns finished within it.
	Ms float64 `json:"ms"`
	P  float64 `json:"p"`
}

// TimelinePoint is one bucket of the run's timeline.
type TimelinePoint struct {
	// T is the bucket's start in seconds; the bucket spans BucketS seconds.
	T       float64 `json:"t"`
	BucketS float64 `json:"bucket_s"`
	// Started and RateLimited count attempts started and 429s per second in the bucket.
	Started     float64 `json:"started_per_s"`
	RateLimited float64 `json:"rate_limited_per_s"`
	// InFlight is the largest number of attempts in flight during the bucket.
	InFlight int `json:"in_flight"`
}

// ProcessResult is one agent process's figures in a multi-process run: its
// share of the workload, what it got done, the 429s it met and its time to
// answer. Goodput is per second of the scenario's duration, as the
// strategy's.
type ProcessResult struct {
	// Name is "p1" … "pN", in the order of workload.process_shares.
	Name string `json:"name"`
	// Share is the process's share of the workload (its weight over the sum).
	Share float64 `json:"share"`
	// Turns, FailedTurns and UnfinishedTurns count its turns as the
	// strategy's fields do; Calls its finished tool calls (as the
	// strategy's Calls counts them), Attempts their attempts (retries
	// included).
	Turns           int64 `json:"turns"`
	FailedTurns     int64 `json:"failed_turns"`
	UnfinishedTurns int64 `json:"unfinished_turns,omitempty"`
	Calls           int64 `json:"calls"`
	Attempts        int64 `json:"attempts"`
	// GoodputPerS is its successful tool calls per second.
	GoodputPerS float64 `json:"goodput_per_s"`
	// RateLimited counts the 429 responses it saw.
	RateLimited int64 `json:"rate_limited"`
	// AnswerLatencyMs is its time to a full answer, as the strategy's.
	AnswerLatencyMs AnswerSummary `json:"answer_latency_ms"`
	// QuotaRoundTrips counts its round trips to the shared quota store
	// (quota mode "shared"; 0 otherwise): what leases cut.
	QuotaRoundTrips int64 `json:"quota_round_trips,omitempty"`
	// QuotaUnanswered counts, of a live run's QuotaRoundTrips, those that
	// got no answer in time (the failover's timeout passed, or the
	// connection was lost): the store may or may not have applied them.
	QuotaUnanswered int64 `json:"quota_unanswered,omitempty"`
	// QuotaFallbacks counts a process's switches to its fallback (a local
	// share, or refusing credit) while the shared store was unreachable or
	// slower than the failover's timeout (quota mode "shared": Redis in a
	// live run, the simulated store in a virtual one); QuotaFallbackS is
	// the seconds (scenario time) it spent so.
	QuotaFallbacks int     `json:"quota_fallbacks,omitempty"`
	QuotaFallbackS float64 `json:"quota_fallback_s,omitempty"`
}
