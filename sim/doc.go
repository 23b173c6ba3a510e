// Package sim is the virtual-time engine: it runs a scenario's
// strategies deterministically from an event heap, driving the agent
// state machine (internal/agent) and the sched core, with a fakeapi model
// per service whose decisions it reads with httptool's code (answer.go),
// and fills the collectors (internal/collect) from the configuration a
// scenario describes (internal/setup). It also keeps the run cache.
// A reference driver (refdriver_test.go), written for obviousness rather
// than speed, drives the same parts as the engine and is the oracle the
// engine must match, byte for byte, on generated scenarios.
//
// It reads no clock, does no network or process I/O and starts goroutines
// only to run independent strategies side by side (parallel.go); the
// boundary test holds this. The real-time runtime is package live. It
// draws nothing and decides nothing: reports and decision do.
package sim
