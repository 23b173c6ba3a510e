// Package reports turns a simulator's results (sim.Results, read from
// results.json) into things a person reads: an aligned terminal table, plots
// (PNG and SVG, drawn with gonum.org/v1/plot), a self-contained report.html, a
// report.md for pull-request comments, and a comparison of two runs. It also
// holds the recommendation arithmetic — which limit binds, the Little's-law
// concurrency cap, the sustainable turn rate — as pure functions.
//
// The package runs no simulation and reads no clock: every output is a
// function of its input, so the same results give the same bytes, and the
// golden files under testdata can be compared exactly.
//
// Most callers want [WriteAll], which writes every plot, report.html and
// report.md into a directory; [WriteTable] prints the comparison to a terminal.
package reports
