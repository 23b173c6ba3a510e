package main

import (
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/check"
	"github.com/simbench/simbench/scenarios"
)

// defaultGatewayDuration is how long check --gateway sends load when
// --duration is not given.
const defaultGatewayDuration = time.Minute

// runGateway serves sc, sends the load of its [check.gateway] keys through
// the gateway at c.Gateway, stops the services and grades the gateway
// (check.GradeGateway).
func (c *CheckCmd) runGateway(sc *scenarios.Scenario, out, errOut io.Writer) error {
	g, err := c.gateway(sc)
	if err != nil {
		return err
	}
	switch {
	case g == nil:
		return codedError{fmt.Errorf("check --gateway: scenario %s declares no gateway limits; add a [check.gateway] table with keys = { \"KEY\" = { rpm = N } }, or give --expect KEY:rpm=N (docs/serve-and-check.md, \"Checking a gateway\")", sc.Name), exitInvalid}
	case len(c.Command) > 0:
		return codedError{fmt.Errorf("check --gateway sends the load itself; give no client command (got %q)", strings.Join(c.Command, " ")), exitInvalid}
	case math.IsNaN(c.Offer) || c.Offer <= 1 || c.Offer > 1000:
		return codedError{fmt.Errorf("--offer %g: want a multiple of the declared rate above 1 and at most 1000, so that the gateway is the limit", c.Offer), exitInvalid}
	}
	u, err := url.Parse(c.Gateway)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return codedError{fmt.Errorf("--gateway %q: want the gateway's base URL, like http://127.0.0.1:8080", c.Gateway), exitInvalid}
	}
	var rec check.Recorder
	srv, services, err := c.start(sc, errOut, true, rec.Add)
	if err != nil {
		return err
	}
	fmt.Fprintf(errOut, "checking the gateway at %s in front of service %s of scenario %s\n", c.Gateway, g.Service, sc.Name)
	writeServed(errOut, sc, srv, services)

	d := c.Duration.D()
	if d <= 0 {
		d = defaultGatewayDuration
	}
	path, body, _ := srv.SmallestRequest(g.Service) // the service was checked when the scenario loaded
	load := check.Load{URL: strings.TrimSuffix(c.Gateway, "/") + path, Body: []byte(body),
		Keys: g.Keys, Offer: c.Offer, Duration: d}
	fmt.Fprintf(errOut, "sending %d key(s)' requests to %s at %g× their declared rate for %v\n", len(g.Keys), load.URL, c.Offer, d)
	ctx, stop := interruptibleOnce(c.parent)
	defer stop()
	sent, ran := check.Drive(ctx, load)
	c.drain(srv, "check", errOut, nil)

	recs, dropped := rec.Records()
	report := &check.Report{Scenario: sc.Name, Verdict: check.Pass, Requests: len(recs)}
	for _, l := range check.GradeGateway(g, recs, sent, ran) {
		report.Add(l)
	}
	if dropped > 0 {
		report.Add(check.Line{Check: check.CheckClient, Verdict: check.Warn, Value: float64(dropped),
			Figure: fmt.Sprintf("%d requests past the first %d were not graded", dropped, check.MaxRecords),
			Rule:   "every request is graded"})
	}
	return c.finish(ctx, sc, report, out, nil)
}

// gateway returns the gateway limits check grades by: the scenario's
// [check.gateway] table, its keys replaced by those --expect declares
// (nil: neither declares any). A bad --expect is invalid input.
func (c *CheckCmd) gateway(sc *scenarios.Scenario) (*scenarios.Gateway, error) {
	if len(c.Expect) == 0 {
		return sc.Check.Gateway, nil
	}
	g := &scenarios.Gateway{Window: scenarios.DefaultGatewayWindow, MaxRatio: scenarios.DefaultGatewayMaxRatio}
	if t := sc.Check.Gateway; t != nil {
		*g = *t
	} else if len(sc.Services) == 1 {
		g.Service = sc.Services[0].Name
	} else {
		return nil, codedError{fmt.Errorf("--expect: scenario %s has %d services; name the one the gateway forwards to with [check.gateway] service", sc.Name, len(sc.Services)), exitInvalid}
	}
	keys, window, err := parseExpect(c.Expect)
	if err != nil {
		return nil, codedError{err, exitInvalid}
	}
	g.Keys = keys
	if window > 0 {
		g.Window = window
	}
	return g, nil
}

// parseExpect reads --expect values, KEY:rpm=N,tpm=N,window=D each: the
// keys' limits per minute (a number, or a rate such as "10/s") and the
// window, which two values may not set differently (0: none set).
func parseExpect(values []string) ([]scenarios.GatewayKey, time.Duration, error) {
	var keys []scenarios.GatewayKey
	var window time.Duration
	seen := map[string]bool{}
	for _, v := range values {
		key, limits, ok := strings.Cut(v, ":")
		if !ok || strings.TrimSpace(key) == "" || limits == "" {
			return nil, 0, fmt.Errorf("--expect %q: want KEY:rpm=N,tpm=N (rpm, tpm or both, per minute)", v)
		}
		if seen[key] {
			return nil, 0, fmt.Errorf("--expect %q: key %s is declared twice", v, key)
		}
		seen[key] = true
		k := scenarios.GatewayKey{Key: key}
		for _, kv := range strings.Split(limits, ",") {
			name, val, _ := strings.Cut(kv, "=")
			switch name {
			case "rpm", "tpm":
				r, err := strconv.ParseFloat(val, 64)
				if err != nil {
					perSecond, rerr := scenarios.ParseRate(val)
					if rerr != nil {
						return nil, 0, fmt.Errorf("--expect %q: %s=%s is not a rate; write a number per minute or a rate such as 10/s", v, name, val)
					}
					r = perSecond * 60
				}
				if !(r > 0) || math.IsInf(r, 0) {
					return nil, 0, fmt.Errorf("--expect %q: %s=%s; a limit must be above 0", v, name, val)
				}
				if name == "rpm" {
					k.RPM = r
				} else {
					k.TPM = r
				}
			case "window":
				w, err := time.ParseDuration(val)
				if err != nil || w < time.Millisecond {
					return nil, 0, fmt.Errorf("--expect %q: window=%s; want a duration of at least 1ms, like 1m", v, val)
				}
				if window > 0 && w != window {
					return nil, 0, fmt.Errorf("--expect %q: window=%v, where another --expect says %v; the gateway counts over one window", v, w, window)
				}
				window = w
			default:
				return nil, 0, fmt.Errorf("--expect %q: unknown limit %q; use rpm, tpm and window", v, name)
			}
		}
		if k.RPM == 0 && k.TPM == 0 {
			return nil, 0, fmt.Errorf("--expect %q: declares no limit; give rpm, tpm or both", v)
		}
		keys = append(keys, k)
	}
	return keys, window, nil
}
