// Package netns puts processes on separate network hosts for tests:
// Linux network namespaces joined by veth pairs, each end with its own
// address, and a delaying TCP proxy (Proxy) to put round-trip time on a
// connection. Everything a Net makes is named from a random prefix, so
// that tests running at once do not clash, and Close removes it all.
// Namespaces need root and iproute2's ip; Check says when they are
// missing.
package netns

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Check returns nil when this process can make network namespaces, or an
// error saying why it cannot (not root, or ip not on PATH).
func Check() error {
	if runtime.GOOS != "linux" {
		return errors.New("netns: network namespaces are Linux's")
	}
	if os.Geteuid() != 0 {
		return errors.New("netns: network namespaces need root (uid 0)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("netns: iproute2's ip is not on PATH (apt-get install iproute2): %w", err)
	}
	return nil
}

// Net is a set of network namespaces and the veth links between them,
// made together and removed together by Close. Safe for concurrent use.
type Net struct {
	prefix string

	mu    sync.Mutex
	names []string // the namespaces made, in order
	links int      // veth pairs made: the next one's subnet
}

// New returns an empty Net whose names begin with a random prefix
// ("sb" and 8 hex digits).
func New() (*Net, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return &Net{prefix: "sb" + hex.EncodeToString(b)}, nil
}

// ForTest returns a New Net closed when tb ends; it skips tb, saying why,
// when namespaces cannot be made here, and fails it when making them fails.
func ForTest(tb testing.TB) *Net {
	tb.Helper()
	if err := Check(); err != nil {
		tb.Skip(err)
	}
	n, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := n.Close(); err != nil {
			tb.Error(err)
		}
	})
	return n
}

// Prefix is the prefix of every namespace and interface name n makes.
func (n *Net) Prefix() string { return n.prefix }

// NS is a network namespace of a Net, its loopback up.
type NS struct {
	Name string // the namespace's name, for ip netns exec
}

// Add makes a namespace named prefix-name and brings its loopback up.
func (n *Net) Add(name string) (*NS, error) {
	full := n.prefix + "-" + name
	if err := run("ip", "netns", "add", full); err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.names = append(n.names, full)
	n.mu.Unlock()
	if err := run("ip", "-n", full, "link", "set", "lo", "up"); err != nil {
		return nil, err
	}
	return &NS{Name: full}, nil
}

// Command returns a command that runs bin with args inside ns (through
// ip netns exec, which execs bin: the process's pid is bin's).
func (ns *NS) Command(bin string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns.Name, bin}, args...)...)
}

// Link is a veth pair between two namespaces, each end with an address
// on a /24 of its own: A ends at 10.77.i.1, B at 10.77.i.2, i counting
// the Net's links from 0 (at most 256).
type Link struct {
	A, B     *NS
	AddrA    string // A's address, without prefix length
	AddrB    string // B's address
	ifA, ifB string
}

// Link joins a and b by a veth pair, addresses both ends and brings them up.
func (n *Net) Link(a, b *NS) (*Link, error) {
	n.mu.Lock()
	i := n.links
	n.links++
	n.mu.Unlock()
	if i > 255 {
		return nil, errors.New("netns: more than 256 links in one Net")
	}
	base := n.prefix + "v" + strconv.Itoa(i) // at most 14 bytes: interface names hold 15
	l := &Link{A: a, B: b, ifA: base + "a", ifB: base + "b",
		AddrA: "10.77." + strconv.Itoa(i) + ".1", AddrB: "10.77." + strconv.Itoa(i) + ".2"}
	if err := run("ip", "link", "add", l.ifA, "netns", a.Name, "type", "veth", "peer", "name", l.ifB, "netns", b.Name); err != nil {
		return nil, err
	}
	for _, e := range []struct{ ns, ifc, addr string }{{a.Name, l.ifA, l.AddrA}, {b.Name, l.ifB, l.AddrB}} {
		if err := run("ip", "-n", e.ns, "addr", "add", e.addr+"/24", "dev", e.ifc); err != nil {
			return nil, err
		}
		if err := run("ip", "-n", e.ns, "link", "set", e.ifc, "up"); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Down sets A's end of the link down (ip link set down): packets between
// the two namespaces are lost, as with a cable pulled, until Up.
func (l *Link) Down() error { return run("ip", "-n", l.A.Name, "link", "set", l.ifA, "down") }

// Up sets A's end of the link up again.
func (l *Link) Up() error { return run("ip", "-n", l.A.Name, "link", "set", l.ifA, "up") }

// Close kills every other process left in n's namespaces (SIGKILL) and deletes
// the namespaces, with their veth ends. It tries every namespace and
// returns the errors met; closing twice does nothing more.
func (n *Net) Close() error {
	n.mu.Lock()
	names := n.names
	n.names = nil
	n.mu.Unlock()
	var errs []error
	for _, name := range names {
		out, err := exec.Command("ip", "netns", "pids", name).Output()
		if err != nil {
			errs = append(errs, fmt.Errorf("netns: ip netns pids %s: %w", name, err))
		}
		for _, f := range strings.Fields(string(out)) {
			// This process is listed when the thread that leads it ran
			// a Dial or Listen there; it is not killed.
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if err := run("ip", "netns", "delete", name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Left returns the namespaces whose names begin with prefix (ip netns
// list): after Close, none of its Net's.
func Left(prefix string) ([]string, error) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return nil, fmt.Errorf("netns: ip netns list: %w", err)
	}
	var left []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], prefix) {
			left = append(left, f[0])
		}
	}
	return left, nil
}

// run runs a command and returns its error with its output.
func run(bin string, args ...string) error {
	var out bytes.Buffer
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		return fmt.Errorf("netns: %s %s: %w: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// LAN joins hosts on one Ethernet segment, as machines on one switch: a
// bridge in a namespace of its own (prefix-lan), each host on a veth pair
// to it, host i at 10.78.0.(i+1)/24. It returns the hosts' addresses, in
// order; at most 250 hosts, one LAN per Net.
func (n *Net) LAN(hosts ...*NS) ([]string, error) {
	if len(hosts) > 250 {
		return nil, errors.New("netns: more than 250 hosts on one LAN")
	}
	sw, err := n.Add("lan")
	if err != nil {
		return nil, err
	}
	br := n.prefix + "br"
	if err := run("ip", "-n", sw.Name, "link", "add", br, "type", "bridge"); err != nil {
		return nil, err
	}
	if err := run("ip", "-n", sw.Name, "link", "set", br, "up"); err != nil {
		return nil, err
	}
	addrs := make([]string, len(hosts))
	for i, h := range hosts {
		port, ifc := n.prefix+"p"+strconv.Itoa(i), n.prefix+"h"+strconv.Itoa(i)
		addrs[i] = "10.78.0." + strconv.Itoa(i+1)
		for _, args := range [][]string{
			{"link", "add", port, "netns", sw.Name, "type", "veth", "peer", "name", ifc, "netns", h.Name},
			{"-n", sw.Name, "link", "set", port, "master", br},
			{"-n", sw.Name, "link", "set", port, "up"},
			{"-n", h.Name, "addr", "add", addrs[i] + "/24", "dev", ifc},
			{"-n", h.Name, "link", "set", ifc, "up"},
		} {
			if err := run("ip", args...); err != nil {
				return nil, err
			}
		}
	}
	return addrs, nil
}
