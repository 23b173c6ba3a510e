// Package sim runs scenarios. Both of its drivers drive the same two pure
// parts: the agent loop (agentLoop: sessions, turns, subagents, think
// times, budgets, the stop rules and the cap on calls per turn, a sans-IO
// state machine written once) and the sched core. The virtual-time engine
// drives them deterministically from an event heap, with a fakeapi model
// per service whose decisions it reads with httptool's code (answer.go); the
// live driver is a thin real-time shell around the same agent loop that
// runs each part on a sched.Runner with real HTTP against fakeapi servers
// on 127.0.0.1. A reference driver (reference.go), written for
// obviousness rather than speed, drives the same parts as the engine and is
// the oracle the engine must match, byte for byte, on generated scenarios.
// The package also holds the metrics both produce, written as
// the results package's types (the results contract). It draws nothing and
// decides nothing: reports and decision do.
package sim
