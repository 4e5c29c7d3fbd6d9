// Package sdkcache gets the adapter past go-sdk's own list cache, and
// keeps that cache small (the root package's sdkcache.go).
//
// On modern sessions go-sdk caches every tools/list, resources/list,
// resources/templates/list and resources/read answer, keyed by the
// request's cursor (or URI), with no bypass and no eviction but
// list_changed (research notes §4). The adapter asks through the SDK's own
// methods (its x-mcp-header checks and its record of the tools, which
// calls take their Mcp-Param headers from, must keep working) with a key
// the cache has never seen (keys.go), so that the lookup misses;
// the sending middleware, whose body is [Send], restores the real key
// before the request is sent. What the SDK then stores is keyed by a slot
// instead of the server's cursor (it keys its store by the params object
// the middleware changed: the root's sdkcompat.go, entry 4): page n of a
// listing goes to slot n, overwriting the page n of the listing before,
// and the pages past the end of a listing that shrank are overwritten with
// empty ones (a purge; [Slots] counts them). A server whose cursors change
// with every listing (signed or timestamped cursors) would otherwise grow
// the cache by a catalog per listing, and the SDK's tool lookup of every
// call with it.
package sdkcache

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Send is the body of the sending middleware of the SDK's list cache, with
// next the handler it wraps: it restores the real key of an uncached
// lookup before the request is sent, makes the SDK store the answer under
// the lookup's slot, answers a purge with an empty page (never sent), and
// compacts the _meta maps of every answer it passes on.
func Send(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	s, uncached := slotOf(req.GetParams())
	if uncached && s.purge {
		s.stored()
		return emptyPage(method), nil
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return res, err
	}
	compactMeta(res)
	if uncached {
		s.stored()
	}
	return res, nil
}

// A slot is an uncached key being sent: where the request's key is,
// and the slot the SDK is to store the answer under.
type slot struct {
	key   *string
	slot  string
	purge bool
}

// slotOf finds an uncached key in params and puts the real one in its
// place (the SDK sends the very object it is given); ok is false for any
// other request.
func slotOf(params mcp.Params) (s slot, ok bool) {
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
	at, key, purge, ok := parseKey(*s.key)
	if !ok {
		return s, false
	}
	s.slot, s.purge = at, purge
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
func (s slot) stored() { *s.key = s.slot }

// A Page fetches one page of a list: its items, the next cursor and the
// page's ttlMs.
type Page[T any] func(ctx context.Context, cursor string) (items []T, next string, ttlMs int, err error)

// Collect fetches every page of a list with one policy: each page past
// the SDK's cache (a lookup key), at most maxPages pages, and no cursor
// twice. It returns the smallest ttlMs of the pages. slots, when not nil,
// counts the pages the SDK holds: those past the end of a shorter listing
// are purged.
func Collect[T any](ctx context.Context, slots *Slots, maxPages int, page Page[T]) ([]T, int, error) {
	var all []T
	ttl := 0
	seen := map[string]bool{}
	cursor := ""
	for i := range maxPages {
		items, next, pageTTL, err := page(ctx, Lookup(i, cursor))
		if err != nil {
			return nil, 0, err
		}
		all = append(all, items...)
		if i == 0 || pageTTL < ttl {
			ttl = pageTTL
		}
		if next == "" {
			if slots != nil {
				from, to := slots.Listed(i + 1)
				for n := from; n < to; n++ {
					page(ctx, Purge(n)) // answered by the middleware, never sent
				}
			}
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

// A Slots counts the slots of one list the SDK holds on a session:
// the pages of the longest listing not purged since.
type Slots struct{ n atomic.Int64 }

// Listed records a listing of n pages and returns the slots, from n on,
// to purge.
func (p *Slots) Listed(n int) (from, to int) {
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
