package calibrate

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/trace"
)

// Bounds on what the traces may hold, so that the scenario written from
// them loads: past these, a calibration stops with the trace line that
// crossed one rather than writing a scenario that cannot run.
const (
	// MaxServices is the most services the traces may name, and MaxTools
	// the most tools: each becomes a table of the scenario, and a scenario
	// file holds at most scenarios.MaxFileBytes (a calibrated service
	// takes about 700 bytes with its comments, a tool about 200).
	MaxServices = 200
	MaxTools    = 200
	// MaxTime is the largest time a record may give, in seconds: about
	// 3,000 years after the Unix epoch, so absolute timestamps are
	// accepted and the microseconds of a time still fit a float64.
	MaxTime = 1e11
	// maxProblems is the most problems one calibration lists before it
	// stops reading.
	maxProblems = 20
)

// maxSpan is the longest time the traces may cover, in seconds: the
// longest a scenario may run (scenarios.MaxDuration).
var maxSpan = scenarios.MaxDuration.Seconds()

// errTooMany stops reading once maxProblems problems are found.
var errTooMany = fmt.Errorf("more than %d problems; the first %d are listed", maxProblems, maxProblems)

// check says why r cannot enter a scenario, before it is added: a value
// beyond what a scenario can hold, or a record that would take the traces
// past one of the bounds above.
func (c *Calibrator) check(r *trace.Record) error {
	if err := r.Check(); err != nil {
		return err
	}
	switch {
	case r.End > MaxTime:
		return fmt.Errorf("end %v s is past %g s, about the year 5000; times are seconds from the start of the run, or from the Unix epoch", r.End, float64(MaxTime))
	case r.Tokens < 0 || r.Tokens > scenarios.MaxTokensPerCall:
		return fmt.Errorf("tokens %d: a call takes from 0 to %d tokens in a scenario", r.Tokens, scenarios.MaxTokensPerCall)
	case r.RetryAfter > maxSpan:
		return fmt.Errorf("retry_after %v s is longer than a year", r.RetryAfter)
	case !limitOK(r.LimitRequests, scenarios.MaxRequestsPerMinute) || !limitOK(r.LimitTokens, scenarios.MaxTokensPerMinute):
		return fmt.Errorf("limit_requests %v and limit_tokens %v: a limit per minute is from 0 to %d", r.LimitRequests, r.LimitTokens, int64(scenarios.MaxRequestsPerMinute))
	}
	if first, last := min(c.first, r.Intended), max(c.latest, r.End); last-first > maxSpan {
		return fmt.Errorf("the traces now span %.0f s (from %v to %v), more than a year, the longest a scenario may run; calibrate a shorter stretch", last-first, first, last)
	}
	if _, ok := c.services[r.Service]; !ok && len(c.services) >= MaxServices {
		return fmt.Errorf("service %s is one more than the %d services a scenario calibrated from traces holds: calibrate one part of the system at a time", quoteTrace(r.Service), MaxServices)
	}
	if r.Attempt > 1 || r.Kind == trace.KindModel {
		return nil
	}
	name := r.Tool
	if name == "" {
		name = r.Service
	}
	if _, ok := c.tools[name]; !ok && len(c.tools) >= MaxTools {
		return fmt.Errorf("tool %s is one more than the %d tools a scenario calibrated from traces holds: calibrate one part of the system at a time", quoteTrace(name), MaxTools)
	}
	// A scenario's turn makes its tool calls and a model call.
	if t := c.turns[key{c.sections, r.Turn}]; t != nil && int(t.tools) >= scenarios.MaxCallsPerTurn-1 {
		return fmt.Errorf("turn %d makes more than %d tool calls, the most one turn can make in a scenario besides its model call", r.Turn, scenarios.MaxCallsPerTurn-1)
	}
	return nil
}

// checkLimits says why a header's limits cannot enter a scenario.
func checkLimits(limits map[string]trace.Limits) error {
	for _, name := range slices.Sorted(maps.Keys(limits)) {
		l := limits[name]
		if !limitOK(l.RPS, scenarios.MaxRequestsPerSecond) || !limitOK(l.RPM, scenarios.MaxRequestsPerMinute) ||
			!limitOK(l.TPM, scenarios.MaxTokensPerMinute) || l.MaxConcurrent < 0 || l.MaxConcurrent > scenarios.MaxCap {
			return fmt.Errorf("header: the limits of %s (rps %v, rpm %v, tpm %v, max_concurrent %d) are negative or beyond what a scenario holds",
				quoteTrace(name), l.RPS, l.RPM, l.TPM, l.MaxConcurrent)
		}
	}
	if len(limits) > MaxServices {
		return fmt.Errorf("header: limits for %d services; a scenario calibrated from traces holds at most %d", len(limits), MaxServices)
	}
	return nil
}

// limitOK reports whether x is a limit a scenario can hold: finite, from
// 0 to hi.
func limitOK(x float64, hi float64) bool { return x >= 0 && x <= hi }

// quoteTrace quotes a name from a trace for a message, cut past 60 bytes.
func quoteTrace(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%q…", strings.ToValidUTF8(s[:60], ""))
	}
	return fmt.Sprintf("%q", s)
}

// problem keeps err, about line of path, among the calibration's
// problems; past maxProblems it returns errTooMany to stop the reading.
func (c *Calibrator) problem(path string, line int, err error) error {
	c.problems = append(c.problems, &trace.Error{Name: path, Line: line, Err: err})
	if len(c.problems) >= maxProblems {
		return errTooMany
	}
	return nil
}

// Problems returns the problems found so far, every one naming its trace
// and line, as one error (errors.Join), or nil.
func (c *Calibrator) Problems() error {
	if len(c.problems) == 0 {
		return nil
	}
	errs := append([]error(nil), c.problems...)
	if len(errs) >= maxProblems {
		errs = append(errs, errTooMany)
	}
	return errors.Join(errs...)
}
