//go:build long

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/netns"
	"github.com/simbench/simbench/internal/redisproc"
	"github.com/simbench/simbench/results"
)

// TestLongHostsFleet runs a fleet across network hosts: redis-server,
// `simbench serve` and three `simbench worker` members each in a network
// namespace of its own, on one LAN at addresses of their own (serve
// allowed off loopback). Every member exits 0, report --merge merges the
// three, and each member's quota went through the shared Redis (round
// trips counted), not only its local share.
func TestLongHostsFleet(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip(redisproc.ErrMissing)
	}
	n := netns.ForTest(t)
	names := []string{"redis", "serve", "w0", "w1", "w2"}
	hosts := make([]*netns.NS, len(names))
	for i, name := range names {
		if hosts[i], err = n.Add(name); err != nil {
			t.Fatal(err)
		}
	}
	addrs, err := n.LAN(hosts...)
	if err != nil {
		t.Fatal(err)
	}
	redisAddr, serveAddr := addrs[0]+":6379", addrs[1]+":8080"
	background := func(c *exec.Cmd) {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	background(hosts[0].Command(bin, "--port", "6379", "--bind", addrs[0], "--protected-mode", "no", "--save", "", "--appendonly", "no"))
	background(hosts[1].Command(os.Args[0], "serve", fleetScenario, "--addr", serveAddr, "--allow-non-loopback"))
	for _, a := range []string{redisAddr, serveAddr} {
		waitListening(t, hosts[2], a)
	}
	root := t.TempDir()
	var dirs []string
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := range 3 {
		dir := filepath.Join(root, fmt.Sprintf("host%d", i))
		cmd := hosts[2+i].Command(os.Args[0], memberArgs(i, 3, "http://"+serveAddr, "redis://"+redisAddr, "hosts-test", dir, "3s")...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		background(cmd)
		dirs, cmds, outs = append(dirs, dir), append(cmds, cmd), append(outs, &out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("member %d: %v\n%s", i, err, outs[i])
		}
	}
	out := filepath.Join(root, "merged")
	if code, stdout, stderr := cli(append([]string{"report", "--merge"}, append(dirs, "--out", out)...)...); code != 0 {
		t.Fatalf("report --merge: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	res, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Strategies) != 1 || len(res.Strategies[0].Processes) != 3 {
		t.Fatalf("merged %d strategies, want shared with 3 processes: %+v", len(res.Strategies), res.Strategies)
	}
	for _, p := range res.Strategies[0].Processes {
		t.Logf("%s: %d attempts, %d quota round trips, %d fallbacks", p.Name, p.Attempts, p.QuotaRoundTrips, p.QuotaFallbacks)
		if p.Attempts == 0 || p.QuotaRoundTrips == 0 {
			t.Errorf("%s: %d attempts, %d quota round trips; want both, across hosts", p.Name, p.Attempts, p.QuotaRoundTrips)
		}
	}
}

// waitListening waits until addr accepts a TCP connection from host h
// (at most 10 s).
func waitListening(t *testing.T, h *netns.NS, addr string) {
	t.Helper()
	var err error
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		c, derr := h.Dial(ctx, "tcp", addr)
		cancel()
		if err = derr; err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s never accepted a connection: %v", addr, err)
}
