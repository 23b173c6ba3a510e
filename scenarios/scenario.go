package scenarios

import (
	"time"

	"github.com/simbench/simbench/spec"
)

// Scenario is one parsed and validated scenario file. Values are plain data,
// safe to read from many goroutines; nothing in it changes after loading.
type Scenario struct {
	// Name identifies the scenario in reports and results.json (the file's
	// base name without .toml when the file has no name key).
	Name string
	// Description is one line saying what the scenario shows.
	Description string
	// Source is where the scenario came from: a file path, or
	// "builtin:NAME.toml" for an embedded one.
	Source string
	// Seed seeds every random stream of a run (0 is a valid seed).
	Seed uint64
	// Duration is how much virtual time a run covers; always > 0.
	Duration time.Duration
	// Objective is what the decision counts as best: the p95 time to
	// answer (ObjectiveP95; "" when the file sets none means it too), the
	// cost per answered task (ObjectiveCost) or the share of turns
	// answered (ObjectiveCompletion).
	Objective Objective

	// Workload is what the agents do ([workload]): how turns begin and
	// what calls each makes.
	Workload Workload
	// Services in file order; Service looks one up by name.
	Services []Service
	// Routes in file order, from the [routes.NAME] tables; Route looks
	// one up by name.
	Routes []Route
	// Tools in file order; Tool looks one up by name.
	Tools []Tool
	// Strategies in file order, names unique; there is at least one.
	Strategies []Strategy
	// Thresholds are the run's pass/fail bounds, from the [thresholds]
	// table, in file order (see Threshold).
	Thresholds []Threshold
	// Events are the timed changes of services' conditions, from the
	// [[events]] tables, in file order (see Event).
	Events []Event
	// Check holds the rules `simbench check` grades clients by, from the
	// [check] table (zero fields: the defaults).
	Check Check
}

// Service returns the service called name, or nil.
func (s *Scenario) Service(name string) *Service {
	for i := range s.Services {
		if s.Services[i].Name == name {
			return &s.Services[i]
		}
	}
	return nil
}

// Tool returns the tool called name, or nil.
func (s *Scenario) Tool(name string) *Tool {
	for i := range s.Tools {
		if s.Tools[i].Name == name {
			return &s.Tools[i]
		}
	}
	return nil
}

// Strategy returns the strategy called name, or nil.
func (s *Scenario) Strategy(name string) *Strategy {
	for i := range s.Strategies {
		if s.Strategies[i].Name == name {
			return &s.Strategies[i]
		}
	}
	return nil
}

// Tool maps a tool call onto a service.
type Tool struct {
	// Name is the tool's name, a key of [tools].
	Name string
	// Service names the service the tool calls (a key of [services]), or
	// the route (a key of [routes]) whose deployments serve it.
	Service string
	// Tokens is the call's token cost, drawn per call; charged against the
	// service's TokensPerMinute and reserved by sched (sched.Call.Tokens).
	Tokens spec.Dist[float64]
	// Kind is read or write; writes to one resource are serialized by sched
	// and raced by unbounded strategies.
	Kind Kind
	// Resource is the key writes are serialized on ("" : sched's default,
	// the service name). Only set on writes.
	Resource string
	// Idempotent allows a write to be retried, and a read to be hedged
	// (Strategy.Hedge): a second copy of it in flight changes nothing.
	Idempotent bool
	// ResourceFrom says where a served write request's resource key comes
	// from, as spec.ParseResourceFrom parses resource_from: "path:N" (the
	// Nth path segment after the tool's path), "json:FIELD" (a top-level
	// field of the JSON body) or "header:NAME" (a request header); the
	// zero value keeps the server's default. Only set on writes.
	ResourceFrom spec.ResourceFrom
}

// Kind says whether a tool reads or writes.
type Kind string

// The kinds of tool, as written in scenario files.
const (
	KindRead  Kind = "read"
	KindWrite Kind = "write"
)

// Info names a built-in scenario.
type Info struct {
	Name        string // without .toml
	Description string // one line
}

// Objective is what a decision minimises or maximises (the scenario's
// objective key).
type Objective string

// The objectives a scenario may declare.
const (
	// ObjectiveP95 is the p95 time to answer, lowest best (the default).
	ObjectiveP95 Objective = "answer_p95"
	// ObjectiveCost is the cost per answered task in dollars, lowest best;
	// it needs a priced service.
	ObjectiveCost Objective = "cost_per_answered_task"
	// ObjectiveCompletion is the share of turns answered in full, highest
	// best.
	ObjectiveCompletion Objective = "completion"
)

// Objectives lists the objectives in the order the docs give them.
var Objectives = []Objective{ObjectiveP95, ObjectiveCost, ObjectiveCompletion}
