package mcpadapter

// The notifier: server notifications handed to user code. Change callbacks
// (OnListChanged, OnResourceUpdated), server logs (the Logger) and the
// progress of tool calls (WithProgress), with, for progress, a
// registry of the calls in flight keyed by the connection each went out on,
// and, for resource updates, the principals subscribed on each connection.
//
// go-sdk calls a client's notification handlers (newClient, dial.go) one
// at a time, in order, on a goroutine apart from the connection's reader,
// which hands on the answers to requests meanwhile, and queues the
// notifications behind a handler without bound. So the handlers do at
// once only what cannot wait (drop a stale cached list) and queue the
// rest, the call of the Logger, OnListChanged or OnResourceUpdated, as a
// delivery. Progress comes a shorter way, in the order the connection
// reads it: the connection's screen (internal/wire) hands each progress
// notification to progressed before the messages after it, the request's
// answer among them, are passed on. progressed resets the request's idle
// timeout and queues the call of WithProgress, and the request, once
// answered, waits for what it queued (progressSink.end): a call's
// progress reaches WithProgress before the call returns, none after.
//
// Every delivery is made for one (server, principal): a log or list change
// for the principal of the connection it came on ("" for a shared server),
// a progress notification for the principal of its call, a resource update
// for each principal subscribed to its URI. Each such key has a queue of
// its own (internal/deliver), of at most notifyQueueSize deliveries and
// notifyQueueBytes of their payload, served by a goroutine of the
// generation of its own while any waits, so that a slow callback holds up
// its own key alone; past its bound a delivery is dropped,
// counted and logged (the 1st, 2nd, 4th... drop of a key and kind, so a
// flood makes a few lines). All the queues together hold at most
// notifyQueues times one queue's bound. Close drops what waits and waits
// for the delivery in progress.

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"

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

	// conns holds, from a connection's attach to its release, its
	// subscriptions (connRegistry). The progress sinks of its requests
	// are its session's (link.progress). (Lock order: pool.go.)
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

// deliver queues it, a delivery of kind, for key in g, starting the
// delivering goroutine of key if none runs. It never blocks on user code.
// An it made redundant by a waiting one is not queued; an it past the
// bounds is dropped and counted; an it of a closed g is dropped uncounted,
// as Close drops what waits. It reports whether it dropped it.
func (n *notifier) deliver(g *generation, key connKey, kind deliveryKind, it deliver.Item) (dropped bool) {
	qs, dk := &g.deliveries, deliver.Key{Server: key.server, Principal: key.principal}
	start, dropped := qs.Push(dk, it, notifyBounds)
	if dropped {
		n.dropped(key, kind)
		return true
	}
	if !start {
		return false
	}
	if !g.enter() {
		qs.Stop(dk) // closed: drops it, and the others of key
		return true
	}
	go func() { // not g.spawn: one closure per delivery started, not two (BenchmarkInvokeProgress)
		defer g.wg.Done()
		qs.Serve(dk, func() bool { return g.ctx.Err() != nil }, func() {
			n.counts.add(key, func(c *Deliveries) *int64 { return &c.Delivered })
		})
	}()
	return false
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
// them, and every notification that came before the call's answer reaches
// f before the call returns (Invoke, Call, HandleToolCalls, a task
// followed or collected), none after: the call waits for f while f keeps
// up (returns within a second of the last), up to its deadline (the tool
// timeout, or ctx's); past that the notifications still waiting are
// dropped and counted, as Close drops them. A call of f already running
// then is waited for, with no bound but the call's deadline: without one,
// only f's return ends the wait, so f must return, and must not wait for
// the call, nor for another call of the same principal that reports
// progress. When the deadline passes, ctx is cancelled or the Adapter
// closes while f runs, the call returns at once and f may still be
// running: code that ends what f writes to when the call returns (an
// HTTP response) must then wait for f itself. While f blocks, up to 256
// notifications of the server for the principal of ctx wait, and later
// ones are dropped (counted in [ServerStatus.Deliveries], and logged);
// other principals' notifications do not wait for it. Under a context
// that has one already, both are called, the outer first: to hear the
// progress of every call, add a [Middleware] that returns
// next(WithProgress(ctx, f), req).
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	if prev, _ := ctx.Value(progressKey{}).(func(Progress)); prev != nil && f != nil {
		inner := f
		f = func(p Progress) { prev(p); inner(p) }
	}
	return context.WithValue(ctx, progressKey{}, f)
}

