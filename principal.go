package mcpadapter

// Per-principal connections: servers whose credentials depend on the user a
// call acts for get one connection per (server, principal), bounded in
// number and closed when idle; on a stateless server the principals'
// connections may share one session (share.go).

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Defaults of [Config.PrincipalIdleTimeout] and [Config.MaxPrincipalConns].
const (
	defaultPrincipalIdleTimeout = 10 * time.Minute
	defaultMaxPrincipalConns    = 1000
)

var (
	// errNoPrincipal is ErrWrongPrincipal for a context without a
	// principal.
	errNoPrincipal = fmt.Errorf("%w: per-principal server used without a principal (see WithPrincipal)", ErrWrongPrincipal)
)

// errEvicted is the ErrClosed of a per-principal connection that was
// closed for idleness or past the cap.
var errEvicted = fmt.Errorf("%w: idle per-principal connection closed (Config.PrincipalIdleTimeout, MaxPrincipalConns); list the tools again, or set Config.ToolsFollowServer so that held tools follow", ErrClosed)

type principalKey struct{}

// WithPrincipal returns a copy of ctx that acts for principal: a user id,
// tenant or any string naming whose credentials a call carries. Discovery,
// calls and every other operation under the returned context use the
// principal's own connection to each per-principal server
// ([Server.HeadersFor], [Server.OAuthFor]), or its place on the session
// the principals of a stateless server share, with its own credentials
// on each request ([Config.ShareStatelessSessions]); other servers are
// shared by all principals. An empty principal means none.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// principalFrom returns the principal of ctx set by [WithPrincipal], or "".
func principalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// checkOwner refuses to resume or decide stored state of server made for
// principal owner (an interrupt or an approval request: their
// [WithPrincipal] when they were made) under ctx, before anything is sent:
// ctx must act for owner when owner is set, whatever the server; and for
// a per-principal server, the state and ctx must both name one. Errors
// never name a principal.
func (s *states) checkOwner(ctx context.Context, server, owner string) error {
	p := principalFrom(ctx)
	perPrincipal := s.perPrincipal[server]
	switch {
	case perPrincipal && owner == "":
		return fmt.Errorf("%w: the stored state records none", errNoPrincipal)
	case perPrincipal && p == "":
		return errNoPrincipal
	case owner != "" && owner != p:
		return fmt.Errorf("%w: the stored state belongs to another principal", ErrWrongPrincipal)
	}
	return nil
}

// A usage tracks the requests in flight on a per-principal connection and
// when it was last used, so that only idle connections are evicted.
type usage struct {
	mu      sync.Mutex
	busy    int       // requests in flight
	last    time.Time // when the last request started or ended, or the conn was handed out
	evicted bool      // no request may start any more
}

// acquire registers a request, unless the connection was evicted.
func (u *usage) acquire() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.evicted {
		return false
	}
	u.busy++
	u.last = time.Now()
	return true
}

// release ends a request that acquire registered.
func (u *usage) release() {
	u.mu.Lock()
	u.busy--
	u.last = time.Now()
	u.mu.Unlock()
}

// touch records a use without a request (a connection handed out).
func (u *usage) touch() {
	u.mu.Lock()
	u.last = time.Now()
	u.mu.Unlock()
}

// idleSince returns when the connection became idle, and whether it is.
func (u *usage) idleSince() (time.Time, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.last, u.busy == 0
}

// wasEvicted reports whether evict took the connection.
func (u *usage) wasEvicted() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.evicted
}

// evict marks an idle connection evicted and reports whether it did; a
// busy one is left alone.
func (u *usage) evict() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.busy > 0 {
		return false
	}
	u.evicted = true
	return true
}

// admitLocked counts the new per-principal connection c of g (unless it
// replaced a dead one of its key), evicting the least recently used idle
// ones past [Config.MaxPrincipalConns], and starts g's reaper of idle
// connections if none runs. pool.mu must be held, with g open; what the
// Logger is to be told goes into n.
func (p *pool) admitLocked(g *generation, c *conn, replaced bool, n *news) {
	if !replaced {
		g.principals++
	}
	p.trimLocked(g, c, n)
	if !g.reaping && g.spawn(func() { p.reap(g) }) {
		g.reaping = true
	}
}

// trimLocked evicts the least recently used idle per-principal connections
// of g, other than keep, while g has more than [Config.MaxPrincipalConns].
// pool.mu must be held; the evictions go into n.
func (p *pool) trimLocked(g *generation, keep *conn, n *news) {
	for g.principals > orDefault(p.cfg.MaxPrincipalConns, defaultMaxPrincipalConns) {
		var lru *conn
		var lruAt time.Time
		for k, other := range g.conns {
			if k.principal == "" || other == keep {
				continue
			}
			if at, idle := other.use.idleSince(); idle && (lru == nil || at.Before(lruAt)) {
				lru, lruAt = other, at
			}
		}
		if lru == nil || !p.evictLocked(g, lru, "over Config.MaxPrincipalConns", n) {
			break // every other one is busy: over the cap for now
		}
	}
}

// evictLocked drops the idle per-principal connection c from g and closes
// it in the background, reporting whether it did (not when c is busy, nor
// when g is closed: Close closes c). pool.mu must be held; the eviction
// goes into n, for the Logger.
func (p *pool) evictLocked(g *generation, c *conn, why string, n *news) bool {
	if g.ended() || !c.use.evict() { // g.closed changes only under pool.mu (pool.close)
		return false
	}
	c.closing.Store(true)
	delete(g.conns, c.key)
	g.principals--
	g.spawn(c.close) // g is open: pool.mu is held
	n.evicted = append(n.evicted, eviction{server: c.server, why: why})
	return true
}

// reap closes g's per-principal connections idle for longer than
// [Config.PrincipalIdleTimeout], until g has none or is closed. It runs
// on a goroutine of g's (admitLocked).
func (p *pool) reap(g *generation) {
	idle := orDefault(p.cfg.PrincipalIdleTimeout, defaultPrincipalIdleTimeout)
	for {
		p.mu.Lock()
		if g.ended() || g.principals == 0 {
			g.reaping = false
			p.mu.Unlock()
			return
		}
		var n news
		p.trimLocked(g, nil, &n)
		now := time.Now()
		next := now.Add(idle)
		for k, c := range g.conns {
			if k.principal == "" {
				continue
			}
			at, quiet := c.use.idleSince()
			switch {
			case !quiet: // busy: its release touches it
			case !now.Before(at.Add(idle)):
				p.evictLocked(g, c, "idle past Config.PrincipalIdleTimeout", &n)
			case at.Add(idle).Before(next):
				next = at.Add(idle)
			}
		}
		p.mu.Unlock()
		p.tell(&n)
		if err := sleep(g.ctx, next.Sub(now)); err != nil {
			p.mu.Lock()
			g.reaping = false
			p.mu.Unlock()
			return
		}
	}
}
