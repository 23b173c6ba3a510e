package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/redistest"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/live"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// fleetScenario is the scenario the fleet tests run: shared-key's one
// service, its shared strategy.
const fleetScenario = "shared-key"

// startProvider starts the scenario's services as `simbench serve` does,
// on one 127.0.0.1 listener with each service under /NAME, and returns
// the server and its base URL.
func startProvider(t *testing.T) (*fakeapi.Server, string) {
	t.Helper()
	sc, err := scenarios.Open(fleetScenario)
	if err != nil {
		t.Fatal(err)
	}
	var svcs []fakeapi.ServiceConfig
	for i := range sc.Services {
		svcs = append(svcs, setup.ServeConfig(sc, &sc.Services[i]))
	}
	srv, err := fakeapi.Start(fakeapi.ServerConfig{Services: svcs, Seed: sc.Seed, Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	name := sc.Services[0].Name
	return srv, strings.TrimSuffix(srv.URL(name), "/"+name)
}

// startMember starts member i of n as a `simbench worker` process (this
// test binary, running as simbench) writing into dir, with extra flags
// after its own. The tests are of the fleet, not of this machine's timing:
// a run invalid by timing exits 0 (--allow-invalid).
func startMember(t *testing.T, i, n int, base, redisURL, runID, dir, duration string, extra ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], memberArgs(i, n, base, redisURL, runID, dir, duration, extra...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// memberArgs returns the arguments of member i of n's `simbench worker`,
// as startMember runs it.
func memberArgs(i, n int, base, redisURL, runID, dir, duration string, extra ...string) []string {
	args := []string{"worker", fleetScenario, "--member", fmt.Sprintf("%d/%d", i, n), "--base-url", base,
		"--redis", redisURL, "--out", dir, "--run-id", runID, "-s", "shared", "--duration", duration, "--allow-invalid"}
	return append(args, extra...)
}

// startMembers starts n fleet members as startMember does, member i
// writing into root/host<i>, and returns their folders, commands and
// outputs in member order.
func startMembers(t *testing.T, n int, base, redisURL, runID, root, duration string, extra ...string) (dirs []string, cmds []*exec.Cmd, outs []*bytes.Buffer) {
	t.Helper()
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("host%d", i))
		cmd, out := startMember(t, i, n, base, redisURL, runID, dir, duration, extra...)
		dirs, cmds, outs = append(dirs, dir), append(cmds, cmd), append(outs, out)
	}
	return dirs, cmds, outs
}

// TestWorkersMergeToProviderStats starts three fleet members by hand, as
// on three hosts (each its own folder), against one provider and one
// redis-server, and merges them: the merged attempts and 429s are the
// provider's own counts, the per-process rows add up to the fleet's, and
// each member's row carries its own calls and attempts.
func TestWorkersMergeToProviderStats(t *testing.T) {
	rs := redistest.Start(t)
	srv, base := startProvider(t)
	root := t.TempDir()
	dirs, cmds, outs := startMembers(t, 3, base, rs.URL(), "merge-test", root, "8s")
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("member %d: %v\n%s", i, err, outs[i])
		}
	}
	out := filepath.Join(root, "merged")
	var buf bytes.Buffer
	rep := &ReportCmd{Dir: dirs[0], More: dirs[1:], Merge: true, Out: out, Stdout: &buf}
	if err := rep.Run(); err != nil {
		t.Fatalf("merge: %v\n%s", err, buf.String())
	}
	res, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Strategies[0]
	api := srv.Stats().Services["api"]
	if st.Attempts != api.Arrived || st.RateLimited != api.RateLimited || st.Attempts == 0 {
		t.Errorf("merged %d attempts and %d 429s, the provider counted %d arrived and %d 429s", st.Attempts, st.RateLimited, api.Arrived, api.RateLimited)
	}
	if len(st.Processes) != 3 {
		t.Fatalf("%d process rows, want 3: %+v", len(st.Processes), st.Processes)
	}
	var turns, calls, attempts, limited int64
	for i, p := range st.Processes {
		if want := fmt.Sprintf("p%d", i+1); p.Name != want || p.Calls == 0 || p.Attempts < p.Calls {
			t.Errorf("row %d: %+v, want %s with its own calls and attempts", i, p, want)
		}
		turns, calls, attempts, limited = turns+p.Turns, calls+p.Calls, attempts+p.Attempts, limited+p.RateLimited
	}
	if turns != st.Turns || calls != st.Calls || attempts != st.Attempts || limited != st.RateLimited {
		t.Errorf("rows add up to %d turns, %d calls, %d attempts, %d 429s; the fleet has %d, %d, %d, %d",
			turns, calls, attempts, limited, st.Turns, st.Calls, st.Attempts, st.RateLimited)
	}
	if res.Partial || res.Fleet != nil {
		t.Errorf("merged results partial %v, fleet %+v: want whole, and no member's mark", res.Partial, res.Fleet)
	}
}

