package mcpadapter

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter/internal/observe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerInfo describes a connected server and what was negotiated with it.
type ServerInfo struct {
	Name, Version   string
	Title           string // the server's display name; "" when it sent none
	Era             Era    // EraModern or EraLegacy: what was negotiated
	ProtocolVersion string
	// Instructions are the server's instructions. On a shared session
	// (Config.ShareStatelessSessions) only the principal whose handshake
	// dialed it has them: a server may give each principal its own, and
	// the other principals make no handshake; "" for them.
	Instructions string
	Capabilities *mcp.ServerCapabilities
}

// Era is the protocol era negotiated with a server, in [ServerInfo] and
// [ServerStatus]. A [Mode] says which eras a dial may negotiate; an Era is
// what it did.
type Era string

// The eras. Their values are those of the Modes that ask for them.
const (
	EraModern Era = "modern" // 2026-07-28 and later: server/discover
	EraLegacy Era = "legacy" // up to 2025-11-25: the initialize handshake
)

// An Adapter gives access to the tools and resources of a set of MCP
// servers. It is safe for concurrent use. Close it to end its connections
// and stdio processes; a closed Adapter can be used again, and dials fresh
// connections.
//
// [New] only validates the configuration. The first discovery dials every
// server it names in parallel, negotiates each one's protocol era (see
// [Adapter.ServerInfo]) and lists its tools; connections are then kept and
// shared until Close. [Config.OnConnectionError] decides whether a server
// that cannot be reached fails discovery (the default) or is skipped
// ([IgnoreConnectionErrors]). A server with [Server.HeadersFor] or
// [Server.OAuthFor] gets a connection per principal ([WithPrincipal]).
// [Adapter.Status] reports each server's state for a health endpoint.
// [Config.Logger], [Config.MeterProvider] and [Config.TracerProvider]
// observe dials and calls; the Adapter calls them, and every callback and
// hook, without a lock of its own held.
type Adapter struct {
	cfg     Config
	logger  *slog.Logger
	tracer  *observe.Tracer  // nil: no spans
	metrics *observe.Metrics // nil: no metrics
	callIDs atomic.Uint64    // ids of calls not made by a model
	limit   int              // what one result gives the model, in characters (Config.ResultBudget); -1: no bound

	policy   toolPolicy // names, filters, output schemas: read-only
	pool     pool
	catalogs catalogs
	notify   notifier
	states   states         // stored state: sealing, and the checks before a resume or decision
	elicit   elicitor       // answers elicitation requests during calls
	live     liveInterrupts // the live interrupts held for their resume (live.go)
}

// New validates cfg and returns an Adapter. It opens no connection and starts
// no goroutine. All configuration problems are returned together, joined,
// each a [*ConfigError] naming its server and field.
func New(cfg Config) (*Adapter, error) {
	servers, err := checkConfig(cfg)
	if err != nil {
		return nil, err
	}
	cfg.Servers = servers
	cfg.Middleware = slices.Clone(cfg.Middleware)
	cfg.State.Key = slices.Clone(cfg.State.Key)
	cfg.State.OldKeys = slices.Clone(cfg.State.OldKeys)
	for i, k := range cfg.State.OldKeys {
		cfg.State.OldKeys[i] = slices.Clone(k)
	}
	cfg.Filter = cfg.Filter.clone()
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &Adapter{cfg: cfg, logger: logger, tracer: observe.NewTracer(cfg.TracerProvider, errorType), metrics: observe.NewMetrics(cfg.MeterProvider, logger, errorType), limit: budgetLimit(cfg.ResultBudget)}
	a.policy = toolPolicy{cfg: &a.cfg, logger: logger}
	a.elicit = elicitor{handler: cfg.ElicitationHandler, logger: logger}
	a.pool = pool{cfg: &a.cfg, logger: logger, metrics: a.metrics, dials: perServer[atomic.Int64](servers), dialer: dialer{a: a}}
	a.catalogs = catalogs{a: a}
	a.notify = notifier{cfg: &a.cfg, logger: logger, metrics: a.metrics, counts: newDeliveryCounts(perServer[Deliveries](servers), countedPrincipals)}
	a.states = newStates(&a.cfg)
	return a, nil
}

// Close cancels in-flight calls and dials, closes every session (ending
// stdio server processes) and clears the caches. It is idempotent and safe
// for concurrent use, and returns nil: a server that fails to end cleanly
// is logged, not reported. Tools, sessions and interrupts obtained before
// fail with [ErrClosed]; the next discovery dials fresh connections. Live
// interrupts ([Interrupt.Live]) end first: their servers' questions are
// answered cancel, and Close waits up to 2 s for those calls to end.
//
// Close keeps open, and forgets, the legacy Streamable HTTP sessions that
// hold tasks it handed out and has not seen end, so that another Adapter
// can still follow them from their stored state; the server's session
// expiry ends them (docs/reference.md, "Long-running tools").
func (a *Adapter) Close() error {
	a.live.close()
	a.pool.close()
	return nil
}

// listChanged handles a server's list_changed notification of kind on
// session, the connection of key: the connections of that session drop
// their cached list, then [Config.OnListChanged] is queued.
func (a *Adapter) listChanged(g *generation, key connKey, kind ListKind, session *mcp.ClientSession) {
	s := a.cfg.Servers[key.server]
	if conns := a.pool.sessionConns(g, key.server, &s, session); len(conns) > 0 {
		a.catalogs.invalidate(conns, kind)
		a.logger.Debug("mcpadapter: "+kind.singular()+" list changed", key.attrs()...)
	}
	a.notify.listChanged(g, key, kind)
}

// Session returns the live go-sdk session of the named server (of ctx's
// principal for a per-principal server), dialing it if needed. The Adapter owns the session: do not close it. A reconnect or
// [Adapter.Close] may replace it. The session that the principals of a
// stateless server share ([Config.ShareStatelessSessions]) is not handed
// out ([ErrNotSupported]): its requests would carry no principal's
// credentials.
func (a *Adapter) Session(ctx context.Context, server string) (*mcp.ClientSession, error) {
	c, err := a.connect(ctx, server)
	if err != nil {
		return nil, err
	}
	if c.carrier != nil {
		return nil, serverError(server, "session", errorf("%w: the principals of the server share its session (Config.ShareStatelessSessions)", ErrNotSupported))
	}
	return c.session, nil
}

// ServerInfo reports what the named server said about itself and which era
// was negotiated, dialing it if needed.
func (a *Adapter) ServerInfo(ctx context.Context, server string) (*ServerInfo, error) {
	c, err := a.connect(ctx, server)
	if err != nil {
		return nil, err
	}
	info := c.info
	return &info, nil
}

// SetLoggingLevel asks a legacy-era server to send log messages at level and
// above; they go to [Config.Logger]. Modern servers have no such request
// (use [Server.LogLevel]): on them it fails with [ErrModernServer].
func (a *Adapter) SetLoggingLevel(ctx context.Context, server string, level mcp.LoggingLevel) error {
	c, err := a.connect(ctx, server)
	if err != nil {
		return err
	}
	if c.modern() {
		return serverError(server, "set logging level", ErrModernServer)
	}
	ctx, done := c.callContext(ctx)
	defer done()
	if err := c.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
		return c.callError("set logging level", err)
	}
	return nil
}
