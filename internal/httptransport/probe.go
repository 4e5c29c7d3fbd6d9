package httptransport

// Whether an HTTP request that failed on a pooled connection was never
// read by the server, and so may be sent again whatever it does (net/http
// resends only idempotent requests). A server that closes an idle
// keep-alive connection (it restarted, or its idle timeout passed) reads
// nothing written to it afterwards.
//
// Two signs tell it: when net/http hands the request a connection from its
// pool, before writing, the socket is peeked at without waiting and
// without consuming, and the server's end of stream (or a reset) is
// already there; or net/http found the connection closed before it wrote
// any of the request. A connection closed after the request was written
// to it tells nothing: the request may have been read.

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"sync"
)

// A probe follows the latest attempt of a request: whether it went out on
// a pooled connection, whether the server had closed that connection
// before the request was written, and whether any of it was written.
type probe struct {
	mu     sync.Mutex
	reused bool // the connection came from the pool
	stale  bool // and the server had closed it
	wrote  bool // the request's headers were written
}

// traceProbe returns ctx with a client trace that follows each attempt of
// a request sent with it, and the probe that holds the answer. Traces
// already in ctx still run.
func traceProbe(ctx context.Context) (context.Context, *probe) {
	p := new(probe)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			reused := info.Reused && info.WasIdle
			stale := reused && closedByPeer(info.Conn)
			p.mu.Lock()
			p.reused, p.stale, p.wrote = reused, stale, false
			p.mu.Unlock()
		},
		WroteHeaders: func() {
			p.mu.Lock()
			p.wrote = true
			p.mu.Unlock()
		},
	}), p
}

// unread reports whether the latest attempt went out on a pooled
// connection and the server cannot have read it: it had closed the
// connection before the request was written, or nothing of the request
// was written (net/http found the connection closed first).
func (p *probe) unread() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reused && (p.stale || !p.wrote)
}

// closedByPeer reports whether c, an idle connection, has been closed by
// the server: its end of stream or a reset is waiting, or on TLS, where a
// server says close_notify before it ends, bytes it sent unasked on an
// idle HTTP/1 connection. HTTP/2 connections, whose server may speak
// first, and connections without a socket report false.
func closedByPeer(c net.Conn) bool {
	tc, isTLS := c.(*tls.Conn)
	if isTLS {
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			return false
		}
		c = tc.NetConn()
	}
	switch peek(c) {
	case peekEnded:
		return true
	case peekPending:
		return isTLS
	}
	return false
}

// What a peek at an idle socket finds.
const (
	peekNothing = iota // nothing yet, or it cannot be told
	peekPending        // bytes the server sent
	peekEnded          // the end of stream, or a reset
)