// TestWorkerKilledMergeNamesIt kills one of three members mid-run: the
// others finish, and the merge writes their figures, names the missing
// member and exits 1.
func TestWorkerKilledMergeNamesIt(t *testing.T) {
	rs := redistest.Start(t)
	_, base := startProvider(t)
	root := t.TempDir()
	dirs, cmds, outs := startMembers(t, 3, base, rs.URL(), "kill-test", root, "6s")
	waitStarted(t, rs.URL(), "kill-test", "shared")
	time.Sleep(time.Second) // into the run: not a threshold, only where the kill lands
	if err := cmds[1].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for i, cmd := range cmds {
		err := cmd.Wait()
		if i == 1 {
			continue
		}
		if err != nil {
			t.Fatalf("member %d did not finish after member 1 was killed: %v\n%s", i, err, outs[i])
		}
	}
	out := filepath.Join(root, "merged")
	code, stdout, stderr := cli("report", "--merge", dirs[0], dirs[1], dirs[2], "--out", out)
	if code != exitFailure || !strings.Contains(stderr, "member 1 (p2)") {
		t.Fatalf("exit %d, stderr %q: want 1 naming member 1 (p2)\n%s", code, stderr, stdout)
	}
	res, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Strategies[0]
	var attempts int64
	for _, d := range []string{dirs[0], dirs[2]} {
		m, err := results.Read(d)
		if err != nil {
			t.Fatal(err)
		}
		attempts += m.Strategies[0].Attempts
	}
	if len(st.Processes) != 2 || st.Processes[0].Name != "p1" || st.Processes[1].Name != "p3" || st.Attempts != attempts {
		t.Errorf("merged %d attempts over %+v, want p1 and p3 with their %d", st.Attempts, st.Processes, attempts)
	}
	if !res.Partial || !strings.Contains(res.Invalid, "member 1 (p2)") {
		t.Errorf("partial %v, invalid %q: want the missing member named", res.Partial, res.Invalid)
	}
}

// TestWorkerInterruptWritesMeasured interrupts a lone member (1 of 1, which
// meets nobody) mid-run: it exits 130 with its results written, marked
// partial.
func TestWorkerInterruptWritesMeasured(t *testing.T) {
	rs := redistest.Start(t)
	_, base := startProvider(t)
	dir := filepath.Join(t.TempDir(), "host0")
	cmd, out := startMember(t, 0, 1, base, rs.URL(), "sigint-test", dir, "30s")
	waitStarted(t, rs.URL(), "sigint-test", "shared")
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("err %v, want exit %d\n%s", err, exitInterrupted, out)
	}
	m, err := live.ReadMember(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Results; !r.Partial || len(r.Strategies) != 1 || r.Strategies[0].Attempts == 0 {
		t.Errorf("partial %v, strategies %d: want what was measured, marked partial", r.Partial, len(r.Strategies))
	}
}

// waitStarted waits until the members of run runID have met for strategy
// st (its start is on Redis).
func waitStarted(t *testing.T, redisURL, runID, st string) {
	t.Helper()
	c := redistest.Client(t, redisURL)
	key := "simbench/fleet/" + runID + "/" + st + "/start"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if n, _ := c.Exists(ctx, key).Result(); n == 1 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the members never met at %s", key)
}

// TestWorkerKilledAtRendezvousRerun kills a member while it waits at the
// rendezvous, then starts the whole fleet again with the same run id: the
// dead member's arrival is not counted, so both members of the new launch
// meet and finish, rather than the first to arrive starting alone with the
// dead one while the other waits for a meeting that never comes.
func TestWorkerKilledAtRendezvousRerun(t *testing.T) {
	rs := redistest.Start(t)
	_, base := startProvider(t)
	root := t.TempDir()
	const runID = "rerun-test"
	dead, out := startMember(t, 0, 2, base, rs.URL(), runID, filepath.Join(root, "dead"), "2s")
	waitArrived(t, rs.URL(), runID, "shared")
	if err := dead.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = dead.Wait()
	// The wait only bounds how long a wrong rendezvous takes to fail.
	_, cmds, outs := startMembers(t, 2, base, rs.URL(), runID, root, "2s", "--wait", "1m")
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("member %d of the fleet started again: %v\n%s\n(the killed member said: %s)", i, err, outs[i], out)
		}
	}
}

