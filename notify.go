package mcpadapter

// The notifier: server notifications handed to user code. Change callbacks
// (OnListChanged, OnResourceUpdated), server logs (the Logger) and the
// progress of tool calls (WithProgress), with, for progress, a
// registry of the calls in flight keyed by the connection each went out on,
// and, for resource updates, the principals subscribed on each connection.
//
// go-sdk calls a client's notification handlers (newClient, dial.go) on
// the connection's reader, in order, and queues the notifications behind a handler without bound. So
// the handlers do at once only what cannot wait (drop a stale cached list,
// reset a call's idle timeout) and queue the rest, the call of the Logger,
// WithProgress, OnListChanged or OnResourceUpdated, as a delivery.
//
// Every delivery is made for one (server, principal): a log or list change
// for the principal of the connection it came on ("" for a shared server),
// a progress notification for the principal of its call, a resource update
// for each principal subscribed to its URI. Each such key has a queue of
// its own (internal/deliver), of at most notifyQueueSize deliveries and
// notifyQueueBytes of their payload, served in turn by one goroutine of
// the generation while any waits; past its bound a delivery is dropped,
// counted and logged (the 1st, 2nd, 4th... drop of a key and kind, so a
// flood makes a few lines). All the queues together hold at most
// notifyQueues times one queue's bound. Close drops what waits and waits
// for the delivery in progress.

