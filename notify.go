package mcpadapter

// The notifier: server notifications handed to user code. Change callbacks
// (OnListChanged, OnResourceUpdated), server logs (the Logger) and the
// progress of tool calls (OnProgress, WithProgress), with, for progress, a
// registry of the calls in flight keyed by the connection each went out on,
// and, for resource updates, the principals subscribed on each connection.
//
// go-sdk calls a client's notification handlers (newClient, dial.go) on
// the connection's reader, in order, and queues the notifications behind a handler without bound. So
// the handlers do at once only what cannot wait (drop a stale cached list,
// reset a call's idle timeout) and queue the rest, the call of the Logger,
// OnProgress, OnListChanged or OnResourceUpdated, as a delivery.
//
// Every delivery is made for one (server, principal): a log or list change
// for the principal of the connection it came on ("" for a shared server),
// a progress notification for the principal of its call, a resource update
// for each principal subscribed to its URI. Each such key has a queue of
// its own, of at most notifyQueueSize deliveries and notifyQueueBytes of
// their payload, and one goroutine of the generation, running while a
// queue is not empty (an idle generation keeps none), makes the deliveries
// one at a time, taking the non-empty queues in turn. A key's deliveries
// are made in the order they came, and a flood of one key fills its own
// queue only: past its bound a delivery is dropped, counted and logged
// (the 1st, 2nd, 4th... drop of a key and kind, so a flood makes a few
// lines), while a quiet key's next delivery waits behind one of the
// flood's at most. All the queues together hold at most notifyQueues times
// one queue's bound (a delivery finding its queue empty is always taken),
// so slow user code cannot grow memory whatever the servers send. Close
// drops what waits and waits for the delivery in progress.

import (
	"context"
	"crypto/rand"
	"log/slog"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"

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
	counts  deliveryCounts

	// mu guards progress, the progress registries of the live
	// connections, every progressSinks in it, late, and subscribed. It is
	// taken last: pool.mu may be held around it (conn.attach, under
	// pool.open), never the other way round.
	mu         sync.Mutex
	progress   map[*mcp.ClientSession]*progressSinks
	late       [lateSinks]lateSink // the sinks of finished requests, oldest at lateN
	lateN      int
	subscribed map[*mcp.ClientSession]*subscriptions // of the live connections with any
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

// A delivery is one call of user code, waiting in a deliveryQueue.
type delivery struct {
	run  func()
	kind deliveryKind
	size int // bytes of payload it holds
	key  any // when not nil, a waiting delivery with an equal key makes this one redundant
}

// A deliveryQueue holds the deliveries of one (server, principal) not yet
// made, in order.
type deliveryQueue struct {
	waiting []delivery
	keys    map[any]bool // of the waiting deliveries that have one
	bytes   int          // of the waiting deliveries' payload
}

// deliveryQueues are a generation's deliveries not yet made, by the
// (server, principal) they are for.
type deliveryQueues struct {
	mu      sync.Mutex // guards the fields below
	queues  map[connKey]*deliveryQueue
	turns   []connKey // the keys of the queues, each once, the next to serve first
	waiting int       // deliveries in every queue
	bytes   int       // of their payload
	running bool      // a goroutine delivers
}

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
		n.deliver(g, key, delivery{run: func() { f(c) }, kind: changeDelivery, key: c})
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
	principals := n.subscribers(req.Session, uri)
	if len(principals) == 0 {
		n.dropped(key, unsolicitedUpdate, "uri", uri)
		return
	}
	for _, p := range principals {
		u := ResourceUpdate{Server: key.server, Principal: p, URI: uri}
		n.deliver(g, connKey{server: key.server, principal: p}, delivery{run: func() { f(u) }, kind: changeDelivery, size: len(uri), key: u})
	}
}

