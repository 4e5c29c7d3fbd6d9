//go:build unix

package connprobe

import (
	"errors"
	"net"
	"syscall"
)

// peek reports whether the server has ended c, read without waiting and
// without consuming: an end of stream or a reset, or bytes it sent
// unasked on an idle connection. It runs under the descriptor's reference
// only (RawConn.Control), not its read lock, which net/http's reader of
// the idle connection holds while it waits.
func peek(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	err = raw.Control(func(fd uintptr) {
		var b [1]byte
		// No error: the end of stream (0 bytes) or bytes on an idle
		// connection; a live idle connection has nothing (EAGAIN).
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = err == nil || errors.Is(err, syscall.ECONNRESET)
	})
	return err == nil && closed
}
