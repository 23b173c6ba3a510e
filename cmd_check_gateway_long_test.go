//go:build long

package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/simbench/simbench/check"
	"github.com/simbench/simbench/internal/redistest"
)

// expressInstall is how to install what the Express gateway needs.
const expressInstall = "apt-get install nodejs npm, then npm ci --prefix examples/gateway/express (or make deps)"

// expressNode returns node, once the Express gateway's packages are
// installed; without them the test skips, saying what to install, except
// in CI (CI=true), where it fails.
func expressNode(t *testing.T) string {
	t.Helper()
	missing := func(what string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %s", what, expressInstall)
		}
		t.Skipf("%s: %s", what, expressInstall)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	for _, pkg := range []string{"express", "express-rate-limit", "rate-limit-redis", "redis"} {
		if _, err := os.Stat(filepath.Join("examples", "gateway", "express", "node_modules", pkg)); err != nil {
			missing("the Express gateway's package " + pkg + " is missing")
		}
	}
	return node
}

// TestLongCheckGatewayExpress grades three replicas of the Express gateway
// (examples/gateway/express: express-rate-limit at 100 requests per 5 s
// window, testdata/gateway/limits.toml's promise) behind an nginx round
// robin, offered 5× the rate for 6 s. With the memory store each replica
// counts alone: each lets 100 through per window of its own, 300 per 5 s
// in all, 3× (FAIL; the test asks for more than 2.05×, and less than the
// 6.15× of three replicas' two windows each and their rounding). With the Redis
// store they share one count: at most 100 per window, and a 5 s window at
// the upstream overlaps at most two of the limiter's windows (those begin
// at a key's first request after the last expired), so it holds at most
// 200, 2×, plus one request of rounding: the test asks for at most 2.05×.
// The verdict on the Redis store is not asserted: under 5× the rate a
// window's 100 requests pass in its first fifth, and how many of two
// windows' clumps one 5 s window at the upstream holds depends on how long
// the replicas took to forward them (1.01× to 1.88× measured on a 2-core
// machine shared with other builds); the race suite keeps to verdicts the
// machine's load cannot change.
func TestLongCheckGatewayExpress(t *testing.T) {
	bin := nginxBin(t)
	node := expressNode(t)
	for _, tt := range []struct{ store string }{{"memory"}, {"redis"}} {
		t.Run(tt.store, func(t *testing.T) {
			up := freePort(t)
			store := []string{"memory"}
			if tt.store == "redis" {
				srv := redistest.Start(t)
				store = []string{"redis", fmt.Sprintf("redis://127.0.0.1:%d", srv.Port)}
			}
			var replicas []int
			for range 3 {
				port := freePort(t)
				args := append([]string{filepath.Join("examples", "gateway", "express", "gateway.mjs"),
					strconv.Itoa(port), fmt.Sprintf("http://127.0.0.1:%d/api", up), "100", "5000"}, store...)
				startListening(t, exec.Command(node, args...), port, "")
				// Warm the replica (node loads its fetch on first use) with a
				// key of its own: the upstream is not up yet, so it answers 502.
				req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", port), nil)
				req.Header.Set("Authorization", "Bearer sk-warmup")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
				replicas = append(replicas, port)
			}
			gw := roundRobin(t, bin, replicas)
			rep := checkGateway(t, "testdata/gateway/limits.toml", up, gw, 6*time.Second)
			l := gatewayLine(t, rep, check.CheckGatewayRPM)
			switch {
			case tt.store == "memory" && (l.Verdict != check.Fail || l.Value <= 2.05 || l.Value > 6.15):
				t.Errorf("three Express replicas on the memory store: %+v; want FAIL at about 3× (above 2.05×, at most 6.15×)", l)
			case tt.store == "redis" && (l.Value > 2.05 || l.Value < 0.5):
				t.Errorf("three Express replicas on one Redis store: %+v; want at most 2.05× (two fixed windows' worth)", l)
			}
			if ra := gatewayLine(t, rep, check.CheckGatewayRetryAfter); ra.Verdict != check.Pass {
				t.Errorf("express-rate-limit's 429s: %+v; want a usable Retry-After on each", ra)
			}
			t.Logf("%s: %s", l.Check, l.Figure)
		})
	}
}
