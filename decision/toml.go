package decision

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
)

// TOML writes a strategy as the [[strategy]] block of a scenario file:
// every key it sets that differs from the default, so that pasting the
// block into the scenario (under a name of its own) reproduces the strategy.
func TOML(st *scenarios.Strategy) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[[strategy]]\nname = %s\n", strconv.Quote(st.Name+"-tuned"))
	if st.Description != "" {
		fmt.Fprintf(&b, "description = %s\n", strconv.Quote(st.Description))
	}
	if st.MaxInFlight > 0 {
		fmt.Fprintf(&b, "max_in_flight = %d\n", st.MaxInFlight)
	}
	if len(st.MaxInFlightPerService) > 0 {
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(st.MaxInFlightPerService)) {
			parts = append(parts, fmt.Sprintf("%s = %d", tomlKey(name), st.MaxInFlightPerService[name]))
		}
		fmt.Fprintf(&b, "max_in_flight_per_service = { %s }\n", strings.Join(parts, ", "))
	}
	if st.TokenBucket {
		b.WriteString("token_bucket = true\n")
		if st.Headroom > 0 && st.Headroom != 1 {
			fmt.Fprintf(&b, "headroom = %s\n", formatFloat(st.Headroom))
		}
	}
	boolKey := func(key string, v bool) {
		if v {
			fmt.Fprintf(&b, "%s = true\n", key)
		}
	}
	boolKey("pause_on_retry_after", st.PauseOnRetryAfter)
	boolKey("keep_slot_during_backoff", st.KeepSlotDuringBackoff)
	if !st.SerializeWrites {
		b.WriteString("serialize_writes = false\n")
	}
	if st.FanOut > 0 {
		fmt.Fprintf(&b, "fan_out = %d\n", st.FanOut)
		if st.FanOutMode != sched.FanOutBatch {
			fmt.Fprintf(&b, "fan_out_mode = %q\n", st.FanOutMode)
		}
	}
	if st.Join != sched.JoinDefault && st.Join != sched.JoinPartial {
		fmt.Fprintf(&b, "join = %q\n", st.Join)
	}
	durKey := func(key string, d time.Duration) {
		if d > 0 {
			fmt.Fprintf(&b, "%s = %q\n", key, d)
		}
	}
	durKey("attempt_timeout", st.AttemptTimeout)
	durKey("call_timeout", st.CallTimeout)
	durKey("turn_timeout", st.TurnTimeout)
	if st.TokenBudget > 0 {
		fmt.Fprintf(&b, "token_budget = %d\n", st.TokenBudget)
	}
	if st.AttemptBudget > 0 {
		fmt.Fprintf(&b, "attempt_budget = %d\n", st.AttemptBudget)
	}
	if st.MaxQueued > 0 {
		fmt.Fprintf(&b, "max_queued = %d\n", st.MaxQueued)
	}
	if st.CancelAt != "" && st.CancelAt != scenarios.CancelAtTransport {
		fmt.Fprintf(&b, "cancel_at = %q\n", st.CancelAt)
	}
	if r := retryTOML(st.Retry); r != "" {
		fmt.Fprintf(&b, "retry = { %s }\n", r)
	}
	if a := st.Adaptive; a != nil {
		fmt.Fprintf(&b, "adaptive = { %s }\n", adaptiveTOML(a))
	}
	if r := st.RetryBudget; r != nil {
		fmt.Fprintf(&b, "retry_budget = { %s }\n", retryBudgetTOML(r))
	}
	if st.HeaderSync && st.TokenBucket {
		b.WriteString("header_sync = true\n")
	}
	return b.String()
}

// retryBudgetTOML writes a retry budget's inline table body: the settings
// that are set (ratio always, so the table is never empty).
func retryBudgetTOML(r *scenarios.RetryBudget) string {
	parts := []string{"ratio = " + formatFloat(r.Ratio)}
	if r.MinPerSecond > 0 {
		parts = append(parts, "min_per_s = "+formatFloat(r.MinPerSecond))
	}
	if r.Max > 0 {
		parts = append(parts, "max = "+formatFloat(r.Max))
	}
	return strings.Join(parts, ", ")
}

// adaptiveTOML writes an adaptive limit's inline table body: the settings
// that are set, the gradient's own only with the gradient.
func adaptiveTOML(a *scenarios.Adaptive) string {
	parts := []string{fmt.Sprintf("algorithm = %q", a.Algorithm)}
	for _, kv := range []struct {
		key string
		v   int
	}{{"initial", a.Initial}, {"min", a.Min}, {"max", a.Max}} {
		if kv.v > 0 {
			parts = append(parts, fmt.Sprintf("%s = %d", kv.key, kv.v))
		}
	}
	if a.Decrease > 0 {
		parts = append(parts, "decrease = "+formatFloat(a.Decrease))
	}
	if a.Algorithm == sched.AlgorithmGradient {
		if a.Smoothing > 0 {
			parts = append(parts, "smoothing = "+formatFloat(a.Smoothing))
		}
		if a.Tolerance > 0 {
			parts = append(parts, "tolerance = "+formatFloat(a.Tolerance))
		}
		if a.LongWindow > 0 {
			parts = append(parts, fmt.Sprintf("long_window = %d", a.LongWindow))
		}
		if a.QueueSize > 0 {
			parts = append(parts, "queue_size = "+formatFloat(a.QueueSize))
		}
	}
	if a.Services != nil {
		q := make([]string, len(a.Services))
		for i, s := range a.Services {
			q[i] = strconv.Quote(s)
		}
		parts = append(parts, "services = ["+strings.Join(q, ", ")+"]")
	}
	return strings.Join(parts, ", ")
}

// retryTOML writes a retry policy's inline table body ("" for the default:
// one attempt).
func retryTOML(r scenarios.Retry) string {
	var parts []string
	if r.Backoff != sched.BackoffNone {
		parts = append(parts, fmt.Sprintf("backoff = %q", r.Backoff))
	}
	for _, kv := range []struct {
		key string
		d   time.Duration
	}{{"base", r.Base}, {"cap", r.Cap}, {"budget", r.Budget}, {"retry_after_jitter", r.RetryAfterJitter}, {"max_retry_after", r.MaxRetryAfter}} {
		if kv.d > 0 {
			parts = append(parts, fmt.Sprintf("%s = %q", kv.key, kv.d))
		}
	}
	if r.Attempts > 0 {
		parts = append(parts, fmt.Sprintf("attempts = %d", r.Attempts))
	}
	if !r.HonorRetryAfter {
		parts = append(parts, "honor_retry_after = false")
	}
	if r.OverMaxRetryAfter == sched.RetryAfterFail {
		parts = append(parts, `over_max_retry_after = "fail"`)
	}
	return strings.Join(parts, ", ")
}

// tomlKey quotes a key unless it is a bare key.
func tomlKey(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return strconv.Quote(k)
		}
	}
	return k
}

// formatFloat writes x as Go and TOML read it back: the shortest form
// that parses to x.
func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
