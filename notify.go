package mcpadapter

// The notifier: server notifications handed to user code. Change callbacks
// (OnListChanged, OnResourceUpdated), server logs (the Logger) and the
// progress of tool calls (OnProgress, WithProgress), with, for progress, a
// registry of the calls in flight keyed by the connection each went out on.
//
// go-sdk calls a client's notification handlers (newClient, dial.go) on
// the connection's reader, in order, and queues the notifications behind a handler without bound. So
// the handlers do at once only what cannot wait (drop a stale cached list,
// reset a call's idle timeout) and queue the rest, the call of the Logger,
// OnProgress, OnListChanged or OnResourceUpdated, in a deliveryQueue.
//
// A queue runs its deliveries one at a time, in the order they came, on a
// goroutine of the generation that runs while the queue is not empty: an
// idle queue keeps none. It holds at most notifyQueueSize deliveries and
// notifyQueueBytes of their payload; past that a delivery is dropped,
// counted and logged (the 1st, 2nd, 4th... drop, so a flood makes a few
// lines), and a server flooding notifications at slow user code cannot grow
// memory. Close drops what waits and waits for the delivery in progress.
//
// Each server has a queue for its log and progress notifications: per
// server, not per connection, so that the bound holds whatever the number
// of principals. The change callbacks of every server share one queue,
// since they run one at a time (Config.OnListChanged); there an equal
// change already waiting makes a new one redundant.

