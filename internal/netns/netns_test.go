package netns

import (
	"context"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// echoOnce accepts connections on ln and writes each its address, until
// ln is closed.
func echoOnce(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.WriteString(c, c.LocalAddr().String()+"\n")
		c.Close()
	}
}

// readFrom dials addr from ns within d and returns what the server wrote.
func readFrom(ns *NS, addr string, d time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c, err := ns.Dial(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	return string(b), err
}

// TestTwoHosts makes two namespaces joined by a link, connects over TCP
// from one to the other's address (the listener reports the address it
// was reached on), finds the other unreachable with the link down and
// reachable again with it up, and checks that Close leaves none of the
// Net's namespaces in ip netns list.
func TestTwoHosts(t *testing.T) {
	if err := Check(); err != nil {
		t.Skip(err)
	}
	n, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close() // a failure's; the test closes it itself
	a, err := n.Add("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.Add("b")
	if err != nil {
		t.Fatal(err)
	}
	l, err := n.Link(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if left, err := Left(n.Prefix()); err != nil || len(left) != 2 {
		t.Fatalf("namespaces %v (%v), want 2", left, err)
	}
	ln, err := a.Listen("tcp", l.AddrA+":7000")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go echoOnce(ln)
	addr := l.AddrA + ":7000"
	if got, err := readFrom(b, addr, 5*time.Second); err != nil || got != addr+"\n" {
		t.Fatalf("from b: %q, %v; want %q", got, err, addr+"\n")
	}
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	if got, err := readFrom(b, addr, 300*time.Millisecond); err == nil {
		t.Fatalf("from b with the link down: %q, want no connection", got)
	}
	if err := l.Up(); err != nil {
		t.Fatal(err)
	}
	if got, err := readFrom(b, addr, 5*time.Second); err != nil || got != addr+"\n" {
		t.Fatalf("from b after the link came up: %q, %v; want %q", got, err, addr+"\n")
	}
	// A process left running in a namespace does not keep it.
	sleeper := b.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	// ip netns exec enters the namespace after Start returns.
	for i := 0; ; i++ {
		out, _ := exec.Command("ip", "netns", "identify", strconv.Itoa(sleeper.Process.Pid)).Output()
		if strings.TrimSpace(string(out)) == b.Name {
			break
		}
		if i == 500 {
			t.Fatalf("the sleeper never entered %s", b.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sleeper.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the process left in a namespace ended with %v, want killed", err)
	}
	if left, err := Left(n.Prefix()); err != nil || len(left) != 0 {
		t.Fatalf("after Close: namespaces %v (%v), want none", left, err)
	}
}

// TestProxyAcrossNamespaces forwards through a Proxy whose upstream connections are
// dialled in another namespace, and checks that the reply crosses it.
func TestProxyAcrossNamespaces(t *testing.T) {
	n := ForTest(t)
	a, err := n.Add("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.Add("b")
	if err != nil {
		t.Fatal(err)
	}
	l, err := n.Link(a, b)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := a.Listen("tcp", l.AddrA+":7001")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go echoOnce(ln)
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := Serve(pl, b.Dial, l.AddrA+":7001", 20*time.Millisecond)
	defer p.Close()
	c, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := io.ReadAll(c)
	if want := l.AddrA + ":7001\n"; err != nil || string(got) != want {
		t.Fatalf("through the proxy: %q, %v; want %q", got, err, want)
	}
}

// TestLAN puts three hosts on one LAN and connects to the first from the
// other two, each reply naming the address it was reached on.
func TestLAN(t *testing.T) {
	n := ForTest(t)
	var hosts []*NS
	for _, name := range []string{"h0", "h1", "h2"} {
		h, err := n.Add(name)
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, h)
	}
	addrs, err := n.LAN(hosts...)
	if err != nil {
		t.Fatal(err)
	}
	addr := addrs[0] + ":7002"
	ln, err := hosts[0].Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go echoOnce(ln)
	for _, h := range hosts[1:] {
		if got, err := readFrom(h, addr, 5*time.Second); err != nil || got != addr+"\n" {
			t.Fatalf("from %s: %q, %v; want %q", h.Name, got, err, addr+"\n")
		}
	}
}
