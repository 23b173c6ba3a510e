package netns

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Dial opens a connection from inside ns, as a process there would: the
// socket is made on an OS thread moved into ns, which is discarded after
// (its goroutine ends locked to it). A client library's dialer (go-redis's
// Options.Dialer, say) can be ns.Dial.
func (ns *NS) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := ns.do(func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Listen listens on addr inside ns, as ns.Dial dials.
func (ns *NS) Listen(network, addr string) (net.Listener, error) {
	var ln net.Listener
	err := ns.do(func() (err error) {
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// do runs f on an OS thread moved into ns, then lets the thread end.
func (ns *NS) do(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread, left in ns, ends with the goroutine
		fd, err := os.Open("/var/run/netns/" + ns.Name)
		if err != nil {
			done <- fmt.Errorf("netns: %w", err)
			return
		}
		defer fd.Close()
		if err := unix.Setns(int(fd.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("netns: setns %s: %w", ns.Name, err)
			return
		}
		done <- f()
	}()
	return <-done
}
