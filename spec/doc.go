// Package spec is simbench's vocabulary for a rate-limited service: its
// limits and limiter algorithm, latency distributions, injected faults,
// rate-limit header styles, API keys, background load, overload episodes,
// generation pace and timed events (Event: limit cuts, slow spells, error
// bursts, stalls, outages), and what a served service adds: its write
// routes (WriteRoute, with the one parser of resource_from,
// ParseResourceFrom) and the agent loop a provider-style service answers
// with (Agent). It holds one set of types and enums, the one validator of
// a service (Config.Problems), of its events (Config.EventProblems), of a
// write route (WriteRoute.Problems) and of an agent loop
// (Agent.Problems), the one sampler for the distributions (Sampler)
// and the one reader of an empirical distribution's samples file
// (ReadSamples).
//
// Package scenarios decodes scenario files into these types and reports
// the validators' problems at their file, line and column; package fakeapi
// builds its model and HTTP server from a Config and its Events and reads
// samples files with ReadSamples too; package sim draws its workload from
// the same Sampler. A configuration that Problems and EventProblems accept
// is one that fakeapi.NewModel and the server accept.
//
// The package is plain data and pure functions: it does no I/O except
// ReadSamples on a reader it is given, and its draws come from a
// *rand.Rand the caller passes.
package spec
