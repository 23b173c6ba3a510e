package decision

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
)

// Go writes the sched.Config the strategy runs with as a Go composite
// literal, with only the fields that are set, ready to paste into an agent
// runtime that imports sched.
func Go(sc *scenarios.Scenario, st *scenarios.Strategy) (string, error) {
	cfg, err := setup.SchedConfig(sc, st)
	if err != nil {
		return "", err
	}
	var w goWriter
	w.WriteString("sched.Config{\n")
	w.int("\t", "MaxInFlight", cfg.MaxInFlight)
	w.services(cfg.Services)
	w.int("\t", "MaxQueued", cfg.MaxQueued)
	w.int("\t", "FanOut", cfg.FanOut)
	if cfg.FanOutMode == sched.FanOutTruncate {
		w.field("\t", "FanOutMode", "sched.FanOutTruncate")
	}
	w.retry(cfg.Retry)
	if cfg.KeepSlotDuringBackoff {
		w.field("\t", "KeepSlotDuringBackoff", "true")
	}
	w.dur("\t", "MaxRetryAfter", cfg.MaxRetryAfter)
	if cfg.OverMaxRetryAfter == sched.RetryAfterFail {
		w.field("\t", "OverMaxRetryAfter", "sched.RetryAfterFail")
	}
	w.dur("\t", "AttemptTimeout", cfg.AttemptTimeout)
	w.dur("\t", "CallTimeout", cfg.CallTimeout)
	w.dur("\t", "TurnTimeout", cfg.TurnTimeout)
	if cfg.Join == sched.JoinAllOrNothing {
		w.field("\t", "Join", "sched.JoinAllOrNothing")
	}
	if cfg.TurnTokenBudget != 0 {
		w.field("\t", "TurnTokenBudget", strconv.FormatInt(cfg.TurnTokenBudget, 10))
	}
	w.int("\t", "TurnAttemptBudget", cfg.TurnAttemptBudget)
	w.WriteString("}\n")
	return w.String(), nil
}

// goWriter writes a Go composite literal field by field, leaving out the
// fields at their zero value.
type goWriter struct{ strings.Builder }

// namedFloat is one float64 field of a literal.
type namedFloat struct {
	name string
	v    float64
}

func (w *goWriter) field(indent, name, value string) {
	fmt.Fprintf(w, "%s%s: %s,\n", indent, name, value)
}

func (w *goWriter) int(indent, name string, v int) {
	if v != 0 {
		w.field(indent, name, strconv.Itoa(v))
	}
}

func (w *goWriter) dur(indent, name string, d time.Duration) {
	if d != 0 {
		w.field(indent, name, goDuration(d))
	}
}

func (w *goWriter) floats(indent string, fs []namedFloat) {
	for _, f := range fs {
		if f.v != 0 {
			w.field(indent, f.name, formatFloat(f.v))
		}
	}
}

// services writes the Services map: the services whose settings are not
// all zero, in name order.
func (w *goWriter) services(services map[string]sched.ServiceConfig) {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(services)) {
		if s := services[name]; s != (sched.ServiceConfig{}) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return
	}
	w.WriteString("\tServices: map[string]sched.ServiceConfig{\n")
	for _, name := range names {
		s := services[name]
		fmt.Fprintf(w, "\t\t%s: {\n", strconv.Quote(name))
		w.int("\t\t\t", "MaxInFlight", s.MaxInFlight)
		w.floats("\t\t\t", []namedFloat{{"RequestsPerMinute", s.RequestsPerMinute}, {"RequestBurst", s.RequestBurst}, {"TokensPerMinute", s.TokensPerMinute}, {"TokenBurst", s.TokenBurst}, {"Headroom", s.Headroom}})
		if s.PauseOnRetryAfter {
			w.field("\t\t\t", "PauseOnRetryAfter", "true")
		}
		if s.HeaderSync {
			w.field("\t\t\t", "HeaderSync", "true")
		}
		if r := s.RetryBudget; r != nil {
			var parts []string
			for _, f := range []namedFloat{{"Ratio", r.Ratio}, {"MinPerSecond", r.MinPerSecond}, {"Max", r.Max}} {
				if f.v != 0 {
					parts = append(parts, f.name+": "+formatFloat(f.v))
				}
			}
			w.WriteString("\t\t\tRetryBudget: &sched.RetryBudget{" + strings.Join(parts, ", ") + "},\n")
		}
		if a := s.Adaptive; a != nil {
			w.adaptive(a)
		}
		w.WriteString("\t\t},\n")
	}
	w.WriteString("\t},\n")
}

// adaptive writes a service's Adaptive field.
func (w *goWriter) adaptive(a *sched.AdaptiveConfig) {
	const in = "\t\t\t\t"
	w.WriteString("\t\t\tAdaptive: &sched.AdaptiveConfig{\n")
	algo := "sched.AlgorithmAIMD"
	if a.Algorithm == sched.AlgorithmGradient {
		algo = "sched.AlgorithmGradient"
	}
	w.field(in, "Algorithm", algo)
	w.int(in, "Initial", a.Initial)
	w.int(in, "Min", a.Min)
	w.int(in, "Max", a.Max)
	w.floats(in, []namedFloat{{"Backoff", a.Backoff}, {"Smoothing", a.Smoothing}, {"Tolerance", a.Tolerance}, {"QueueSize", a.QueueSize}})
	w.int(in, "LongWindow", a.LongWindow)
	w.WriteString("\t\t\t},\n")
}

// retry writes the Retry field unless the policy is the zero one.
func (w *goWriter) retry(r sched.RetryPolicy) {
	if r == (sched.RetryPolicy{}) {
		return
	}
	w.WriteString("\tRetry: sched.RetryPolicy{\n")
	if r.Backoff != sched.BackoffNone {
		w.field("\t\t", "Backoff", "sched.Backoff"+goName(r.Backoff.String()))
	}
	w.dur("\t\t", "Base", r.Base)
	w.dur("\t\t", "Cap", r.Cap)
	w.int("\t\t", "MaxAttempts", r.MaxAttempts)
	w.dur("\t\t", "Budget", r.Budget)
	if r.IgnoreRetryAfter {
		w.field("\t\t", "IgnoreRetryAfter", "true")
	}
	w.dur("\t\t", "RetryAfterJitter", r.RetryAfterJitter)
	w.WriteString("\t},\n")
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
