package mcpadapter

// Catalogs: the cached lists of every connection.
//
// Each connection has one catalog: the server's tool list, resource list and
// resource-template list, each an entry honouring the server's ttlMs. It
// lives in its conn, and goes with it. Notes on its state and contexts:
//
//   - Entries, versions, wrappers and recorded are guarded by catalogs.mu,
//     which is never held across I/O. A fetch notes the entry's version,
//     talks to the server unlocked, then locks again and stores its result
//     only if no list_changed bumped the version meanwhile: a list fetched
//     before a change never overwrites the invalidation.
//   - Concurrent CacheUse misses of one list share one fetch, which the
//     last caller to give up cancels.
//     The key carries the version, so a caller arriving after list_changed
//     never joins a fetch that began before it. The shared fetch runs under
//     the generation's context, not the first caller's: each caller waits on
//     its own ctx, and Close cancels the fetch and waits for it.
//   - CacheRefresh and CacheBypass fetch for their caller alone, under its
//     ctx: joining a fetch that began earlier could miss a change.
//   - A catalog belongs to one conn. A new connection starts a new catalog,
//     with new tools; tools handed out keep their own conn and catalog
//     (under Config.ToolsFollowServer their calls, once their conn ended,
//     go to the tool of the same name in the last list of the server's
//     current conn: follow.go).
//   - Concurrent dials of one server share one too (pool.go), with another
//     rule: a dial runs on when its callers leave, since the connection
//     serves whoever comes next, while a fetch that nobody waits for any
//     more is cancelled, since the next caller may want fresher data.
//
// The SDK keeps its own list cache on modern sessions, with no bypass and
// stale answers until list_changed (research notes §4). Every fetch here goes
// past it with an uncached cursor (sdkcache.Collect, its key and its middleware) while still
// calling the SDK's ListTools, so that its x-mcp-header checks and its record
// of the tools (for Mcp-Param headers on modern HTTP) keep working.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/sdkcache"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
	"go.opentelemetry.io/otel/trace"
)

// CacheMode says how discovery uses the catalog cache: the tool lists of
// [Adapter.ListTools] and [Adapter.ListToolsets], and the lists of
// [Adapter.ListResources] and [Adapter.ListResourceTemplates]. Each server's
// lists are cached per connection for as long as the server's ttlMs says
// (when it sends none or 0: never, or for [Config.CatalogTTL]), and a
// server's list_changed notification ends that early.
type CacheMode string

const (
	// CacheUse (the zero value) serves a server's cached list while the
	// server's ttlMs says it is fresh, and fetches (and stores) it otherwise.
	// Concurrent fetches of one list share one request.
	CacheUse CacheMode = ""
	// CacheRefresh always fetches and stores the result.
	CacheRefresh CacheMode = "refresh"
	// CacheBypass always fetches, and neither reads nor stores the cache.
	CacheBypass CacheMode = "bypass"
)

// WithCacheMode sets how discovery uses the catalog cache; see [CacheMode].
func WithCacheMode(m CacheMode) ListOption {
	return func(o *listOptions) { o.cache = m }
}

func (m CacheMode) validate() error {
	switch m {
	case CacheUse, CacheRefresh, CacheBypass:
		return nil
	}
	return errorf("mcpadapter: unknown CacheMode %q", m)
}

// maxPages bounds one paginated listing.
const maxPages = 1000

// An entry is one cached list of a server.
type entry[T any] struct {
	items   []T       // the stored list; shared, callers get copies
	expires time.Time // zero: never fresh
	version uint64    // bumped by list_changed; a fetch that began before stores nothing
}

// fresh reports whether e may be served at now.
func (e *entry[T]) fresh(now time.Time) bool { return now.Before(e.expires) }

// storeLocked stores items fetched at fetched, fresh for ttl (see
// catalogs.ttl), unless e changed since version. It reports whether it
// stored. catalogs.mu must be held.
func (e *entry[T]) storeLocked(items []T, version uint64, ttl time.Duration, fetched time.Time) bool {
	if e.version != version {
		return false
	}
	e.items, e.expires = items, time.Time{}
	if ttl > 0 {
		e.expires = fetched.Add(ttl)
	}
	return true
}

// invalidateLocked makes e stale and stops fetches in flight from storing.
// catalogs.mu must be held.
func (e *entry[T]) invalidateLocked() {
	e.items, e.expires = nil, time.Time{}
	e.version++
}