import (
	"context"
	"crypto/rand"
	"log/slog"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/mcpadapter/mcpadapter/internal/deliver"
	"github.com/mcpadapter/mcpadapter/internal/observe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A notifier hands the notifications of an Adapter's servers to user code.
// Its queues are the generation's (pool.go); the counts of what it
// delivered and dropped are its own, since New.
type notifier struct {
	cfg     *Config // the Adapter's
	logger  *slog.Logger
	metrics *observe.Metrics // the Adapter's; nil: none
	counts  *deliveryCounts  // status.go

	// conns holds, from a connection's attach to its release, the
	// progress sinks of its requests by token and its subscriptions
	// (connRegistry): a progress notification reaches only a call
	// made on the connection it came on, not another principal's, nor
	// another server's. (Lock order: pool.go.)
	conns connRegistry
}

// The bounds of one key's queue: the deliveries waiting, and the bytes of
// their payload (log data, progress messages, resource URIs); and how many
// such bounds all the queues of a generation share. A delivery finding its
// queue empty is taken whatever its size (MaxMessageBytes bounds it).
const (
	notifyQueueSize  = 256
	notifyQueueBytes = 1 << 20
	notifyQueues     = 16
)

// notifyBounds are the bounds of a generation's delivery queues.
var notifyBounds = deliver.Bounds{Size: notifyQueueSize, Bytes: notifyQueueBytes, Queues: notifyQueues}

// ListKind names one of a server's lists, in a [ListChange].
type ListKind string

// The lists a server announces changes of.
const (
	ToolList     ListKind = "tools"
	ResourceList ListKind = "resources" // resources and resource templates
	PromptList   ListKind = "prompts"
)

// singular is the kind's name for one item ("tool", ...), for logs.
func (k ListKind) singular() string { return strings.TrimSuffix(string(k), "s") }

// A ListChange is a server's announcement that one of its lists changed,
// as [Config.OnListChanged] gets it.
type ListChange struct {
	Server string // the server's name in [Config.Servers]
	// Principal is the principal of the connection the announcement came
	// on (see [WithPrincipal]): a per-principal server announces to each
	// principal's connection apart. "" for a shared server.
	Principal string
	Kind      ListKind
}

// A ResourceUpdate is a server's announcement that a resource changed, as
// [Config.OnResourceUpdated] gets it: one per principal subscribed to the
// resource on the connection it came on.
type ResourceUpdate struct {
	Server string // the server's name in [Config.Servers]
	// Principal is the principal that subscribed ([WithPrincipal] of the
	// [Adapter.SubscribeResource] call), "" for a call without one.
	Principal string
	URI       string
}

// listChanged queues [Config.OnListChanged] for a change of a list of kind
// that came on the connection of key.
func (n *notifier) listChanged(g *generation, key connKey, kind ListKind) {
	if f := n.cfg.OnListChanged; f != nil {
		c := ListChange{Server: key.server, Principal: key.principal, Kind: kind}
		n.deliver(g, key, changeDelivery, deliver.Item{Run: func() { f(c) }, Key: c})
	}
}

// resourceUpdated handles a server's notifications/resources/updated that
// came on the connection of key: an update for each principal subscribed
// to its URI there. An update nobody subscribed to is dropped, counted and
// logged.
func (n *notifier) resourceUpdated(g *generation, key connKey, req *mcp.ResourceUpdatedNotificationRequest) {
	f := n.cfg.OnResourceUpdated
	if f == nil || req.Params == nil {
		return
	}
	uri := req.Params.URI
	principals := n.conns.subscribers(req.Session, uri)
	if len(principals) == 0 {
		n.dropped(key, unsolicitedUpdate, "uri", uri)
		return
	}
	for _, p := range principals {
		u := ResourceUpdate{Server: key.server, Principal: p, URI: uri}
		n.deliver(g, connKey{server: key.server, principal: p}, changeDelivery, deliver.Item{Run: func() { f(u) }, Size: len(uri), Key: u})
	}
}

// serverLog queues a server's log message, which came on the connection
// of key, for the Logger.
func (n *notifier) serverLog(g *generation, key connKey, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	attrs := key.attrs()
	n.deliver(g, key, logDelivery, deliver.Item{Size: len(p.Logger) + deliver.Size(p.Data), Run: func() {
		n.logger.Log(context.Background(), slogLevel(p.Level), "mcpadapter: server log", append(attrs, "logger", p.Logger, "data", p.Data)...)
	}})
}

// attrs are the log attributes naming k: its server, and its principal
// when it has one.
func (k connKey) attrs() []any {
	if k.principal == "" {
		return []any{"server", k.server}
	}
	return []any{"server", k.server, "principal", k.principal}
}

// deliver queues it, a delivery of kind, for key in g, starting g's
// delivering goroutine if none runs. It never blocks on user code. An it
// made redundant by a waiting one is not queued; an it past the bounds is
// dropped and counted; an it of a closed g is dropped uncounted, as Close
// drops what waits.
func (n *notifier) deliver(g *generation, key connKey, kind deliveryKind, it deliver.Item) {
	qs := &g.deliveries
	start, dropped := qs.Push(deliver.Key{Server: key.server, Principal: key.principal}, it, notifyBounds)
	if dropped {
		n.dropped(key, kind)
	}
	if !start {
		return
	}
	if !g.enter() {
		qs.Stop() // closed: drops it, and the others
		return
	}
	go func() {
		defer g.wg.Done()
		qs.Serve(func() bool { return g.ctx.Err() != nil }, func(key deliver.Key) {
			n.counts.add(connKey{key.Server, key.Principal}, func(c *Deliveries) *int64 { return &c.Delivered })
		})
	}()
}

// A deliveryKind is what a delivery hands to user code, for its counts.
type deliveryKind int

const (
	logDelivery       deliveryKind = iota // a server log message, to the Logger
	progressDelivery                      // a progress notification, to WithProgress
	changeDelivery                        // a list change or resource update, to OnListChanged or OnResourceUpdated
	unsolicitedUpdate                     // a resource update of a URI not subscribed to, never delivered
)

// dropsOf are, for each kind, the counter of [Deliveries] that counts its
// drops, and the log message of its drops.
var dropsOf = [...]struct {
	count   func(*Deliveries) *int64
	warning string
}{
	logDelivery: {func(c *Deliveries) *int64 { return &c.DroppedLogs },
		"mcpadapter: dropped server log messages (the Logger is slower than the server)"},
	progressDelivery: {func(c *Deliveries) *int64 { return &c.DroppedProgress },
		"mcpadapter: dropped progress notifications (WithProgress is slower than the server)"},
	changeDelivery: {func(c *Deliveries) *int64 { return &c.DroppedChanges },
		"mcpadapter: dropped change notifications (the change callback is slower than the servers)"},
	unsolicitedUpdate: {func(c *Deliveries) *int64 { return &c.UnsolicitedUpdates },
		"mcpadapter: dropped resource updates of a URI not subscribed to"},
}

// dropped counts a dropped delivery of kind for key, and logs it, with
// attrs, at the key's 1st, 2nd, 4th, 8th... drop of kind.
func (n *notifier) dropped(key connKey, kind deliveryKind, attrs ...any) {
	n.metrics.Dropped(key.server)
	if c := n.counts.add(key, dropsOf[kind].count); bits.OnesCount64(uint64(c)) == 1 {
		n.logger.Warn(dropsOf[kind].warning, append(append(key.attrs(), attrs...), "dropped", c)...)
	}
}

// countedPrincipals bounds the (server, principal) pairs whose counts are
// kept apart: past it, those counted least recently are forgotten.
const countedPrincipals = 1024

// deliveries returns the [Deliveries] of server since New, and those of
// its principals counted most recently (nil when none is counted).
func (n *notifier) deliveries(server string) (Deliveries, map[string]Deliveries) {
	var byPrincipal map[string]Deliveries
	all := n.counts.of(server, func(key connKey, d Deliveries) {
		if key.principal != "" {
			if byPrincipal == nil {
				byPrincipal = map[string]Deliveries{}
			}
			byPrincipal[key.principal] = d
		}
	})
	return all, byPrincipal
}

// subscriptions returns the subscriptions of c, made if create is set, or
// nil: c is released, or, without create, has none.
func (n *notifier) subscriptions(c *conn, create bool) *connSubscriptions {
	return n.conns.subscriptions(c.session, create)
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
// notification to f (a progress token is then sent with each call). f is
// called on a goroutine of the adapter's, in the order the server sent
// them; while it blocks, up to 256 notifications of the server for
// the principal of ctx wait, and later ones are dropped (counted in
// [ServerStatus.Deliveries], and logged). Under a context that has one
// already, both are called, the outer first: to hear the progress of
// every call, add a [Middleware] that returns
// next(WithProgress(ctx, f), req).
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	if prev, _ := ctx.Value(progressKey{}).(func(Progress)); prev != nil && f != nil {
		inner := f
		f = func(p Progress) { prev(p); inner(p) }
	}
	return context.WithValue(ctx, progressKey{}, f)
}

// A progressSink receives the progress notifications of one request.
type progressSink struct {
	ctx   context.Context // the caller's: its principal
	p     Progress        // server, tool and call id
	f     func(Progress)  // WithProgress's, or nil
	touch func()          // resets the idle timeout, or nil
}

// attach starts the progress registry of c's requests, and restores, in
// the background, the subscriptions the connection of c's key that ended
// before it held. It runs under pool.mu (conn.attach), so it calls no user
// code: it reports whether it dropped those subscriptions, since c's
// session does not support them, for subsDropped to log.
func (n *notifier) attach(c *conn) (dropped bool) {
	n.conns.attach(c.session)
	held := c.gen.held.take(c.key)
	if held == nil {
		return false
	}
	if caps := c.info.Capabilities; caps == nil || caps.Resources == nil || !caps.Resources.Subscribe {
		return true
	}
	subs := n.conns.subscriptions(c.session, true)
	c.gen.background(func() {
		ctx, done := c.callContext(c.life)
		defer done()
		subs.restore(ctx, held, func(ctx context.Context, uri string) error {
			return c.session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		}, func(uri string, err error) {
			n.logger.Warn("mcpadapter: a resource subscription could not be made again on a new session", "server", c.server, "uri", uri, "error", err)
		})
	})
	return false
}

// subsDropped logs that attach dropped the subscriptions held for the key
// of c, whose session does not support them.
func (n *notifier) subsDropped(c *conn) {
	n.logger.Warn("mcpadapter: resource subscriptions dropped: the new session does not support them", "server", c.server)
}

// release drops the progress registry of c's requests, late ones
// included, and c's subscriptions, which the next connection of its key
// restores unless the adapter closed c (Close, eviction).
func (n *notifier) release(c *conn) {
	if subs := n.conns.subscriptions(c.session, false); subs != nil && !c.closing.Load() {
		c.gen.held.put(c.key, subs.all()) // the session ended under the adapter: the server forgot it, or Server.Retry dials it again
	}
	n.conns.release(c.session)
}

// register registers s, a sink of a request on c, under a new token and
// returns the token and the func that marks the request finished. When c
// is not attached, or released, no notification can reach s: it is not
// kept.
func (n *notifier) register(c *conn, s *progressSink) (string, func()) {
	return n.conns.register(c.session, s, s.touch)
}

// progressed delivers a progress notification that came from server on
// session in g: it resets the request's idle timeout at once, and queues
// the callbacks, which may be slow, for the principal of the call.
func (n *notifier) progressed(g *generation, server string, session *mcp.ClientSession, p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	s, touch, ok := n.conns.lookup(session, p.ProgressToken)
	if !ok {
		return
	}
	if touch != nil {
		touch()
	}
	ev := s.p
	ev.Progress, ev.Total, ev.Message = p.Progress, p.Total, p.Message
	if s.f == nil {
		return
	}
	n.deliver(g, connKey{server: server, principal: principalFrom(s.ctx)}, progressDelivery, deliver.Item{Size: len(ev.Message), Run: func() { s.f(ev) }})
}

// perServer returns a new T for each server name: a counter, a queue.
func perServer[T any](servers map[string]Server) map[string]*T {
	m := make(map[string]*T, len(servers))
	for name := range servers {
		m[name] = new(T)
	}
	return m
}

// A connRegistry holds what the requests and principals of each live
// connection (its go-sdk session) registered: the progress sinks of the
// requests in flight on it, by progress token, and its resource subscriptions. A
// notification counts only when it comes on the connection its request
// went out on: a server cannot reach the requests made on another
// connection with a token it learnt. Tokens are random, 128 bits: they
// cannot be guessed either.
//
// A connection's entry lives from attach to release: a released
// connection is unreachable from the registry, whatever requests on it
// were still finishing.
//
// A connection may hand notifications to their handler apart from
// responses (go-sdk does), so that the progress a server sent just before
// its answer is handled just after the request returned. The registry
// therefore keeps the sinks of the last lateSinks finished requests too:
// memory stays bounded by the requests in flight plus that many.
//
// The zero connRegistry is empty.
type connRegistry struct {
	mu    sync.Mutex                        // guards the fields below, and the tokens of every entry
	conns map[*mcp.ClientSession]*connEntry // of the attached connections
	late  [lateSinks]lateSink               // the sinks of finished requests, oldest at lateN
	lateN int
}

// lateSinks is how many finished requests still get their late progress.
const lateSinks = 64

// A connEntry is the registry of one connection.
type connEntry struct {
	byToken map[string]*registered
	subs    *connSubscriptions // nil until a principal subscribes
}

// A registered request: its sink, and the func that resets its idle
// timeout (nil once it finished).
type registered struct {
	s     *progressSink
	touch func()
}

// A lateSink is a finished request: its token in the entry of its
// connection.
type lateSink struct {
	e     *connEntry
	token string
}

// attach starts the registry of c.
func (r *connRegistry) attach(c *mcp.ClientSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = make(map[*mcp.ClientSession]*connEntry)
	}
	r.conns[c] = &connEntry{byToken: make(map[string]*registered)}
}

