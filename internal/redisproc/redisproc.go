// Package redisproc runs redis-server as a child process on a loopback
// port, without persistence: the shared quota's live runs and tests use it.
package redisproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Install says how to get redis-server on a Debian-like machine.
const Install = "apt-get install redis-server (or make deps)"

// ErrMissing is returned (wrapped) by Start when redis-server is not on PATH.
var ErrMissing = errors.New("redis-server not found on PATH: install it with " + Install)

// Server is a redis-server child process. Not safe for concurrent use.
type Server struct {
	Port int // the loopback port it listens on
	bin  string
	cmd  *exec.Cmd
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Start runs redis-server from PATH on 127.0.0.1:port (a free port if 0)
// and waits until it answers PING (at most 5 s).
func Start(port int) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("%w (%w)", ErrMissing, err)
	}
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	s := &Server{Port: port, bin: bin}
	return s, s.start()
}

func (s *Server) start() error {
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := s.cmd.Start(); err != nil {
		return err
	}
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond, ContextTimeoutEnabled: true})
	defer c.Close()
	var err error
	for range 200 {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err = c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	s.Stop()
	return fmt.Errorf("redis-server on port %d never answered: %w", s.Port, err)
}

// Addr returns host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// URL returns the redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr() }

// Stop kills the server and waits for it to exit. Stopping a stopped
// server does nothing.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Pause stops the server with SIGSTOP: it keeps its port and its
// connections but answers nothing, as a hung server does, until Resume.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	if s.cmd == nil {
		return errors.New("redisproc: the server is stopped")
	}
	return s.cmd.Process.Signal(sig)
}

// Restart starts a stopped server again on the same port, empty.
func (s *Server) Restart() error {
	s.Stop()
	return s.start()
}

// Quiet silences go-redis's own log (a process-wide setting of go-redis):
// a command that loses Redis says so in its own words, and go-redis's dial
// errors would only scroll over them.
func Quiet() { redis.SetLogger(silentLogger{}) }

// silentLogger drops go-redis's log lines.
type silentLogger struct{}

// Printf implements go-redis's logger by doing nothing.
func (silentLogger) Printf(context.Context, string, ...any) {}
