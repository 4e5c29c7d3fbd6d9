package mcpadapter

// Delivery of server notifications to user code. go-sdk calls a client's
// notification handlers (newClient, eras.go) on the connection's reader, in
// order, and queues the notifications behind a handler without bound. So
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
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
	mu      sync.Mutex
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

// listChanged handles a server's list_changed notification of kind on
// session: the cached list goes, then [Config.OnListChanged] is called.
func (a *Adapter) listChanged(g *generation, server string, kind ListKind, session *mcp.ClientSession) {
	a.invalidateList(g, server, kind, session)
	if f := a.cfg.OnListChanged; f != nil {
		a.changed(g, server, delivery{run: func() { f(server, kind) }, key: notice{server: server, kind: kind}})
	}
}

// resourceUpdated handles a server's notifications/resources/updated.
func (a *Adapter) resourceUpdated(g *generation, server string, req *mcp.ResourceUpdatedNotificationRequest) {
	if f := a.cfg.OnResourceUpdated; f != nil && req.Params != nil {
		uri := req.Params.URI
		a.changed(g, server, delivery{run: func() { f(server, uri) }, size: len(uri), key: notice{server: server, uri: uri}})
	}
}

// changed queues the change callback d of server.
func (a *Adapter) changed(g *generation, server string, d delivery) {
	if !a.deliver(g, &g.changes, d) {
		a.dropped(&a.droppedChanges, "mcpadapter: dropped change notifications (the change callback is slower than the servers)", server)
	}
}

// serverLog queues a server's log message for the Logger.
func (a *Adapter) serverLog(g *generation, server string, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	if !a.deliver(g, g.deliveries[server], delivery{size: len(p.Logger) + payload(p.Data), run: func() {
		a.logger.Log(context.Background(), slogLevel(p.Level), "mcpadapter: server log", "server", server, "logger", p.Logger, "data", p.Data)
	}}) {
		a.dropped(a.droppedLogs[server], "mcpadapter: dropped server log messages (the Logger is slower than the server)", server)
	}
}

// dropped counts a dropped delivery of server in n, and logs warning at
// the 1st, 2nd, 4th, 8th... drop.
func (a *Adapter) dropped(n *atomic.Int64, warning, server string) {
	if c := n.Add(1); bits.OnesCount64(uint64(c)) == 1 {
		a.logger.Warn(warning, "server", server, "dropped", c)
	}
}

// deliver queues d on q, starting q's goroutine in g if none runs. It
// never blocks on user code, and reports false when d was dropped: q is
// full, or g closed. A d made redundant by a waiting one counts as queued.
func (a *Adapter) deliver(g *generation, q *deliveryQueue, d delivery) bool {
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
	if !a.enter(g) {
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
