package mcpadapter

// The connection pool: one connection per server (per server and
// principal, principal.go; the principals of a stateless server share the
// session of one, share.go), dialed on first use by one shared dial, kept
// until it dies, is evicted or the Adapter is closed; the skip and retry
// policy of servers that failed; the failures Status reports.
//
// Notes on its state and contexts:
//
//   - pool.mu guards the current generation and its connections, skipped
//     servers, retries, failures and per-principal count. It is never held
//     across I/O: a dial runs unlocked, then the lock is taken again to
//     record it, unless Close came meanwhile (the dial's conn is then
//     closed, as in database/sql's openNewConnection).
//   - Concurrent callers of one connection share one dial (singleflight),
//     which runs under the generation's context, not the first caller's:
//     each caller waits on its own ctx, and the dial goes on when they
//     leave, since its connection serves whoever comes next. (Catalog
//     fetches, catalog.go, are shared too, but cancelled when no caller
//     waits any more.)
//   - A generation is everything one Close ends. Every goroutine working
//     for it enters it (generation.enter), and Close waits for them.
//
// The lock order of the whole package, written here only:
//
//   - pool.mu first. Under it may be taken usage.mu (principal.go), the
//     notifier's registry and held subscriptions (notify.go,
//     internal/deliver) and generation.life.
//   - catalogs.mu (catalog.go) is never held with pool.mu, either way
//     round. Under it only generation.life is taken (cachedList).
//   - generation.life last: nothing is taken under it.
//   - conn.openMu, link.progress and the progress sinks in it (notify.go:
//     a sink's lock is not held with the table's), preparedMu (dial.go),
//     a shared session's descriptors (descIntern, share.go), the
//     notifier's queues and counts (internal/deliver), the record
//     of kept sessions and its timer (kept.go, internal/tasks) and the
//     registry of live interrupts (live.go) are taken alone. A package
//     of internal/ documents its own locks; none takes a lock of the
//     root's.
//   - No lock is held across I/O, nor while user code runs: the Logger,
//     the meter, callbacks, hooks, middleware. What a holder of pool.mu has
//     to tell user code (news) is told once the lock is released, as
//     database/sql calls out only after putConnDBLocked, so that user code
//     may call the Adapter back (a log handler that asks for Status).

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/deliver"
	"github.com/mcpadapter/mcpadapter/internal/observe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/singleflight"
)

// A pool owns the connections of an Adapter, across its generations.
type pool struct {
	cfg     *Config // the Adapter's
	logger  *slog.Logger
	metrics *observe.Metrics // the Adapter's; nil: none
	dialer  dialer           // opens its connections (dial.go)

	dials map[string]*atomic.Int64 // dial attempts per server since New, for Status; the map is never changed

	// mu guards gen and, in every generation, conns, skipped, failures,
	// retries, principals and reaping.
	mu  sync.Mutex
	gen *generation // nil until first use and after Close
}

// A generation is everything one [Adapter.Close] ends: connections,
// skipped servers, failures, in-flight dials, fetches and deliveries.
type generation struct {
	ctx    context.Context // cancelled by Close; every dial and call derives from it
	cancel context.CancelFunc
	dials  singleflight.Group

	// life guards closed; enter adds to wg under it, so that Close, which
	// sets closed, then waits for every goroutine that entered. (Lock
	// order: the top of this file.)
	life   sync.Mutex
	closed bool
	wg     sync.WaitGroup // goroutines the generation owns

	// guarded by pool.mu:
	conns      map[connKey]*conn
	skipped    map[string]error
	failures   map[string]failure // last failed dial per server, for Status
	retries    map[string]*skipRetry
	principals int             // per-principal conns in conns (principal.go)
	reaping    bool            // the reaper of idle per-principal conns runs
	stateless  map[string]bool // per-principal servers a dial found stateless, or not (share.go)

	// The deliveries of the notifier (notify.go), and the subscriptions
	// of ended connections it keeps for the next of their key, each
	// guarded by its own lock.
	deliveries deliver.Queues[deliver.Key]
	held       heldSubscriptions

	// kept records the sessions of its connections kept for tasks
	// handed out (kept.go), under a lock of its own.
	kept keptSessions
}

// enter registers a goroutine's work with g, so that Close waits for it; it
// reports false when g is closed. The caller calls g.wg.Done when done.
func (g *generation) enter() bool {
	g.life.Lock()
	defer g.life.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	return true
}

