package decision

import "github.com/simbench/simbench/results"

// Recommendations returns the recommendation of every service planned, by
// service name (nil without plans), with the verified cap of the decision's
// service when Decide made the decision.
func (r *Result) Recommendations() map[string]results.Recommendation {
	var recs map[string]results.Recommendation
	for _, p := range r.Plans {
		if recs == nil {
			recs = map[string]results.Recommendation{}
		}
		recs[p.Service.Name] = p.Recommendation()
	}
	if r.Decision != nil && r.Plan != nil && r.Row.Chosen > 0 {
		rec := recs[r.Plan.Service.Name]
		rec.VerifiedCap = r.Row.Chosen
		recs[r.Plan.Service.Name] = rec
	}
	return recs
}

// Merge puts the decision into res, as results.json carries it: every
// service's recommendation (Recommendations, replacing a service's earlier
// one), the load check under the service that binds the turn rate, and the
// decision itself when Decide made one.
func (r *Result) Merge(res *results.Results) {
	for name, rec := range r.Recommendations() {
		if res.Recommendation == nil {
			res.Recommendation = map[string]results.Recommendation{}
		}
		res.Recommendation[name] = rec
	}
	if r.Load != nil {
		r.Load.Annotate(res.Recommendation)
	}
	if r.Decision != nil {
		res.Decision = r.Decision
	}
}
