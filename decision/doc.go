// Package decision says what to set. It holds the one computation of it:
// the recommendation arithmetic (Recommend: which limit binds, the
// Little's-law cap, the sustainable turn rate), the workload's demand
// against the limits (CheckLoad), the choice rule (Rule, Knee, Extend),
// the sweep rows (SweepPointOf, NewSweepRow, Sweep) and Decide, which
// searches the knobs that matter over seeds — the strategy (every one run
// as written, a faster one tuned too), the cap that binds (global or per
// service) swept around the arithmetic's cap and extended while the choice
// sits at an edge, and the pace (SearchHeadrooms) — and builds the
// results.Decision that run, sweep, recommend and the reports all show.
// Result.Merge puts a decision into results, once, for every command;
// Result.Report gathers it as `recommend --json` prints it; Sweep is the
// computation behind `simbench sweep` and sweep.json. TOML and Go write
// the tuned strategy as a scenario block or a sched.Config literal.
//
// It runs simulations through sim and writes its answers as results types;
// it draws nothing (reports does, from results).
package decision