// spawn runs f on a goroutine of g's, so that Close waits for it, and
// reports whether it did: not once g is closed.
func (g *generation) spawn(f func()) bool {
	if !g.enter() {
		return false
	}
	go func() {
		defer g.wg.Done()
		f()
	}()
	return true
}

// background runs f on a goroutine of g's, so that Close waits for it;
// once g is closed, f runs at once, in the caller.
func (g *generation) background(f func()) {
	if !g.spawn(f) {
		f()
	}
}

// ended reports whether Close ended g.
func (g *generation) ended() bool {
	g.life.Lock()
	defer g.life.Unlock()
	return g.closed
}

// generation returns the current generation, starting one if needed.
func (p *pool) generation() *generation {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen == nil {
		ctx, cancel := context.WithCancel(context.Background())
		p.gen = &generation{
			ctx: ctx, cancel: cancel,
			conns:    map[connKey]*conn{},
			skipped:  map[string]error{},
			failures: map[string]failure{},
			retries:  map[string]*skipRetry{},

			stateless: map[string]bool{},
		}
		p.gen.kept.init(p.gen, p.cfg, p.logger)
	}
	return p.gen
}

// close ends the current generation: it cancels its calls and dials, closes
// every connection and waits for every goroutine of the generation.
func (p *pool) close() {
	p.mu.Lock()
	g := p.gen
	p.gen = nil
	if g == nil {
		p.mu.Unlock()
		return
	}
	g.life.Lock()
	g.closed = true
	g.life.Unlock()
	conns := slices.Collect(maps.Values(g.conns))
	p.mu.Unlock()

	// Cancel first: ClientSession.Close waits for calls in flight.
	for _, c := range conns {
		c.beginClose()
	}
	g.cancel()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.close)
	}
	wg.Wait()
	g.wg.Wait()
	g.kept.stop()
}

// connect returns a live connection of ctx to server s, named name,
// dialing it if needed: a connection that died is dialed again when s has
// a retry policy, and a server skipped by discovery is not dialed.
func (p *pool) connect(ctx context.Context, name string, s *Server) (*conn, error) {
	key, err := connKeyOf(ctx, name, s)
	if err != nil {
		return nil, err
	}
	g := p.generation()
	p.mu.Lock()
	skipErr := g.skipped[name]
	p.mu.Unlock()
	if skipErr != nil {
		return nil, skipped(s, skipErr)
	}
	return p.connectKey(ctx, g, key, s)
}

// renew returns the connection that replaces c, whose server forgot its
// session, dialing it unless another caller did: the spec's new session,
// on which a request the server never executed is sent again.
func (p *pool) renew(ctx context.Context, c *conn) (*conn, error) {
	p.mu.Lock()
	g := p.gen
	p.mu.Unlock()
	if g != c.gen {
		return nil, serverError(c.server, "dial", ErrClosed) // Close came meanwhile
	}
	return p.connectKey(ctx, g, c.key, c.cfg)
}

// connectKey is connect for the connection key of g: the live connection,
// or one shared dial of a new one.
func (p *pool) connectKey(ctx context.Context, g *generation, key connKey, s *Server) (*conn, error) {
	p.mu.Lock()
	cur := g.conns[key]
	shared := key.principal != "" && p.sharesLocked(g, key.server, s)
	p.mu.Unlock()
	if shared {
		return p.joinShared(ctx, g, key, s)
	}
	attempts, renewal := 1, false
	if cur != nil {
		if cur.alive() {
			if key.principal != "" {
				cur.use.touch()
			}
			return cur, nil
		}
		policy := s.Retry
		switch {
		case policy != nil:
			attempts = max(policy.MaxAttempts, 1)
		case cur.sessionMissing(): // a forgotten session is started anew, policy or not
			renewal = true
		case cur.carries(): // a stateless server's: no session to lose, dialed again
		default:
			return nil, serverError(key.server, "connect", fmt.Errorf("connection lost: %w", cur.staysDown(cur.cause())))
		}
	}
	// The first caller's span is the parent of the dial's; a shared
	// session's handshake carries the first caller's credentials.
	var dialFor *conn
	if key.principal == "" && s.perPrincipal() {
		dialFor, _ = ctx.Value(requesterKey{}).(*conn)
	}
	ch := g.dials.DoChan(key.flight(), func() (any, error) {
		c, err := p.open(trace.SpanContextFromContext(ctx), g, key, s, attempts, dialFor)
		if err != nil && dialFor != nil {
			err = &carrierDialError{by: dialFor, err: err}
		}
		return c, err
	})
	select {
	case r := <-ch:
		if r.Err != nil && renewal {
			return nil, fmt.Errorf("%w (the server forgot its session and no new one could be started: set Server.Retry to retry the dial)", r.Err)
		}
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*conn), nil
	case <-ctx.Done():
		return nil, serverError(key.server, "dial", ctx.Err())
	}
}

