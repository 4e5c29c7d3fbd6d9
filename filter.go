package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Filter selects which tools the model is offered: [Config.Filter] for
// every server, [Server.Filter] for one; a tool is offered when both keep
// it. The zero Filter keeps every tool.
//
// Filters are applied by [Adapter.ListTools] and [Adapter.ListToolsets] to
// the server's catalog before anything else looks at the tools: a dropped
// tool is never named, shortened or checked for duplicates, so a tool with
// a bad or clashing name that a filter drops never fails discovery. The
// catalog cache holds every tool of a server and is shared by all callers;
// filters are applied to each discovery's copy, so Keep sees each caller's
// context. A dropped tool is not in the returned [Toolset], so the model
// cannot call it through [Toolset.HandleToolCalls]; [Adapter.Resume]
// refuses an interrupt of a tool that Allow or Deny drop.
type Filter struct {
	// Allow, when not empty, keeps only the tools whose MCP name (the
	// server's own name, not the prefixed one) matches one of its patterns.
	// Patterns follow [path.Match]: '*' matches any run of characters other
	// than '/', '?' one such character, [a-z] a class; a pattern without
	// these matches the name exactly. [New] refuses malformed patterns.
	Allow []string

	// Deny drops the tools whose MCP name matches one of its patterns (as
	// for Allow). Deny wins over Allow.
	Deny []string

	// Keep, when set, keeps only the tools it returns true for. It is called
	// at every discovery, for every tool that Allow and Deny keep, with the
	// caller's context (which may carry the user, their role or their
	// tenant), and may be called concurrently for different servers. The
	// descriptor is borrowed: Keep must not modify it. See [ReadOnly] and
	// [NotDestructive].
	Keep ToolPredicate
}

// errFiltered refuses to resume a call of a tool the filters drop.
var errFiltered = errors.New("the tool is not offered: a Filter drops it")

// A ToolPredicate reports whether a tool of server, described by tool (the
// server's descriptor, with its annotations), should be offered to the
// model in the call whose context is ctx.
type ToolPredicate func(ctx context.Context, server string, tool *mcp.Tool) bool

// ReadOnly returns a [ToolPredicate] that keeps only the tools whose server
// declared them read-only (annotation readOnlyHint true). Annotations are
// hints: trust them as far as you trust the server.
func ReadOnly() ToolPredicate {
	return func(_ context.Context, _ string, tool *mcp.Tool) bool {
		return tool.Annotations != nil && tool.Annotations.ReadOnlyHint
	}
}

// NotDestructive returns a [ToolPredicate] that keeps only the tools that
// cannot destroy anything by the MCP specification's defaults: read-only
// tools and tools declared with destructiveHint false. A tool without
// annotations is dropped (see [MayBeDestructive]).
func NotDestructive() ToolPredicate {
	return func(_ context.Context, _ string, tool *mcp.Tool) bool {
		return !mayDestroy(tool.Annotations)
	}
}

// AllOf returns a [ToolPredicate] that keeps a tool when every one of preds
// keeps it (nil predicates are ignored). They are called in order and stop
// at the first that drops the tool.
func AllOf(preds ...ToolPredicate) ToolPredicate {
	preds = slices.DeleteFunc(slices.Clone(preds), func(p ToolPredicate) bool { return p == nil })
	return func(ctx context.Context, server string, tool *mcp.Tool) bool {
		for _, p := range preds {
			if !p(ctx, server, tool) {
				return false
			}
		}
		return true
	}
}

// validate refuses malformed patterns.
func (f *Filter) validate() error {
	var errs []error
	for _, p := range slices.Concat(f.Allow, f.Deny) {
		if _, err := path.Match(p, ""); err != nil {
			errs = append(errs, fmt.Errorf("pattern %q: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// clone returns f with its own lists.
func (f Filter) clone() Filter {
	f.Allow, f.Deny = slices.Clone(f.Allow), slices.Clone(f.Deny)
	return f
}

// zero reports whether f keeps every tool.
func (f *Filter) zero() bool { return len(f.Allow) == 0 && len(f.Deny) == 0 && f.Keep == nil }

// allows reports whether Allow and Deny keep the tool named name.
func (f *Filter) allows(name string) bool {
	matches := func(p string) bool {
		ok, _ := path.Match(p, name) // patterns were validated by New
		return ok
	}
	if slices.ContainsFunc(f.Deny, matches) {
		return false
	}
	return len(f.Allow) == 0 || slices.ContainsFunc(f.Allow, matches)
}

// keeps reports whether f keeps tool d of server for the caller of ctx.
func (f *Filter) keeps(ctx context.Context, server string, d *mcp.Tool) bool {
	return f.allows(d.Name) && (f.Keep == nil || f.Keep(ctx, server, d))
}

// allowedName reports whether the static filters of the adapter and of
// server keep the tool the server names tool.
func (a *Adapter) allowedName(server, tool string) bool {
	s := a.cfg.Servers[server]
	return a.cfg.Filter.allows(tool) && s.Filter.allows(tool)
}

// offered returns the tools of set that the filters of the adapter and of
// server keep for the caller of ctx. set is the catalog's (possibly shared)
// list: it is never modified, and returned as is when no filter is set.
func (a *Adapter) offered(ctx context.Context, server string, set Toolset) Toolset {
	s := a.cfg.Servers[server]
	if a.cfg.Filter.zero() && s.Filter.zero() {
		return set
	}
	out := make(Toolset, 0, len(set))
	for _, t := range set {
		if s.Filter.keeps(ctx, server, t.desc) && a.cfg.Filter.keeps(ctx, server, t.desc) {
			out = append(out, t)
		}
	}
	return out
}
