package fakeapi

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/simbench/simbench/spec"
)

// ServiceConfig configures one fake service: what the service is
// (spec.Config: its limits, latency, faults, headers, keys, background
// load and generation pace, with their defaults and their one validator)
// and what only the fake model and server add to it: the agent loop an
// LLM-style service answers with, the write routes and the timed events.
type ServiceConfig struct {
	spec.Config
	// Agent shapes the tool calls an openai- or anthropic-style service
	// answers requests that carry tools with (the zero value: one call,
	// once per conversation).
	Agent AgentConfig
	// WritePaths are the paths within the service (such as "/tools/save")
	// whose requests are writes, as a scenario's tools of kind write declare
	// them; the server also takes PUT, PATCH, DELETE and the
	// X-Simbench-Write header as writes. The model reads Request.Write.
	// Each is a WriteRoute with the default resource.
	WritePaths []string
	// WriteRoutes are write paths that may say where each request's
	// resource key comes from (see WriteRoute); they are matched before
	// WritePaths.
	WriteRoutes []WriteRoute
	// Events are timed changes of the service's conditions (limits,
	// latency, error and overload rates, stalls, outages), in time since the
	// model's epoch; see spec.Event. Their one validator is
	// spec.Config.EventProblems.
	Events []spec.Event
}

// withDefaults returns c with zero fields replaced by their defaults
// (spec.Config.WithDefaults).
func (c ServiceConfig) withDefaults() ServiceConfig {
	c.Config = c.Config.WithDefaults()
	return c
}

// LoadFiles reads the files the configuration names (the empirical latency
// file) into the configuration, so that NewModel needs no I/O. It does
// nothing when Samples are already set.
func (c *ServiceConfig) LoadFiles() error {
	if c.Latency.Kind != spec.DistEmpirical || len(c.Latency.Samples) > 0 || c.Latency.File == "" {
		return nil
	}
	f, err := os.Open(c.Latency.File)
	if err != nil {
		return fmt.Errorf("fakeapi: service %q: %w", c.Name, err)
	}
	defer f.Close()
	s, err := spec.ReadSamples[time.Duration](f)
	if err != nil {
		return fmt.Errorf("fakeapi: service %q: %s: %w", c.Name, c.Latency.File, err)
	}
	c.Latency.Samples = s
	return nil
}

// Validate reports every problem with the configuration at once, joined
// with errors.Join; nil means NewModel accepts it. Every rule is spec's:
// the service's (spec.Config.Problems, the one validator that scenario
// files are also checked with), the events' (spec.Config.EventProblems),
// the agent loop's (spec.Agent.Problems) and the write routes'
// (spec.WriteRoute.Problems). It reads no files.
func (c ServiceConfig) Validate() error {
	ps := append(c.Config.Problems(), c.Config.EventProblems(c.Events)...)
	for _, p := range c.Agent.Problems() {
		ps = append(ps, spec.Problem{Key: "agent." + p.Key, Msg: p.Msg})
	}
	for i, rt := range c.WriteRoutes {
		for _, p := range rt.Problems() {
			ps = append(ps, spec.Problem{Key: fmt.Sprintf("write_routes[%d].%s", i, p.Key), Msg: p.Msg})
		}
	}
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = fmt.Errorf("fakeapi: service %q: %s", c.Name, p)
	}
	return errors.Join(errs...)
}
