package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// RecommendCmd computes the concurrency cap each service's limits allow and
// verifies it by simulation.
type RecommendCmd struct {
	Scenario string        `arg:"" name:"file|name" help:"A scenario file, or the name of a built-in scenario."`
	Headroom float64       `default:"0.7" help:"Fraction of the binding limit to plan for; the rest is kept for retries."`
	Strategy string        `short:"s" placeholder:"NAME" help:"The strategy whose cap the sweep varies (default: the scenario's first bounded strategy)."`
	MaxShare float64       `default:"0.001" help:"Largest share of 429s (429s ÷ attempts) the verified cap may have."`
	Duration time.Duration `placeholder:"10m" help:"Replace the scenario's (virtual) duration for the verifying sweep."`
	NoVerify bool          `help:"Print the arithmetic only; skip the verifying sweep."`
	JSON     bool          `help:"Print the recommendation as JSON."`
	Stdout   io.Writer     `kong:"-"`
}

// recommendOut is what `recommend --json` prints.
type recommendOut struct {
	Scenario       string                        `json:"scenario"`
	Recommendation map[string]sim.Recommendation `json:"recommendation"`
	Arithmetic     map[string][]string           `json:"arithmetic"`
	Sweep          *sweepOutRow                  `json:"sweep,omitempty"`
	Strategy       string                        `json:"strategy,omitempty"`
	Verdict        string                        `json:"verdict,omitempty"`
}

// Run prints each service's arithmetic line by line, then sweeps caps
// around the computed one and reports the cap the simulation supports,
// explaining any disagreement.
func (c *RecommendCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	headroom := c.Headroom
	if headroom == 0 {
		headroom = reports.DefaultHeadroom
	}
	if headroom < 0 || headroom > 1 {
		return codedError{fmt.Errorf("--headroom %g: want a fraction in (0, 1]", c.Headroom), exitInvalid}
	}
	res := recommendOut{Scenario: sc.Name, Recommendation: map[string]sim.Recommendation{}, Arithmetic: map[string][]string{}}
	var dominant *reports.Plan
	var dominantCalls float64
	for _, l := range sim.Loads(sc) {
		in := reportService(l)
		in.Headroom = headroom
		plan, err := reports.Recommend(in)
		if err != nil {
			res.Arithmetic[l.Name] = []string{fmt.Sprintf("no recommendation: %v", err)}
			continue
		}
		res.Recommendation[l.Name] = plan.Recommendation()
		res.Arithmetic[l.Name] = plan.Lines()
		if l.CallsPerTurn > dominantCalls {
			dominant, dominantCalls = &plan, l.CallsPerTurn
		}
	}
	if dominant != nil && !c.NoVerify {
		if err := c.verify(sc, dominant, &res); err != nil {
			return err
		}
	}
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	for _, name := range sortedKeys(res.Arithmetic) {
		fmt.Fprintf(out, "%s\n", name)
		for _, line := range res.Arithmetic[name] {
			fmt.Fprintf(out, "  %s\n", line)
		}
	}
	if res.Sweep != nil {
		fmt.Fprintf(out, "\nverified by simulation (strategy %s, %s):\n", res.Strategy, res.Sweep.Load)
		printSweep(out, &sweepOut{Scenario: sc.Name, Strategy: res.Strategy, Rows: []sweepOutRow{*res.Sweep}}, c.MaxShare)
		fmt.Fprintf(out, "\n%s\n", res.Verdict)
	}
	return nil
}

// verify sweeps caps around the computed one for the service most calls go
// to, and says whether the simulation agrees.
func (c *RecommendCmd) verify(sc *scenarios.Scenario, plan *reports.Plan, res *recommendOut) error {
	strategy := c.Strategy
	if strategy == "" {
		strategy = defaultSweepStrategy(sc)
	}
	computed := plan.MaxInFlight
	caps := capsAround(computed)
	ctx, stop := interruptible(nil)
	defer stop()
	rows, err := sim.Sweep(ctx, sc, strategy, caps, nil, sim.Options{Duration: c.Duration})
	if err != nil {
		if ctx.Err() != nil {
			return codedError{fmt.Errorf("interrupted"), exitInterrupted}
		}
		return codedError{err, exitInvalid}
	}
	row := sweepOutRow{Load: "as written"}
	for i, s := range rows[0].Results {
		row.Points = append(row.Points, reports.SweepPointOf(caps[i], s))
	}
	chosen, ok := reports.ChooseCap(row.Points, c.MaxShare)
	row.Chosen = chosen
	if k, kok := reports.Knee(row.Points); kok {
		row.Knee = k
	}
	res.Sweep, res.Strategy = &row, strategy
	name := plan.Service.Name
	rec := res.Recommendation[name]
	switch {
	case !ok:
		res.Verdict = fmt.Sprintf("the sweep found no cap with 429s at or below %.2f%%: the arithmetic's %d is not enough on its own — pace with a token bucket at headroom %.2f", c.MaxShare*100, computed, plan.Service.Headroom)
	case chosen == computed:
		rec.VerifiedCap = chosen
		res.Verdict = fmt.Sprintf("arithmetic and simulation agree: %d in flight for %s", chosen, name)
	default:
		rec.VerifiedCap = chosen
		res.Verdict = fmt.Sprintf("arithmetic says %d, the simulation %d for %s: %s", computed, chosen, name, disagreement(plan, row.Points, computed, chosen))
	}
	res.Recommendation[name] = rec
	return nil
}

// capsAround returns caps from a quarter to twice the computed one.
func capsAround(c int) []int {
	var caps []int
	for _, f := range []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5, 2} {
		n := max(1, int(float64(c)*f+0.5))
		if !slices.Contains(caps, n) {
			caps = append(caps, n)
		}
	}
	return caps
}

// disagreement says why the sweep chose another cap than the arithmetic.
func disagreement(plan *reports.Plan, points []reports.SweepPoint, computed, chosen int) string {
	at := func(cp int) *reports.SweepPoint {
		for i := range points {
			if points[i].Cap == cp {
				return &points[i]
			}
		}
		return nil
	}
	var why []string
	if plan.BindingLimit == reports.LimitTPM {
		why = append(why, "the token limit binds, so the request arithmetic overstates what fits")
	}
	if p := at(computed); p != nil && p.RateLimitedShare > 0 {
		why = append(why, fmt.Sprintf("at %d the service still answered %.2f%% of attempts with 429 (bursts and retries the mean hides)", computed, p.RateLimitedShare*100))
	}
	if chosen > computed {
		why = append(why, "the workload never offers enough calls to fill the limit at the computed cap, so a larger cap only cuts queueing (and the headroom the arithmetic keeps for retries goes unused)")
	} else if p, q := at(chosen), at(computed); p != nil && q != nil && q.P95Ms > p.P95Ms {
		why = append(why, fmt.Sprintf("the latency tail: p95 rises from %.0f ms at %d to %.0f ms at %d", p.P95Ms, chosen, q.P95Ms, computed))
	}
	if len(why) == 0 {
		return "the p95 turn latency is lowest there"
	}
	return strings.Join(why, "; ")
}
