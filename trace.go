package mcpadapter

// The adapter's side of internal/observe, which holds the spans, the W3C
// trace context, the metric instruments and the call's one observer: what
// a call, a request and a dial tell it, and the error.type of the
// adapter's own failures.

import (
	"context"
	"errors"
	"net"

	"github.com/mcpadapter/mcpadapter/internal/observe"
)

// peer describes c for the spans of its requests.
func (c *conn) peer() observe.Peer {
	p := peerOf(c.server, c.cfg)
	p.Protocol = c.info.ProtocolVersion
	if c.session != nil {
		p.Session = c.session.ID()
	}
	return p
}

// peerOf describes how the server name, configured as s, is reached.
func peerOf(name string, s *Server) observe.Peer {
	return observe.Peer{Server: name, Stdio: s.Command != "", URL: s.URL}
}

// errorType is the error.type of a failure that is not a JSON-RPC error
// (observe.Outcome).
func errorType(err error) string {
	var intr *Interrupt
	var live *liveAsked // a round that ended at a live question (live.go)
	var ask *ApprovalRequired
	var oe *net.OpError
	var de *net.DNSError
	switch {
	case errors.As(err, &intr), errors.As(err, &live):
		return "input_required"
	case errors.As(err, &ask):
		return "approval_required"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, ErrClosed):
		return "closed"
	case errors.As(err, &oe), errors.As(err, &de): // not net.Error: a syscall.Errno (a missing program) is one
		return "network"
	}
	return "_OTHER"
}
