package quota_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// delayProxy is a TCP proxy on loopback that puts a round-trip time
// between its clients and a server: each byte is forwarded half the RTT
// after it arrives, each way, and a connection's first bytes wait one RTT
// more, the TCP handshake that loopback completes at once. Cut makes the
// server unreachable, as a link set down: the open connections are closed
// and new ones are accepted but forward nothing, until Restore.
type delayProxy struct {
	ln       net.Listener
	upstream string
	rtt      time.Duration

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// startProxy returns a delayProxy to upstream at rtt, closed when tb ends.
func startProxy(tb testing.TB, upstream string, rtt time.Duration) *delayProxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &delayProxy{ln: ln, upstream: upstream, rtt: rtt, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.close)
	return p
}

// addr is the address clients dial.
func (p *delayProxy) addr() string { return p.ln.Addr().String() }

func (p *delayProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns[c] = true
		cut := p.cut
		p.mu.Unlock()
		if cut {
			continue // held, forwarding nothing, until Restore closes it
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			p.drop(c)
			continue
		}
		p.mu.Lock()
		p.conns[u] = true
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(u, c, p.rtt) // the handshake's round trip before the first bytes
		go p.pipe(c, u, 0)
	}
}

// chunk is bytes read and the time they may be written.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each chunk half an RTT (plus first, once) after
// it was read; it closes both when either side ends.
func (p *delayProxy) pipe(dst, src net.Conn, first time.Duration) {
	defer p.wg.Done()
	q := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			time.Sleep(time.Until(c.at))
			if _, err := dst.Write(c.b); err != nil {
				break
			}
		}
		p.drop(dst)
		p.drop(src)
		for range q {
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{append([]byte(nil), buf[:n]...), time.Now().Add(p.rtt/2 + first)}
			first = 0
		}
		if err != nil {
			if err != io.EOF {
				p.drop(dst)
			}
			break
		}
	}
	close(q)
	<-done
}

func (p *delayProxy) drop(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// dropAll closes every connection, with p.mu held.
func (p *delayProxy) dropAll() {
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Cut closes the open connections and holds new ones silent.
func (p *delayProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.dropAll()
}

// Restore closes the connections held during the cut and forwards new
// ones again.
func (p *delayProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	p.dropAll()
}

func (p *delayProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.dropAll()
	p.mu.Unlock()
	p.wg.Wait()
}
