package mcpadapter

// Status: what a health endpoint reports, in the spirit of sql.DB.Stats.

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"
)

// ServerState is the state of one server's connection in a [ServerStatus].
type ServerState string

// The states of a server.
const (
	// ServerNotDialed: no discovery has dialed the server since New or
	// the last [Adapter.Close] (for a per-principal server: no principal
	// has a connection, e.g. after they were closed for idleness).
	ServerNotDialed ServerState = "not dialed"
	// ServerConnected: the server has a live session, of era
	// [ServerStatus.Era].
	ServerConnected ServerState = "connected"
	// ServerSkipped: [Config.OnConnectionError] skipped the server after it
	// failed to dial ([ServerStatus.Err] says why). Later discoveries pass
	// it over, unless it has a Retry policy.
	ServerSkipped ServerState = "skipped"
	// ServerFailed: the last dial failed, or the session ended
	// ([ServerStatus.Err] says why); the next discovery may dial again
	// (see [Server.Retry] and [Server.Retry]).
	ServerFailed ServerState = "failed"
)

// Status is a snapshot of an [Adapter]'s servers, from [Adapter.Status].
type Status struct {
	// Servers holds the status of every configured server, by name.
	Servers map[string]ServerStatus
}

// ServerStatus is the status of one server.
type ServerStatus struct {
	State ServerState
	// Era is the negotiated era when State is ServerConnected.
	Era Era
	// Err is why the server is skipped or failed; nil otherwise.
	Err error
	// Since is when the server entered State (zero for ServerNotDialed).
	Since time.Time
	// CallsInFlight counts the tools/call requests waiting for the server
	// (over all its principals' connections).
	CallsInFlight int
	// TasksInFlight counts the tasks (long-running tool calls, [Server.Tasks])
	// a call of this Adapter is waiting for on the server.
	TasksInFlight int
	// KeptSessions counts the server's sessions the Adapter keeps open for
	// tasks it handed out ([StateOptions.KeptSessionMaxAge]).
	KeptSessions int
	// Principals counts the live connections of a per-principal server
	// ([Server.HeadersFor], [Server.OAuthFor]), one per principal; the
	// server is ServerConnected while one is live, and its Era and Since are
	// those of the most recent one. Always 0 for a shared server. The
	// principals of a shared session (Shared) are counted alike.
	Principals int
	// Shared is set when the principals of the per-principal server share
	// one live session ([Config.ShareStatelessSessions]): a stateless
	// server, dialed once for all of them. Principals counts them.
	Shared bool
	// DialAttempts counts the dials of the server since [New], successful
	// or not, across [Adapter.Close].
	DialAttempts int64
	// Deliveries counts what the server sent for user code since [New]:
	// delivered, and dropped because user code did not keep up.
	Deliveries Deliveries
	// PrincipalDeliveries holds the same counts for each principal (see
	// [WithPrincipal]) of the server: the principals of its per-principal
	// connections, of the calls whose progress it reported and of the
	// subscriptions it updated. It keeps the 1,024 (server, principal)
	// pairs of the Adapter counted most recently; nil when none is
	// counted. Principals are the application's names: a health endpoint
	// open to others may want to leave them out.
	PrincipalDeliveries map[string]Deliveries
}

// Deliveries counts a server's notifications for user code: server log
// messages for [Config.Logger], progress for [WithProgress] and
// [WithProgress], list changes and resource updates for
// [Config.OnListChanged] and [Config.OnResourceUpdated]. Each
// (server, principal) has a queue of 256 of them (and 1 MiB of their
// data) that waits while user code is busy; past it, they are dropped.
type Deliveries struct {
	Delivered       int64 // handed to user code
	DroppedLogs     int64 // server log messages dropped (see [Adapter.SetLoggingLevel])
	DroppedProgress int64 // progress notifications dropped
	DroppedChanges  int64 // list changes and resource updates dropped
	// UnsolicitedUpdates counts the resource updates of URIs no principal
	// was subscribed to on the connection they came on, while
	// [Config.OnResourceUpdated] is set: dropped, never delivered.
	UnsolicitedUpdates int64
}

// MarshalJSON encodes s for a health endpoint, with Err as its message
// (the JSON of an error value is usually {}, or its fields without the
// message), omitted when nil.
func (s ServerStatus) MarshalJSON() ([]byte, error) {
	type fields ServerStatus // without this method
	var msg string
	if s.Err != nil {
		msg = s.Err.Error()
	}
	return json.Marshal(struct {
		fields
		Err string `json:",omitempty"` // hides fields.Err
	}{fields(s), msg})
}

// A failure is a server's last dial failure in a generation.
type failure struct {
	err   error
	since time.Time
}

