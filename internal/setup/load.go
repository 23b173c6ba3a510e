package setup

import (
	"time"

	"github.com/simbench/simbench/scenarios"
)

// ServiceLoad is what a scenario's workload asks of one service, in the
// averages the recommendation arithmetic needs.
type ServiceLoad struct {
	// Name is the service's name in the scenario.
	Name string
	// RequestsPerMinute is the tighter of the service's rps and rpm limits,
	// per minute; TokensPerMinute its token limit, in tokens per minute;
	// MaxConcurrent its limit on requests in flight (0: none).
	RequestsPerMinute float64
	TokensPerMinute   float64
	MaxConcurrent     int
	// TokensPerCall is the mean tokens of one call to the service.
	TokensPerCall float64
	// MeanLatency is the mean service time of one call.
	MeanLatency time.Duration
	// RoundTrip is the mean network time of one attempt: the service's
	// one-way network_delay there and back. An attempt holds its place in
	// the client's cap for MeanLatency + RoundTrip.
	RoundTrip time.Duration
	// CallsPerTurn is the mean calls one agent turn makes to the service
	// (model calls included; subagents counted at their iteration cap).
	CallsPerTurn float64
}

// Loads returns the load the scenario's workload puts on each service that
// it calls, in the scenario's service order.
func Loads(sc *scenarios.Scenario) []ServiceLoad {
	calls := map[string]float64{}
	tokens := map[string]float64{}
	add := func(service string, n, tok float64) {
		calls[service] += n
		tokens[service] += n * tok
	}
	addGroups := func(groups []scenarios.CallGroup, times float64) {
		for _, g := range groups {
			n := NewSampler(g.Count).Mean() * g.Probability * times
			var total float64
			for _, m := range g.Mix {
				total += m.Weight
			}
			for _, name := range g.Tools() {
				t := sc.Tool(name)
				share := 1.0
				if len(g.Mix) > 0 {
					for _, m := range g.Mix {
						if m.Tool == name {
							share = m.Weight / total
						}
					}
				}
				add(t.Service, n*share, NewSampler(t.Tokens).Mean())
			}
		}
	}
	w := &sc.Workload
	if w.LLM != nil {
		add(w.LLM.Service, 1, NewSampler(w.LLM.Tokens).Mean())
	}
	addGroups(w.Calls, 1)
	if s := w.Subagents; s != nil {
		iterations := NewSampler(s.Count).Mean() * float64(s.MaxIterations)
		if s.LLM != nil {
			add(s.LLM.Service, iterations, NewSampler(s.LLM.Tokens).Mean())
		}
		addGroups(s.Calls, iterations)
	}
	var out []ServiceLoad
	for i := range sc.Services {
		svc := &sc.Services[i]
		n := calls[svc.Name]
		if n == 0 {
			continue
		}
		mean := NewSampler(svc.Latency).Mean()
		if g := svc.Generation.TTFT; g.Kind != "" {
			mean += NewSampler(g).Mean() // the calls ask for no output tokens
		}
		out = append(out, ServiceLoad{
			Name: svc.Name, RequestsPerMinute: svc.RequestsPerMinuteLimit(), TokensPerMinute: svc.TokensPerMinute,
			MaxConcurrent: svc.MaxConcurrent, TokensPerCall: tokens[svc.Name] / n,
			MeanLatency: time.Duration(mean), RoundTrip: time.Duration(2 * NewSampler(svc.NetworkDelay).Mean()), CallsPerTurn: n,
		})
	}
	return out
}
