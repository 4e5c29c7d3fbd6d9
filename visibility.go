package mcpadapter

import (
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Which tools the model is offered. A server may list tools that are not
// for the model:
//
//   - MCP Apps tools whose _meta.ui.visibility leaves out "model" (such as
//     ["app"]) are called by the app's view, never by the model. They are
//     left out of [Adapter.ListTools] and [Adapter.ListToolsets] unless
//     [IncludeAppOnly] asks for them, and [Toolset.Tools],
//     [Toolset.LLMTools] and [Toolset.HandleToolCalls] skip them in any
//     set, so that a set listed with IncludeAppOnly is still safe to hand
//     to an agent.
//   - A tool without a name cannot be called at all: it is dropped when the
//     list is read, with a debug log (catalog.go).
//
// visible (filter.go) carries out these rules together with the filters
// and the task-required tools.

// IncludeAppOnly makes [Adapter.ListTools] and [Adapter.ListToolsets]
// return the MCP Apps tools meant for the app alone too (see
// [Tool.AppOnly]), for an MCP Apps host that runs the tools its views
// call:
//
//	ts, err := a.ListTools(ctx, mcpadapter.IncludeAppOnly())
//	res, err := ts.Lookup(name).Invoke(ctx, args) // the view's call
//
// The model-facing methods of the set ([Toolset.Tools], [Toolset.LLMTools],
// [Toolset.HandleToolCalls]) still leave those tools out.
func IncludeAppOnly() ListOption {
	return func(o *listOptions) { o.appOnly = true }
}

// AppOnly reports whether the tool is for an MCP Apps view, not for the
// model: its _meta.ui.visibility is a list without "model" (such as
// ["app"]). Tools without a visibility are for both.
func (t *Tool) AppOnly() bool { return t.appOnly }

// appOnly reports whether d's _meta.ui.visibility leaves out the model.
// A visibility that is not a list is ignored (the default: model and app).
func appOnly(d *mcp.Tool) bool {
	ui, _ := d.Meta["ui"].(map[string]any)
	vis, ok := ui["visibility"].([]any)
	return ok && !slices.Contains(vis, any("model"))
}
