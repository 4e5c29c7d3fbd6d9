package mcpadapter

// The end of a session, told without a goroutine waiting for it while the
// session lives: an endSignal starts the watch of the session (conn.watch)
// on the second of two events, the adapter's attach of the connection and
// the first sign of the end; an endConn is a transport connection whose
// first failed Read is that sign.

import (
	"context"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An endSignal runs its watch on the second of two events: Attach, and the
// first sign, from the session's transport connection, that the session
// ended or may have (a sign that was not one costs a goroutine until the
// session ends). Each connection attempt has its own: the signs of an
// attempt that did not become the session are never met by an Attach.
type endSignal struct {
	watch    func() // started in a goroutine of its own
	attached atomic.Bool
	signed   atomic.Bool
	meets    atomic.Int32
}

// newEndSignal returns an endSignal that starts watch.
func newEndSignal(watch func()) *endSignal { return &endSignal{watch: watch} }

// Attach records the adapter's attach of the connection.
func (s *endSignal) Attach() {
	s.attached.Store(true)
	s.meet()
}

// Sign records the first sign of the session's end.
func (s *endSignal) Sign() {
	if s.signed.CompareAndSwap(false, true) {
		s.meet()
	}
}

// SignAttached is Sign, once attached: before, the exchanges of the
// handshake fail without ending the session (a legacy server's answer to
// the modern probe), and one that ends it fails the handshake.
func (s *endSignal) SignAttached() {
	if s.attached.Load() {
		s.Sign()
	}
}

// meet counts one of the two events.
func (s *endSignal) meet() {
	if s.meets.Add(1) == 2 {
		go s.watch()
	}
}

// An endConn is the transport connection of a session as go-sdk sees it. The
// SDK's reader, its one goroutine that reads, is the first to learn that
// the session ended, whoever ended it (the peer, Close, the SDK itself
// after a failed write): its Read fails, and the session's jsonrpc2
// connection is done soon after. So the first failed Read signs End.
type endConn struct {
	mcp.Connection
	End *endSignal

	failed  atomic.Bool
	readErr error // the first failed Read's error, written before the sign
}

// Read implements [mcp.Connection].
func (c *endConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil && c.failed.CompareAndSwap(false, true) {
		c.readErr = err
		c.End.Sign()
	}
	return msg, err
}

// ReadErr returns the error of the first failed Read; it may be called
// once the watch runs.
func (c *endConn) ReadErr() error { return c.readErr }
