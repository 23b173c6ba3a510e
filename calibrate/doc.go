// Package calibrate fits a simbench scenario to traces of an agent's tool
// and model calls, so a team can simulate its own workload rather than a
// guess.
//
// It reads three formats, streaming each (see [Calibrator.ReadFile]):
// simbench's own traces (package trace), OpenTelemetry's OTLP/JSON export
// of spans with the GenAI semantic-convention attributes, and CSV whose
// columns are mapped by the caller. Every attempt becomes a trace.Record
// and goes through [Calibrator.Add], which keeps figures in bounded memory:
// running moments, reservoir samples of at most [DefaultReservoir] values
// per distribution, and the turns active within [DefaultHorizon].
//
// [Calibrator.Fit] then fits, per service, the latency of successful
// attempts (a lognormal by maximum likelihood, with the
// Kolmogorov–Smirnov distance to it; the recorded values as an empirical
// distribution when the fit is poor), the error, 429 and 529 rates, and
// the limits (as responses announced them, from a trace header, or
// inferred from the peak admitted rate when 429s show the limit was hit);
// per workload, the tool calls per turn, the model calls and their tokens,
// and whether turns come from sessions looping with think time (closed
// model) or arrive on their own (open model, Poisson or evenly spaced).
// [Result.WriteScenario] writes the scenario with a comment on every
// figure saying where it came from and how well it fits, writes the
// empirical files beside it, and loads it back to check it.
package calibrate