// A progressSink receives the progress notifications of one request, from
// its registration on its connection (notifier.register) to its end.
type progressSink struct {
	ctx   context.Context // the request's: its principal, and the deadline that bounds its end
	p     Progress        // server, tool and call id
	f     func(Progress)  // WithProgress's, or nil
	touch func()          // resets the idle timeout, or nil

	mu      sync.Mutex    // guards the fields below
	queued  int           // calls of f queued, neither run nor dropped
	running bool          // one of them is running
	wake    chan struct{} // told when one ends, while end or settle waits; nil before
	ended   bool          // the request ended: the calls still queued do not run
}

// progressStall bounds the wait of a request's end for the calls of
// WithProgress it queued: the request waits while they keep up, each
// ending within progressStall of the last (or of the answer); past that,
// those not yet started are dropped, and only the one running, if any,
// is waited for (progressSink.settle).
const progressStall = time.Second

// attach starts the registry of c's subscriptions, and restores, in the
// background, the subscriptions the connection of c's key that ended
// before it held. It runs under pool.mu (conn.attach), so it calls no user
// code: it reports whether it dropped those subscriptions, since c's
// session does not support them, for conn.attached to log.
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

// release drops c's subscriptions, which the next connection of its key
// restores unless the adapter closed c (Close, eviction).
func (n *notifier) release(c *conn) {
	if subs := n.conns.subscriptions(c.session, false); subs != nil && !c.closing.Load() {
		c.gen.held.put(c.key, subs.all()) // the session ended under the adapter: the server forgot it, or Server.Retry dials it again
	}
	n.conns.release(c.session)
}

// register registers s, the sink of a request on c, under a new token and
// returns the token and the func that ends the request, once it has its
// answer or failed: it waits for the calls of s.f queued (progressSink.end),
// drops, counted, those it did not wait for, and waits for the one
// running then (progressSink.settle). No notification reaches s.f after.
func (n *notifier) register(c *conn, s *progressSink) (string, func()) {
	token := rand.Text()
	return token, n.registerAs(c, token, s)
}

// registerAs is register under token, a token already sent: a live
// interrupt's resume (live.go) listens again to the token its request was
// sent with. It returns the func that ends the request.
func (n *notifier) registerAs(c *conn, token string, s *progressSink) func() {
	c.progress.add(token, s)
	return func() {
		c.progress.remove(token)
		if s.end(c.life) && c.life.Err() == nil { // Close drops what waits, uncounted
			key := s.key(c)
			for range c.gen.deliveries.Drop(deliver.Key{Server: key.server, Principal: key.principal}, s) {
				n.dropped(key, progressDelivery)
			}
		}
		s.settle(c.life)
	}
}

