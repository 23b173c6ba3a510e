package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/sim"
)

// ServeCmd runs a scenario's fake services over HTTP until interrupted, so
// any agent, in any language, can be pointed at realistic rate limits.
type ServeCmd struct {
	Scenario         string        `arg:"" name:"file|name" help:"A scenario file, or the name of a built-in scenario."`
	Addr             string        `default:"127.0.0.1:0" help:"Listen address. Anything but loopback needs --allow-non-loopback."`
	AllowNonLoopback bool          `help:"Allow a listen address other than loopback (prints a warning: the services have no real authentication)."`
	PortPerService   bool          `help:"Give each service its own port instead of a path prefix on one port."`
	Seed             *uint64       `help:"Replace the scenario's seed (latencies and faults)."`
	Drain            time.Duration `default:"5s" help:"On Ctrl-C, how long in-flight requests may take to finish."`
	JSON             bool          `help:"On exit, print the accounting as JSON instead of text."`

	Stdout io.Writer       `kong:"-"` // nil: os.Stdout
	Stderr io.Writer       `kong:"-"` // nil: os.Stderr
	parent context.Context // tests: cancel in place of Ctrl-C
	ready  chan<- *fakeapi.Server
}

// Run starts the services, prints their base URLs, API keys and the stats
// URL, serves until Ctrl-C, then drains and prints what every client did.
func (c *ServeCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	out, errOut := c.Stdout, c.Stderr
	if out == nil {
		out = os.Stdout
	}
	if errOut == nil {
		errOut = os.Stderr
	}
	cfg := fakeapi.ServerConfig{Addr: c.Addr, AllowNonLoopback: c.AllowNonLoopback, PortPerService: c.PortPerService, Seed: sc.Seed, Warn: errOut}
	if c.Seed != nil {
		cfg.Seed = *c.Seed
	}
	for i := range sc.Services {
		cfg.Services = append(cfg.Services, sim.ModelConfig(&sc.Services[i]))
	}
	srv, err := fakeapi.Start(cfg)
	if err != nil {
		return codedError{err, exitInvalid}
	}
	fmt.Fprintf(out, "serving %d service(s) of scenario %s; Ctrl-C to stop\n", len(cfg.Services), sc.Name)
	srv.Summary(out)

	ctx, stop := interruptible(c.parent)
	defer stop()
	if c.ready != nil {
		c.ready <- srv
	}
	<-ctx.Done()

	grace := c.Drain
	if grace <= 0 {
		grace = 5 * time.Second // the flag's default, for callers that build the struct
	}
	drain, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	shutdownErr := srv.Shutdown(drain)
	stats := srv.Stats()
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(stats); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(out, "\nwhat the clients did:")
		fakeapi.WriteStats(out, stats)
	}
	if shutdownErr != nil {
		return fmt.Errorf("requests still running after %v were cut off: %w", grace, shutdownErr)
	}
	return nil
}
