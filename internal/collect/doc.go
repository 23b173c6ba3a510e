// Package collect holds the metric collectors a run fills, whichever
// engine drives it (the virtual one in sim or the live one): the turn and
// call figures and timelines (Collector), latency histograms (Histogram,
// bounded in memory whatever the run, written as HdrHistogram logs), the
// figures of each event's window (EventWindows), the per-class figures
// (ClassStats) and the adaptive limits' trace (LimitRecorder). It reads no
// clock: every figure is given the time it happened at.
package collect
