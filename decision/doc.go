// Package decision says what to set. It holds the one computation of it:
// the recommendation arithmetic (Recommend: which limit binds, the
// Little's-law cap, the sustainable turn rate), the workload's demand
// against the limits (CheckLoad), the choice rule (Rule, Knee, Extend),
// the sweep rows (SweepPointOf, NewSweepRow, Sweep) and Decide, which
// searches the knobs that matter over seeds — the strategy (every one run
// as written, a better one tuned too), the cap that binds (global or per
// service) swept around the arithmetic's cap and extended while the choice
// sits at an edge, and the pace (SearchHeadrooms) — and builds the
// results.Decision that run, sweep, recommend and the reports all show.
// Result.Merge puts a decision into results, once, for every command;
// Result.Report gathers it as `recommend --json` prints it; Sweep is the
// computation behind `simbench sweep` and sweep.json. TOML and Go write
// the tuned strategy as a scenario block or a sched.Config literal.
//
// The rule (Rule) scores every configuration by the scenario's objective
// (the p95 time to answer by default, the cost per answered task, or the
// share of turns answered) and compares two by a paired test on the seeds
// both ran (Rule.Compare): the seeds are the same for every
// configuration, so each seed's ln(a ÷ b) is one observation; a is
// NoWorse than b when the one-sided upper bound of their mean stays
// within ln(1 + tolerance) (the margin, 5% by default), Worse when the
// lower bound passes it, else Undecided. The bounds use Student's t at
// Alpha ÷ Looks (5% ÷ 4): the caps the test cannot yet decide run
// MoreSeeds more seeds, up to MaxSeeds (9), and splitting Alpha over the
// looks keeps the chance of calling a configuration that is worse by the
// margin no worse, over the whole sequence, within 5% (and that of calling
// one no worse worse), for log ratios about normal over the seeds. With
// one seed there is no test: the ratio itself is compared with the
// margin. What is still undecided at MaxSeeds is kept out of the choice
// and said in the sentence.
//
// The search is a coordinate search of cap × pace × strategy: each
// strategy's cap swept, then every pace tried at the chosen cap and at the
// arithmetic's cap for that pace, the cap swept again at a better pace,
// until no move helps; every strategy that scores better as written is
// tuned too, and the decision is the tuning whose choice the test finds
// no worse than every configuration measured that meets the rule (when
// none is, the best configuration measured is swept at its pace and the
// pick made again).
//
// It runs simulations through sim and writes its answers as results types;
// it draws nothing (reports does, from results).
package decision
