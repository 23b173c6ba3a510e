//go:build unix

package fakeapi

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// loopbackPair returns both ends of a new loopback TCP connection: the
// client's, and the raw server side.
func loopbackPair(t *testing.T) (client *net.TCPConn, server syscall.RawConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	raw, err := s.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return c.(*net.TCPConn), raw
}

// awaitClosed waits until peerClosed sees raw closed: the kernel has
// taken in the client's close. It fails after a minute, which no working
// machine needs.
func awaitClosed(t *testing.T, raw syscall.RawConn) {
	t.Helper()
	for range 60_000 {
		if peerClosed(raw) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("peerClosed never saw the client's close")
}

func TestPeerClosed(t *testing.T) {
	c, raw := loopbackPair(t)
	if peerClosed(raw) {
		t.Fatal("an open connection with nothing to read is seen closed")
	}
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	// The byte is there to read (peerClosed takes nothing): once it has
	// arrived, the connection is still open.
	for range 3 {
		if peerClosed(raw) {
			t.Fatal("an open connection with a byte to read is seen closed")
		}
	}
	c2, raw2 := loopbackPair(t)
	c2.Close()
	awaitClosed(t, raw2)

	c3, raw3 := loopbackPair(t)
	if err := c3.SetLinger(0); err != nil { // close with a reset
		t.Fatal(err)
	}
	c3.Close()
	awaitClosed(t, raw3)
}

// TestPendingMovesLeftToTheNextRequest: a request whose client closed its
// connection before its next request arrived ends, in the log, when that
// request arrived, however late its handler noticed; so does a write whose
// client closed it before another write to its resource arrived. A request
// of another client (not a write to the resource), or one whose
// connection is open, is not moved.
func TestPendingMovesLeftToTheNextRequest(t *testing.T) {
	var ps pendingSet
	closedC, closedRaw := loopbackPair(t)
	otherC, otherRaw := loopbackPair(t)
	writeC, writeRaw := loopbackPair(t)
	_, openRaw := loopbackPair(t)
	first := &Record{Client: "a", Arrived: 1 * time.Second}
	other := &Record{Client: "b", Arrived: 1 * time.Second}
	write := &Record{Client: "c", Service: "api", Write: true, Resource: "doc-1", Arrived: 1 * time.Second}
	open := &Record{Client: "a", Arrived: 1500 * time.Millisecond}
	pf := ps.arrive(first, closedRaw, first.Arrived)
	po := ps.arrive(other, otherRaw, other.Arrived)
	pw := ps.arrive(write, writeRaw, write.Arrived)
	pOpen := ps.arrive(open, openRaw, open.Arrived)
	for _, c := range []*net.TCPConn{closedC, otherC, writeC} {
		c.Close()
	}
	for _, raw := range []syscall.RawConn{closedRaw, otherRaw, writeRaw} {
		awaitClosed(t, raw)
	}

	// Client a's next request, and another client's write to doc-1.
	next := &Record{Client: "a", Arrived: 2 * time.Second}
	pn := ps.arrive(next, nil, next.Arrived)
	nextWrite := &Record{Client: "d", Service: "api", Write: true, Resource: "doc-1", Arrived: 2500 * time.Millisecond}
	pnw := ps.arrive(nextWrite, nil, nextWrite.Arrived)

	// The handlers notice the closes late (or never: open stays open).
	for _, r := range []*Record{first, other, write} {
		r.Answered, r.Left = 9*time.Second, 9*time.Second
	}
	open.Answered = 4 * time.Second
	for _, p := range []*pending{pf, po, pw, pOpen, pn, pnw} {
		ps.done(p)
	}
	if first.Left != next.Arrived {
		t.Errorf("first request left at %v, want its client's next arrival %v", first.Left, next.Arrived)
	}
	if write.Left != nextWrite.Arrived {
		t.Errorf("write left at %v, want the next write's arrival %v", write.Left, nextWrite.Arrived)
	}
	if other.Left != 9*time.Second {
		t.Errorf("another client's request left at %v, want its handler's 9s", other.Left)
	}
	if open.Left != 0 {
		t.Errorf("a request whose connection stayed open left at %v", open.Left)
	}
	if len(ps.byKey) != 0 {
		t.Errorf("%d keys still registered after every request was done", len(ps.byKey))
	}
}

// TestPendingKeepsWhatCameFirst: a close the handler noticed before the
// retry arrived, or an answer complete before it, is left as it was.
func TestPendingKeepsWhatCameFirst(t *testing.T) {
	var ps pendingSet
	for _, tc := range []struct {
		name           string
		answered, left time.Duration
	}{
		{"noticed first", 5 * time.Second, 1500 * time.Millisecond},
		{"answered first", 1800 * time.Millisecond, 0},
	} {
		c, raw := loopbackPair(t)
		a := &Record{Client: "a", Identity: 1, Arrived: time.Second}
		pa := ps.arrive(a, raw, a.Arrived)
		c.Close()
		awaitClosed(t, raw)
		b := &Record{Client: "a", Identity: 1, Arrived: 2 * time.Second}
		pb := ps.arrive(b, nil, b.Arrived)
		a.Answered, a.Left = tc.answered, tc.left
		ps.done(pa)
		ps.done(pb)
		if a.Left != tc.left {
			t.Errorf("%s: left at %v, want %v", tc.name, a.Left, tc.left)
		}
	}
}