// Status reports the state of every configured server. It does no I/O and
// is safe to call at any time, also concurrently with discovery and calls.
func (a *Adapter) Status() Status {
	st := Status{Servers: make(map[string]ServerStatus, len(a.cfg.Servers))}
	seen, g := a.pool.known()
	var kept map[string]int
	if g != nil {
		kept = g.kept.Counts() // its own lock, taken alone (kept.go)
	}
	for _, name := range slices.Sorted(maps.Keys(a.cfg.Servers)) {
		k := seen[name]
		s := ServerStatus{State: ServerNotDialed, DialAttempts: a.pool.dials[name].Load(), KeptSessions: kept[name]}
		s.Deliveries, s.PrincipalDeliveries = a.notify.deliveries(name)
		var latest *conn // the most recent live conn, else the last to die
		for _, c := range k.conns {
			c.openMu.Lock()
			s.CallsInFlight += len(c.open)
			c.openMu.Unlock()
			live := c.alive()
			if c.carrier == nil { // a shared session's is its carrier's
				s.TasksInFlight += int(c.tasks.running.Load())
			}
			if live && c.key.principal != "" {
				s.Principals++
			}
			if live && c.carries() {
				s.Shared = true
			}
			switch {
			case latest == nil:
				latest = c
			case live && (!latest.alive() || c.since.After(latest.since)):
				latest = c
			case !live && !latest.alive() && c.diedAt.After(latest.diedAt):
				latest = c
			}
		}
		if c := latest; c != nil {
			if c.alive() {
				s.State, s.Era, s.Since = ServerConnected, c.info.Era, c.since
			} else {
				s.State, s.Err, s.Since = ServerFailed, c.cause(), c.diedAt
			}
		}
		switch {
		case k.skipped != nil && s.State != ServerConnected:
			s.State, s.Err, s.Since = ServerSkipped, k.skipped, k.failed.since
		case k.failed.err != nil && s.State != ServerConnected && k.failed.since.After(s.Since):
			s.State, s.Err, s.Since = ServerFailed, k.failed.err, k.failed.since
		}
		st.Servers[name] = s
	}
	return st
}

// What the pool knows of a server, for Status.
type known struct {
	conns   []*conn // one, or one per principal
	skipped error
	failed  failure
}

// known returns what p knows of every server in its current generation,
// and that generation (nil: none).
func (p *pool) known() (map[string]known, *generation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[string]known{}
	g := p.gen
	if g == nil {
		return seen, nil
	}
	for name := range p.cfg.Servers {
		seen[name] = known{skipped: g.skipped[name], failed: g.failures[name]}
	}
	for key, c := range g.conns {
		k := seen[key.server]
		k.conns = append(k.conns, c)
		seen[key.server] = k
	}
	return seen, g
}

// deliveryCounts are the [Deliveries] of each server, and of the
// (server, principal) pairs counted most recently, at most limit of them:
// past it, the pair counted least recently is forgotten. A count of a pair
// is a count of its server too.
type deliveryCounts struct {
	mu      sync.Mutex             // guards the fields below
	servers map[string]*Deliveries // made by New, never changed
	keys    map[connKey]*keyCount  // at most limit
	limit   int
	tick    uint64 // counts the calls of add
}

// A keyCount holds the counts of one (server, principal).
type keyCount struct {
	d    Deliveries
	used uint64 // the tick of the last count
}

// newDeliveryCounts returns the counts of servers (each server's
// counters, which the counts then own) and of at most limit pairs.
func newDeliveryCounts(servers map[string]*Deliveries, limit int) *deliveryCounts {
	return &deliveryCounts{servers: servers, limit: limit}
}

// add adds one to the counter field selects, of key and of its server,
// and returns key's new count. key.server must be one of New's.
func (c *deliveryCounts) add(key connKey, field func(*Deliveries) *int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	*field(c.servers[key.server])++
	k := c.keys[key]
	if k == nil {
		if len(c.keys) >= c.limit {
			c.forgetOldest()
		}
		if c.keys == nil {
			c.keys = map[connKey]*keyCount{}
		}
		k = &keyCount{}
		c.keys[key] = k
	}
	k.used = c.tick
	*field(&k.d)++
	return *field(&k.d)
}

// forgetOldest drops the counts of the pair counted least recently. c.mu
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

// of returns the counts of server, and calls each with every pair of
// server still counted and its counts.
func (c *deliveryCounts) of(server string, each func(connKey, Deliveries)) Deliveries {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, k := range c.keys {
		if key.server == server {
			each(key, k.d)
		}
	}
	return *c.servers[server]
}
