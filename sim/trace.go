package sim

import (
	"fmt"
	"os"
	"time"

	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/trace"
)

// TraceHeader returns the header of a strategy's trace section: the
// scenario, strategy, seed, mode ("virtual" or "live") and the services'
// configured limits.
func TraceHeader(sc *scenarios.Scenario, strategy, mode string) trace.Header {
	h := trace.Header{Scenario: sc.Name, Strategy: strategy, Seed: sc.Seed, Mode: mode}
	for i := range sc.Services {
		s := &sc.Services[i]
		l := trace.Limits{RPS: s.RequestsPerSecond, RPM: s.RequestsPerMinute, TPM: s.TokensPerMinute, MaxConcurrent: s.MaxConcurrent}
		if l == (trace.Limits{}) {
			continue
		}
		if h.Limits == nil {
			h.Limits = map[string]trace.Limits{}
		}
		h.Limits[s.Name] = l
	}
	return h
}

// seconds converts a duration to the trace's seconds.
func seconds(d time.Duration) float64 { return d.Seconds() }

// retryKey names a call of a sched turn of one process (each process's
// scheduler numbers its turns and attempts on its own).
type retryKey struct {
	proc uint16
	turn sched.TurnID
	call string
}

// retryDue is when a call's next attempt is due and the delay chosen
// before it.
type retryDue struct {
	at, delay time.Duration
}

// engineTrace is an engine's tracing state: the attempts in flight (by
// slab entry) and the retries scheduled and not yet started. Nothing else
// is kept, so its memory is bounded by the work in flight.
type engineTrace struct {
	w        *trace.Writer
	inflight []trace.Record // by slab entry; Service "" when unused
	retries  map[retryKey]retryDue
	timeouts map[attemptKey]struct{}
}

// attemptKey names an attempt of one process.
type attemptKey struct {
	proc uint16
	id   sched.AttemptID
}

func newEngineTrace(w *trace.Writer) *engineTrace {
	return &engineTrace{w: w, retries: map[retryKey]retryDue{}, timeouts: map[attemptKey]struct{}{}}
}

// hookFor returns the hook of process p's scheduler.
func (t *engineTrace) hookFor(p uint16) func(sched.Event) {
	return func(ev sched.Event) { t.hook(p, ev) }
}

// hook sees process p's scheduler's decisions: the delays it chooses
// before retries and the attempts it ends by their timeout.
func (t *engineTrace) hook(p uint16, ev sched.Event) {
	switch ev.Kind {
	case sched.EventRetry:
		t.retries[retryKey{p, ev.Turn, ev.CallID}] = retryDue{at: ev.At + ev.Delay, delay: ev.Delay}
	case sched.EventCancelled:
		if ev.Reason == "attempt timeout" {
			t.timeouts[attemptKey{p, ev.Attempt}] = struct{}{}
		}
	case sched.EventResult:
		delete(t.retries, retryKey{p, ev.Turn, ev.CallID})
	}
}

// traceStart notes an attempt sent now, in slab entry i: its turn, call,
// attempt number, and when it was due (the sched turn's submission, or
// the end of the retry delay the scheduler chose).
func (e *engine) traceStart(i int32, a *sched.Action, meta *agent.CallMeta) {
	t := e.trace
	for int(i) >= len(t.inflight) {
		t.inflight = append(t.inflight, trace.Record{})
	}
	p := a.Tag.(*agent.AgentPart)
	r := trace.Record{
		Session: int64(p.Turn.Session + 1), Turn: int64(p.Turn.No), Call: a.Call.ID, Service: a.Deployment,
		Tool: a.Call.Tool, Attempt: a.N, Intended: seconds(p.At), Start: seconds(e.now), Tokens: a.Call.Tokens,
	}
	if meta.Tool < 0 {
		r.Kind, r.Tool = trace.KindModel, ""
	}
	if a.N > 1 {
		k := retryKey{uint16(e.p), a.TurnID, a.Call.ID}
		if d, ok := t.retries[k]; ok {
			r.Intended, r.RetryDelay = seconds(d.at), seconds(d.delay)
			delete(t.retries, k)
		}
	}
	r.Intended = min(r.Intended, r.Start)
	t.inflight[i] = r
}

// timedOut reports whether the scheduler ended attempt k by its timeout.
func (t *engineTrace) timedOut(k attemptKey) bool {
	_, ok := t.timeouts[k]
	return ok
}

// traceEnd writes the record of process proc's attempt in slab entry i,
// ended now with outcome o.
func (e *engine) traceEnd(i int32, proc uint16, id sched.AttemptID, o sched.Outcome) {
	t := e.trace
	r := t.inflight[i]
	t.inflight[i] = trace.Record{}
	if r.Service == "" {
		return
	}
	if k := (attemptKey{proc, id}); t.timedOut(k) {
		delete(t.timeouts, k)
		o = sched.Outcome{Class: sched.ClassTransient}
	}
	r.End = seconds(e.now)
	r.Outcome = o.Class.String()
	r.Status = o.Status
	if o.HasUsage {
		r.Tokens = o.Tokens
	}
	if o.HasRetryAfter {
		r.RetryAfter, r.HasRetryAfter = seconds(o.RetryAfter), true
	}
	if err := t.w.Write(r); err != nil {
		e.fail(err)
	}
}

// section is one strategy's part of a trace: the final writer for the
// first strategy, a temporary file for the others, copied in after the
// run so that sections come out in strategy order whatever the order the
// strategies finished in.
type section struct {
	w *trace.Writer
	f *os.File // the temporary file, nil for the first section
}

// openSections starts one section per strategy, headers written.
func openSections(out *trace.Writer, sc *scenarios.Scenario) ([]section, error) {
	secs := make([]section, len(sc.Strategies))
	for i := range sc.Strategies {
		if i == 0 {
			secs[i].w = out
		} else {
			f, err := os.CreateTemp("", "simbench-trace-*.jsonl")
			if err != nil {
				closeSections(secs)
				return nil, fmt.Errorf("trace: %w", err)
			}
			secs[i] = section{w: trace.NewWriter(f), f: f}
		}
		if err := secs[i].w.Header(TraceHeader(sc, sc.Strategies[i].Name, "virtual")); err != nil {
			closeSections(secs)
			return nil, err
		}
	}
	return secs, nil
}

// closeSections removes the temporary files.
func closeSections(secs []section) {
	for _, s := range secs {
		if s.f != nil {
			s.f.Close()
			os.Remove(s.f.Name())
		}
	}
}

// finishSections copies the temporary sections into out, in order, and
// removes them.
func finishSections(out *trace.Writer, secs []section) error {
	defer closeSections(secs)
	for _, s := range secs {
		if s.f == nil {
			continue
		}
		if err := s.w.Close(); err != nil {
			return err
		}
		if _, err := s.f.Seek(0, 0); err != nil {
			return fmt.Errorf("trace: %w", err)
		}
		r := trace.NewReader(s.f, s.f.Name())
		hdr := -1
		for r.Next() {
			if r.Section() != hdr {
				hdr = r.Section()
				if err := out.Header(*r.Header()); err != nil {
					return err
				}
			}
			if err := out.Write(*r.Record()); err != nil {
				return err
			}
		}
		if err := r.Err(); err != nil {
			return err
		}
	}
	return nil
}
