package fakeapi

import (
	"net"
	"sync"
	"syscall"
	"time"
)

// Requests in flight, for the request log. A client that times an attempt
// out and retries at once, or goes on to its next call, closes the
// attempt's connection before it sends the next request; the server's
// handler notices the close only when the Go scheduler runs it, which on a
// busy machine can be long after the next request arrived, and the log
// would then show the client with one more request in flight than it had,
// and a write overlapping the one it had let go. So when a request
// arrives, the server asks the connections of its client's requests still
// in flight, and of the writes to its resource, whether their client has
// closed them: on a connection the client closed before sending the new
// request, the kernel holds the close by the time that request is read,
// whatever the load. Such a request's Record.Left is then the new one's
// arrival at the latest.

// pending is one logged request in flight.
type pending struct {
	rec  *Record
	raw  syscall.RawConn // its connection; nil when it cannot be asked
	keys [2]string       // its entries in pendingSet.byKey ("": none)
	// closedBy is a time by which its client had closed the connection,
	// seen when a later request arrived (0: not seen).
	closedBy time.Duration
}

// pendingSet holds the logged requests in flight by client, and the writes
// also by resource.
type pendingSet struct {
	mu    sync.Mutex
	byKey map[string]map[*pending]struct{}
}

// maxProbes bounds the connections one arrival asks about, so that a
// client with thousands of requests in flight costs no more than a few
// hundred system calls a request; the rest keep their handler's times.
const maxProbes = 256

// pendingKeys are the entries under which rec meets the requests it may
// follow: its client's, and for a write its resource's.
func pendingKeys(rec *Record) [2]string {
	k := [2]string{"c" + rec.Client}
	if rec.Write {
		k[1] = "w" + rec.Service + "\x00" + rec.Resource
	}
	return k
}

// arrive registers rec, arrived at real time at on connection raw (nil:
// unknown), after asking the connections of the requests in flight it may
// follow (see pendingKeys; at most maxProbes) whether their client closed
// them. It returns nil when rec is nil (the server keeps no log).
func (ps *pendingSet) arrive(rec *Record, raw syscall.RawConn, at time.Duration) *pending {
	if rec == nil {
		return nil
	}
	p := &pending{rec: rec, raw: raw, keys: pendingKeys(rec)}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.byKey == nil {
		ps.byKey = map[string]map[*pending]struct{}{}
	}
	probes := 0
	for _, k := range p.keys {
		if k == "" {
			continue
		}
		set := ps.byKey[k]
		for q := range set {
			if probes == maxProbes {
				break
			}
			if q.closedBy == 0 && q.raw != nil {
				probes++
				if peerClosed(q.raw) {
					q.closedBy = at
				}
			}
		}
		if set == nil {
			set = map[*pending]struct{}{}
			ps.byKey[k] = set
		}
		set[p] = struct{}{}
	}
	return p
}

// done unregisters p, whose record is complete, and moves its Left to the
// time its close was seen at a later request's arrival when that came
// first and before the answer was complete.
func (ps *pendingSet) done(p *pending) {
	if p == nil {
		return
	}
	ps.mu.Lock()
	for _, k := range p.keys {
		if k == "" {
			continue
		}
		delete(ps.byKey[k], p)
		if len(ps.byKey[k]) == 0 {
			delete(ps.byKey, k)
		}
	}
	by := p.closedBy
	ps.mu.Unlock()
	if rec := p.rec; by > 0 && by < rec.Answered && (rec.Left == 0 || by < rec.Left) {
		rec.Left = by
	}
}

// conns maps the remote address of each connection the server accepted
// (while it logs requests) to its raw connection, for pendingSet.arrive.
type conns struct{ m sync.Map }

// raw is the connection a request from remote came on (nil: unknown).
func (cs *conns) raw(remote string) syscall.RawConn {
	if v, ok := cs.m.Load(remote); ok {
		return v.(syscall.RawConn)
	}
	return nil
}

// connsListener enters each connection it accepts in conns until the
// connection is closed.
type connsListener struct {
	net.Listener
	conns *conns
}

// Accept accepts the next connection and enters it in l.conns.
func (l connsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c, nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return c, nil
	}
	key := c.RemoteAddr().String()
	l.conns.m.Store(key, raw)
	return &enteredConn{Conn: c, forget: func() { l.conns.m.CompareAndDelete(key, raw) }}, nil
}

// enteredConn is a connection entered in conns; closing it removes it.
type enteredConn struct {
	net.Conn
	once   sync.Once
	forget func()
}

// Close removes the connection from conns and closes it.
func (c *enteredConn) Close() error {
	c.once.Do(c.forget)
	return c.Conn.Close()
}
