package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// A ListOption changes what [Adapter.ListTools] and [Adapter.ListToolsets]
// return.
type ListOption func(*listOptions)

type listOptions struct {
	servers []string
	cache   CacheMode
	appOnly bool // IncludeAppOnly
}

// FromServers selects the servers whose tools are returned; no names selects
// every server. Discovery still contacts every configured server, unless
// [Config.DialSelectedOnly] is set. Naming a per-principal server under a
// context without a principal fails the discovery with [ErrWrongPrincipal].
func FromServers(names ...string) ListOption {
	return func(o *listOptions) { o.servers = append(o.servers, names...) }
}

// ListTools discovers the tools of the selected servers (every server by
// default), dialing them in parallel as needed, and returns them sorted by
// server name, in each server's order, without the tools that
// [Config.Filter] drops for the caller of ctx. Tools for
// an MCP Apps view alone are left out unless [IncludeAppOnly] is given (see
// [Tool.AppOnly]), and so are tools that require task-based execution. It
// fails with [ErrDuplicateToolName] when two returned tools share a name
// (ignoring case). See [Config.OnConnectionError] for servers that fail.
func (a *Adapter) ListTools(ctx context.Context, opts ...ListOption) (Toolset, error) {
	sets, names, err := a.discover(ctx, opts)
	if err != nil {
		return nil, err
	}
	if len(names) == 1 {
		// discover checked this server's tools already. The set may be
		// the cache's own list: the caller gets a copy.
		return slices.Clone(sets[names[0]]), nil
	}
	var all Toolset
	for _, name := range names {
		all = append(all, sets[name]...)
	}
	if err := checkDuplicates(all); err != nil {
		return nil, err
	}
	return all, nil
}

// ListToolsets is like [Adapter.ListTools] but returns each selected
// server's tools separately, keyed by server name. Servers that were skipped
// are absent.
func (a *Adapter) ListToolsets(ctx context.Context, opts ...ListOption) (map[string]Toolset, error) {
	sets, _, err := a.discover(ctx, opts)
	return sets, err
}

// discover lists the tools of the servers it contacts (contacted) in
// parallel and returns those of the selected ones that the caller is
// offered (visible), each set checked for duplicate names, with the
// selected names in order.
func (a *Adapter) discover(ctx context.Context, opts []ListOption) (map[string]Toolset, []string, error) {
	o, err := listOptionsOf(opts)
	if err != nil {
		return nil, nil, err
	}
	all, selected, err := a.contacted(ctx, o.servers)
	if err != nil {
		return nil, nil, err
	}
	listings := make([]listing, len(all))
	g := a.pool.generation()
	var wg sync.WaitGroup
	for i, name := range all {
		if a.pool.stillSkipped(g, name) {
			listings[i].dialErr = true
			continue
		}
		wg.Go(func() { listings[i] = a.list(ctx, name, o) })
	}
	wg.Wait()
	sets, err := a.settle(ctx, g, all, selected, listings)
	if err != nil {
		return nil, nil, err
	}
	return sets, selected, nil
}

// contacted returns the servers a discovery of names (none: every server)
// under ctx contacts, and the selected ones, both sorted. It contacts
// every server (the selected ones with [Config.DialSelectedOnly]) but,
// without a principal, the per-principal ones, which have no connection
// to list: those are left out (a debug record says so), and naming one
// is [ErrWrongPrincipal].
func (a *Adapter) contacted(ctx context.Context, names []string) (all, selected []string, err error) {
	anonymous := principalFrom(ctx) == ""
	if len(names) > 0 {
		selected = slices.Compact(slices.Sorted(slices.Values(names)))
		for _, name := range selected {
			s, err := a.server(name)
			if err != nil {
				return nil, nil, err
			}
			if anonymous && s.perPrincipal() {
				return nil, nil, serverError(name, "list tools", errNoPrincipal)
			}
		}
		if a.cfg.DialSelectedOnly {
			return selected, selected, nil
		}
	}
	for _, name := range slices.Sorted(maps.Keys(a.cfg.Servers)) {
		if s := a.cfg.Servers[name]; anonymous && s.perPrincipal() {
			a.logger.DebugContext(ctx, "mcpadapter: per-principal server left out of a discovery without a principal (see WithPrincipal)", "server", name)
			continue
		}
		all = append(all, name)
	}
	if len(names) == 0 {
		selected = all
	}
	return all, selected, nil
}

