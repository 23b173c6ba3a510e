package fakeapi

import "time"

// Second is one second of the timeline: what arrived in [T, T+1) seconds
// since the epoch.
type Second struct {
	// T is the second since the epoch.
	T int64 `json:"t"`
	// Admitted and Limited count admissions and 429s in that second.
	Admitted int64 `json:"admitted"`
	Limited  int64 `json:"limited"`
}

// Stats is a service's accounting since it started or was last reset. The
// JSON field names are an interface (GET /_simbench/stats).
type Stats struct {
	// Service is the service name.
	Service string `json:"service"`
	// Arrived counts every request that reached the model.
	Arrived int64 `json:"arrived"`
	// Accepted counts admissions (including those that later fail, hang or reset).
	Accepted int64 `json:"accepted"`
	// RateLimited counts 429s; RateLimitedBy splits them by limit
	// ("rps", "rpm", "tpm", "concurrency", and "itpm" and "otpm" on a
	// service with InputTPM or OutputTPM).
	RateLimited   int64            `json:"rate_limited"`
	RateLimitedBy map[string]int64 `json:"rate_limited_by"`
	// Errors counts other failures by class: "overloaded" (529),
	// "server_error" (5xx), "hang", "reset", "unauthorized" (401),
	// "too_large" (413), "bad_request" (400).
	Errors map[string]int64 `json:"errors"`
	// Completed counts successful responses delivered to a client still there.
	Completed int64 `json:"completed"`
	// CancelledByClient and Wasted follow one rule for requests streamed
	// or not. A client leaves when it closes the connection before the
	// answer is complete: before the first byte, mid-stream, or while a
	// whole answer is being prepared. Then the service stops working
	// (cancelled), unless it keeps working on a disconnect
	// (spec.Config.KeepWorkingOnDisconnect), when it finishes the answer for
	// nobody (wasted).
	//
	// CancelledByClient counts admitted requests whose client left and whose
	// work stopped then; the work done until then is not counted as wasted.
	CancelledByClient int64 `json:"cancelled_by_client"`
	// CancelledWorkS is the server-side seconds the CancelledByClient
	// requests worked, from admission to the cancel: work that was spent,
	// though nothing after the cancel was.
	CancelledWorkS float64 `json:"cancelled_work_s,omitempty"`
	// Wasted counts successful requests the service finished after their
	// client had left (and, in a driver that reads answers as a client does,
	// answers nobody read); WastedWorkS is the server-side seconds they
	// took, from admission, and WastedTokens their tokens, input and output
	// as settled.
	Wasted       int64   `json:"wasted"`
	WastedWorkS  float64 `json:"wasted_work_s"`
	WastedTokens int64   `json:"wasted_tokens"`
	// EarlyRetries counts requests that arrived from a client before a retry
	// delay it had been given had elapsed.
	EarlyRetries int64 `json:"early_retries"`
	// EarlyRetriesBy splits EarlyRetries by how the server knew the request
	// was a retry: "idempotency_key" (a repeated Idempotency-Key),
	// "retry_count" (x-stainless-retry-count or X-Simbench-Retry above 0),
	// "client" (X-Simbench-Client, a client sending one request at a time;
	// once it has asked a model, a repeat within its model round).
	// Only the HTTP server fills it.
	EarlyRetriesBy map[string]int64 `json:"early_retries_by,omitempty"`
	// DailyRetries counts the early retries (of EarlyRetries) that a spent
	// daily quota refused (spec.Daily): requests a client sent again before
	// the reset it had been told to wait for, spinning on the quota. 0 and
	// left out on a service without one.
	DailyRetries int64 `json:"daily_retries,omitempty"`
	// WriteRaces counts writes admitted while another write to the same
	// resource was in flight.
	WriteRaces int64 `json:"write_races"`
	// WritesAppliedTwice counts writes admitted under an Idempotency-Key
	// already applied; WritesDeduplicated those answered from the first
	// instead (spec.Config.DedupeWrites). Only the HTTP server fills them
	// (see idempotency.go).
	WritesAppliedTwice int64 `json:"writes_applied_twice,omitempty"`
	WritesDeduplicated int64 `json:"writes_deduplicated,omitempty"`
	// Conflicts counts writes answered 409 Conflict because they arrived
	// while another write to the same resource was in service
	// (spec.Faults.Conflict); they are not in Errors.
	Conflicts int64 `json:"conflicts"`
	// TokensAccepted sums the tokens charged for admitted requests.
	TokensAccepted int64 `json:"tokens_accepted"`
	// BackgroundAdmitted counts the background requests
	// (ServiceConfig.Background) admitted, BackgroundLimited those that gave
	// up waiting for room; none of them is in the counts above.
	BackgroundAdmitted int64 `json:"background_admitted,omitempty"`
	BackgroundLimited  int64 `json:"background_limited,omitempty"`
	// InFlight is the requests in flight now; PeakConcurrency the most at once.
	InFlight        int `json:"in_flight"`
	PeakConcurrency int `json:"peak_concurrency"`
	// Timeline has one entry per second from the epoch to the last arrival
	// that was admitted or rate limited.
	Timeline []Second `json:"timeline"`
	// Keys splits admissions and 429s by API key, in the order of
	// ServiceConfig.Keys, on a service with nested limits
	// (spec.Config.Projects) only.
	Keys []KeyStats `json:"keys,omitempty"`
}

