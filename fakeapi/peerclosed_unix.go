//go:build unix

package fakeapi

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// peerClosed reports whether the client has closed connection raw (or
// reset it): a read of it would end, with nothing left to read. It looks
// without taking anything from the connection, and does not wait.
func peerClosed(raw syscall.RawConn) bool {
	closed := false
	var b [1]byte
	err := raw.Control(func(fd uintptr) {
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0
		case err == unix.EAGAIN || err == unix.EWOULDBLOCK || err == unix.EINTR:
		default:
			closed = true // reset
		}
	})
	return err == nil && closed
}
