// Package promobs exports a scheduler's decisions as Prometheus metrics. An
// [Observer] consumes the [sched.Event]s a Core hands to [sched.Config.Hook];
// the sched package itself does not depend on Prometheus. The package is the
// module github.com/simbench/simbench/sched/promobs: it requires sched and
// the Prometheus client.
//
// Metrics, all labelled by service:
//
//	simbench_sched_in_flight_attempts       gauge: attempts running now
//	simbench_sched_queued_calls             gauge: calls waiting for admission (queued, or in retry backoff)
//	simbench_sched_attempts_total           counter: attempts ended, by outcome class
//	simbench_sched_calls_total              counter: calls decided, by final class
//	simbench_sched_retry_delay_seconds      histogram: delay before each retry
//	simbench_sched_bucket_wait_seconds      histogram: wait for bucket tokens at each admission
//	simbench_sched_budget_exhausted_total   counter: calls ended because their turn's budget was spent
//	simbench_sched_retry_budget_refused_total counter: calls failed because their service's retry budget was empty
//	simbench_sched_adaptive_limit_attempts  gauge: the adaptive concurrency limit, where adaptive
package promobs

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simbench/simbench/sched"
)

// Namespace and Subsystem prefix every metric name: simbench_sched_….
const (
	Namespace = "simbench"
	Subsystem = "sched"
)

// DelayBuckets are the upper bounds, in seconds, of the retry-delay and
// bucket-wait histograms: 10 ms doubling to about 82 s.
var DelayBuckets = prometheus.ExponentialBuckets(0.01, 2, 14)

// numClasses is how many outcome classes there are (sched.ClassConflict is the last).
const numClasses = int(sched.ClassConflict) + 1

// Observer turns scheduler events into Prometheus metrics. Its Hook is safe
// for concurrent use, so one Observer may watch many Cores or Runners.
type Observer struct {
	inFlight  *prometheus.GaugeVec
	queued    *prometheus.GaugeVec
	attempts  *prometheus.CounterVec
	calls     *prometheus.CounterVec
	retry     *prometheus.HistogramVec
	bucket    *prometheus.HistogramVec
	exhausted *prometheus.CounterVec
	refused   *prometheus.CounterVec
	limit     *prometheus.GaugeVec

	mu       sync.Mutex
	services map[string]*service
	pending  map[callKey]*callState
	free     []*callState
}

// service caches one service's label children, so an event costs a map
// lookup by name and no label hashing.
type service struct {
	inFlight  prometheus.Gauge
	queued    prometheus.Gauge
	attempts  [numClasses]prometheus.Counter
	calls     [numClasses]prometheus.Counter
	retry     prometheus.Observer
	bucket    prometheus.Observer
	exhausted prometheus.Counter
	refused   prometheus.Counter
	limit     prometheus.Gauge
}

type callKey struct {
	turn sched.TurnID
	id   string
}

// phase is where a call is, as far as the gauges are concerned.
type phase uint8

const (
	phaseWaiting   phase = iota // queued or backing off: counted in queued
	phaseAdmitted               // admitted, waiting for its start
	phaseRunning                // attempt in flight: counted in in flight
	phaseCancelled              // attempt cancelled in flight, its outcome not yet known
	phaseEnded                  // attempt ended, retry or result to come
)

type callState struct {
	svc   *service
	phase phase
}

// New creates an Observer and registers its metrics on reg. It fails when a
// metric of the same name is already registered there.
func New(reg prometheus.Registerer) (*Observer, error) {
	svc := []string{"service"}
	o := &Observer{
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: Subsystem, Name: "in_flight_attempts",
			Help: "Attempts running now, per service."}, svc),
		queued: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: Subsystem, Name: "queued_calls",
			Help: "Calls waiting for admission (in the service's queue or in retry backoff), per service."}, svc),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: Subsystem, Name: "attempts_total",
			Help: "Attempts ended, by service and outcome class (cancelled: abandoned in flight)."}, []string{"service", "class"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: Subsystem, Name: "calls_total",
			Help: "Calls whose result was decided, by service and final outcome class."}, []string{"service", "class"}),
		retry: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: Subsystem, Name: "retry_delay_seconds",
			Help: "Delay before each retry, server-given or backoff, in seconds.", Buckets: DelayBuckets}, svc),
		bucket: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: Subsystem, Name: "bucket_wait_seconds",
			Help: "Wait for request and token bucket capacity at each admission, in seconds.", Buckets: DelayBuckets}, svc),
		exhausted: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: Subsystem, Name: "budget_exhausted_total",
			Help: "Calls ended without a further attempt because their turn's token or attempt budget was spent."}, svc),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: Subsystem, Name: "retry_budget_refused_total",
			Help: "Calls failed at once because their service's retry budget had no token for a retry."}, svc),
		limit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: Subsystem, Name: "adaptive_limit_attempts",
			Help: "Adaptive concurrency limit in attempts in flight, per service with an adaptive limit."}, svc),
		services: map[string]*service{},
		pending:  map[callKey]*callState{},
	}
	for _, c := range []prometheus.Collector{o.inFlight, o.queued, o.attempts, o.calls, o.retry, o.bucket, o.exhausted, o.refused, o.limit} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// service returns the cached children of a service, creating them on first