// skipped wraps err, why discovery skipped server s, with the settings
// that would have it dialed again: until Close, only a retry policy does.
func skipped(s *Server, err error) error {
	if s.Retry != nil {
		return err
	}
	return fmt.Errorf("%w (skipped by Config.OnConnectionError until Close: set Server.Retry to dial it again at a later discovery)", err)
}

// open is the shared dial of the connection key of g: up to attempts
// dials, apart by the retry policy's Delay; dialFor is the principal's
// conn whose credentials the handshake of a shared session carries (nil
// for others). It records the new connection as key's (and admits it, for
// a principal, noting a stateless server for the next principals), or the
// failure for Status.
func (p *pool) open(parent trace.SpanContext, g *generation, key connKey, s *Server, attempts int, dialFor *conn) (*conn, error) {
	// The generation owns the dial: Close cancels it and waits.
	if !g.enter() {
		return nil, serverError(key.server, "dial", ErrClosed)
	}
	defer g.wg.Done()
	p.mu.Lock()
	if cur := g.conns[key]; cur != nil && cur.alive() {
		p.mu.Unlock()
		return cur, nil
	}
	p.mu.Unlock()
	var c *conn
	var err error
	for i := range attempts {
		if i > 0 {
			if err := sleep(g.ctx, s.Retry.Delay); err != nil {
				break
			}
		}
		p.dials[key.server].Add(1)
		c, err = p.dialer.tracedDial(parent, g, key, s, dialFor)
		p.metrics.Dialed(key.server, err)
		if err == nil {
			break
		}
	}
	if err != nil {
		p.recordFailure(g, key.server, err)
		return nil, err
	}
	if c.carries() && !c.stateless() {
		// The server keeps sessions after all: its principals get their own.
		c.close()
		p.mu.Lock()
		g.stateless[key.server] = false
		p.mu.Unlock()
		return nil, errStateful
	}
	p.mu.Lock()
	if g.ended() {
		p.mu.Unlock()
		c.close() // lost the race with Close
		return nil, serverError(key.server, "dial", ErrClosed)
	}
	n := news{attached: c, subsDropped: c.attach()}
	c.since = time.Now()
	old, replaced := g.conns[key]
	if replaced && old.sessionMissing() {
		old.next.Store(c) // the calls of old's tools go on here
	}
	g.conns[key] = c
	if key.principal != "" {
		c.use.touch()
		p.admitLocked(g, c, replaced, &n)
		if _, known := g.stateless[key.server]; !known && c.stateless() {
			g.stateless[key.server] = true
		}
	}
	p.mu.Unlock()
	p.tell(&n)
	return c, nil
}

// news is what a holder of pool.mu has to tell user code (the Logger, the
// meter) of what it did. It is told (pool.tell) once the lock is released,
// as database/sql calls out only after putConnDBLocked: user code may call
// the Adapter back (a log handler that asks for Status), and must find
// pool.mu free.
type news struct {
	attached    *conn      // a connection attached (conn.attach); nil: none
	subsDropped bool       // the subscriptions held for its key were dropped
	evicted     []eviction // per-principal connections evicted (evictLocked)
}

// An eviction is a per-principal connection of server evicted, and why.
type eviction struct{ server, why string }

// tell tells user code the news. pool.mu must not be held.
func (p *pool) tell(n *news) {
	if c := n.attached; c != nil {
		c.attached(n.subsDropped)
	}
	for _, e := range n.evicted {
		p.logger.Debug("mcpadapter: per-principal connection evicted", "server", e.server, "reason", e.why)
	}
}

// live returns the live connection of ctx to the server s, named name, or
// nil. It dials nothing.
func (p *pool) live(ctx context.Context, name string, s *Server) *conn {
	key, err := connKeyOf(ctx, name, s)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen == nil {
		return nil
	}
	if c := p.gen.conns[key]; c != nil && c.usable("") == nil {
		return c
	}
	return nil
}

