package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
)

// ServeCmd runs a scenario's fake services over HTTP until interrupted, so
// any agent, in any language, can be pointed at realistic rate limits.
type ServeCmd struct {
	Scenario string `arg:"" name:"file|name" predictor:"scenario" help:"A scenario file, or the name of a built-in scenario."`
	serveFlags
	JSON    bool `help:"On exit, print the accounting as JSON instead of text."`
	Metrics bool `help:"Serve Prometheus metrics at /metrics on the same address: per service every counter of /_simbench/stats (requests arrived, admitted and limited by limit, errors by class, early retries by rule, cancellations, wasted work, writes raced or applied twice, ...), in flight, and a latency histogram."`

	Stdout io.Writer       `kong:"-"` // nil: os.Stdout
	Stderr io.Writer       `kong:"-"` // nil: os.Stderr
	parent context.Context // tests: cancel in place of Ctrl-C
	again  context.Context // tests: cancel in place of a second Ctrl-C, which ends the drain
	ready  chan<- *fakeapi.Server
}

// serveFlags are the flags of the commands that serve a scenario's
// services (serve, check): where and how they listen, and how they stop.
type serveFlags struct {
	Addr              string        `default:"127.0.0.1:0" env:"SIMBENCH_ADDR" help:"Listen address. Anything but loopback is refused unless --allow-non-loopback is given."`
	AllowNonLoopback  bool          `help:"Allow a listen address other than loopback (prints a warning: the services have no real authentication)."`
	PortPerService    bool          `help:"Give each service its own port instead of a path prefix on one port."`
	Seed              *uint64       `env:"SIMBENCH_SEED" help:"Replace the scenario's seed (latencies and faults)."`
	Drain             time.Duration `default:"5s" help:"On stopping (Ctrl-C), how long in-flight requests may take to finish; then (or at a second Ctrl-C) the connections still open are closed, which is still a success."`
	ReadHeaderTimeout time.Duration `default:"5s" help:"Close a connection whose request headers take longer than this to arrive."`
	ReadTimeout       time.Duration `default:"30s" help:"Close a connection whose whole request (headers and body) takes longer than this to arrive."`
	IdleTimeout       time.Duration `default:"60s" help:"Close a kept-alive connection that sends no request for this long."`
	MaxConns          int           `default:"1024" help:"Serve at most this many connections at once per listener; further clients wait to be accepted."`
}

// start starts sc's services as the flags say (metrics and onRequest, the
// request log, as the command asks), warnings to errOut, and returns the
// server and the services' configurations (for writeServed). Bad flags and
// a configuration the server refuses are invalid input.
func (f *serveFlags) start(sc *scenarios.Scenario, errOut io.Writer, metrics bool, onRequest func(fakeapi.Record)) (*fakeapi.Server, []fakeapi.ServiceConfig, error) {
	cfg := fakeapi.ServerConfig{
		Addr: f.Addr, AllowNonLoopback: f.AllowNonLoopback, PortPerService: f.PortPerService, Seed: sc.Seed, Warn: errOut,
		ReadHeaderTimeout: f.ReadHeaderTimeout, ReadTimeout: f.ReadTimeout, IdleTimeout: f.IdleTimeout, MaxConns: f.MaxConns,
		Metrics: metrics, OnRequest: onRequest,
	}
	for _, bad := range []struct {
		flag string
		v    time.Duration
	}{{"--read-header-timeout", f.ReadHeaderTimeout}, {"--read-timeout", f.ReadTimeout}, {"--idle-timeout", f.IdleTimeout}, {"--drain", f.Drain}} {
		if bad.v < 0 {
			return nil, nil, codedError{fmt.Errorf("%s %v: want a duration above 0", bad.flag, bad.v), exitInvalid}
		}
	}
	if f.MaxConns < 0 {
		return nil, nil, codedError{fmt.Errorf("--max-conns %d: want a number above 0", f.MaxConns), exitInvalid}
	}
	if f.Seed != nil {
		cfg.Seed = *f.Seed
	}
	for i := range sc.Services {
		cfg.Services = append(cfg.Services, setup.ServeConfig(sc, &sc.Services[i]))
	}
	srv, err := fakeapi.Start(cfg)
	if errors.Is(err, fakeapi.ErrNonLoopback) {
		err = fmt.Errorf("--addr %s is not a loopback address: refused, since the fake services have no real authentication; add --allow-non-loopback to serve other hosts anyway", f.Addr)
	}
	if err != nil {
		return nil, nil, codedError{err, exitInvalid}
	}
	return srv, cfg.Services, nil
}

// writeServed prints where sc's services are served and what they count:
// base URLs, SDK base URLs and keys, the stats URL, the timed events, the
// headers that mark retries and writes, the write routes, the tools and
// the agent loop.
func writeServed(out io.Writer, sc *scenarios.Scenario, srv *fakeapi.Server, services []fakeapi.ServiceConfig) {
	srv.Summary(out)
	for _, e := range setup.EventSpans(sc) {
		fmt.Fprintf(out, "event on %s from %v to %v after start: %s\n", e.Service,
			time.Duration(e.StartS*float64(time.Second)), time.Duration(e.EndS*float64(time.Second)), e.Label)
	}
	fmt.Fprintf(out, "early retries count retries marked by x-stainless-retry-count (the official SDKs), %s or a repeated %s; %s NAME tells callers on one key apart\n",
		fakeapi.RetryHeader, fakeapi.IdempotencyHeader, fakeapi.ClientHeader)
	fmt.Fprintf(out, "writes are PUT, PATCH and DELETE to tool paths, or requests with %s: RESOURCE; provider endpoints are reads\n", fakeapi.WriteHeader)
	for _, svc := range services {
		for _, rt := range svc.WriteRoutes {
			from := rt.ResourceFrom.String()
			if from == "" {
				from = "the default"
			}
			fmt.Fprintf(out, "writes: %s%s and below, resource key from %s\n", srv.URL(svc.Name), rt.Path, from)
		}
	}
	writeServedAgent(out, sc, srv, services)
}