// release drops the registry of c: its sinks, late ones included, and its
// subscriptions.
func (r *connRegistry) release(c *mcp.ClientSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.conns[c]
	delete(r.conns, c)
	for i, l := range r.late {
		if l.e == e {
			r.late[i] = lateSink{}
		}
	}
}

// register registers s, the sink of a request on c whose idle timeout
// touch resets (nil: none), under a new token, and returns the token and
// the func that marks the request finished. When c is not attached, or
// released, no notification can reach s: it is not kept.
func (r *connRegistry) register(c *mcp.ClientSession, s *progressSink, touch func()) (string, func()) {
	token := rand.Text()
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.conns[c]
	if e == nil {
		return token, func() {}
	}
	k := &registered{s: s, touch: touch}
	e.byToken[token] = k
	return token, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		k.touch = nil // the request's timer is gone
		if r.conns[c] != e {
			return // released: nothing can reach s any more
		}
		i := r.lateN % lateSinks
		if old := r.late[i]; old.e != nil {
			delete(old.e.byToken, old.token)
		}
		r.late[i] = lateSink{e: e, token: token}
		r.lateN++
	}
}

// lookup returns the sink of token for a notification that came on c, and
// the func that resets its request's idle timeout while it runs (nil:
// none); ok is false when there is no such sink.
func (r *connRegistry) lookup(c *mcp.ClientSession, token any) (s *progressSink, touch func(), ok bool) {
	t, isString := token.(string)
	if !isString {
		return s, nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.conns[c]
	if e == nil {
		return s, nil, false
	}
	k := e.byToken[t]
	if k == nil {
		return s, nil, false
	}
	return k.s, k.touch, true
}

// subscriptions returns the subscriptions of c, made if create is set, or
// nil: c is released, or, without create, has none.
func (r *connRegistry) subscriptions(c *mcp.ClientSession, create bool) *connSubscriptions {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.conns[c]
	if e == nil {
		return nil
	}
	if e.subs == nil && create {
		e.subs = &connSubscriptions{turn: make(chan struct{}, 1), byURI: map[string][]string{}}
	}
	return e.subs
}

// subscribers returns the principals subscribed to uri on c.
func (r *connRegistry) subscribers(c *mcp.ClientSession, uri string) []string {
	s := r.subscriptions(c, false)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.byURI[uri])
}