import (
	"context"
	"crypto/rand"
	"log/slog"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A notifier hands the notifications of an Adapter's servers to user code.
// Its queues are the generation's (pool.go), each with its own lock.
type notifier struct {
	cfg    *Config // the Adapter's
	logger *slog.Logger

	droppedLogs     map[string]*atomic.Int64 // server log messages dropped, per server; the map is never changed
	droppedProgress atomic.Int64             // progress notifications dropped
	droppedChanges  atomic.Int64             // change callbacks dropped

	// mu guards progress, the progress registries of the live
	// connections, every progressSinks in it, and late. It is taken last:
	// pool.mu may be held around it (conn.attach, under pool.open), never
	// the other way round.
	mu       sync.Mutex
	progress map[*mcp.ClientSession]*progressSinks
	late     [lateSinks]lateSink // the sinks of finished requests, oldest at lateN
	lateN    int
}

// The bounds of one queue: the deliveries waiting, and the bytes of their
// payload (log data, progress messages, resource URIs). A delivery finding
// the queue empty is taken whatever its size (MaxMessageBytes bounds it).
const (
	notifyQueueSize  = 256
	notifyQueueBytes = 1 << 20
)

// A delivery is one call of user code, waiting in a deliveryQueue.
type delivery struct {
	run  func()
	size int // bytes of payload it holds
	key  any // when not nil, a waiting delivery with an equal key makes this one redundant
}

// A deliveryQueue holds the deliveries not yet made, in order.
type deliveryQueue struct {
	mu      sync.Mutex // guards waiting, keys, bytes and running
	waiting []delivery
	keys    map[any]bool // of the waiting deliveries that have one
	bytes   int          // of the waiting deliveries' payload
	running bool         // a goroutine delivers
}

// ListKind names one of a server's lists, in [Config.OnListChanged].
type ListKind string

// The lists a server announces changes of.
const (
	ToolList     ListKind = "tools"
	ResourceList ListKind = "resources" // resources and resource templates
	PromptList   ListKind = "prompts"
)

// singular is the kind's name for one item ("tool", ...), for logs.
func (k ListKind) singular() string { return strings.TrimSuffix(string(k), "s") }

// A notice is a change callback's key: a list of kind, or the resource uri
// when kind is "".
type notice struct {
	server string
	kind   ListKind
	uri    string
}

// listChanged queues [Config.OnListChanged] for a change of server's
// list of kind.
func (n *notifier) listChanged(g *generation, server string, kind ListKind) {
	if f := n.cfg.OnListChanged; f != nil {
		n.changed(g, server, delivery{run: func() { f(server, kind) }, key: notice{server: server, kind: kind}})
	}
}

// resourceUpdated handles a server's notifications/resources/updated.
func (n *notifier) resourceUpdated(g *generation, server string, req *mcp.ResourceUpdatedNotificationRequest) {
	if f := n.cfg.OnResourceUpdated; f != nil && req.Params != nil {
		uri := req.Params.URI
		n.changed(g, server, delivery{run: func() { f(server, uri) }, size: len(uri), key: notice{server: server, uri: uri}})
	}
}

// changed queues the change callback d of server.
func (n *notifier) changed(g *generation, server string, d delivery) {
	if !n.deliver(g, &g.changes, d) {
		n.dropped(&n.droppedChanges, "mcpadapter: dropped change notifications (the change callback is slower than the servers)", server)
	}
}

// serverLog queues a server's log message for the Logger.
func (n *notifier) serverLog(g *generation, server string, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	if !n.deliver(g, g.deliveries[server], delivery{size: len(p.Logger) + payload(p.Data), run: func() {
		n.logger.Log(context.Background(), slogLevel(p.Level), "mcpadapter: server log", "server", server, "logger", p.Logger, "data", p.Data)
	}}) {
		n.dropped(n.droppedLogs[server], "mcpadapter: dropped server log messages (the Logger is slower than the server)", server)
	}
}

// dropped counts a dropped delivery of server in count, and logs warning at
// the 1st, 2nd, 4th, 8th... drop.
func (n *notifier) dropped(count *atomic.Int64, warning, server string) {
	if c := count.Add(1); bits.OnesCount64(uint64(c)) == 1 {
		n.logger.Warn(warning, "server", server, "dropped", c)
	}
}

// deliver queues d on q, starting q's goroutine in g if none runs. It
// never blocks on user code, and reports false when d was dropped: q is
// full, or g closed. A d made redundant by a waiting one counts as queued.
func (n *notifier) deliver(g *generation, q *deliveryQueue, d delivery) bool {
	q.mu.Lock()
	if d.key != nil && q.keys[d.key] {
		q.mu.Unlock()
		return true
	}
	if len(q.waiting) > 0 && (len(q.waiting) >= notifyQueueSize || q.bytes+d.size > notifyQueueBytes) {
		q.mu.Unlock()
		return false
	}
	q.waiting = append(q.waiting, d)
	q.bytes += d.size
	if d.key != nil {
		if q.keys == nil {
			q.keys = map[any]bool{}
		}
		q.keys[d.key] = true
	}
	start := !q.running
	q.running = true
	q.mu.Unlock()
	if !start {
		return true
	}
	if !g.enter() {
		q.next(true) // closed: drops d, and the others
		return false
	}
	go func() {
		defer g.wg.Done()
		for {
			d, ok := q.next(g.ctx.Err() != nil)
			if !ok {
				return
			}
			d.run()
		}
	}()
	return true
}

// next takes the first waiting delivery of q. When there is none, or on
// stop, it reports false, and q is left empty and idle.
func (q *deliveryQueue) next(stop bool) (delivery, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if stop || len(q.waiting) == 0 {
		q.waiting, q.keys, q.bytes, q.running = nil, nil, 0, false
		return delivery{}, false
	}
	d := q.waiting[0]
	q.waiting[0] = delivery{}
	q.waiting = q.waiting[1:]
	q.bytes -= d.size
	if d.key != nil {
		delete(q.keys, d.key)
	}
	return d, true
}

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

// A progressSinks is the progress registry of one connection: it maps the
// progress tokens of the requests in flight on it to their sinks. The
// notifier keeps one per live connection (notifier.progress), so that a
// notification counts only when it comes on the connection its request
// went out on: a server cannot reach the calls made on another principal's
// connection, nor on another server's, with a token it learnt. Tokens are
// random, 128 bits: they cannot be guessed either.
//
// A connection's registry lives from its attach to its release
// (notifier.attach, notifier.release): a released connection is
// unreachable from the notifier, whatever calls on it were still
// finishing.
//
// go-sdk hands notifications to their handler apart from responses, so the
// progress that a server sent just before its answer can be handled just
// after the call returned. The registries therefore keep the sinks of the
// last lateSinks finished requests too (notifier.late): memory stays
// bounded by the requests in flight plus that many.
type progressSinks struct {
	byToken map[string]*progressSink
}

// lateSinks is how many finished requests still get their late progress.
const lateSinks = 64

// A lateSink is the sink of a finished request: its token in the registry
// of its connection.
type lateSink struct {
	sinks *progressSinks
	token string
}

// attach starts the progress registry of c's requests.
func (n *notifier) attach(c *conn) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.progress == nil {
		n.progress = make(map[*mcp.ClientSession]*progressSinks)
	}
	n.progress[c.session] = &progressSinks{byToken: make(map[string]*progressSink)}
}