// serverLog queues a server's log message, which came on the connection
// of key, for the Logger.
func (n *notifier) serverLog(g *generation, key connKey, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	attrs := key.attrs()
	n.deliver(g, key, delivery{kind: logDelivery, size: len(p.Logger) + payload(p.Data), run: func() {
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

// deliver queues d for key in g, starting g's delivering goroutine if
// none runs. It never blocks on user code. A d made redundant by a waiting
// one is not queued; a d past the bounds is dropped and counted; a d of a
// closed g is dropped uncounted, as Close drops what waits.
func (n *notifier) deliver(g *generation, key connKey, d delivery) {
	qs := &g.deliveries
	qs.mu.Lock()
	q := qs.queues[key]
	if q != nil && d.key != nil && q.keys[d.key] {
		qs.mu.Unlock()
		return
	}
	if q != nil && (len(q.waiting) >= notifyQueueSize || q.bytes+d.size > notifyQueueBytes ||
		qs.waiting >= notifyQueues*notifyQueueSize || qs.bytes+d.size > notifyQueues*notifyQueueBytes) {
		qs.mu.Unlock()
		n.dropped(key, d.kind)
		return
	}
	if q == nil {
		if qs.queues == nil {
			qs.queues = map[connKey]*deliveryQueue{}
		}
		q = &deliveryQueue{}
		qs.queues[key] = q
		qs.turns = append(qs.turns, key)
	}
	q.waiting = append(q.waiting, d)
	q.bytes += d.size
	qs.waiting++
	qs.bytes += d.size
	if d.key != nil {
		if q.keys == nil {
			q.keys = map[any]bool{}
		}
		q.keys[d.key] = true
	}
	start := !qs.running
	qs.running = true
	qs.mu.Unlock()
	if !start {
		return
	}
	if !g.enter() {
		qs.next(true) // closed: drops d, and the others
		return
	}
	go func() {
		defer g.wg.Done()
		for {
			key, d, ok := qs.next(g.ctx.Err() != nil)
			if !ok {
				return
			}
			n.counts.add(key, func(c *Deliveries) *int64 { return &c.Delivered })
			d.run()
		}
	}()
}

// next takes the first waiting delivery of the queue whose turn it is,
// and passes the turn on. When there is none, or on stop, it reports
// false, and qs is left empty and idle.
func (qs *deliveryQueues) next(stop bool) (connKey, delivery, bool) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if stop || len(qs.turns) == 0 {
		qs.queues, qs.turns, qs.waiting, qs.bytes, qs.running = nil, nil, 0, 0, false
		return connKey{}, delivery{}, false
	}
	key := qs.turns[0]
	qs.turns = qs.turns[1:]
	q := qs.queues[key]
	d := q.waiting[0]
	q.waiting[0] = delivery{}
	q.waiting = q.waiting[1:]
	q.bytes -= d.size
	qs.waiting--
	qs.bytes -= d.size
	if d.key != nil {
		delete(q.keys, d.key)
	}
	if len(q.waiting) == 0 {
		delete(qs.queues, key)
	} else {
		qs.turns = append(qs.turns, key)
	}
	return key, d, true
}

// A deliveryKind is what a delivery hands to user code, for its counts.
type deliveryKind int

const (
	logDelivery       deliveryKind = iota // a server log message, to the Logger
	progressDelivery                      // a progress notification, to OnProgress and WithProgress
	changeDelivery                        // a list change or resource update, to OnListChanged or OnResourceUpdated
	unsolicitedUpdate                     // a resource update of a URI not subscribed to, never delivered
)

// dropCount returns the counter of c that counts the drops of k.
func (k deliveryKind) dropCount(c *Deliveries) *int64 {
	switch k {
	case logDelivery:
		return &c.DroppedLogs
	case progressDelivery:
		return &c.DroppedProgress
	case changeDelivery:
		return &c.DroppedChanges
	default:
		return &c.UnsolicitedUpdates
	}
}

// dropWarnings are the log messages of the drops of each kind.
var dropWarnings = [...]string{
	logDelivery:       "mcpadapter: dropped server log messages (the Logger is slower than the server)",
	progressDelivery:  "mcpadapter: dropped progress notifications (OnProgress is slower than the server)",
	changeDelivery:    "mcpadapter: dropped change notifications (the change callback is slower than the servers)",
	unsolicitedUpdate: "mcpadapter: dropped resource updates of a URI not subscribed to",
}

// dropped counts a dropped delivery of kind for key, and logs it, with
// attrs, at the key's 1st, 2nd, 4th, 8th... drop of kind.
func (n *notifier) dropped(key connKey, kind deliveryKind, attrs ...any) {
	n.metrics.Dropped(key.server)
	if c := n.counts.add(key, kind.dropCount); bits.OnesCount64(uint64(c)) == 1 {
		n.logger.Warn(dropWarnings[kind], append(append(key.attrs(), attrs...), "dropped", c)...)
	}
}

// countedPrincipals bounds the (server, principal) pairs whose counts are
// kept apart: past it, those counted least recently are forgotten.
const countedPrincipals = 1024

// deliveryCounts are the [Deliveries] of an Adapter's servers since New:
// by server, and by (server, principal) for the most recent pairs.
type deliveryCounts struct {
	mu      sync.Mutex             // guards the fields below
	servers map[string]*Deliveries // by server; made by New, never changed
	keys    map[connKey]*keyCounts // at most countedPrincipals
	tick    uint64                 // counts the calls of add
}

// keyCounts are the counts of one (server, principal).
type keyCounts struct {
	Deliveries
	used uint64 // the tick of the last count
}

// add adds one to the counter field selects, of key and of its server,
// and returns key's new count.
func (c *deliveryCounts) add(key connKey, field func(*Deliveries) *int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	*field(c.servers[key.server])++
	k := c.keys[key]
	if k == nil {
		if len(c.keys) >= countedPrincipals {
			c.forgetOldest()
		}
		if c.keys == nil {
			c.keys = map[connKey]*keyCounts{}
		}
		k = &keyCounts{}
		c.keys[key] = k
	}
	k.used = c.tick
	*field(&k.Deliveries)++
	return *field(&k.Deliveries)
}

// forgetOldest drops the counts of the key counted least recently. c.mu
// is held.
func (c *deliveryCounts) forgetOldest() {
	var oldest connKey
	var used uint64
	for key, k := range c.keys {
		if used == 0 || k.used < used {
			oldest, used = key, k.used
		}
	}
	delete(c.keys, oldest)
}

// of returns the counts of server, and of its principals (nil when none
// is counted).
func (c *deliveryCounts) of(server string) (Deliveries, map[string]Deliveries) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var byPrincipal map[string]Deliveries
	for key, k := range c.keys {
		if key.server == server && key.principal != "" {
			if byPrincipal == nil {
				byPrincipal = map[string]Deliveries{}
			}
			byPrincipal[key.principal] = k.Deliveries
		}
	}
	return *c.servers[server], byPrincipal
}

// A subscriptions holds the resource subscriptions of one connection:
// the principals subscribed to each URI. A URI's subscription at the
// server lasts while a principal holds it.
type subscriptions struct {
	// turn is held, by a send into it, while the subscriptions change and
	// their request is sent: the requests of one connection go one at a
	// time, so that the server's subscription follows the principals'.
	turn  chan struct{}
	mu    sync.Mutex          // guards byURI
	byURI map[string][]string // the principals subscribed to each URI, in the order they subscribed
}

// subscriptions returns the subscriptions of c, made if create is set, or
// nil: c is released, or, without create, has none.
func (n *notifier) subscriptions(c *conn, create bool) *subscriptions {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.subscribed[c.session]
	if s == nil && create && n.progress[c.session] != nil {
		if n.subscribed == nil {
			n.subscribed = map[*mcp.ClientSession]*subscriptions{}
		}
		s = &subscriptions{turn: make(chan struct{}, 1), byURI: map[string][]string{}}
		n.subscribed[c.session] = s
	}
	return s
}

// subscribers returns the principals subscribed to uri on session.
func (n *notifier) subscribers(session *mcp.ClientSession, uri string) []string {
	n.mu.Lock()
	s := n.subscribed[session]
	n.mu.Unlock()
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.byURI[uri])
}

// take waits for the turn to change s, up to ctx's end.
func (s *subscriptions) take(ctx context.Context) error {
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// give ends the turn that take began.
func (s *subscriptions) give() { <-s.turn }

// add subscribes principal to uri, and reports whether it was not yet.
func (s *subscriptions) add(uri, principal string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.byURI[uri], principal) {
		return false
	}
	s.byURI[uri] = append(s.byURI[uri], principal)
	return true
}

// remove unsubscribes principal from uri. It reports whether principal was
// subscribed, and whether the last subscriber of uri went.
func (s *subscriptions) remove(uri, principal string) (was, last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.byURI[uri]
	i := slices.Index(ps, principal)
	if i < 0 {
		return false, false
	}
	if ps = slices.Delete(ps, i, i+1); len(ps) == 0 {
		delete(s.byURI, uri)
		return true, true
	}
	s.byURI[uri] = ps
	return true, false
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
// OnProgress; while it blocks, up to 256 notifications of the server for
// the principal of ctx wait, and later ones are dropped (counted in
// [ServerStatus.Deliveries], and logged).
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
// included, and c's subscriptions.
func (n *notifier) release(c *conn) {
	n.mu.Lock()
	defer n.mu.Unlock()
	sinks := n.progress[c.session]
	delete(n.progress, c.session)
	delete(n.subscribed, c.session)
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
// the callbacks, which may be slow, for the principal of the call.
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
	n.deliver(g, connKey{server: server, principal: PrincipalFrom(s.ctx)}, delivery{kind: progressDelivery, size: len(ev.Message), run: func() {
		if f != nil {
			f(s.ctx, ev)
		}
		if s.f != nil {
			s.f(ev)
		}
	}})
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
