// Package reports turns results (results.Results, read from results.json,
// and results.Sweep, from sweep.json) into things a person reads: an
// aligned terminal table, plots (PNG and SVG, drawn with
// gonum.org/v1/plot), a self-contained report.html, a report.md for
// pull-request comments, and a comparison of two runs. It draws and
// formats only: what to set is computed by the decision package, the
// figures by the simulator, and neither is imported here (a test holds
// the package's dependencies to that).
//
// The package runs no simulation and reads no clock: every output is a
// function of its input, so the same results give the same bytes, and the
// golden files under testdata can be compared exactly.
//
// Most callers want [WriteAll], which writes every plot, report.html and
// report.md into a directory; [WriteTable] prints the comparison to a terminal.
package reports
