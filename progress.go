package mcpadapter

// Progress: the notifications/progress of a tool call, delivered to
// Config.OnProgress and to a per-call func (WithProgress), and, with
// Config.ResetTimeoutOnProgress, a call timeout that counts idle time.

import (
	"context"
	"crypto/rand"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress is one progress notification of a tool call.
type Progress struct {
	Server  string // the server's name in [Config.Servers]
	Tool    string // the adapter's (possibly prefixed) tool name
	MCPName string // the server's own tool name
	CallID  string // as in [CallRequest]
	// Progress is the progress so far; it increases with every
	// notification, even when the total is unknown.
	Progress float64
	Total    float64 // 0 when the server did not say
	Message  string
}

// progressKey is the context key of [WithProgress].
type progressKey struct{}

// WithProgress returns a copy of ctx whose tool calls report each progress
// notification to f, besides [Config.OnProgress]. f is called on a
// goroutine of the adapter's, in the order the server sent them, after
// OnProgress; while it blocks, up to 256 notifications of the server wait,
// and later ones are dropped (and logged).
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// A progressSink receives the progress notifications of one request.
type progressSink struct {
	ctx   context.Context // the caller's, for Config.OnProgress
	p     Progress        // server, tool and call id
	f     func(Progress)  // WithProgress's, or nil
	touch func()          // resets the idle timeout, or nil
}

// A progressRegistry maps the progress tokens of the requests in flight to
// their sinks, per connection: a notification counts only when it comes
// on the connection its request went out on, so that a server cannot reach
// the calls made on another principal's connection, nor on another
// server's, with a token it learnt. Tokens are random, 128 bits: they
// cannot be guessed either.
//
// A connection's sinks are registered from its attach to its release
// (attach, release): a released connection is unreachable from the
// registry, whatever calls on it were still finishing.
//
// go-sdk hands notifications to their handler apart from responses, so the
// progress that a server sent just before its answer can be handled just
// after the call returned. The registry therefore keeps the sinks of each
// connection's last lateSinks finished requests too: memory stays bounded by
// the requests in flight plus that many per live connection.
type progressRegistry struct {
	mu    sync.Mutex
	conns map[*mcp.ClientSession]*progressSinks // guarded by mu, as the sinks are
}

// The progressSinks of one connection.
type progressSinks struct {
	byToken map[string]*progressSink
	late    []string // tokens of finished requests: a ring of at most lateSinks, oldest at lateN
	lateN   int
}

// lateSinks is how many finished requests of a connection still get their
// late progress.
const lateSinks = 64

// attach starts the registry of c's requests.
func (r *progressRegistry) attach(c *conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = make(map[*mcp.ClientSession]*progressSinks)
	}
	r.conns[c.session] = &progressSinks{byToken: make(map[string]*progressSink)}
}

// release drops the registry of c's requests.
func (r *progressRegistry) release(c *conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.conns, c.session)
}

// add registers s, a sink of a request on c, under a new token and returns
// the token and the func that marks the request finished. When c is not
// attached, or released, no notification can reach s: it is not kept.
func (r *progressRegistry) add(c *conn, s *progressSink) (string, func()) {
	token := rand.Text()
	r.mu.Lock()
	defer r.mu.Unlock()
	sinks := r.conns[c.session]
	if sinks == nil {
		return token, func() {}
	}
	sinks.byToken[token] = s
	return token, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		s.touch = nil // the request's timer is gone
		if len(sinks.late) < lateSinks {
			sinks.late = append(sinks.late, token)
			return
		}
		i := sinks.lateN % lateSinks
		delete(sinks.byToken, sinks.late[i])
		sinks.late[i] = token
		sinks.lateN++
	}
}

// lookup returns the sink of token for a notification that came on
// session, or nil, and the func that resets its request's idle timeout
// while it runs.
func (r *progressRegistry) lookup(session *mcp.ClientSession, token any) (*progressSink, func()) {
	t, ok := token.(string)
	if !ok {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	sinks := r.conns[session]
	if sinks == nil {
		return nil, nil
	}
	s := sinks.byToken[t]
	if s == nil {
		return nil, nil
	}
	return s, s.touch
}

// progressed delivers a progress notification that came from server on
// session in g: it resets
// the request's idle timeout at once, and queues the callbacks (deliver.go),
// which may be slow, behind the server's other notifications.
func (a *Adapter) progressed(g *generation, server string, session *mcp.ClientSession, p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	s, touch := a.progress.lookup(session, p.ProgressToken)
	if s == nil {
		return
	}
	if touch != nil {
		touch()
	}
	ev := s.p
	ev.Progress, ev.Total, ev.Message = p.Progress, p.Total, p.Message
	f := a.cfg.OnProgress
	if f == nil && s.f == nil {
		return
	}
	if !a.deliver(g, g.deliveries[server], delivery{size: len(ev.Message), run: func() {
		if f != nil {
			f(s.ctx, ev)
		}
		if s.f != nil {
			s.f(ev)
		}
	}}) {
		a.dropped(&a.droppedProgress, "mcpadapter: dropped progress notifications (OnProgress is slower than the server)", server)
	}
}

// wantsProgress reports whether a call under ctx asks for a progress token.
func (a *Adapter) wantsProgress(ctx context.Context) bool {
	if a.cfg.OnProgress != nil || a.cfg.ResetTimeoutOnProgress {
		return true
	}
	f, _ := ctx.Value(progressKey{}).(func(Progress))
	return f != nil
}

// errNoProgress is the cause of a request that timed out while idle.
type errNoProgress struct{ idle time.Duration }

func (e *errNoProgress) Error() string {
	return "no progress for " + e.idle.String() + ": " + context.DeadlineExceeded.Error()
}

func (e *errNoProgress) Unwrap() error { return context.DeadlineExceeded }

// idleContext returns ctx cancelled when idle passes without a call of
// touch, and at max after the start when max is positive. release frees it.
func idleContext(ctx context.Context, idle, max time.Duration) (_ context.Context, touch func(), release func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stopMax := func() {}
	if max > 0 {
		ctx, stopMax = context.WithTimeout(ctx, max)
	}
	timer := time.AfterFunc(idle, func() { cancel(&errNoProgress{idle: idle}) })
	return ctx, func() { timer.Reset(idle) }, func() {
		timer.Stop()
		stopMax()
		cancel(nil)
	}
}
