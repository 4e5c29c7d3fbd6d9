package mcpadapter

// Going past the SDK's own list cache, and keeping it small: the mechanism
// is internal/sdkcache's (its package comment tells how); here are the
// middleware that runs it, the slot counts of a connection, and the record
// of the tools a call on a modern HTTP session needs. The keys are spelled
// there too (its keys.go).

import (
	"context"

	"github.com/mcpadapter/mcpadapter/internal/sdkcache"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkCacheSlots is the sending middleware of the SDK's list cache
// (sdkcache.Send): it restores the real key of an uncached lookup before
// the request is sent, makes the SDK store the answer under the lookup's
// slot, answers a purge with an empty page (never sent), and compacts the
// _meta maps of every answer it passes on.
func sdkCacheSlots(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		return sdkcache.Send(ctx, method, req, next)
	}
}

// sdkSlots returns the slot count of the SDK's cache of the list name
// ("tools", "resources" or "templates") on c's session, or nil when the
// session is legacy: the SDK caches nothing then.
func (c *conn) sdkSlots(name string) *sdkcache.Slots {
	if !c.modern() {
		return nil
	}
	switch name {
	case "tools":
		return &c.slots[0]
	case "resources":
		return &c.slots[1]
	}
	return &c.slots[2]
}

// recordTools makes sure that the SDK session of c has seen c's tool list
// before a call, so that the call carries the Mcp-Param headers of its
// x-mcp-header arguments: on modern HTTP the SDK takes them from the last
// tools/list it saw on that session, and forgets them at list_changed. It
// lists the tools (shared with concurrent discovery, stored as CacheUse
// would) when the session has no current record, i.e. after list_changed or
// on a connection that was never listed (a resumed interrupt). Only modern
// HTTP sessions need it. It is best effort: a failed listing is logged and
// the call goes ahead.
func (cs *catalogs) recordTools(ctx context.Context, c *conn) {
	if !c.modern() || c.http == nil { // modern Streamable HTTP only: a URL server's, or a custom transport's
		return
	}
	cs.mu.Lock()
	ok := cs.ofLocked(c).recorded
	cs.mu.Unlock()
	if ok {
		return
	}
	if _, err := cs.tools(ctx, c, CacheUse); err != nil {
		cs.a.logger.DebugContext(ctx, "mcpadapter: listing tools before a call", "server", c.server, "error", err)
	}
}