// A listing is one server's part of a discovery: the tools the caller is
// offered, or why there are none (dialErr: the server could not be reached,
// or was skipped before).
type listing struct {
	tools   Toolset
	err     error
	dialErr bool
}

// list connects to the server name and lists the tools it offers the caller
// of ctx.
func (a *Adapter) list(ctx context.Context, name string, o listOptions) listing {
	var (
		tools Toolset
		c     *conn // the connection listed
	)
	dialErr, err := a.onConn(ctx, name, func(on *conn) (err error) {
		c = on
		tools, err = a.catalogs.tools(ctx, c, o.cache)
		return err
	})
	if dialErr {
		return listing{err: err, dialErr: true}
	}
	tools = visible(tools, o.appOnly, a.policy.keep(ctx, name))
	if err == nil {
		// A server listing two names that differ only in case fails
		// alone, as any other listing failure.
		if err = a.catalogs.checkDistinct(c, tools); err != nil {
			tools, err = nil, serverError(name, "list tools", err)
		}
	}
	return listing{tools: tools, err: err}
}

// settle applies the skip policy to the listings of every server (all, in
// order) and returns the tool sets of the selected ones, or the error of
// the discovery.
func (a *Adapter) settle(ctx context.Context, g *generation, all, selected []string, listings []listing) (map[string]Toolset, error) {
	// A server that failed because the caller's context ended, when no
	// server answered, is no server failure: the discovery failed, and an
	// empty catalog would look like servers without tools. (A server still
	// silent when others have answered is a connection failure like any
	// other.)
	answered := slices.ContainsFunc(listings, func(l listing) bool { return l.err == nil && !l.dialErr })
	callerGone := func(err error) bool { return !answered && ctx.Err() != nil && errors.Is(err, ctx.Err()) }

	sets := make(map[string]Toolset, len(selected))
	var errs []error
	for i, name := range all {
		out := listings[i]
		if out.err != nil && !slices.Contains(selected, name) {
			out.err = notSelected(out.err)
		}
		if out.err == nil {
			if out.dialErr {
				continue // skipped earlier
			}
			if slices.Contains(selected, name) {
				sets[name] = out.tools
			}
			a.pool.answered(g, name)
			continue
		}
		// Nor is a Close during discovery a server failure to skip.
		if a.cfg.OnConnectionError == nil || errors.Is(out.err, ErrClosed) || callerGone(out.err) {
			errs = append(errs, out.err)
			continue
		}
		if err := a.cfg.OnConnectionError(name, out.err); err != nil {
			errs = append(errs, err)
			continue
		}
		a.logger.WarnContext(ctx, "mcpadapter: skipping server", "server", name, "error", out.err)
		// A per-principal server failed for this principal alone: the
		// others' discoveries still dial it.
		if s := a.cfg.Servers[name]; out.dialErr && !isAuthFailure(out.err) && ctx.Err() == nil && !s.perPrincipal() {
			a.pool.skip(g, name, &s, out.err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return sets, nil
}

// notSelected adds to err, the failure of a server that a discovery
// contacted without selecting it, the option that leaves such servers
// alone.
func notSelected(err error) error {
	const hint = "not selected; Config.DialSelectedOnly dials the selected servers alone"
	if se, ok := err.(*ServerError); ok {
		return &ServerError{Server: se.Server, Op: se.Op, Err: fmt.Errorf("%w (%s)", se.Err, hint)}
	}
	return fmt.Errorf("%w (%s)", err, hint)
}
