package mcpadapter

// Held tools and their server. A Tool is bound to the connection it was
// listed on. When that connection ends while the Adapter goes on (a stdio
// server that exited or was killed, an HTTP session that ended, a
// per-principal connection closed for idleness), the seeds' rule holds by
// default: list the tools again, and use the new ones. With
// Config.ToolsFollowServer a fresh call of a held tool goes to the same
// tool on its server's current connection instead (target, resolved once
// per call in Tool.run), dialing it under the server's Retry policy as a
// discovery would. A session the server forgot (HTTP 404) is neither: the
// spec's new session carries on the calls of its tools in either mode
// (conn.next, Tool.callRounds).

import (
	"context"
	"fmt"
)

// target returns the tool that serves a fresh call of t under ctx, whose
// principal run has checked: t, unless its connection ended while the
// Adapter goes on (conn.replaced); then, with
// [Config.ToolsFollowServer], the same tool on its server's current
// connection (catalogs.follow), and by default the error that says what
// to do. An evicted per-principal connection fails the call by default
// as it did (errEvicted, which says to discover again).
func (t *Tool) target(ctx context.Context) (*Tool, error) {
	c := t.conn.current()
	switch {
	case !c.replaced():
		return t, nil
	case t.a.cfg.ToolsFollowServer:
		return t.a.catalogs.follow(ctx, t)
	case c.closing.Load():
		return t, nil // evicted: the call fails with errEvicted
	}
	return nil, serverError(t.server, callToolOp(t.desc.Name), c.heldLost())
}

// replaced reports whether c ended while its generation goes on, so that
// a new connection of its key serves its server: it died, or was evicted
// (principal.go). A session its server forgot is not (its calls go on on
// the new session: current), nor is a connection that Close ended.
func (c *conn) replaced() bool {
	if c.alive() && !c.closing.Load() {
		return false // the common case, first: no lock
	}
	if c.gen.ended() || c.sessionMissing() {
		return false
	}
	return !c.alive() || c.use.wasEvicted()
}

// heldLost is why a call of a tool held on c, a connection that died,
// fails by default: the death, and what to do about it.
func (c *conn) heldLost() error {
	const next = "list the tools again (Adapter.ListTools) and use the new ones, or set Config.ToolsFollowServer so that held tools follow their server"
	if c.cfg.Retry == nil {
		return fmt.Errorf("connection lost: %w (it stays down until Close: set Server.Retry to dial it again, then %s)", c.cause(), next)
	}
	return fmt.Errorf("connection lost: %w (a tool keeps the connection it was listed on: %s)", c.cause(), next)
}

// follow returns the tool of t's server that serves a call of t under
// ctx now that t's connection ended: the tool of the same MCP name on the
// server's current connection for ctx's principal, dialed under the
// server's Retry policy if needed. It is looked up in the tool list last
// fetched on that connection, which is fetched (once per connection, and
// again after list_changed) when there is none. A tool the server no
// longer lists fails the call.
func (cs *catalogs) follow(ctx context.Context, t *Tool) (*Tool, error) {
	var found *Tool
	_, err := cs.a.onConn(ctx, t.server, func(c *conn) error {
		ts, err := cs.lastTools(ctx, c)
		found = nil
		for _, nt := range ts {
			if nt.desc.Name == t.desc.Name {
				found = nt
				break
			}
		}
		return err
	})
	switch {
	case err != nil:
		return nil, err
	case found == nil:
		return nil, serverError(t.server, callToolOp(t.desc.Name), fmt.Errorf("tool no longer offered by server %q: its connection ended, and its tool list on the new one lacks %q (Config.ToolsFollowServer)", t.server, t.desc.Name))
	}
	return found, nil
}

// lastTools returns the tool list last fetched on c, even past its
// freshness, or fetches one when c has none (a new connection, or
// list_changed dropped it).
func (cs *catalogs) lastTools(ctx context.Context, c *conn) (Toolset, error) {
	cs.mu.Lock()
	items := cs.ofLocked(c).tools.items // replaced, never changed
	cs.mu.Unlock()
	if items != nil {
		return items, nil
	}
	return cs.tools(ctx, c, CacheUse)
}

// servedBy returns the connection a call of t under ctx went to, without
// dialing: t's current one, or, when t followed its server, the server's
// live connection for ctx (nil: none).
func (t *Tool) servedBy(ctx context.Context) *conn {
	c := t.conn.current()
	if !t.a.cfg.ToolsFollowServer || !c.replaced() {
		return c
	}
	s, err := t.a.server(t.server)
	if err != nil {
		return nil
	}
	return t.a.pool.live(ctx, t.server, s)
}

// resend returns the connection on which a round of the call info
// describes, which c did not send (unexecuted: err), is sent again, once,
// under ctx, the caller's: the new session of a server that forgot c's
// (the spec's, whatever the option); for a session that ended before the
// request left (the server died before the adapter saw it: target found
// c alive), under [Config.ToolsFollowServer] the server's current
// connection, the call's target resolved again (info.t becomes it), and
// by default the error that says what to do. A connection that Close
// ended, or one evicted by default, fails with err, which says so.
func (t *Tool) resend(ctx context.Context, c *conn, info *callInfo, err error) (*conn, error) {
	follow := t.a.cfg.ToolsFollowServer
	switch {
	case c.sessionMissing():
		return t.a.pool.renew(ctx, c)
	case !c.replaced(), c.closing.Load() && !follow:
		return nil, err
	case !follow:
		return nil, serverError(c.server, callToolOp(t.desc.Name), c.heldLost())
	}
	nt, err := t.target(ctx)
	if err != nil {
		return nil, err
	}
	info.t = nt
	return nt.conn.current(), nil
}