// waitArrived waits until some member of run runID has arrived at strategy
// st's rendezvous (any key of it is on Redis).
func waitArrived(t *testing.T, redisURL, runID, st string) {
	t.Helper()
	c := redistest.Client(t, redisURL)
	pattern := "simbench/fleet/" + runID + "/" + st + "/*"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if keys, _ := c.Keys(ctx, pattern).Result(); len(keys) > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no member arrived at %s", pattern)
}

// TestWorkerProviderUnreachable runs a lone member against a provider that
// is not there (a closed port) and one that answers but not in HTTP: no
// attempt gets an HTTP answer, so the run is marked invalid, saying so,
// and the worker exits 3 instead of reporting 0 turns as a measurement.
func TestWorkerProviderUnreachable(t *testing.T) {
	rs := redistest.Start(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String()
	closed.Close()
	garbage, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer garbage.Close()
	go func() {
		for {
			c, err := garbage.Accept()
			if err != nil {
				return
			}
			go func() { // answer the request with what is not HTTP
				defer c.Close()
				_, _ = c.Read(make([]byte, 4096))
				_, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
			}()
		}
	}()
	for _, tc := range []struct{ name, url string }{{"closed port", closedURL}, {"not HTTP", "http://" + garbage.Addr().String()}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "host0")
			code, stdout, stderr := cli("worker", fleetScenario, "--member", "0/1", "--base-url", tc.url, "--redis", rs.URL(),
				"--out", dir, "--run-id", "unreachable-"+strings.ReplaceAll(tc.name, " ", "-"), "-s", "shared", "--duration", "2s")
			if code != exitInvalidRun {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitInvalidRun, stdout, stderr)
			}
			res, err := results.Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			if st := res.Strategies[0]; !strings.Contains(st.Invalid, "no HTTP answer from the provider") || st.Attempts == 0 {
				t.Errorf("strategy marked invalid %q after %d attempts: want the provider's silence named", st.Invalid, st.Attempts)
			}
		})
	}
}

// TestFleetInvalidExits3 runs a fleet of two members against a provider
// that is not there, so that every strategy is marked invalid: each
// worker exits 3 with its results written, and so does report --merge of
// their folders, as run --live does (TestRunLiveTooFastIsInvalid);
// --allow-invalid exits 0.
func TestFleetInvalidExits3(t *testing.T) {
	rs := redistest.Start(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + closed.Addr().String()
	closed.Close()
	root := t.TempDir()
	var dirs []string
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := range 2 {
		dir := filepath.Join(root, fmt.Sprintf("host%d", i))
		cmd := exec.Command(os.Args[0], "worker", fleetScenario, "--member", fmt.Sprintf("%d/2", i), "--base-url", base,
			"--redis", rs.URL(), "--out", dir, "--run-id", "invalid-test", "-s", "shared", "--duration", "2s")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		dirs, cmds, outs = append(dirs, dir), append(cmds, cmd), append(outs, &out)
	}
	for i, cmd := range cmds {
		var ee *exec.ExitError
		if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != exitInvalidRun {
			t.Errorf("member %d: %v, want exit %d\n%s", i, err, exitInvalidRun, outs[i])
		}
	}
	out := filepath.Join(root, "merged")
	code, stdout, stderr := cli("report", "--merge", dirs[0], dirs[1], "--out", out)
	if code != exitInvalidRun || !strings.Contains(stderr, "invalid") {
		t.Fatalf("report --merge: exit %d, stderr %q: want %d, the run named invalid\n%s", code, stderr, exitInvalidRun, stdout)
	}
	if res, err := results.Read(out); err != nil || res.Invalid == "" {
		t.Fatalf("merged results %v: want them written, marked invalid", err)
	}
	if code, _, stderr := cli("report", "--merge", dirs[0], dirs[1], "--out", out, "--allow-invalid"); code != 0 {
		t.Errorf("report --merge --allow-invalid: exit %d (%s), want 0", code, stderr)
	}
}
