// Package endwatch tells the adapter that a session ended without a
// goroutine waiting for it while the session lives: a Signal starts the
// watch of the session on the second of two events, the adapter's attach
// of the connection and the first sign of the end; a Conn is a transport
// connection whose first failed Read is that sign.
package endwatch

import (
	"context"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Signal runs its watch on the second of two events: Attach, and the
// first sign, from the session's transport connection, that the session
// ended or may have (a sign that was not one costs a goroutine until the
// session ends). Each connection attempt has its own: the signs of an
// attempt that did not become the session are never met by an Attach.
type Signal struct {
	watch    func() // started in a goroutine of its own
	attached atomic.Bool
	signed   atomic.Bool
	meets    atomic.Int32
}

// New returns a Signal that starts watch.
func New(watch func()) *Signal { return &Signal{watch: watch} }

// Attach records the adapter's attach of the connection.
func (s *Signal) Attach() {
	s.attached.Store(true)
	s.meet()
}

// Sign records the first sign of the session's end.
func (s *Signal) Sign() {
	if s.signed.CompareAndSwap(false, true) {
		s.meet()
	}
}

// SignAttached is Sign, once attached: before, the exchanges of the
// handshake fail without ending the session (a legacy server's answer to
// the modern probe), and one that ends it fails the handshake.
func (s *Signal) SignAttached() {
	if s.attached.Load() {
		s.Sign()
	}
}

// meet counts one of the two events.
func (s *Signal) meet() {
	if s.meets.Add(1) == 2 {
		go s.watch()
	}
}

// A Conn is the transport connection of a session as go-sdk sees it. The
// SDK's reader, its one goroutine that reads, is the first to learn that
// the session ended, whoever ended it (the peer, Close, the SDK itself
// after a failed write): its Read fails, and the session's jsonrpc2
// connection is done soon after. So the first failed Read signs End.
type Conn struct {
	mcp.Connection
	End *Signal

	failed  atomic.Bool
	readErr error // the first failed Read's error, written before the sign
}

// Read implements [mcp.Connection].
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil && c.failed.CompareAndSwap(false, true) {
		c.readErr = err
		c.End.Sign()
	}
	return msg, err
}

// ReadErr returns the error of the first failed Read; it may be called
// once the watch runs.
func (c *Conn) ReadErr() error { return c.readErr }
