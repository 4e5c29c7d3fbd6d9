package mcpadapter

// Change callbacks. The SDK calls the notification handlers of newClient
// (eras.go) on its reader; they drop what the notification makes stale
// from the catalog (cache.go) and queue a notice, never waiting for user
// code. One goroutine of the generation at a time hands the queued notices
// to Config.OnListChanged and Config.OnResourceUpdated, in order; it runs
// while there are notices and Close ends it, dropping those not yet
// delivered and waiting for a callback in progress.

import (
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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

// Bounds on the notices waiting for a slow callback: past them a notice
// is dropped (and logged), so that a server flooding notifications cannot
// grow the queue without limit.
const (
	maxNotices     = 1024
	maxNoticeBytes = 1 << 20 // of resource URIs
)

// A notice is one change to hand to a callback: a list of kind, or the
// resource uri when kind is "".
type notice struct {
	server string
	kind   ListKind
	uri    string
}

// A noticeQueue holds the notices of one generation not yet delivered.
// Equal notices waiting together are delivered once: a callback that runs
// after the last of them sees every change they announce.
type noticeQueue struct {
	mu      sync.Mutex
	queue   []notice
	queued  map[notice]bool
	bytes   int  // of the URIs in queue
	running bool // a deliver goroutine is running
}

// listChanged handles a server's list_changed notification of kind on
// session: the cached list goes, then [Config.OnListChanged] is called.
func (a *Adapter) listChanged(g *generation, server string, kind ListKind, session *mcp.ClientSession) {
	a.invalidateList(g, server, kind, session)
	if a.cfg.OnListChanged != nil {
		a.notify(g, notice{server: server, kind: kind})
	}
}

// resourceUpdated handles a server's notifications/resources/updated.
func (a *Adapter) resourceUpdated(g *generation, server string, req *mcp.ResourceUpdatedNotificationRequest) {
	if a.cfg.OnResourceUpdated != nil && req.Params != nil {
		a.notify(g, notice{server: server, uri: req.Params.URI})
	}
}

// notify queues n for delivery, starting the generation's deliver
// goroutine if none runs. It never blocks on a callback.
func (a *Adapter) notify(g *generation, n notice) {
	q := &g.notices
	q.mu.Lock()
	if q.queued[n] {
		q.mu.Unlock()
		return
	}
	if len(q.queue) >= maxNotices || q.bytes+len(n.uri) > maxNoticeBytes {
		q.mu.Unlock()
		a.logger.Warn("mcpadapter: change callback too slow, notification dropped", "server", n.server, "list", n.kind)
		return
	}
	if q.queued == nil {
		q.queued = map[notice]bool{}
	}
	q.queue = append(q.queue, n)
	q.queued[n] = true
	q.bytes += len(n.uri)
	start := !q.running
	q.running = true
	q.mu.Unlock()
	if !start {
		return
	}
	if !a.enter(g) {
		q.drop() // closed: nothing is delivered any more
		return
	}
	go a.deliver(g)
}

// deliver hands the queued notices of g to the callbacks, one at a time,
// until the queue is empty or g is closed.
func (a *Adapter) deliver(g *generation) {
	defer g.wg.Done()
	q := &g.notices
	for {
		q.mu.Lock()
		if len(q.queue) == 0 || g.ctx.Err() != nil {
			q.dropLocked()
			q.mu.Unlock()
			return
		}
		n := q.queue[0]
		q.queue = q.queue[1:]
		delete(q.queued, n)
		q.bytes -= len(n.uri)
		q.mu.Unlock()
		if n.kind != "" {
			a.cfg.OnListChanged(n.server, n.kind)
		} else {
			a.cfg.OnResourceUpdated(n.server, n.uri)
		}
	}
}

// drop forgets every queued notice and marks the queue idle.
func (q *noticeQueue) drop() {
	q.mu.Lock()
	q.dropLocked()
	q.mu.Unlock()
}

// dropLocked is drop with q.mu held.
func (q *noticeQueue) dropLocked() {
	q.queue, q.queued, q.bytes, q.running = nil, nil, 0, false
}
