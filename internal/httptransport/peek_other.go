//go:build !unix

package httptransport

import "net"

// peek finds nothing where sockets cannot be peeked at without waiting: no
// connection is known closed, and nothing is sent again.
func peek(net.Conn) int { return peekNothing }
