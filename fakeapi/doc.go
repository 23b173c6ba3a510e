// Package fakeapi fakes rate-limited downstream services: what an API such as
// OpenAI's or Anthropic's looks like from outside when a client pushes it past
// its limits.
//
// The package has two layers that share one code path.
//
// [Model] is a pure model of one service: request and token limits under a
// selectable algorithm (token bucket, fixed window, sliding window), with
// separate input- and output-token limits where set, a concurrency cap, a
// latency distribution and the pace of generation (time to first token,
// output tokens per second; [spec.Generation]), injected faults (5xx, 529 overload
// episodes, hangs, connection resets, slow first bytes, 409 write conflicts),
// unseen background traffic from other clients on the same key, the retry
// delay a rejected client is told, and the accounting (accepted, rate
// limited, wasted work, early retries, write races, conflicts, …), and
// timed [spec.Event]s that change its limits, latency, error and overload rates,
// freeze it (a stall) or refuse everything (an outage) for a while. It does
// no I/O, starts no goroutines,
// never reads the clock and draws randomness only from the *rand.Rand it is
// given: time enters as a [time.Duration] since an epoch the driver chooses,
// the same convention as package sched. The simulator drives a Model in
// virtual time.
//
// What a service is (its limits, latency distributions, faults, header
// styles, keys, background load and generation pace) is package spec's
// vocabulary: [ServiceConfig] embeds a [spec.Config], whose one validator
// (spec.Config.Problems) is what [NewModel] and [Start] refuse by, and
// whose distributions draw through spec.Sampler, as the simulator's
// workload does. Scenario files are checked with the same validator, so a
// scenario that loads builds.
//
// [Server] wraps one Model per service in a real net/http server on loopback,
// with provider-shaped endpoints and provider-style rate-limit headers, so
// that live runs, tests and `simbench serve` can point real clients (the
// official SDKs included) at it. The server reads the real clock only at its
// edges and serializes access to each Model with a mutex.
package fakeapi
