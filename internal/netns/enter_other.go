//go:build !linux

package netns

import (
	"context"
	"errors"
	"net"
)

var errNotLinux = errors.New("netns: network namespaces are Linux's")

// Dial opens a connection from inside ns: on Linux only.
func (ns *NS) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return nil, errNotLinux
}

// Listen listens on addr inside ns: on Linux only.
func (ns *NS) Listen(network, addr string) (net.Listener, error) {
	return nil, errNotLinux
}