// catalogs owns the catalogs of every connection. Its workers list through
// the Adapter's connections and wrap tools with its policy (a).
type catalogs struct {
	a *Adapter

	// mu guards every conn's catalog (conn.cat) and everything in it:
	// entries, fetches, wrappers, recorded, distinct, and the waiters of
	// each fetchOf. (Lock order: pool.go.)
	mu sync.Mutex
}

// ttl is how long a list the server gave ttlMs is fresh: ttlMs when
// positive, else [Config.CatalogTTL] (0: not at all).
func (cs *catalogs) ttl(ttlMs int) time.Duration {
	if ttlMs > 0 {
		return time.Duration(ttlMs) * time.Millisecond
	}
	return cs.a.cfg.CatalogTTL
}

// A catalog holds the cached lists of one server on one connection.
type catalog struct {
	conn *conn

	// guarded by catalogs.mu:
	fetches   map[string]any // CacheUse fetches in progress (*fetchOf[T]), keyed by list and version
	tools     entry[*Tool]
	resources entry[*mcp.Resource]
	templates entry[*mcp.ResourceTemplate]
	prompts   entry[*Prompt]

	// wrappers holds the *Tool of every descriptor of the stored tool list
	// (and of later lists not stored), keyed by wrapperKey, so that
	// unchanged descriptors give the identical *Tool. The map is replaced,
	// never changed, so a snapshot may be read without the lock.
	wrappers map[string]*Tool

	// recorded reports that the SDK session has seen the whole current tool
	// list through its own ListTools, which is where it takes the
	// x-mcp-header bindings of calls from. list_changed clears it (the SDK
	// forgets its record too).
	recorded bool

	// distinct is the last tool set of this server found free of duplicate
	// names (discover), kept so that the same set served again from the
	// cache is not checked again: a map of 10,000 names was half the time
	// of a cached ListTools.
	distinct []*Tool
}

// checkDistinct is checkDuplicates (filter.go) for a tool set of c that
// visible offers, done once per set: the wrappers and their names never
// change, so a set equal to the last one found distinct is distinct.
func (cs *catalogs) checkDistinct(c *conn, set Toolset) error {
	cs.mu.Lock()
	cat := cs.ofLocked(c)
	known := slices.Equal(cat.distinct, set)
	cs.mu.Unlock()
	if known {
		return nil
	}
	if err := checkDuplicates(set); err != nil {
		return err
	}
	cs.mu.Lock()
	cat.distinct = slices.Clone(set) // the caller's set is theirs to change
	cs.mu.Unlock()
	return nil
}

// ofLocked returns the catalog of conn c, starting an empty one if it has
// none. catalogs.mu must be held.
func (cs *catalogs) ofLocked(c *conn) *catalog {
	if c.cat == nil {
		c.cat = &catalog{conn: c, fetches: map[string]any{}, wrappers: map[string]*Tool{}}
	}
	return c.cat
}

// cachedList returns one list of c's server according to mode: the entry
// selected by field while fresh (CacheUse), else what fetch gets: fetch
// fetches the list of cat for mode, storing it unless the entry's version
// is no longer version. The caller owns the returned slice; its elements
// are shared.
func cachedList[T any](ctx context.Context, cs *catalogs, c *conn, mode CacheMode, op, name string,
	field func(*catalog) *entry[T], fetch func(ctx context.Context, cat *catalog, mode CacheMode, version uint64) ([]T, error)) ([]T, error) {
	if err := c.usable(op); err != nil {
		return nil, err
	}
	cs.mu.Lock()
	cat := cs.ofLocked(c)
	e := field(cat)
	if mode == CacheUse && e.fresh(time.Now()) {
		items := e.items // replaced, never changed: copy it unlocked
		cs.mu.Unlock()
		return slices.Clone(items), nil
	}
	version := e.version
	if mode != CacheUse {
		cs.mu.Unlock()
		return fetch(ctx, cat, mode, version)
	}
	// Concurrent CacheUse misses share one fetch: the first starts it, the
	// others join it. Both happen under the lock that found the entry stale,
	// and a fetch stores its list before it leaves cat.fetches, so no miss
	// starts a second fetch of a list that another one is storing.
	key := name + "/" + strconv.FormatUint(version, 10)
	f, _ := cat.fetches[key].(*fetchOf[T])
	if f == nil {
		// The first miss starts the fetch in a goroutine that the
		// generation owns, registered in cat.fetches until it returns.
		g := c.gen
		if !g.enter() {
			cs.mu.Unlock()
			return nil, serverError(c.server, op, ErrClosed)
		}
		parent := trace.SpanContextFromContext(ctx) // the shared fetch's span is a child of the first caller's
		fctx, cancel := context.WithCancel(trace.ContextWithSpanContext(g.ctx, parent))
		f = &fetchOf[T]{done: make(chan struct{}), cancel: cancel}
		cat.fetches[key] = f
		go func() {
			defer g.wg.Done()
			defer cancel()
			f.items, f.err = fetch(fctx, cat, CacheUse, version)
			cs.mu.Lock()
			if cat.fetches[key] == f {
				delete(cat.fetches, key)
			}
			cs.mu.Unlock()
			close(f.done)
		}()
	}
	f.waiters++
	cs.mu.Unlock()

	select {
	case <-f.done:
		if f.err != nil {
			return nil, f.err
		}
		return slices.Clone(f.items), nil
	case <-ctx.Done():
		cs.mu.Lock()
		if f.waiters--; f.waiters == 0 {
			// Nobody waits any more: stop asking (the server is told to
			// cancel), and let the next caller ask afresh.
			f.cancel()
			if cat.fetches[key] == f {
				delete(cat.fetches, key)
			}
		}
		cs.mu.Unlock()
		return nil, serverError(c.server, op, ctx.Err())
	}
}