// progressed handles a progress notification that came on c, params its
// raw params, as c's screen reads it: in the order of c's messages,
// before those after it are passed on (notifier).
func (n *notifier) progressed(c *conn, params []byte) {
	var p struct { // mcp.ProgressNotificationParams's, without the _meta it decodes
		Token    any     `json:"progressToken"`
		Progress float64 `json:"progress"`
		Total    float64 `json:"total"`
		Message  string  `json:"message"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if token, ok := p.Token.(string); ok {
		n.progress(c, token, p.Progress, p.Total, p.Message)
	}
}

// progress reports the progress of the request of token on c, which a
// notification, or the status of the task the request made, tells: it
// resets the request's idle timeout at once, and queues the call of its
// WithProgress, which may be slow, for the principal of the request.
func (n *notifier) progress(c *conn, token string, progress, total float64, message string) {
	s := c.progress.lookup(token)
	if s == nil || s.f == nil || !s.queue() {
		return
	}
	ev := s.p
	ev.Progress, ev.Total, ev.Message = progress, total, message
	if n.deliver(c.gen, s.key(c), progressDelivery, deliver.Item{Size: len(message), Run: func() { s.run(ev) }, Owner: s}) {
		s.done(false)
	}
}

// key is the key of the deliveries to s, of a request on c: for the
// request's principal.
func (s *progressSink) key(c *conn) connKey {
	return connKey{server: c.server, principal: principalFrom(s.ctx)}
}

// queue counts a call of f queued; it reports false once the request
// ended.
func (s *progressSink) queue() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	s.queued++
	return true
}

// run is a queued call of f with ev, unless the request ended meanwhile.
func (s *progressSink) run(ev Progress) {
	s.mu.Lock()
	run := !s.ended
	s.running = run
	s.mu.Unlock()
	if run {
		s.f(ev)
	}
	s.done(run)
}

// done counts a queued call of f run or dropped; ran: it ran, and is no
// longer running (the calls of one sink run one at a time, on its key's
// queue).
func (s *progressSink) done(ran bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued--
	if ran {
		s.running = false
	}
	if s.wake != nil {
		select {
		case s.wake <- struct{}{}:
		default: // end has yet to look
		}
	}
}

// end ends the request of s, which its connection no longer reaches: it
// waits for the calls of f queued to run while they keep up (progressStall),
// until s.ctx ends or life (the connection's) does. It reports whether
// calls are still queued then: they will not be made, but the one running,
// if any, which settle waits for.
func (s *progressSink) end(life context.Context) (behind bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queued > 0 {
		s.wake = make(chan struct{}, 1)
		stall := time.NewTimer(progressStall)
		defer stall.Stop()
		for s.queued > 0 {
			s.mu.Unlock()
			keptUp := false
			select {
			case <-s.wake:
				keptUp = true
				stall.Reset(progressStall)
			case <-s.ctx.Done():
			case <-life.Done():
			case <-stall.C:
			}
			s.mu.Lock()
			if !keptUp {
				break
			}
		}
	}
	s.ended = true
	return s.queued > 0
}

// settle waits, once end has, for the call of f running, if any, until it
// returns, s.ctx ends or life does: without a deadline, a call of f that
// never returns holds its request (WithProgress says so).
func (s *progressSink) settle(life context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.running && s.ctx.Err() == nil && life.Err() == nil {
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-s.ctx.Done():
		case <-life.Done():
		}
		s.mu.Lock()
	}
}

// A progressTable holds the progress sinks of the requests in flight on
// one session, by token: a notification reaches only a request made on
// the session it came on (its screen hands it to notifier.progressed),
// not another server's, nor (but on a session the principals of a
// stateless server share, share.go) another principal's, with a token it
// learnt. Tokens are random, 128 bits: they cannot be guessed either. The zero
// progressTable is empty.
type progressTable struct {
	mu    sync.Mutex // guards sinks, and calls of their touch
	sinks map[string]*progressSink
}

// add registers s under token.
func (t *progressTable) add(token string, s *progressSink) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sinks == nil {
		t.sinks = make(map[string]*progressSink)
	}
	t.sinks[token] = s
}

// remove forgets the sink of token.
func (t *progressTable) remove(token string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.sinks, token)
}

// lookup returns the sink of token, its request's idle timeout reset, or
// nil.
func (t *progressTable) lookup(token string) *progressSink {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sinks[token]
	if s != nil && s.touch != nil {
		s.touch() // under mu: never once the request ended (remove)
	}
	return s
}

// perServer returns a new T for each server name: a counter, a queue.
func perServer[T any](servers map[string]Server) map[string]*T {
	m := make(map[string]*T, len(servers))
	for name := range servers {
		m[name] = new(T)
	}
	return m
}

// A connRegistry holds what the principals of each live connection (its
// go-sdk session) registered: their resource subscriptions. An entry lives
// from attach to release: a released connection is unreachable from the
// registry. The zero connRegistry is empty.
type connRegistry struct {
	mu    sync.Mutex                                // guards conns
	conns map[*mcp.ClientSession]*connSubscriptions // of the attached connections; nil until a principal subscribes
}

// attach starts the registry of c.
func (r *connRegistry) attach(c *mcp.ClientSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = make(map[*mcp.ClientSession]*connSubscriptions)
	}
	r.conns[c] = nil
}

// release drops the registry of c: its subscriptions.
func (r *connRegistry) release(c *mcp.ClientSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.conns, c)
}

// subscriptions returns the subscriptions of c, made if create is set, or
// nil: c is released, or, without create, has none.
func (r *connRegistry) subscriptions(c *mcp.ClientSession, create bool) *connSubscriptions {
	r.mu.Lock()
	defer r.mu.Unlock()
	subs, attached := r.conns[c]
	if attached && subs == nil && create {
		subs = &connSubscriptions{turn: make(chan struct{}, 1), byURI: map[string][]string{}}
		r.conns[c] = subs
	}
	return subs
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
