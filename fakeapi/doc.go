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
//
// Each API shape a service speaks (spec.APIStyle) is one provider, in one
// file of package fakeapi/internal/wire: openai.go (with responses.go and
// embeddings.go), anthropic.go and generic.go. The package holds what only
// HTTP needs (reading a request body, the answers, error bodies and
// streamed events); every decision stays in the model and in this package
// (the agent loop's tool calls and answer lengths included). A provider holds its routes, the answers and streamed events
// of its endpoints, its error bodies and statuses (a 429, an overload, an
// outage, a spent credit, a context too long), its request-id headers and
// the base URL and environment variables of its official SDK; the rest of
// the server asks the service's provider and keeps no arm per shape. The
// rate-limit headers follow the service's header style (headers.go in this package), set
// apart from the shape. On a provider-shaped service, a path under another
// API's prefix (/v1…, /v1beta…, Azure's /openai/…, Bedrock's /model/…) that
// is not one of the provider's routes answers 404 in the provider's error
// shape; other paths are generic tool endpoints.
//
// A text answer is as many tokens as its usage reports: "simbench", ":"
// and each " ok" are one token each, a stream sends one per delta, and an
// answer cut at the request's max_tokens ends as the provider ends it
// (finish_reason "length", stop_reason "max_tokens", a Responses API
// response "incomplete").
package fakeapi