// KeyStats is one API key's share of a service with nested limits.
type KeyStats struct {
	// Key is the API key; Project its project ("": none).
	Key     string `json:"key"`
	Project string `json:"project,omitempty"`
	// Admitted counts the key's admissions, RateLimited its 429s.
	Admitted    int64 `json:"admitted"`
	RateLimited int64 `json:"rate_limited"`
	// RateLimitedBy splits RateLimited by the level whose limit refused:
	// "key", "project" and "organization".
	RateLimitedBy map[string]int64 `json:"rate_limited_by"`
}

// errorKinds are the kinds reported in Stats.Errors.
var errorKinds = []Kind{KindOverloaded, KindServerError, KindHang, KindReset, KindUnauthorized, KindTooLarge, KindBadRequest}

// Stats returns a copy of the accounting.
func (m *Model) Stats() Stats {
	c := &m.c
	s := Stats{
		Service:            m.cfg.Name,
		Arrived:            c.arrived,
		Accepted:           c.accepted,
		RateLimitedBy:      make(map[string]int64, numLimits-1),
		Errors:             make(map[string]int64, len(errorKinds)),
		Completed:          c.completed,
		CancelledByClient:  c.cancelled,
		CancelledWorkS:     time.Duration(c.cancelledNS).Seconds(),
		Wasted:             c.wasted,
		WastedWorkS:        time.Duration(c.wastedNS).Seconds(),
		WastedTokens:       c.wastedTokens,
		EarlyRetries:       c.early,
		DailyRetries:       c.dailyRetries,
		WriteRaces:         c.races,
		Conflicts:          c.conflicts,
		TokensAccepted:     c.tokens,
		BackgroundAdmitted: c.bgAdmitted,
		BackgroundLimited:  c.bgLimited,
		InFlight:           m.inFlight,
		PeakConcurrency:    c.peak,
		Timeline:           append([]Second{}, c.timeline...),
	}
	for l := LimitRPS; l < numLimits; l++ {
		if (l == LimitITPM && m.cfg.InputTPM == 0) || (l == LimitOTPM && m.cfg.OutputTPM == 0) ||
			(l == LimitRPD && m.cfg.Daily.RPD == 0) || (l == LimitTPD && m.cfg.Daily.TPD == 0) {
			continue // listed only on services that have them
		}
		s.RateLimitedBy[l.String()] = c.limited[l]
		s.RateLimited += c.limited[l]
	}
	for _, k := range errorKinds {
		s.Errors[k.String()] = c.errors[k]
	}
	// Listed only on services that inject them.
	if m.cfg.Faults.Credit > 0 {
		s.Errors[KindQuotaExhausted.String()] = c.errors[KindQuotaExhausted]
	}
	if m.cfg.Faults.ContextWindow > 0 {
		s.Errors[KindContextTooLong.String()] = c.errors[KindContextTooLong]
	}
	if m.levels != nil {
		for _, k := range m.cfg.Keys {
			t := m.tenants[k.Key]
			ks := KeyStats{Key: k.Key, Project: k.Project, Admitted: t.admitted, RateLimitedBy: make(map[string]int64, numLevels-1)}
			for l := LevelKey; l < numLevels; l++ {
				ks.RateLimitedBy[l.String()] = t.limitedBy[l]
				ks.RateLimited += t.limitedBy[l]
			}
			s.Keys = append(s.Keys, ks)
		}
	}
	return s
}

// maxTimeline bounds the per-second timeline (12 days of seconds).
const maxTimeline = 1 << 20

// counters are a model's accounting, which Stats reports.
type counters struct {
	arrived, accepted, completed, cancelled    int64
	wasted, wastedTokens, early, races, tokens int64
	wastedNS, conflicts, cancelledNS           int64
	bgAdmitted, bgLimited                      int64
	dailyRetries                               int64
	limited                                    [numLimits]int64
	errors                                     [numKinds]int64
	peak                                       int
	timeline                                   []Second
}

// tick records one admitted or rate-limited arrival in the timeline.
func (m *Model) tick(now time.Duration, admitted bool) {
	if now < 0 {
		return
	}
	sec := int64(now / time.Second)
	if sec >= maxTimeline {
		return
	}
	tl := m.c.timeline
	for int64(len(tl)) <= sec {
		tl = append(tl, Second{T: int64(len(tl))})
	}
	if admitted {
		tl[sec].Admitted++
	} else {
		tl[sec].Limited++
	}
	m.c.timeline = tl
}
