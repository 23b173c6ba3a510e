// Package spec is simbench's vocabulary for a rate-limited service: its
// limits and limiter algorithm, latency distributions, injected faults,
// rate-limit header styles, API keys, background load, overload episodes
// and generation pace. It holds one set of types and enums, the one
// validator (Config.Problems) and the one sampler for the distributions
// (Sampler).
//
// Package scenarios decodes scenario files into these types and reports
// the validator's problems at their file, line and column; package fakeapi
// builds its model and HTTP server from a Config; package sim draws its
// workload from the same Sampler. A configuration that Problems accepts is
// one that fakeapi.NewModel and the server accept.
//
// The package is plain data and pure functions: it does no I/O except
// ReadSamples on a reader it is given, and its draws come from a
// *rand.Rand the caller passes.
package spec
