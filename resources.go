package mcpadapter

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ListResources lists every resource of the named server (all pages). A
// server without resources (method not found) has none: an empty list. The
// list is cached like tool lists; opts may set a [CacheMode] ([Servers] has
// no effect here). The caller owns the slice but must not mutate the
// resources.
func (a *Adapter) ListResources(ctx context.Context, server string, opts ...ListOption) ([]*mcp.Resource, error) {
	return a.listResources(ctx, server, opts)
}

// ListResourceTemplates lists every resource template of the named server
// (all pages), cached like [Adapter.ListResources]. A server without
// resources has none: an empty list.
func (a *Adapter) ListResourceTemplates(ctx context.Context, server string, opts ...ListOption) ([]*mcp.ResourceTemplate, error) {
	return a.listResourceTemplates(ctx, server, opts)
}

// ReadResource reads one resource of the named server.
func (a *Adapter) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	c, err := a.connect(ctx, server)
	if err != nil {
		return nil, err
	}
	ctx, done := c.callContext(ctx, 0)
	defer done()
	// The uncached key makes the SDK's own read cache miss; the adapter's
	// middleware restores the URI before the request is sent.
	res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uncached(uri)})
	if err != nil {
		return nil, c.callError(fmt.Sprintf("read resource %q", uri), err)
	}
	return res, nil
}
