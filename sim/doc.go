// Package sim runs scenarios: a virtual-time engine that drives the sched core
// and the fakeapi model deterministically, a live driver that runs the same
// scenario in real time against fakeapi servers on 127.0.0.1, and the metrics
// both produce, written as the results package's types (the results
// contract). It draws nothing and decides nothing: reports and decision do.
package sim
