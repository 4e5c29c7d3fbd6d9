//go:build unix

package httptransport

import (
	"errors"
	"net"
	"syscall"
)

// peek tells what waits on c's socket, read without waiting and without
// consuming. It runs under the descriptor's reference only
// (RawConn.Control), not its read lock, which net/http's reader of the
// idle connection holds while it waits.
func peek(c net.Conn) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return peekNothing
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return peekNothing
	}
	found := peekNothing
	err = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil && n == 0, errors.Is(err, syscall.ECONNRESET):
			found = peekEnded
		case err == nil:
			found = peekPending
		}
	})
	if err != nil {
		return peekNothing
	}
	return found
}