// A fetchOf is one CacheUse fetch of a list, shared by the callers that
// wait for it. It runs under a context of its own, which the generation's
// end cancels and so does the last waiter that gives up: a server that
// never answers costs each caller its own deadline, and the next caller
// asks again.
type fetchOf[T any] struct {
	done   chan struct{} // closed when items and err are set
	items  []T
	err    error
	cancel context.CancelFunc

	waiters int // guarded by catalogs.mu
}

// tools returns the tools of c's server according to mode.
func (cs *catalogs) tools(ctx context.Context, c *conn, mode CacheMode) (Toolset, error) {
	return cachedList(ctx, cs, c, mode, "list tools", "tools",
		func(cat *catalog) *entry[*Tool] { return &cat.tools }, cs.fetchTools)
}

// fetchTools lists every tool of cat's server and builds the Toolset,
// reusing the wrappers of unchanged descriptors. Unless mode is CacheBypass
// it stores the list, if no list_changed came since version.
func (cs *catalogs) fetchTools(ctx context.Context, cat *catalog, mode CacheMode, version uint64) ([]*Tool, error) {
	a, c := cs.a, cat.conn
	ctx, done := c.callContext(ctx)
	defer done()
	ctx, span := a.tracer.StartRequest(ctx, "tools/list", "", c.peer)
	budget := newCatalogBudget(a.cfg.MaxMessageBytes)
	var keys []string // of the descriptors, in order: their JSON measures the catalog
	var raws [][]byte // the descriptors' JSON as the server sent it, in order (descriptor.go)
	descs, ttl, err := sdkcache.Collect(ctx, c.sdkSlots("tools"), maxPages, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, int, error) {
		// Always a non-nil params: the middleware rewrites this very object,
		// and the SDK keys its record by the rewritten cursor.
		ctx, listing := withListing(ctx) // this page's JSON, apart from other callers' (descriptor.go)
		res, err := c.session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", 0, err
		}
		// A tool without a name cannot be called at all (filter.go).
		named := slices.DeleteFunc(res.Tools, func(d *mcp.Tool) bool {
			if d != nil && d.Name != "" {
				return false
			}
			a.logger.Debug("mcpadapter: dropped a listed tool without a name", "server", c.server)
			return true
		})
		for _, d := range named {
			key := wrapperKey(d)
			if err := budget.spend(len(key)); err != nil {
				return nil, "", 0, err
			}
			keys = append(keys, key)
			raws = append(raws, c.listed(listing, "tools", d.Name))
		}
		return named, res.NextCursor, res.TTLMs, nil
	})
	a.tracer.End(span, false, err)
	if err != nil {
		return nil, c.callError("list tools", err)
	}
	fetched := time.Now()

	// Wrap new descriptors without the lock (it is CPU work per tool); the
	// snapshot of wrappers is never written to.
	cs.mu.Lock()
	known := cat.wrappers
	cs.mu.Unlock()
	tools := make(Toolset, len(descs))
	for i, d := range descs {
		raw := raws[i]
		if c.carrier != nil { // identical descriptors of a shared session's principals are stored once (share.go)
			keys[i], d, raw = c.descs.intern(keys[i], d, raw)
		}
		if tools[i] = known[keys[i]]; tools[i] == nil {
			tools[i] = newTool(c, a.policy.name(c.server, d.Name), d, raw)
		}
	}

	cs.mu.Lock()
	defer cs.mu.Unlock()
	// A concurrent fetch may have wrapped the same descriptors meanwhile:
	// keep the first wrapper, so that identity holds across fetches.
	wrappers := make(map[string]*Tool, len(descs))
	for i, key := range keys {
		if t := cat.wrappers[key]; t != nil {
			tools[i] = t
		}
		wrappers[key] = tools[i]
	}
	if cat.tools.version == version {
		cat.recorded = true
	}
	if mode != CacheBypass && cat.tools.storeLocked(tools, version, cs.ttl(ttl), fetched) {
		cat.wrappers = wrappers // exactly the stored list: drop wrappers of removed tools
	} else {
		merged := maps.Clone(cat.wrappers)
		maps.Copy(merged, wrappers)
		cat.wrappers = merged
	}
	return tools, nil
}

