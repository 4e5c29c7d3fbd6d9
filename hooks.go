package mcpadapter

// Call hooks: middleware around one tool call, before the approval gate
// and the server.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/mcpadapter/mcpadapter/internal/schemaguard"
)

// A CallRequest is one tool call as [Middleware] sees it. A middleware may
// change Args and Meta before it calls the next handler; the other fields
// describe the call and are not read back.
type CallRequest struct {
	Server  string // the server's name in [Config.Servers]
	Tool    string // the adapter's (possibly prefixed) tool name
	MCPName string // the server's own tool name
	// CallID identifies the call: the model's tool-call id when the call
	// came through [Toolset.HandleToolCalls], else an id the adapter made
	// up, unique within the process.
	CallID string
	// Principal is whom the call acts for: the principal of the tool's
	// connection to a per-principal server (see [WithPrincipal]), "" for a
	// shared server.
	Principal string
	// Args are the arguments to send. Arguments that a middleware changed
	// are checked against the tool's input schema before anything is sent.
	Args map[string]any
	// Meta is sent as the request's _meta (besides the keys the adapter and
	// the SDK add: progressToken, traceparent, tracestate, and the modern
	// era's io.modelcontextprotocol/* keys, which win).
	Meta map[string]any
	// Headers, set by a middleware, are added to the HTTP requests of this
	// call alone (each of its rounds), on a Streamable HTTP or SSE server,
	// shared or per-principal, over [Server.Headers] and
	// [Server.HeadersFor]. Like those they go only to the server's origin:
	// never to a redirect elsewhere, nor to another server. On any other
	// server (stdio, [InMemory], a custom transport), or with a header the
	// transport sets itself (Accept, Content-Type, Host, Mcp-*, ...), the
	// call fails with a [*ServerError] and nothing is sent.
	Headers map[string]string
}

// A CallHandler runs a tool call and returns its result, as [Tool.Invoke]
// does: a tool-level failure is a [Result] with IsError set; an
// [*Interrupt] or a [*ServerError] is an error.
type CallHandler func(ctx context.Context, req *CallRequest) (*Result, error)

// A Middleware wraps the handler of every tool call, in the way of
// net/http middleware: it may rewrite the request before calling next,
// answer without calling next (the server is then not contacted),
// replace the result, or observe errors. [Config.Middleware] lists them
// outermost first. More in docs/reference.md, "Middleware".
type Middleware func(next CallHandler) CallHandler

// chain returns h wrapped in mws, the first outermost. A layer that returns
// neither a result nor an error (which the CallHandler contract rules out,
// and a caller reading the result would crash on) fails the call instead,
// naming its place in [Config.Middleware].
func chain(mws []Middleware, h CallHandler) CallHandler {
	for i := len(mws) - 1; i >= 0; i-- {
		next := mws[i](h)
		h = func(ctx context.Context, req *CallRequest) (*Result, error) {
			res, err := next(ctx, req)
			if res == nil && err == nil {
				return nil, errorf("mcpadapter: server %q: tool %q: Config.Middleware[%d] returned neither a result nor an error", req.Server, req.Tool, i)
			}
			return res, err
		}
	}
	return h
}

// hooked runs the call of args through [Config.Middleware], then the
// approval gate (send, with g). Arguments that a middleware rewrote are
// validated against the tool's input schema first: a violation is a
// model-visible error result, and nothing is sent.
func (t *Tool) hooked(ctx context.Context, info *callInfo, args map[string]any, g *grant) (*Result, error) {
	mws := t.a.cfg.Middleware
	if len(mws) == 0 {
		return t.send(ctx, info, args, g)
	}
	req := &CallRequest{
		Server: t.server, Tool: t.name, MCPName: t.MCPName(), CallID: info.id, Principal: t.conn.key.principal,
		Args: jsonvalue.Copy(args),
	}
	h := chain(mws, func(ctx context.Context, req *CallRequest) (*Result, error) {
		// req.Args is a copy: args itself is what the caller asked for.
		if !reflect.DeepEqual(req.Args, args) {
			if err := t.checkArgs(req.Args); err != nil {
				if errors.Is(err, ErrUnsafeSchema) { // not the model's to fix: the call fails
					return nil, serverError(t.server, callToolOp(t.desc.Name), err)
				}
				return errorResult(fmt.Sprintf("Error: the arguments of tool %s, as rewritten before the call, do not match its input schema: %v", t.name, err)), nil
			}
		}
		info.meta = maps.Clone(req.Meta)
		if f, ok := ctx.Value(progressKey{}).(func(Progress)); ok && f != nil {
			info.onProgress, info.progress = f, true // a middleware's WithProgress
		}
		if len(req.Headers) > 0 {
			c := t.conn.current()
			if err := c.checkCallHeaders(req.Headers); err != nil {
				return nil, serverError(t.server, callToolOp(t.desc.Name), err)
			}
			ctx = withCallHeaders(ctx, c, req.Headers)
		}
		return t.send(ctx, info, req.Args, g)
	})
	return h(ctx, req)
}

// checkArgs validates args against the tool's input schema, resolved once
// after it passed the schema guard (internal/schemaguard). A schema the
// guard refuses is an error wrapping ErrUnsafeSchema that names the tool:
// the call fails, and nothing is sent.
func (t *Tool) checkArgs(args map[string]any) error {
	t.schemaOnce.Do(func() {
		if err := schemaguard.Check(t.desc.InputSchema); err != nil {
			t.schemaErr = fmt.Errorf("%w: the input schema of tool %s, needed to check the arguments Config.Middleware rewrote: %w", ErrUnsafeSchema, t.name, err)
			return
		}
		b, err := json.Marshal(t.desc.InputSchema)
		if err != nil {
			t.schemaErr = err
			return
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.schemaErr = err
			return
		}
		t.schema, t.schemaErr = s.Resolve(nil)
	})
	switch {
	case errors.Is(t.schemaErr, ErrUnsafeSchema):
		return t.schemaErr
	case t.schemaErr != nil:
		return fmt.Errorf("the tool's input schema cannot be used: %w", t.schemaErr)
	}
	if args == nil {
		args = map[string]any{}
	}
	// Validate what is sent, as JSON: numbers as float64, nested maps plain.
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return t.schema.Validate(v)
}