// sessionConns returns the connections of server in g whose session is
// session: the shared one, or those of its principals.
func (p *pool) sessionConns(g *generation, server string, s *Server, session *mcp.ClientSession) []*conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !s.perPrincipal() {
		if c := g.conns[connKey{server: server}]; c != nil && c.session == session {
			return []*conn{c}
		}
		return nil
	}
	var conns []*conn
	for k, c := range g.conns {
		if k.server == server && c.session == session {
			conns = append(conns, c)
		}
	}
	return conns
}

// maxSkipBackoff caps the wait before a skipped server with a retry
// policy is dialed again.
const maxSkipBackoff = 10 * time.Minute

// A skipRetry is when a skipped server with a Retry policy
// is dialed again: its failed dials in a row, and the time of the next.
type skipRetry struct {
	failures int
	next     time.Time
}

// skip remembers that server s was skipped in g after a failed dial. A
// server with a retry policy is tried again by a discovery after the
// policy's Delay, doubled at each failure in a row up to maxSkipBackoff;
// one without stays skipped until Close.
func (p *pool) skip(g *generation, server string, s *Server, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if g.ended() {
		return
	}
	g.skipped[server] = err
	if policy := s.Retry; policy != nil {
		r := g.retries[server]
		if r == nil {
			r = new(skipRetry)
			g.retries[server] = r
		}
		r.failures++
		wait := policy.Delay
		for i := 1; i < r.failures && wait < maxSkipBackoff; i++ {
			wait *= 2
		}
		r.next = time.Now().Add(min(wait, maxSkipBackoff))
	}
}

// stillSkipped reports whether discovery passes server over: it was
// skipped, and has no retry due (see skip). A due server is no longer
// skipped: this discovery dials it.
func (p *pool) stillSkipped(g *generation, server string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, skipped := g.skipped[server]; !skipped {
		return false
	}
	if r := g.retries[server]; r != nil && !time.Now().Before(r.next) {
		delete(g.skipped, server)
		return false
	}
	return true
}

// answered records that server answered a discovery of g: its failures in
// a row, for the backoff of skip, are over.
func (p *pool) answered(g *generation, server string) {
	p.mu.Lock()
	delete(g.retries, server)
	p.mu.Unlock()
}

// recordFailure records a failed dial of server in g, for Status.
func (p *pool) recordFailure(g *generation, server string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !g.ended() {
		g.failures[server] = failure{err: err, since: time.Now()}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// perPrincipal reports whether s needs a connection per principal.
func (s *Server) perPrincipal() bool { return s.HeadersFor != nil || s.OAuthFor != nil }

// A connKey names a connection: its server, and the principal it acts for
// ("" for a shared server).
type connKey struct{ server, principal string }

// flight is the key of the connection's dial in the generation's
// singleflight group. Server names hold no '/'.
func (k connKey) flight() string {
	if k.principal == "" {
		return k.server
	}
	return k.server + "/" + k.principal
}

// connKeyOf returns the key of the connection that ctx uses for server s.
func connKeyOf(ctx context.Context, name string, s *Server) (connKey, error) {
	if !s.perPrincipal() {
		return connKey{server: name}, nil
	}
	p := principalFrom(ctx)
	if p == "" {
		return connKey{}, serverError(name, "dial", errNoPrincipal)
	}
	return connKey{server: name, principal: p}, nil
}

// server returns the configuration of the named server.
func (a *Adapter) server(name string) (*Server, error) {
	s, ok := a.cfg.Servers[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownServer, name)
	}
	return &s, nil
}

// connect returns a live connection of ctx to the named server, dialing it
// if needed. Concurrent callers share one dial; each waits on its own ctx.
func (a *Adapter) connect(ctx context.Context, name string) (*conn, error) {
	s, err := a.server(name)
	if err != nil {
		return nil, err
	}
	return a.pool.connect(ctx, name, s)
}

// onConn runs read, a request that is safe to send twice (a list, a read),
// on the live connection of ctx to the named server. When it fails because
// the session ended before its end was recorded (a Streamable HTTP server
// that forgot the session, or a death a Retry policy
// redials), it runs once more on the connection that replaces it, as the
// spec's new session. dialErr reports that the error is the dial's: the
// server could not be reached.
func (a *Adapter) onConn(ctx context.Context, name string, read func(*conn) error) (dialErr bool, err error) {
	c, err := a.connect(ctx, name)
	if err != nil {
		return true, err
	}
	if err = read(c); err != nil && c.diedRedialable() {
		if c, err = a.connect(ctx, name); err != nil {
			return true, err
		}
		err = read(c)
	}
	return false, err
}
