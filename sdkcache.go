package mcpadapter

// Going past the SDK's own list cache, and keeping it small.
//
// On modern sessions go-sdk caches every tools/list, resources/list,
// resources/templates/list and resources/read answer, keyed by the
// request's cursor (or URI), with no bypass and no eviction but
// list_changed (research notes §4). The adapter asks through the SDK's own
// methods (its x-mcp-header checks and its record of the tools, which
// calls take their Mcp-Param headers from, must keep working) with a key
// the cache has never seen, so that the lookup misses; the sending
// middleware sdkCacheSlots restores the real key before the request is
// sent. What the SDK then stores is keyed by a slot instead of the
// server's cursor (it keys its store by the params object the middleware
// changed: sdkcompat.go, entry 4): page n of a listing goes to slot n,
// overwriting the page n of the listing before, and the pages past the end
// of a listing that shrank are overwritten with empty ones (a purge). A
// server whose cursors change with every listing (signed or timestamped
// cursors) would otherwise grow the cache by a catalog per listing, and
// the SDK's tool lookup of every call with it. The keys are spelled by
// internal/cachekey.

import (
	"context"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter/internal/cachekey"
	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkCacheSlots is the sending middleware of the SDK's list cache: it
// restores the real key of an uncached lookup before the request is sent,
// makes the SDK store the answer under the lookup's slot, answers a purge
// with an empty page (never sent), and compacts the _meta maps of every
// answer it passes on.
func sdkCacheSlots(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		slot, uncached := sdkSlotOf(req.GetParams())
		if uncached && slot.purge {
			slot.stored()
			return emptyPage(method), nil
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		compactMeta(res)
		if uncached {
			slot.stored()
		}
		return res, nil
	}
}

// An sdkSlot is an uncached key being sent: where the request's key is,
// and the slot the SDK is to store the answer under.
type sdkSlot struct {
	key   *string
	slot  string
	purge bool
}

// sdkSlotOf finds an uncached key in params and puts the real one in its
// place (the SDK sends the very object it is given); ok is false for any
// other request.
func sdkSlotOf(params mcp.Params) (s sdkSlot, ok bool) {
	switch p := params.(type) {
	case *mcp.ListToolsParams:
		s.key = &p.Cursor
	case *mcp.ListResourcesParams:
		s.key = &p.Cursor
	case *mcp.ListResourceTemplatesParams:
		s.key = &p.Cursor
	case *mcp.ListPromptsParams:
		s.key = &p.Cursor
	case *mcp.ReadResourceParams:
		s.key = &p.URI
	default:
		return s, false
	}
	slot, key, purge, ok := cachekey.Parse(*s.key)
	if !ok {
		return s, false
	}
	s.slot, s.purge = slot, purge
	if !purge {
		*s.key = key
	}
	return s, true
}

// emptyPage is the answer to a purge of a list of method, which the SDK
// stores in the slot instead of what it held.
func emptyPage(method string) mcp.Result {
	switch method {
	case "resources/list":
		return &mcp.ListResourcesResult{}
	case "resources/templates/list":
		return &mcp.ListResourceTemplatesResult{}
	}
	return &mcp.ListToolsResult{}
}

// stored makes the SDK store the answer to s under its slot.
func (s sdkSlot) stored() { *s.key = s.slot }

// sdkSlots returns the slot count of the SDK's cache of the list name
// ("tools", "resources" or "templates") on c's session, or nil when the
// session is legacy: the SDK caches nothing then.
func (c *conn) sdkSlots(name string) *pageSlots {
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

// A pageSlots counts the slots of one list the SDK holds on a session:
// the pages of the longest listing not purged since.
type pageSlots struct{ n atomic.Int64 }

// listed records a listing of n pages and returns the slots, from n on,
// to purge.
func (p *pageSlots) listed(n int) (from, to int) {
	return n, int(p.n.Swap(int64(n)))
}

// compactMeta replaces the _meta maps of an answer the SDK's cache or the
// catalog keeps (a page of a listing and its items, a resource read) with
// copies of their own size (jsonvalue.Compact). The SDK's decoder (segmentio/encoding) makes
// every map field it decodes, as _meta is, with room for 64 entries:
// 4.75 KiB, whatever it holds. On a modern session every answer has one
// (the server's serverInfo), and the SDK keeps its last page of each list.
func compactMeta(res mcp.Result) {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		compactEach(r.Tools, func(x *mcp.Tool) *mcp.Meta { return &x.Meta })
	case *mcp.ListResourcesResult:
		compactEach(r.Resources, func(x *mcp.Resource) *mcp.Meta { return &x.Meta })
	case *mcp.ListResourceTemplatesResult:
		compactEach(r.ResourceTemplates, func(x *mcp.ResourceTemplate) *mcp.Meta { return &x.Meta })
	case *mcp.ListPromptsResult:
		compactEach(r.Prompts, func(x *mcp.Prompt) *mcp.Meta { return &x.Meta })
	case *mcp.ReadResourceResult:
		compactEach(r.Contents, func(x *mcp.ResourceContents) *mcp.Meta { return &x.Meta })
	default:
		return
	}
	res.SetMeta(jsonvalue.Compact(res.GetMeta()))
}

// compactEach compacts the _meta map of each item (meta returns where it
// is) of a listing.
func compactEach[T any](items []*T, meta func(*T) *mcp.Meta) {
	for _, x := range items {
		if x != nil {
			m := meta(x)
			*m = jsonvalue.Compact(*m)
		}
	}
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
