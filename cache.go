package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CacheMode says how discovery uses the catalog cache.
type CacheMode string

const (
	// CacheUse (the zero value) serves a server's cached catalog while the
	// server's ttlMs says it is fresh, and fetches (and stores) it otherwise.
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
	return fmt.Errorf("mcpadapter: unknown CacheMode %q", m)
}

// maxPages bounds one paginated listing.
const maxPages = 1000

// A catalog is the cached tool list of one server, bound to one connection.
//
// The SDK keeps its own list cache on modern sessions, with no bypass and
// stale answers until list_changed (research notes §4). Every fetch here
// goes past it with an uncached cursor (see middleware) while still calling
// the SDK's ListTools, so that its x-mcp-header checks and its record of the
// tools (for Mcp-Param headers) keep working.
type catalog struct {
	conn    *conn
	tools   Toolset
	expires time.Time // zero: never fresh
	version uint64    // bumped by list_changed; a fetch that began before stores nothing

	// wrappers keeps the *Tool of every descriptor seen on conn, keyed by
	// MCP name and descriptor JSON, so that unchanged descriptors give the
	// identical *Tool.
	wrappers map[string]*Tool
}

func (c *catalog) fresh(now time.Time) bool { return now.Before(c.expires) }

// catalogLocked returns the catalog of c's server for conn c, starting an
// empty one if the server has none or has one for another connection.
// a.mu must be held.
func (a *Adapter) catalogLocked(c *conn) *catalog {
	cat := c.gen.catalogs[c.server]
	if cat == nil || cat.conn != c {
		cat = &catalog{conn: c, wrappers: map[string]*Tool{}}
		if !c.gen.closed {
			c.gen.catalogs[c.server] = cat
		}
	}
	return cat
}

// catalogTools returns the tools of c's server according to mode.
func (a *Adapter) catalogTools(ctx context.Context, c *conn, mode CacheMode) (Toolset, error) {
	if mode == CacheUse {
		a.mu.Lock()
		cat := a.catalogLocked(c)
		if cat.fresh(time.Now()) {
			tools := cat.tools
			a.mu.Unlock()
			return tools, nil
		}
		a.mu.Unlock()
	}
	// Concurrent cold fetches of one server (and mode) share one request.
	key := c.server + "\x00" + string(mode)
	ch := c.gen.lists.DoChan(key, func() (any, error) {
		return a.fetchTools(c, mode)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(Toolset), nil
	case <-ctx.Done():
		return nil, serverError(c.server, "list tools", ctx.Err())
	}
}

// fetchTools lists every tool of c's server and builds the Toolset, reusing
// the wrappers of unchanged descriptors; CacheUse and CacheRefresh store it.
func (a *Adapter) fetchTools(c *conn, mode CacheMode) (Toolset, error) {
	a.mu.Lock()
	cat := a.catalogLocked(c)
	if mode == CacheUse && cat.fresh(time.Now()) { // filled while we waited
		tools := cat.tools
		a.mu.Unlock()
		return tools, nil
	}
	version := cat.version
	a.mu.Unlock()

	ctx, done := c.callContext(context.Background(), 0)
	defer done()
	descs, ttl, err := collectPages(ctx, c, func(ctx context.Context, c *conn, cursor string) ([]*mcp.Tool, string, int, error) {
		res, err := c.session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", 0, err
		}
		return res.Tools, res.NextCursor, res.TTLMs, nil
	})
	if err != nil {
		return nil, c.callError("list tools", err)
	}
	fetched := time.Now()

	a.mu.Lock()
	defer a.mu.Unlock()
	tools := make(Toolset, 0, len(descs))
	seen := make(map[string]*Tool, len(descs))
	for _, d := range descs {
		key := wrapperKey(d)
		t := cat.wrappers[key]
		if t == nil {
			t = a.newTool(c, d)
		}
		seen[key] = t
		tools = append(tools, t)
	}
	if mode == CacheBypass {
		return tools, nil
	}
	cat.wrappers = seen
	if cat.version == version {
		cat.tools = tools
		cat.expires = time.Time{}
		if ttl > 0 {
			cat.expires = fetched.Add(time.Duration(ttl) * time.Millisecond)
		}
	}
	return tools, nil
}

// wrapperKey identifies a descriptor: its name and its whole JSON.
func wrapperKey(d *mcp.Tool) string {
	b, err := json.Marshal(d)
	if err != nil {
		return d.Name // cannot happen for decoded JSON; never reuse across changes
	}
	return d.Name + "\x00" + string(b)
}

// invalidate drops the cached catalog of server when session is the one it
// was fetched on. It is the list_changed handler.
func (a *Adapter) invalidate(g *generation, server string, session *mcp.ClientSession) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cat := g.catalogs[server]; cat != nil && (session == nil || cat.conn.session == session) {
		cat.expires = time.Time{}
		cat.version++
	}
}

// A pageFunc fetches one page of a list: its items, the next cursor and the
// page's ttlMs.
type pageFunc[T any] func(ctx context.Context, c *conn, cursor string) (items []T, next string, ttlMs int, err error)

// collectPages fetches every page of a list with one policy: each page past
// the SDK's cache, at most maxPages pages, and no cursor twice. It returns
// the smallest ttlMs of the pages.
func collectPages[T any](ctx context.Context, c *conn, page pageFunc[T]) ([]T, int, error) {
	var all []T
	ttl := -1
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		items, next, pageTTL, err := page(ctx, c, uncached(cursor))
		if err != nil {
			return nil, 0, err
		}
		all = append(all, items...)
		if ttl < 0 || pageTTL < ttl {
			ttl = pageTTL
		}
		if next == "" {
			return all, ttl, nil
		}
		if seen[next] {
			return nil, 0, fmt.Errorf("pagination: server repeated cursor %q", next)
		}
		seen[next] = true
		cursor = next
	}
	return nil, 0, fmt.Errorf("pagination: more than %d pages", maxPages)
}

// isMethodNotFound reports whether err is a JSON-RPC method-not-found error.
func isMethodNotFound(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == jsonrpc.CodeMethodNotFound
}
