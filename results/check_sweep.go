package results

import (
	"fmt"
	"slices"

	"github.com/simbench/simbench/internal/names"
)

// CheckSweep lists what is wrong with sw, as read from file: the checks
// ReadSweep makes after the types. Names a scenario could have given;
// at least one point; caps from 1, each once per row; times ≥ 0 and in
// order (p50 ≤ p95, within the interval); shares within [0, 1]; the chosen
// cap and the knee among the row's caps.
func CheckSweep(file string, sw *Sweep) []Problem {
	ps := &problems{file: file}
	checkSweep(ps, sw)
	return ps.list
}

func checkSweep(ps *problems, sw *Sweep) {
	if !sw.PointsOnly {
		if msg := names.Scenario(sw.Scenario); sw.Scenario != "" && msg != "" {
			ps.add("scenario", "%s", msg)
		}
		if sw.Strategy != "" {
			nameOK(ps, "strategy", "strategy", sw.Strategy)
		}
		if !(sw.MaxShare >= 0 && sw.MaxShare <= 1) {
			ps.add("max_rate_limited_share", "is %v; want a share in [0, 1]", sw.MaxShare)
		}
	}
	n := 0
	for i := range sw.Rows {
		n += len(sw.Rows[i].Points)
		checkRow(ps, fmt.Sprintf("rows[%d]", i), &sw.Rows[i], sw.PointsOnly)
	}
	if n == 0 {
		ps.add("rows", "%v", errNoPoints)
	}
}

func checkRow(ps *problems, at string, r *SweepRow, bare bool) {
	if bare {
		at = "" // a bare array of points: the paths start at the array
	}
	if msg := names.Text(r.Load); msg != "" {
		ps.add(at+"load", "%s", msg)
	}
	var caps []int
	for i := range r.Points {
		p := &r.Points[i]
		pat := fmt.Sprintf("%spoints[%d]", dot(at), i)
		if bare {
			pat = fmt.Sprintf("[%d]", i)
		}
		switch {
		case p.Cap < 1 || p.Cap > maxCap:
			ps.add(pat+".cap", "is %d; want a cap from 1 to %d", p.Cap, maxCap)
		case slices.Contains(caps, p.Cap):
			ps.add(pat+".cap", "%d appears twice in the row", p.Cap)
		}
		caps = append(caps, p.Cap)
		for j, v := range []AnswerMs{p.P50Ms, p.P95Ms, p.P95LoMs, p.P95HiMs} {
			if x := float64(v); v.Answered() && !(x >= 0 && x <= maxSeconds*1000) {
				ps.add(pat+"."+[]string{"p50_ms", "p95_ms", "p95_lo_ms", "p95_hi_ms"}[j], "is %v; want milliseconds ≥ 0, or null", x)
			}
		}
		if p.P50Ms > p.P95Ms {
			ps.add(pat, "p50_ms %v is above p95_ms %v", float64(p.P50Ms), float64(p.P95Ms))
		}
		if p.Seeds > 1 && (p.P95LoMs > p.P95Ms || p.P95Ms > p.P95HiMs) {
			ps.add(pat, "p95_ms %v is outside its interval [%v, %v]", float64(p.P95Ms), float64(p.P95LoMs), float64(p.P95HiMs))
		}
		if p.Seeds < 0 {
			ps.add(pat+".seeds", "is %d; a count is ≥ 0", p.Seeds)
		}
		for j, v := range []float64{p.AnsweredShare, p.RateLimitedShare} {
			if !(v >= 0 && v <= 1) {
				ps.add(pat+"."+[]string{"answered_share", "rate_limited_share"}[j], "is %v; want a share in [0, 1]", v)
			}
		}
		if !finite(p.GoodputPerS) || p.GoodputPerS < 0 {
			ps.add(pat+".goodput_per_s", "is %v; want a figure ≥ 0", p.GoodputPerS)
		}
		if !finite(p.CostPerAnsweredTaskUSD) || p.CostPerAnsweredTaskUSD < 0 {
			ps.add(pat+".cost_per_answered_task_usd", "is %v; want dollars ≥ 0", p.CostPerAnsweredTaskUSD)
		}
	}
	for j, c := range []int{r.Chosen, r.Knee} {
		if c != 0 && !slices.Contains(caps, c) {
			ps.add(dot(at)+[]string{"chosen_cap", "knee"}[j], "is %d, not one of the row's caps", c)
		}
	}
}

// dot is at followed by a dot, or "" for "".
func dot(at string) string {
	if at == "" {
		return ""
	}
	return at + "."
}
