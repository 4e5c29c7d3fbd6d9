package mcpadapter

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/mcpadapter/mcpadapter/internal/sdkcache"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ListResources lists every resource of the named server (all pages), its
// null entries left out. A server without resources (method not found) has
// none: an empty list. The list is cached like tool lists; opts may set a
// [CacheMode] ([FromServers] has no effect here). The caller owns the slice
// but must not mutate the resources.
func (a *Adapter) ListResources(ctx context.Context, server string, opts ...ListOption) ([]*mcp.Resource, error) {
	return listItems(ctx, a, server, opts, "list resources", "resources",
		func(cat *catalog) *entry[*mcp.Resource] { return &cat.resources },
		func(ctx context.Context, c *conn, cursor string) ([]*mcp.Resource, string, int, error) {
			res, err := c.session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", 0, err
			}
			return nonNil(res.Resources), res.NextCursor, res.TTLMs, nil
		})
}

// ListResourceTemplates lists every resource template of the named server
// (all pages), cached like [Adapter.ListResources]. A server without
// resources has none: an empty list.
func (a *Adapter) ListResourceTemplates(ctx context.Context, server string, opts ...ListOption) ([]*mcp.ResourceTemplate, error) {
	return listItems(ctx, a, server, opts, "list resource templates", "templates",
		func(cat *catalog) *entry[*mcp.ResourceTemplate] { return &cat.templates },
		func(ctx context.Context, c *conn, cursor string) ([]*mcp.ResourceTemplate, string, int, error) {
			res, err := c.session.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return nil, "", 0, err
			}
			return nonNil(res.ResourceTemplates), res.NextCursor, res.TTLMs, nil
		})
}

// ReadResource reads one resource of the named server; null entries of
// its contents are left out.
func (a *Adapter) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	var res *mcp.ReadResourceResult
	_, err := a.onConn(ctx, server, func(c *conn) (err error) {
		ctx, done := c.callContext(ctx)
		defer done()
		// The uncached key (slot 0: the SDK keeps one read) makes the
		// SDK's own read cache miss; the adapter's middleware restores
		// the URI before the request is sent.
		if res, err = c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: sdkcache.Lookup(0, uri)}); err != nil {
			return c.callError(fmt.Sprintf("read resource %q", uri), err)
		}
		if contents := nonNil(res.Contents); len(contents) != len(res.Contents) {
			r := *res // the SDK's, which it may keep: changed in a copy
			r.Contents, res = contents, &r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// SubscribeResource asks the named server to announce changes of the
// resource uri; each announcement calls [Config.OnResourceUpdated] with
// the principal of ctx ([WithPrincipal]; none is a principal of its own,
// ""). The server must advertise resources.subscribe: otherwise it fails
// with [ErrNotSupported]. On modern sessions the subscription is a
// subscriptions/listen stream of its own, which go-sdk opens without
// waiting for the server's acknowledgement (a server refusing the URI is
// not reported); on legacy ones it is a resources/subscribe request.
// Subscribing twice is subscribing once. More in docs/reference.md,
// "Adapter.SubscribeResource".
func (a *Adapter) SubscribeResource(ctx context.Context, server, uri string) error {
	op := fmt.Sprintf("subscribe to resource %q", uri)
	c, err := a.connect(ctx, server)
	if err != nil {
		return err
	}
	if caps := c.info.Capabilities; caps == nil || caps.Resources == nil || !caps.Resources.Subscribe {
		return serverError(server, op, ErrNotSupported)
	}
	if c.carrier != nil {
		return serverError(server, op, fmt.Errorf("%w on a session principals share (Config.ShareStatelessSessions)", ErrNotSupported))
	}
	subs := a.notify.conns.subscriptions(c.session, true)
	if subs == nil { // released
		if err := c.usable(op); err != nil {
			return err
		}
		return serverError(server, op, ErrClosed)
	}
	ctx, done := c.callContext(ctx)
	defer done()
	if err := subs.take(ctx); err != nil {
		return serverError(server, op, err)
	}
	defer subs.give()
	// The principal is subscribed first: a server may announce an update
	// before it answers.
	principal := principalFrom(ctx)
	added := subs.add(uri, principal)
	err = c.session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	if err != nil {
		err = c.callError(op, err)
	} else if err = c.usable(op); err != nil {
		// A modern Subscribe only starts a stream, which the SDK keeps
		// until the session's Close cancels it, even when that Close ran
		// first.
		c.session.Unsubscribe(context.WithoutCancel(ctx), &mcp.UnsubscribeParams{URI: uri})
	}
	if err != nil && added {
		subs.remove(uri, principal)
	}
	return err
}

// UnsubscribeResource ends the subscription of ctx's principal made by
// [Adapter.SubscribeResource]. It is idempotent: a uri the principal is not
// subscribed to, or a server without a live connection (whose
// subscriptions ended with it), is no error.
func (a *Adapter) UnsubscribeResource(ctx context.Context, server, uri string) error {
	s, err := a.server(server)
	if err != nil {
		return err
	}
	c := a.pool.live(ctx, server, s)
	if c == nil {
		if key, err := connKeyOf(ctx, server, s); err == nil {
			a.pool.generation().held.drop(key, uri, principalFrom(ctx))
		}
		return nil
	}
	subs := a.notify.conns.subscriptions(c.session, false)
	if subs == nil {
		return nil
	}
	op := fmt.Sprintf("unsubscribe from resource %q", uri)
	ctx, done := c.callContext(ctx)
	defer done()
	if err := subs.take(ctx); err != nil {
		return serverError(server, op, err)
	}
	defer subs.give()
	if was, last := subs.remove(uri, principalFrom(ctx)); !was || !last {
		return nil // others still want the updates
	}
	if err := c.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		return c.callError(op, err)
	}
	return nil
}

