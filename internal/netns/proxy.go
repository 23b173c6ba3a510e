package netns

import (
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy is a TCP proxy that puts a round-trip time
// between its clients and a server: each byte is forwarded half the RTT
// after it arrives, each way, and a connection's first bytes wait one RTT
// more, the TCP handshake that loopback completes at once. Cut makes the
// server unreachable, as a link set down: the open connections are closed
// and new ones are accepted but forward nothing, until Restore.
type Proxy struct {
	ln       net.Listener
	upstream string
	rtt      time.Duration
	dial     DialFunc
	ctx      context.Context // cancelled by Close: ends dials under way
	cancel   context.CancelFunc

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// StartProxy returns a Proxy listening on listen (host:port, port 0 for a
// free one) that forwards to upstream at rtt. Close it when done.
func StartProxy(listen, upstream string, rtt time.Duration) (*Proxy, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return Serve(ln, d.DialContext, upstream, rtt), nil
}

// DialFunc opens a connection, as net.Dialer's DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Serve returns a Proxy that accepts on ln (which it closes on Close) and
// forwards to upstream at rtt, each connection to upstream opened by dial
// (a namespace's NS.Dial, say) apart from the others: a dial that hangs
// holds only its own connection.
func Serve(ln net.Listener, dial DialFunc, upstream string, rtt time.Duration) *Proxy {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{ln: ln, upstream: upstream, rtt: rtt, dial: dial, ctx: ctx, cancel: cancel, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p
}

// Addr is the address clients dial (host:port).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
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
		p.wg.Add(1)
		go p.forward(c)
	}
}

// forward dials upstream for client c and pipes between them.
func (p *Proxy) forward(c net.Conn) {
	defer p.wg.Done()
	u, err := p.dial(p.ctx, "tcp", p.upstream)
	if err != nil {
		p.drop(c)
		return
	}
	p.mu.Lock()
	if !p.conns[c] { // dropped (cut, restored or closed) while dialling
		p.mu.Unlock()
		u.Close()
		return
	}
	p.conns[u] = true
	p.mu.Unlock()
	p.wg.Add(2)
	go p.pipe(u, c, p.rtt) // the handshake's round trip before the first bytes
	go p.pipe(c, u, 0)
}

// chunk is bytes read and the time they may be written.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each chunk half an RTT (plus first, once) after
// it was read; it closes both when either side ends.
func (p *Proxy) pipe(dst, src net.Conn, first time.Duration) {
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

func (p *Proxy) drop(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// dropAll closes every connection, with p.mu held.
func (p *Proxy) dropAll() {
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Cut closes the open connections and holds new ones silent.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.dropAll()
}

// Restore closes the connections held during the cut and forwards new
// ones again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	p.dropAll()
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() {
	p.ln.Close()
	p.cancel()
	p.mu.Lock()
	p.dropAll()
	p.mu.Unlock()
	p.wg.Wait()
}
