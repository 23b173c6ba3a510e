package main

import (
	"fmt"
	"io"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/simbench/simbench/check"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// defaultGatewayDuration is how long check --gateway sends load when
// --duration is not given.
const defaultGatewayDuration = time.Minute

// gatewayBody is the body of the requests check --gateway sends: the
// smallest model request the service's API style takes.
var gatewayBody = map[spec.APIStyle]struct{ path, body string }{
	spec.APIOpenAI:    {"/v1/chat/completions", `{"model":"simbench-gateway","messages":[{"role":"user","content":"hi"}],"max_tokens":16}`},
	spec.APIAnthropic: {"/v1/messages", `{"model":"simbench-gateway","messages":[{"role":"user","content":"hi"}],"max_tokens":16}`},
	spec.APIGeneric:   {"", `{}`},
}

// runGateway serves sc, sends the load of its [check.gateway] keys through
// the gateway at c.Gateway, stops the services and grades the gateway
// (check.GradeGateway).
func (c *CheckCmd) runGateway(sc *scenarios.Scenario, out, errOut io.Writer) error {
	g := sc.Check.Gateway
	switch {
	case g == nil:
		return codedError{fmt.Errorf("check --gateway: scenario %s declares no gateway limits; add a [check.gateway] table with keys = { \"KEY\" = { rpm = N } } (docs/check.md, \"Checking a gateway\")", sc.Name), exitInvalid}
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
	req := gatewayBody[srv.API(g.Service)]
	load := check.Load{URL: strings.TrimSuffix(c.Gateway, "/") + req.path, Body: []byte(req.body),
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