// connSubscriptions holds the resource subscriptions of one connection: the
// principals subscribed to each URI. A URI's subscription at the server
// lasts while a principal holds it.
type connSubscriptions struct {
	// turn is held, by a send into it, while the subscriptions change and
	// their request is sent: the requests of one connection go one at a
	// time, so that the server's subscription follows the principals'.
	turn  chan struct{}
	mu    sync.Mutex          // guards byURI
	byURI map[string][]string // the principals subscribed to each URI, in the order they subscribed
}

// take waits for the turn to change s, up to ctx's end.
func (s *connSubscriptions) take(ctx context.Context) error {
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// give ends the turn that take began.
func (s *connSubscriptions) give() { <-s.turn }

// add subscribes principal to uri, and reports whether it was not yet.
func (s *connSubscriptions) add(uri, principal string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.byURI[uri], principal) {
		return false
	}
	s.byURI[uri] = append(s.byURI[uri], principal)
	return true
}

// remove unsubscribes principal from uri. It reports whether principal was
// subscribed, and whether the last subscriber of uri went.
func (s *connSubscriptions) remove(uri, principal string) (was, last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.byURI[uri]
	i := slices.Index(ps, principal)
	if i < 0 {
		return false, false
	}
	if ps = slices.Delete(ps, i, i+1); len(ps) == 0 {
		delete(s.byURI, uri)
		return true, true
	}
	s.byURI[uri] = ps
	return true, false
}

// all returns the principals subscribed to each URI: a copy.
func (s *connSubscriptions) all() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make(map[string][]string, len(s.byURI))
	for uri, ps := range s.byURI {
		all[uri] = slices.Clone(ps)
	}
	return all
}

// restore subscribes again, on a new connection, what the principals held
// on the connection before it (all): it adds them at once, so that an
// unsubscribe that comes first finds them, then, in its turn, asks the
// server for each URI still wanted with subscribe. A URI the server
// refuses is dropped; failed is told of it.
func (s *connSubscriptions) restore(ctx context.Context, held map[string][]string, subscribe func(context.Context, string) error, failed func(uri string, err error)) {
	for uri, ps := range held {
		for _, p := range ps {
			s.add(uri, p)
		}
	}
	if err := s.take(ctx); err != nil {
		return
	}
	defer s.give()
	for uri, ps := range held {
		s.mu.Lock()
		wanted := len(s.byURI[uri]) > 0
		s.mu.Unlock()
		if !wanted {
			continue // unsubscribed meanwhile
		}
		if err := subscribe(ctx, uri); err != nil {
			for _, p := range ps {
				s.remove(uri, p)
			}
			failed(uri, err)
		}
	}
}

// heldSubscriptions keeps, by connection key (a server and principal),
// the subscriptions of connections that ended without being closed, for
// the next connection of the key to restore: a subscription belongs to its
// principal and server, not to one session. The zero heldSubscriptions is empty.
type heldSubscriptions struct {
	mu    sync.Mutex
	byKey map[connKey]map[string][]string
}

// put keeps subs, the subscriptions (all) of key's connection that ended.
func (h *heldSubscriptions) put(key connKey, subs map[string][]string) {
	if len(subs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byKey == nil {
		h.byKey = map[connKey]map[string][]string{}
	}
	h.byKey[key] = subs
}

// take returns and forgets what key's ended connection held, or nil.
func (h *heldSubscriptions) take(key connKey) map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.byKey[key]
	delete(h.byKey, key)
	return subs
}

// drop forgets principal's subscription to uri kept for key: it
// unsubscribed while no connection of the key was live.
func (h *heldSubscriptions) drop(key connKey, uri, principal string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.byKey[key]
	if subs == nil {
		return
	}
	if subs[uri] = slices.DeleteFunc(subs[uri], func(p string) bool { return p == principal }); len(subs[uri]) == 0 {
		delete(subs, uri)
	}
	if len(subs) == 0 {
		delete(h.byKey, key)
	}
}

// nonNil returns items without their nil entries (a server's nulls, which
// go-sdk decodes as nil pointers), in a slice of its own when there were
// any, so that the SDK's cached copy stays as it came.
func nonNil[T any](items []*T) []*T {
	if !slices.Contains(items, nil) {
		return items
	}
	return slices.DeleteFunc(slices.Clone(items), func(p *T) bool { return p == nil })
}