// release drops the progress registry of c's requests, late ones
// included.
func (n *notifier) release(c *conn) {
	n.mu.Lock()
	defer n.mu.Unlock()
	sinks := n.progress[c.session]
	delete(n.progress, c.session)
	for i, l := range n.late {
		if l.sinks == sinks {
			n.late[i] = lateSink{}
		}
	}
}

// register registers s, a sink of a request on c, under a new token and
// returns the token and the func that marks the request finished. When c
// is not attached, or released, no notification can reach s: it is not
// kept.
func (n *notifier) register(c *conn, s *progressSink) (string, func()) {
	token := rand.Text()
	n.mu.Lock()
	defer n.mu.Unlock()
	sinks := n.progress[c.session]
	if sinks == nil {
		return token, func() {}
	}
	sinks.byToken[token] = s
	return token, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		s.touch = nil // the request's timer is gone
		if n.progress[c.session] != sinks {
			return // released: nothing can reach s any more
		}
		i := n.lateN % lateSinks
		if old := n.late[i]; old.sinks != nil {
			delete(old.sinks.byToken, old.token)
		}
		n.late[i] = lateSink{sinks: sinks, token: token}
		n.lateN++
	}
}

// lookup returns the sink of token for a notification that came on
// session, or nil, and the func that resets its request's idle timeout
// while it runs.
func (n *notifier) lookup(session *mcp.ClientSession, token any) (*progressSink, func()) {
	t, ok := token.(string)
	if !ok {
		return nil, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	sinks := n.progress[session]
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
// session in g: it resets the request's idle timeout at once, and queues
// the callbacks, which may be slow, behind the server's other
// notifications.
func (n *notifier) progressed(g *generation, server string, session *mcp.ClientSession, p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	s, touch := n.lookup(session, p.ProgressToken)
	if s == nil {
		return
	}
	if touch != nil {
		touch()
	}
	ev := s.p
	ev.Progress, ev.Total, ev.Message = p.Progress, p.Total, p.Message
	f := n.cfg.OnProgress
	if f == nil && s.f == nil {
		return
	}
	if !n.deliver(g, g.deliveries[server], delivery{size: len(ev.Message), run: func() {
		if f != nil {
			f(s.ctx, ev)
		}
		if s.f != nil {
			s.f(ev)
		}
	}}) {
		n.dropped(&n.droppedProgress, "mcpadapter: dropped progress notifications (OnProgress is slower than the server)", server)
	}
}

// wantsProgress reports whether a call under ctx asks for a progress token.
func (n *notifier) wantsProgress(ctx context.Context) bool {
	if n.cfg.OnProgress != nil || n.cfg.ResetTimeoutOnProgress {
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

// payload estimates the bytes a decoded JSON value holds.
func payload(v any) int {
	n := 16
	switch v := v.(type) {
	case string:
		n += len(v)
	case []any:
		for _, e := range v {
			n += payload(e)
		}
	case map[string]any:
		for k, e := range v {
			n += len(k) + payload(e)
		}
	}
	return n
}

// perServer returns a new T for each server name: a counter, a queue.
func perServer[T any](servers map[string]Server) map[string]*T {
	m := make(map[string]*T, len(servers))
	for name := range servers {
		m[name] = new(T)
	}
	return m
}
