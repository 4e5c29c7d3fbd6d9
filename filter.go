package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/mcpadapter/mcpadapter/internal/tasks"
	"github.com/mcpadapter/mcpadapter/internal/toolname"
)

// What a caller is offered. A server may list tools that must not reach the
// model; visible (below) is the one pass that leaves them out of every
// discovery, and the duplicate check (checkDuplicates) sees only what it
// keeps:
//
//   - the tools a [Filter] drops;
//   - MCP Apps tools whose _meta.ui.visibility leaves out "model" (such as
//     ["app"]), which the app's view calls, never the model. They are left
//     out unless [IncludeAppOnly] asks for them, and [Toolset.Tools],
//     [Toolset.LLMTools], [Toolset.LLMToolsFor] and [Toolset.HandleToolCalls]
//     skip them in any set, so that a set listed with IncludeAppOnly is
//     still safe to hand to an agent;
//   - tools whose server requires task-based execution when the adapter
//     cannot run them as tasks (tasks off for the server, or a modern
//     server without the tasks extension: tasks.go): a call that reaches
//     one anyway (through stored state) fails with [ErrTaskRequired].
//
// A tool without a name cannot be called at all: it is dropped when the
// list is read, with a debug log (catalog.go), and never becomes a Tool.

// A Filter selects which tools the model is offered ([Config.Filter]);
// its Keep gets the server's name, for a rule of one server. The zero
// Filter keeps every tool. More in docs/reference.md, "Filter".
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
	// descriptor is borrowed: Keep must not modify it. A Keep that offers
	// only the tools the server declared read-only:
	//
	//	func(_ context.Context, _ string, d *ToolDescriptor) bool { return d.Annotations.ReadOnly() }
	Keep func(ctx context.Context, server string, tool *ToolDescriptor) bool
}

// errFiltered refuses to resume a call of a tool the filters drop.
var errFiltered = errors.New("the tool is not offered: a Filter drops it")

// validate refuses malformed patterns (toolname.CheckPatterns).
func (f *Filter) validate() error { return toolname.CheckPatterns(slices.Concat(f.Allow, f.Deny)) }

// clone returns f with its own lists.
func (f Filter) clone() Filter {
	f.Allow, f.Deny = slices.Clone(f.Allow), slices.Clone(f.Deny)
	return f
}

// zero reports whether f keeps every tool.
func (f *Filter) zero() bool { return len(f.Allow) == 0 && len(f.Deny) == 0 && f.Keep == nil }

// allows reports whether Allow and Deny keep the tool named name.
func (f *Filter) allows(name string) bool { return toolname.Allowed(name, f.Allow, f.Deny) }

// keeps reports whether f keeps tool d of server for the caller of ctx.
func (f *Filter) keeps(ctx context.Context, server string, d *ToolDescriptor) bool {
	return f.allows(d.Name) && (f.Keep == nil || f.Keep(ctx, server, d))
}

// IncludeAppOnly makes [Adapter.ListTools] and [Adapter.ListToolsets]
// return the MCP Apps tools meant for the app alone too (see
// [Tool.AppOnly]), for an MCP Apps host that runs the tools its views
// call:
//
//	ts, err := a.ListTools(ctx, mcpadapter.IncludeAppOnly())
//	res, err := ts.Lookup(name).Invoke(ctx, args) // the view's call
//
// The model-facing methods of the set ([Toolset.Tools], [Toolset.LLMTools],
// [Toolset.LLMToolsFor], [Toolset.HandleToolCalls]) still leave those tools
// out.
func IncludeAppOnly() ListOption {
	return func(o *listOptions) { o.appOnly = true }
}

// AppOnly reports whether the tool is for an MCP Apps view, not for the
// model: its _meta.ui.visibility is a list without "model" (such as
// ["app"]). Tools without a visibility are for both.
func (t *Tool) AppOnly() bool { return t.appOnly }

// appOnly reports whether d's _meta.ui.visibility leaves out the model.
// A visibility that is not a list is ignored (the default: model and app).
func appOnly(d *ToolDescriptor) bool {
	ui, _ := d.Meta["ui"].(map[string]any)
	vis, ok := ui["visibility"].([]any)
	return ok && !slices.Contains(vis, any("model"))
}

// A toolPolicy holds the rules that turn a server's descriptors into the
// tools a caller is offered: the names the model sees (names.go), the
// filters, and which output schemas are validated (result.go). New builds
// it once from the Config; it is read-only and needs no lock.
type toolPolicy struct {
	cfg    *Config
	logger *slog.Logger
}

// allows reports whether the static filter (Allow and Deny) keeps the tool
// the server names tool.
func (p *toolPolicy) allows(tool string) bool { return p.cfg.Filter.allows(tool) }

// keep returns whether the filter keeps a tool of server for the caller of
// ctx, or nil when no filter is set.
func (p *toolPolicy) keep(ctx context.Context, server string) func(*Tool) bool {
	if p.cfg.Filter.zero() {
		return nil
	}
	return func(t *Tool) bool { return p.cfg.Filter.keeps(ctx, server, t.desc) }
}

// visible is the one rule for which tools of a set are offered: those that
// keep keeps (the filters, see [toolPolicy.keep]; nil keeps every tool) and
// that are offered by nature (see [Tool.offered]). Tools without a name
// never get here: they are dropped when the list is read (catalog.go).
//
// set may be a catalog's shared list: it is never modified, and is returned
// as is when every tool is kept. keep is called once per tool, in order,
// before anything else, so that a Filter's Keep sees every tool that Allow
// and Deny keep.
func visible(set Toolset, app bool, keep func(*Tool) bool) Toolset {
	hidden := func(t *Tool) bool { return keep != nil && !keep(t) || !t.offered(app) }
	i := slices.IndexFunc(set, hidden)
	if i < 0 {
		return set
	}
	out := make(Toolset, i, len(set)-1)
	copy(out, set[:i])
	for _, t := range set[i+1:] {
		if !hidden(t) {
			out = append(out, t)
		}
	}
	return out
}

// offered reports whether t may be offered, filters aside: not when it is
// for an MCP Apps view alone and app is false, nor when the server
// requires task-based execution for it and the adapter cannot run it so
// (tasks.go).
func (t *Tool) offered(app bool) bool {
	return (app || !t.appOnly) && (t.taskSupport() != tasks.Required || t.conn.tasksOn())
}

// checkDuplicates fails when two tools share a name, ignoring case the way
// langchaingo's executor does (it looks tools up by strings.ToUpper). It
// checks the tools of one server once per set (catalogs.checkDistinct) and
// the tools of several when [Adapter.ListTools] joins them.
func checkDuplicates(set Toolset) error {
	seen := make(map[string]*Tool, len(set))
	for _, t := range set {
		// Folded at construction (tools.go): a cached ListTools of 1000
		// tools spent most of its time and 1000 allocations here.
		if t.name == "" {
			return errorf("mcpadapter: server %q: tool %q: Config.ToolName gave an empty name", t.server, t.desc.Name)
		}
		key := t.folded
		if prev, ok := seen[key]; ok {
			return fmt.Errorf("%w: %q (server %q, tool %q) and %q (server %q, tool %q)", ErrDuplicateToolName,
				prev.name, prev.server, prev.desc.Name, t.name, t.server, t.desc.Name)
		}
		seen[key] = t
	}
	return nil
}