// sight. o.mu is held.
func (o *Observer) service(name string) *service {
	if s := o.services[name]; s != nil {
		return s
	}
	s := &service{
		inFlight:  o.inFlight.WithLabelValues(name),
		queued:    o.queued.WithLabelValues(name),
		retry:     o.retry.WithLabelValues(name),
		bucket:    o.bucket.WithLabelValues(name),
		exhausted: o.exhausted.WithLabelValues(name),
		refused:   o.refused.WithLabelValues(name),
	}
	for c := range numClasses {
		cl := sched.Class(c).String()
		s.attempts[c] = o.attempts.WithLabelValues(name, cl)
		s.calls[c] = o.calls.WithLabelValues(name, cl)
	}
	o.services[name] = s
	return s
}

// Hook is the function to set as sched.Config.Hook. It is called
// synchronously by the Core, so it only updates cached metric children.
func (o *Observer) Hook(e sched.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch e.Kind {
	case sched.EventLimit:
		o.limitChanged(e)
		return
	case sched.EventPaused:
		return
	}
	k := callKey{e.Turn, e.CallID}
	if e.Kind == sched.EventQueued {
		o.enqueue(k, e)
		return
	}
	cs := o.pending[k]
	if cs == nil {
		return // a call queued before the Observer was hooked in
	}
	s := cs.svc
	switch e.Kind {
	case sched.EventAdmitted:
		if cs.phase == phaseWaiting {
			s.queued.Dec()
		}
		cs.phase = phaseAdmitted
		s.bucket.Observe(e.Delay.Seconds())
	case sched.EventStarted:
		cs.phase = phaseRunning
		s.inFlight.Inc()
	case sched.EventCancelled:
		// An attempt timeout is followed by its EventFinished; a call
		// cancelled in flight by its EventResult.
		if cs.phase == phaseRunning {
			s.inFlight.Dec()
			cs.phase = phaseCancelled
		}
	case sched.EventFinished:
		switch cs.phase {
		case phaseRunning:
			s.inFlight.Dec()
			fallthrough
		case phaseCancelled:
			s.attempts[classIndex(e.Class)].Inc()
		}
		cs.phase = phaseEnded
	case sched.EventRetry:
		cs.phase = phaseWaiting
		s.queued.Inc()
		s.retry.Observe(e.Delay.Seconds())
	case sched.EventResult:
		o.result(k, cs, e)
	}
}

// limitChanged sets a service's adaptive limit gauge. o.mu is held.
func (o *Observer) limitChanged(e sched.Event) {
	s := o.service(e.Service)
	if s.limit == nil {
		// Created on the first change, so a service without an
		// adaptive limit exports none.
		s.limit = o.limit.WithLabelValues(e.Service)
	}
	s.limit.Set(float64(e.N))
}

// enqueue starts following a call that has just queued, in a state
// recycled from an ended call when there is one. o.mu is held.
func (o *Observer) enqueue(k callKey, e sched.Event) {
	s := o.service(e.Service)
	var cs *callState
	if n := len(o.free); n > 0 {
		cs, o.free = o.free[n-1], o.free[:n-1]
	} else {
		cs = new(callState)
	}
	*cs = callState{svc: s, phase: phaseWaiting}
	o.pending[k] = cs
	s.queued.Inc()
}

// result counts a decided call, ends what its phase held, and recycles
// its state. o.mu is held.
func (o *Observer) result(k callKey, cs *callState, e sched.Event) {
	s := cs.svc
	switch cs.phase {
	case phaseWaiting:
		s.queued.Dec()
	case phaseRunning:
		s.inFlight.Dec()
		s.attempts[sched.ClassCancelled].Inc()
	case phaseCancelled:
		s.attempts[sched.ClassCancelled].Inc()
	}
	s.calls[classIndex(e.Class)].Inc()
	if e.Err != nil && errors.Is(e.Err, sched.ErrBudgetExhausted) {
		s.exhausted.Inc()
	}
	if e.Err != nil && errors.Is(e.Err, sched.ErrRetryBudget) {
		s.refused.Inc()
	}
	delete(o.pending, k)
	*cs = callState{}
	o.free = append(o.free, cs)
}

// classIndex maps a class to its children, unknown classes to permanent.
func classIndex(c sched.Class) int {
	if int(c) < numClasses {
		return int(c)
	}
	return int(sched.ClassPermanent)
}

// InFlight returns the in-flight gauge, labelled by service.
func (o *Observer) InFlight() *prometheus.GaugeVec { return o.inFlight }

// Queued returns the queued-calls gauge, labelled by service.
func (o *Observer) Queued() *prometheus.GaugeVec { return o.queued }

// Attempts returns the attempts counter, labelled by service and class.
func (o *Observer) Attempts() *prometheus.CounterVec { return o.attempts }

// Calls returns the decided-calls counter, labelled by service and class.
func (o *Observer) Calls() *prometheus.CounterVec { return o.calls }

// RetryDelay returns the retry-delay histogram (seconds), labelled by service.
func (o *Observer) RetryDelay() *prometheus.HistogramVec { return o.retry }

// BucketWait returns the bucket-wait histogram (seconds), labelled by service.
func (o *Observer) BucketWait() *prometheus.HistogramVec { return o.bucket }

// BudgetExhausted returns the budget-exhaustion counter, labelled by service.
func (o *Observer) BudgetExhausted() *prometheus.CounterVec { return o.exhausted }

// RetryBudgetRefused returns the counter of calls refused a retry by their
// service's retry budget, labelled by service.
func (o *Observer) RetryBudgetRefused() *prometheus.CounterVec { return o.refused }

// AdaptiveLimit returns the adaptive-limit gauge (attempts), labelled by service.
func (o *Observer) AdaptiveLimit() *prometheus.GaugeVec { return o.limit }
