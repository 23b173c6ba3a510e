// Package results holds simbench's two file formats, results.json
// (Results: what `simbench run` measured, the recommendation and the
// decision) and sweep.json (Sweep: one strategy over a range of caps),
// and the one code that writes and reads each (Write, Read, WriteSweep,
// ReadSweep). Field names are an interface read by scripts, `simbench
// gate`, `simbench report` and CI (DESIGN.md's results contract): add
// fields, never rename or remove one.
//
// The package computes nothing of its own: the simulator (sim) fills the
// figures, the decision package the recommendation and the decision, and
// reports draws them. Interval, the mean over seeds with its 95% interval,
// is here because every reader of a multi-seed run needs it; so are the
// figures' keys (StrategyResult.Figure, FigureKeys: a figure's JSON path,
// "turn_latency_ms.p95") and SeedStatsOf, which fills a run's seed_stats
// from its seed_runs, so that results.json and every table agree.
//
// The figure registry (Figures, Lookup, Plots) writes each figure once:
// its key, column header, title, unit, better direction, threshold name,
// benchmark unit and gate tolerance, and each plot's name and titles. The
// tables, report.md, report.html, the thresholds, the scenario benchmarks
// and the gate all read it; a figure whose data is in results becomes a
// column, a threshold or a gated benchmark unit by one entry there.
package results