// wrapperKey identifies a descriptor: its name and its whole JSON, encoded
// as encoding/json would (sorted keys, HTML escaped) by segmentio/encoding,
// the go-sdk's decoder library, in a few allocations where encoding/json
// takes a few per schema keyword.
func wrapperKey(d *mcp.Tool) string {
	b, err := segjson.Marshal(d)
	if err != nil {
		return d.Name // cannot happen for decoded JSON; never reuse across changes
	}
	return d.Name + "\x00" + string(b)
}

// listOptionsOf applies opts.
func listOptionsOf(opts []ListOption) (listOptions, error) {
	var o listOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o, o.cache.validate()
}

// listItems returns one resource list of server, cached like tool lists. A
// server without resources (method not found) has none: an empty list.
func listItems[T any](ctx context.Context, a *Adapter, server string, opts []ListOption, op, name string,
	field func(*catalog) *entry[T], page func(ctx context.Context, c *conn, cursor string) ([]T, string, int, error)) ([]T, error) {
	o, err := listOptionsOf(opts)
	if err != nil {
		return nil, err
	}
	var items []T
	_, err = a.onConn(ctx, server, func(c *conn) (err error) {
		items, err = cachedList(ctx, &a.catalogs, c, o.cache, op, name, field,
			func(ctx context.Context, cat *catalog, mode CacheMode, version uint64) ([]T, error) {
				ctx, done := c.callContext(ctx)
				defer done()
				budget := newCatalogBudget(a.cfg.MaxMessageBytes)
				items, ttl, err := sdkcache.Collect(ctx, c.sdkSlots(name), maxPages, func(ctx context.Context, cursor string) ([]T, string, int, error) {
					items, next, ttl, err := page(ctx, c, cursor)
					for _, item := range items {
						if err == nil {
							b, _ := json.Marshal(item)
							err = budget.spend(len(b))
						}
					}
					return items, next, ttl, err
				})
				var we *jsonrpc.Error
				if errors.As(err, &we) && we.Code == jsonrpc.CodeMethodNotFound {
					items, ttl, err = nil, 0, nil
				}
				if err != nil {
					return nil, c.callError(op, err)
				}
				if items == nil {
					items = []T{}
				}
				fetched := time.Now()
				if mode != CacheBypass {
					a.catalogs.mu.Lock()
					field(cat).storeLocked(items, version, a.catalogs.ttl(ttl), fetched)
					a.catalogs.mu.Unlock()
				}
				return items, nil
			})
		return err
	})
	return items, err
}

// invalidate drops the cached list of kind (resources: with the resource
// templates) of the catalogs of conns.
func (cs *catalogs) invalidate(conns []*conn, kind ListKind) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, c := range conns {
		cat := c.cat
		if cat == nil {
			continue
		}
		switch kind {
		case ToolList:
			cat.tools.invalidateLocked()
			cat.recorded = false
		case ResourceList:
			cat.resources.invalidateLocked()
			cat.templates.invalidateLocked()
		case PromptList:
			cat.prompts.invalidateLocked()
		}
	}
}

// defaultMaxCatalogBytes is the bound of a list when [Config.MaxMessageBytes]
// is 0.
const defaultMaxCatalogBytes = 16 << 20

// A catalogBudget is what is left of [Config.MaxMessageBytes] in one
// listing.
type catalogBudget struct{ max, left int64 }

// newCatalogBudget returns the budget of one listing under max, the
// Config.MaxMessageBytes (0: its default).
func newCatalogBudget(max int64) *catalogBudget {
	max = orDefault(max, defaultMaxCatalogBytes)
	return &catalogBudget{max: max, left: max}
}

// spend takes n bytes of the listing from b, or fails once it is spent.
func (b *catalogBudget) spend(n int) error {
	if b.left -= int64(n); b.left < 0 {
		return fmt.Errorf("%w: its listing over every page passes %d bytes (Config.MaxMessageBytes)", ErrMessageTooLarge, b.max)
	}
	return nil
}
