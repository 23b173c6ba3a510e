// Package scenarios defines simbench's scenario files: the schema, strict
// loading and validation, and the built-in scenarios embedded in the binary.
//
// A scenario describes a workload (agent sessions or arriving turns, the tool
// calls each turn emits), the rate-limited services those calls reach, the
// tools that map calls onto services, and the scheduling strategies to
// compare. The package only describes; it runs nothing. Package sim turns a
// Scenario into sched.Config values and fakeapi service models.
//
// A service is written in package spec's vocabulary (limiter algorithms,
// distributions, faults, header styles, background load, generation): a
// Service holds those types, and Service.Model resolves it into the
// spec.Config that fakeapi builds from. The decoder checks what the file
// spells (types, unknown and missing keys, the format's bounds); whether a
// service can run is the one validator's call, spec.Config.Problems, whose
// problems the loader reports at the file, line and column of the key each
// names. So a scenario that loads is one that `run` and `serve` accept.
//
// Loading is strict: unknown keys, wrong types and impossible values are all
// reported at once in one *Error, each problem with file, line, column and key
// path. Every value in a parsed Scenario has its defaults filled in, so a
// consumer never has to know what an absent key means.
//
// Slices keep the order of the file (services, tools and strategies as
// written), so iterating a Scenario is deterministic.
package scenarios
