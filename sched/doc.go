// Package sched runs the tool calls that a model emitted in one turn against
// rate-limited services. Most callers want one [Runner] per process: build
// it with [NewRunner] from a [Config] (the caps and the per-service limits)
// and an [Executor] (what runs one attempt of a call; sched/httptool's
// Tool.Execute makes one of an HTTP endpoint), then call [Runner.Run] with
// each turn's calls from any goroutine, and read one [Result] per call in
// the order the model emitted them:
//
//	r, err := sched.NewRunner(sched.Config{
//		MaxInFlight: 8,
//		Services:    map[string]sched.ServiceConfig{"search": {RequestsPerMinute: 600}},
//		Retry:       sched.RetryPolicy{Backoff: sched.BackoffFullJitter, Base: time.Second, Cap: 30 * time.Second},
//	}, tool.Execute)
//	...
//	defer r.Close()
//	results, err := r.Run(ctx, sched.Turn{Calls: calls})
//
// The Runner gives bounded concurrency (global and per service), token
// buckets for requests and tokens per minute with reservations, retries with
// backoff and jitter that honour the server's retry delay, per-service retry
// budgets ([RetryBudget]), adaptive concurrency limits ([AdaptiveConfig]),
// buckets synced to the remaining counts a server reports
// (ServiceConfig.HeaderSync), priority classes with guaranteed shares
// under one service's limits ([PriorityClass]), timeouts, cancellation,
// serialized writes, dependencies, and exactly one result per call id in
// the caller's order.
//
// The package has two layers. [Core] holds every decision and does no I/O: it
// starts no goroutines, never reads the clock and draws randomness only from
// the *rand.Rand it is given. Time enters as an argument (a [time.Duration]
// since an epoch the driver chooses); decisions leave as [Action] values. The
// simulator drives a Core in virtual time, and gives each turn's results back
// ([Core.Recycle]) once it has read them, so that millions of turns allocate
// no results. [Runner] drives a Core in real time
// with goroutines, one timer and contexts, and is what an agent runtime
// imports. The sibling package sched/httptool turns an HTTP request into an
// [Outcome].
//
// sched, sched/httptool and sched/satmath form the module
// github.com/simbench/simbench/sched, which requires nothing beyond the
// standard library. The Redis-shared quota (sched/quota) and the Prometheus
// observer (sched/promobs) are modules of their own, so an importer of sched
// alone does not get go-redis or Prometheus.
package sched
