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
	"github.com/simbench/simbench/sim"
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
		if st.FanOutMode != "" && st.FanOutMode != scenarios.FanOutBatch {
			fmt.Fprintf(&b, "fan_out_mode = %q\n", st.FanOutMode)
		}
	}
	if st.Join != "" && st.Join != scenarios.JoinPartial {
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
	if a.Algorithm == scenarios.AdaptiveGradient {
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
	if r.Backoff != "" && r.Backoff != scenarios.BackoffNone {
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
	if r.OverMaxRetryAfter == scenarios.OverMaxFail {
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

// Go writes the sched.Config the strategy runs with as a Go composite
// literal, with only the fields that are set, ready to paste into an agent
// runtime that imports sched.
func Go(sc *scenarios.Scenario, st *scenarios.Strategy) (string, error) {
	cfg, err := sim.SchedConfig(sc, st)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("sched.Config{\n")
	field := func(indent, name, value string) { fmt.Fprintf(&b, "%s%s: %s,\n", indent, name, value) }
	intField := func(indent, name string, v int) {
		if v != 0 {
			field(indent, name, strconv.Itoa(v))
		}
	}
	durField := func(indent, name string, d time.Duration) {
		if d != 0 {
			field(indent, name, goDuration(d))
		}
	}
	intField("\t", "MaxInFlight", cfg.MaxInFlight)
	var names []string
	for _, name := range slices.Sorted(maps.Keys(cfg.Services)) {
		if s := cfg.Services[name]; s != (sched.ServiceConfig{}) {
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		b.WriteString("\tServices: map[string]sched.ServiceConfig{\n")
		for _, name := range names {
			s := cfg.Services[name]
			fmt.Fprintf(&b, "\t\t%s: {\n", strconv.Quote(name))
			intField("\t\t\t", "MaxInFlight", s.MaxInFlight)
			for _, f := range []struct {
				name string
				v    float64
			}{{"RequestsPerMinute", s.RequestsPerMinute}, {"RequestBurst", s.RequestBurst}, {"TokensPerMinute", s.TokensPerMinute}, {"TokenBurst", s.TokenBurst}, {"Headroom", s.Headroom}} {
				if f.v != 0 {
					field("\t\t\t", f.name, formatFloat(f.v))
				}
			}
			if s.PauseOnRetryAfter {
				field("\t\t\t", "PauseOnRetryAfter", "true")
			}
			if s.HeaderSync {
				field("\t\t\t", "HeaderSync", "true")
			}
			if r := s.RetryBudget; r != nil {
				b.WriteString("\t\t\tRetryBudget: &sched.RetryBudget{")
				var parts []string
				for _, f := range []struct {
					name string
					v    float64
				}{{"Ratio", r.Ratio}, {"MinPerSecond", r.MinPerSecond}, {"Max", r.Max}} {
					if f.v != 0 {
						parts = append(parts, f.name+": "+formatFloat(f.v))
					}
				}
				b.WriteString(strings.Join(parts, ", ") + "},\n")
			}
			if a := s.Adaptive; a != nil {
				b.WriteString("\t\t\tAdaptive: &sched.AdaptiveConfig{\n")
				algo := "sched.AlgorithmAIMD"
				if a.Algorithm == sched.AlgorithmGradient {
					algo = "sched.AlgorithmGradient"
				}
				field("\t\t\t\t", "Algorithm", algo)
				intField("\t\t\t\t", "Initial", a.Initial)
				intField("\t\t\t\t", "Min", a.Min)
				intField("\t\t\t\t", "Max", a.Max)
				for _, f := range []struct {
					name string
					v    float64
				}{{"Backoff", a.Backoff}, {"Smoothing", a.Smoothing}, {"Tolerance", a.Tolerance}, {"QueueSize", a.QueueSize}} {
					if f.v != 0 {
						field("\t\t\t\t", f.name, formatFloat(f.v))
					}
				}
				intField("\t\t\t\t", "LongWindow", a.LongWindow)
				b.WriteString("\t\t\t},\n")
			}
			b.WriteString("\t\t},\n")
		}
		b.WriteString("\t},\n")
	}
	intField("\t", "MaxQueued", cfg.MaxQueued)
	intField("\t", "FanOut", cfg.FanOut)
	if cfg.FanOutMode == sched.FanOutTruncate {
		field("\t", "FanOutMode", "sched.FanOutTruncate")
	}
	if r := cfg.Retry; r != (sched.RetryPolicy{}) {
		b.WriteString("\tRetry: sched.RetryPolicy{\n")
		if r.Backoff != sched.BackoffNone {
			field("\t\t", "Backoff", "sched.Backoff"+goName(r.Backoff.String()))
		}
		durField("\t\t", "Base", r.Base)
		durField("\t\t", "Cap", r.Cap)
		intField("\t\t", "MaxAttempts", r.MaxAttempts)
		durField("\t\t", "Budget", r.Budget)
		if r.IgnoreRetryAfter {
			field("\t\t", "IgnoreRetryAfter", "true")
		}
		durField("\t\t", "RetryAfterJitter", r.RetryAfterJitter)
		b.WriteString("\t},\n")
	}
	if cfg.KeepSlotDuringBackoff {
		field("\t", "KeepSlotDuringBackoff", "true")
	}
	durField("\t", "MaxRetryAfter", cfg.MaxRetryAfter)
	if cfg.OverMaxRetryAfter == sched.RetryAfterFail {
		field("\t", "OverMaxRetryAfter", "sched.RetryAfterFail")
	}
	durField("\t", "AttemptTimeout", cfg.AttemptTimeout)
	durField("\t", "CallTimeout", cfg.CallTimeout)
	durField("\t", "TurnTimeout", cfg.TurnTimeout)
	if cfg.Join == sched.JoinAllOrNothing {
		field("\t", "Join", "sched.JoinAllOrNothing")
	}
	if cfg.TurnTokenBudget != 0 {
		field("\t", "TurnTokenBudget", strconv.FormatInt(cfg.TurnTokenBudget, 10))
	}
	intField("\t", "TurnAttemptBudget", cfg.TurnAttemptBudget)
	b.WriteString("}\n")
	return b.String(), nil
}

// goDuration writes a duration as a Go constant expression: 60 *
// time.Second, 1500 * time.Millisecond.
func goDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "time.Hour"}, {time.Minute, "time.Minute"}, {time.Second, "time.Second"}, {time.Millisecond, "time.Millisecond"}, {time.Microsecond, "time.Microsecond"}} {
		if d%u.d == 0 {
			if d == u.d {
				return u.name
			}
			return fmt.Sprintf("%d * %s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d * time.Nanosecond", int64(d))
}

// goName turns a scenario spelling into the Go constant's suffix:
// "full-jitter" → "FullJitter".
func goName(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