// drain stops srv: it lets the requests in flight finish for at most the
// --drain time, or until a second Ctrl-C (again, when not nil, stands in
// for it in tests), then closes what is left and says so on errOut (name
// is the command's). Stopping as asked is a success either way.
func (f *serveFlags) drain(srv *fakeapi.Server, name string, errOut io.Writer, again context.Context) {
	grace := f.Drain
	if grace <= 0 {
		grace = 5 * time.Second // the flag's default, for callers that build the struct
	}
	second, stopSecond := interruptibleOnce(again)
	defer stopSecond()
	fmt.Fprintf(errOut, "%s: letting in-flight requests finish (at most %v); Ctrl-C again to stop now\n", name, grace)
	ctx, cancel := context.WithTimeout(second, grace)
	defer cancel()
	// Past the deadline Shutdown closes what is left (slow bodies, long
	// requests).
	err := srv.Shutdown(ctx)
	if errors.Is(err, fakeapi.ErrStillAnswering) {
		fmt.Fprintf(errOut, "%s: %v\n", name, err)
	}
	switch cutOff := err != nil; {
	case cutOff && second.Err() != nil:
		fmt.Fprintf(errOut, "%s: stopped by a second Ctrl-C; the connections still open were closed\n", name)
	case cutOff:
		fmt.Fprintf(errOut, "%s: connections still open after the %v drain were closed\n", name, grace)
	}
}

// serveGCPercent is serve's garbage collector setting: a heap at most 1.5×
// what the open streams hold (about 40 KB each, BenchmarkIdleStreamMemory
// in fakeapi). Measured with 3,000 idle streams of 1,000-token answers:
// 256 MB RSS at Go's default (100), 216 MB at 50; serving is mostly
// waiting, so the extra collections cost little.
const serveGCPercent = 50

// writeServedAgent prints where the scenario's tools are served (POST the
// tool call's arguments to TOOL-URL; writes are marked) and, for each
// model service that drives an agent loop, how many tool calls and
// iterations its answers to requests with tools make.
func writeServedAgent(out io.Writer, sc *scenarios.Scenario, srv *fakeapi.Server, services []fakeapi.ServiceConfig) {
	if len(sc.Tools) > 0 {
		fmt.Fprintln(out, "tools (POST a tool call's arguments as JSON to its URL):")
	}
	for _, t := range sc.Tools {
		kind := t.Kind
		if kind == "" {
			kind = scenarios.KindRead
		}
		fmt.Fprintf(out, "  %-12s %s/tools/%s  (%s, on service %s)\n", t.Name, srv.URL(t.Service), t.Name, kind, t.Service)
	}
	for _, c := range services {
		if c.Agent.Calls == nil {
			continue
		}
		iters := c.Agent.MaxIterations
		if iters == 0 {
			iters = fakeapi.DefaultAgentIterations
		}
		how := fmt.Sprintf("%d iterations", iters)
		if p := c.Agent.FinishProbability; p > 0 {
			how = fmt.Sprintf("up to %d iterations (done after each with probability %g)", iters, p)
		}
		fmt.Fprintf(out, "agent loop on %s: a request with tools gets parallel tool calls, as many as one turn of the workload makes, for %s; then a text answer\n", c.Name, how)
	}
}

// Run starts the services, prints their base URLs (with the SDK base URLs
// and environment variables of provider styles), API keys, the stats URL,
// the tools' URLs, the agent loop the model services drive and the headers
// that mark retries and writes, serves until Ctrl-C, then drains and prints what every client did.
// Ctrl-C always ends in exit 0: after the in-flight requests finish, or at
// the --drain deadline or a second Ctrl-C, when the connections still open
// are closed.
func (c *ServeCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	// The binary collects garbage lazily for simulations (sim.GCPercent);
	// a server of thousands of mostly idle streams is better off eager.
	defer debug.SetGCPercent(debug.SetGCPercent(serveGCPercent))
	out, errOut := c.Stdout, c.Stderr
	if out == nil {
		out = os.Stdout
	}
	if errOut == nil {
		errOut = os.Stderr
	}
	srv, services, err := c.start(sc, errOut, c.Metrics, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "serving %d service(s) of scenario %s; Ctrl-C to stop\n", len(services), sc.Name)
	writeServed(out, sc, srv, services)

	ctx, stop := interruptibleOnce(c.parent)
	defer stop()
	if c.ready != nil {
		c.ready <- srv
	}
	<-ctx.Done()
	return c.stop(srv, out, errOut)
}

// stop drains srv after Ctrl-C (serveFlags.drain), then prints what the
// clients did.
func (c *ServeCmd) stop(srv *fakeapi.Server, out, errOut io.Writer) error {
	c.drain(srv, "serve", errOut, c.again)
	stats := srv.Stats()
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(stats)
	}
	fmt.Fprintln(out, "\nwhat the clients did:")
	fakeapi.WriteStats(out, stats)
	return nil
}
