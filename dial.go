package mcpadapter

// Dialing one server: the go-sdk client and its sending middleware, the
// transport (stdio, a custom one, Streamable HTTP with its SSE fallback),
// the handshake under the dial timeout, and what the session tells of the
// server. The era each Mode asks for is in eras.go, the HTTP transport of
// URL servers in httptransport.go.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/mcpadapter/mcpadapter/internal/observe"
	"github.com/mcpadapter/mcpadapter/internal/redact"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/tasks"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

const (
	// defaultMaxMessageBytes is the default bound on one server message; the
	// go-sdk stdio transport caps a line at this size whatever is asked.
	defaultMaxMessageBytes = 16 << 20
	// dialTimeout is the default Config.DialTimeout, the bound on one dial
	// (a handshake, with its SSE fallbacks): callers wait on their own
	// contexts, but a server that never answers must not hold the shared
	// dial forever.
	dialTimeout = time.Minute
	// clientName identifies the adapter to servers.
	clientName = "mcpadapter"
)

// A dialer opens the connections of an Adapter's pool (pool.open): for one
// server, the go-sdk client with the adapter's handlers, the transport,
// the handshake in the era the server's Mode asks for under the dial
// timeout, and what the session tells of the server. It keeps no state
// between dials, which run concurrently, each on a conn of its own.
type dialer struct {
	// a is the Adapter whose connections it dials: their conn.a, and the
	// targets of the handlers of the clients it builds (newClient): the
	// notifier, list_changed (Adapter.listChanged) and live elicitation
	// requests (elicitor.live). Its configuration, logger and tracer are
	// the dialer's.
	a *Adapter

	stdio stdioTunables // zero but in tests
}

// dial opens a new session with the named server under the generation's
// context (not a caller's: the SSE transport ties its stream to the context
// of Connect, and the dial is shared by every waiting caller). The
// handshake of a shared session (share.go) carries the credentials of
// dialFor, the principal's conn that dials it.
func (d *dialer) dial(g *generation, key connKey, s *Server, dialFor *conn) (*conn, error) {
	name := key.server
	c := &conn{link: &link{done: make(chan struct{})}, server: name, key: key, cfg: s, a: d.a, gen: g, life: g.ctx}
	client := s.Client
	if client == nil {
		client = d.newClient(g, key)
		client.AddReceivingMiddleware(checkRequests, c.refuseInputRequests) // checkRequests first
		if c.carries() {
			client.AddSendingMiddleware(dropListen)
		}
	} else {
		prepare(client)
	}
	// The session keeps the dial's context (SSE ties its stream to it), so
	// the dial timeout cancels it only while the handshake runs.
	ctx, cancel := context.WithCancel(g.ctx)
	if dialFor != nil {
		ctx = context.WithValue(ctx, requesterKey{}, dialFor)
		c.shookFor = dialFor.key.principal
	}
	limit := orDefault(d.a.cfg.DialTimeout, dialTimeout)
	timer := time.AfterFunc(limit, cancel)
	cs, err := d.connectEra(ctx, c, client)
	if !timer.Stop() { // timed out, maybe just after the handshake ended
		if err == nil {
			cs.Close()
		}
		err = fmt.Errorf("no handshake within %v (Config.DialTimeout): %w", limit, context.DeadlineExceeded)
	}
	if err != nil {
		cancel()
		if c.stop != nil {
			// A stdio server that never answered gets the spec's shutdown
			// (stdin closed, then SIGTERM, each with its grace) after the
			// error is returned, not before: DialTimeout bounds the dial.
			// The generation owns the shutdown, so the server is reaped
			// before Close returns.
			g.background(c.stop)
		}
		if g.ctx.Err() != nil {
			err = ErrClosed
		}
		return nil, serverError(name, "dial", err)
	}
	stop := c.stop
	c.stop = func() {
		cancel()
		if stop != nil {
			stop()
		}
	}
	c.session = cs
	c.screen.EndHandshake()
	ir := cs.InitializeResult()
	c.info = ServerInfo{ProtocolVersion: ir.ProtocolVersion, Instructions: ir.Instructions, Capabilities: ir.Capabilities, Era: EraLegacy}
	if ir.ProtocolVersion >= modernVersion {
		c.info.Era = EraModern
	}
	if ir.ServerInfo != nil {
		c.info.Name, c.info.Version, c.info.Title = ir.ServerInfo.Name, ir.ServerInfo.Version, ir.ServerInfo.Title
	}
	if s.Mode == ModeModern && c.info.Era != EraModern {
		c.close()
		return nil, serverError(name, "dial", fmt.Errorf("%w (negotiated %s)", ErrLegacyOnly, ir.ProtocolVersion))
	}
	d.a.logger.Debug("mcpadapter: connected", "server", name, "era", c.info.Era, "protocol", ir.ProtocolVersion)
	return c, nil
}

// newClient builds the go-sdk client of one dial: automatic multi-round-trip
// handling off (the adapter drives input rounds itself), elicitation
// advertised (form and URL), list_changed wired to the catalog cache and,
// with resources/updated and log messages, to the notifier (notify.go),
// for the connection of key. Progress reaches the notifier from the
// connection's screen (newScreen), in order with the answers.
func (d *dialer) newClient(g *generation, key connKey) *mcp.Client {
	name := key.server
	client := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1"}, &mcp.ClientOptions{
		Logger: d.a.cfg.Logger,
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return d.a.elicit.live(ctx, name, req)
		},
		// A non-nil Capabilities also drops the SDK's default roots capability.
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
			Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{},
		}},
		ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedRequest) {
			d.a.listChanged(g, key, ToolList, req.Session)
		},
		ResourceListChangedHandler: func(ctx context.Context, req *mcp.ResourceListChangedRequest) {
			d.a.listChanged(g, key, ResourceList, req.Session)
		},
		PromptListChangedHandler: func(ctx context.Context, req *mcp.PromptListChangedRequest) {
			d.a.listChanged(g, key, PromptList, req.Session)
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			d.a.notify.resourceUpdated(g, key, req)
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			d.a.notify.serverLog(g, key, req.Params) // bounded (notify.go)
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	addSendingMiddleware(client)
	return client
}

// addSendingMiddleware adds the adapter's sending middleware to client,
// one per concern, outermost first: the era policy (eraPolicy, eras.go:
// it refuses initialize in a ModeModern handshake), the SDK's list cache
// (sdkCacheSlots, sdkcache.go: it restores uncached keys and answers
// purges, never sent) and the modern per-request log level
// (requestLogLevel, eras.go), set last on what is sent. Each is stateless,
// reading what a dial or a request asks of it from the context.
func addSendingMiddleware(client *mcp.Client) {
	client.AddSendingMiddleware(eraPolicy, sdkCacheSlots, requestLogLevel)
}

// prepared records the prebuilt clients that have the adapter's
// middleware, whichever Adapter installed it: the middleware is stateless,
// and a client shared by many Adapters (one per request, say) must not
// grow a layer per Adapter, which go-sdk cannot remove again. Keys are
// weak, and an entry goes with its client. It is package state, not an
// Adapter's, because the client it describes outlives any Adapter.
var (
	preparedMu sync.Mutex
	prepared   = map[weak.Pointer[mcp.Client]]bool{}
)

// prepare installs the adapter's middleware on a prebuilt client, once.
func prepare(client *mcp.Client) {
	preparedMu.Lock()
	defer preparedMu.Unlock()
	key := weak.Make(client)
	if prepared[key] {
		return
	}
	prepared[key] = true
	addSendingMiddleware(client)
	client.AddReceivingMiddleware(checkRequests, checkRequestedSchema)
	runtime.AddCleanup(client, func(key weak.Pointer[mcp.Client]) {
		preparedMu.Lock()
		delete(prepared, key)
		preparedMu.Unlock()
	}, key)
}

// connectTransport connects client to the server of c over its transport.
func (d *dialer) connectTransport(ctx context.Context, c *conn, client *mcp.Client, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	s := c.cfg
	so := d.screenOptions(c.server, c.tasks.calls.Claim, c.tasks.declared.Saw, func(params []byte) { d.a.notify.progressed(c, params) })
	so.SDKRounds = s.Client != nil // a prebuilt client's multi-round-trip middleware may be on
	sc := wire.New(so)
	c.screen = sc
	switch {
	case s.Transport != nil:
		t, err := s.Transport(ctx)
		if err != nil {
			return nil, fmt.Errorf("transport: %w", err)
		}
		if t == nil {
			return nil, errors.New("transport: Server.Transport returned a nil transport")
		}
		return d.connectCustom(ctx, client, c, sc, t, opts)
	case s.Command != "":
		return client.Connect(ctx, c.own(d.commandTransport(c, sc)), opts)
	default:
		cs, err := d.connectHTTP(ctx, client, c, sc, opts)
		return cs, redact.Error(err, sseEndpoints(s.URL)...) // s.URL is the first
	}
}

// stdioTunables are what the stdio servers of a dialer get besides their
// Server's settings, which tests set on an Adapter before it dials:
// terminate is stdio.Options.Terminate (0: its default), and unwatched
// starts servers without the process-wide watcher, as on a system that has
// none.
type stdioTunables struct {
	terminate time.Duration
	unwatched bool
}

// commandTransport builds a fresh stdio transport for the server of c
// (internal/stdio), its output screened by sc; c.stop ends what it starts.
func (d *dialer) commandTransport(c *conn, sc *wire.Screen) mcp.Transport {
	s := c.cfg
	t, stop := stdio.NewTransport(stdio.Options{
		Command:   s.Command,
		Args:      s.Args,
		Dir:       s.Dir,
		Env:       s.Env,
		Screen:    sc,
		Logger:    d.a.logger,
		Server:    c.server,
		Terminate: d.stdio.terminate,
		Unwatched: d.stdio.unwatched,
	})
	c.stop = stop
	return t
}

// connectCustom connects client over t, a transport of Server.Transport's.
// go-sdk's HTTP client transports go through the adapter's HTTP transport
// as a URL server's do (connectStreamable, connectSSE), with Server.Mode
// for their era and no SSE fallback; any other transport is screened by
// screenTransport.
func (d *dialer) connectCustom(ctx context.Context, client *mcp.Client, c *conn, sc *wire.Screen, t mcp.Transport, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	switch t := t.(type) {
	case *mcp.StreamableClientTransport:
		cs, err := d.connectStreamable(ctx, client, c, sc, t, opts)
		return cs, redact.Error(err, t.Endpoint)
	case *mcp.SSEClientTransport:
		cs, err := d.connectSSE(ctx, client, c, sc, t, opts)
		return cs, redact.Error(err, t.Endpoint)
	}
	return client.Connect(ctx, c.own(screenTransport(sc, t)), opts)
}

// wrapTransport returns a transport that connects through base and hands
// the connection it makes to wrap, for the adapter's connection wrappers
// (conn.own, screenTransport).
func wrapTransport(base mcp.Transport, wrap func(mcp.Connection) mcp.Connection) mcp.Transport {
	return &wrappedTransport{base: base, wrap: wrap}
}

// A wrappedTransport is the Transport wrapTransport returns.
type wrappedTransport struct {
	base mcp.Transport
	wrap func(mcp.Connection) mcp.Connection
}

// Connect implements [mcp.Transport].
func (t *wrappedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return t.wrap(conn), nil
}

// connectHTTP dials a URL server over Streamable HTTP and falls back to SSE
// when the endpoint is not a Streamable HTTP one. The spec's backwards
// compatibility rule: a client that gets 4xx for its first POST may assume an
// old HTTP+SSE server. In auto mode only 404 and 405 count (a 400 is more
// often a real error); in legacy mode any 4xx but 401/403 does.
func (d *dialer) connectHTTP(ctx context.Context, client *mcp.Client, c *conn, sc *wire.Screen, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	s := c.cfg
	c.oauth = s.OAuth
	if s.OAuthFor != nil && !c.carries() { // a shared session's requests carry their principal's (share.go)
		c.oauth = s.OAuthFor(c.key.principal)
	}
	st := &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: s.HTTPClient, OAuthHandler: c.oauth}
	cs, err := d.connectStreamable(ctx, client, c, sc, st, opts)
	if err == nil {
		return cs, nil
	}
	code := httpStatus(err)
	if !shouldFallBack(s, code) {
		if code == http.StatusBadRequest && s.Mode == ModeAuto && !s.DisableSSEFallback {
			// What an SSE-only go-sdk server answers a Streamable POST.
			err = fmt.Errorf("%w (if this is an HTTP+SSE server, set Mode: ModeLegacy: it falls back to SSE on any 4xx)", err)
		}
		return nil, err
	}
	errs := []error{fmt.Errorf("streamable HTTP: %w", err)}
	for _, endpoint := range sseEndpoints(s.URL) {
		sse := &mcp.SSEClientTransport{Endpoint: endpoint, HTTPClient: s.HTTPClient}
		// SSE servers are legacy-only: skip the discover probe.
		cs, err := d.connectSSE(ctx, client, c, sc, sse, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
		if err == nil {
			d.a.logger.DebugContext(ctx, "mcpadapter: fell back to SSE", "url", redact.URL(endpoint))
			return cs, nil
		}
		errs = append(errs, fmt.Errorf("SSE %s: %w", redact.URL(endpoint), err))
	}
	return nil, errors.Join(errs...)
}

// connectStreamable connects client over a copy of st (the caller's value
// is not changed; the copy keeps the SDK's unexported settings) whose
// requests go through the adapter's HTTP transport (httpConn) at
// st.Endpoint's origin: the server's headers and credential policy, the
// screen with its MaxMessageBytes bound, and the signs of the session's
// end. The copy's event cap is the adapter's (maxEventSize). The Streamable HTTP connection itself is not wrapped (sdkcompat.go,
// entry 5): c.http ends its requests. A failure that got an HTTP
// error status wraps an *httpStatusError.
func (d *dialer) connectStreamable(ctx context.Context, client *mcp.Client, c *conn, sc *wire.Screen, st *mcp.StreamableClientTransport, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	rt := newHTTPConn(c, sc, st.Endpoint, nil)
	cp := *st
	cp.HTTPClient = rt.Client(st.HTTPClient)
	cp.MaxEventSize = d.maxEventSize()
	// The connection, unwrapped, carries the requests of the adapter's own.
	// The SDK opens the standalone event stream within Connect under the
	// connection's own context, not ctx, and retries a GET that fails for
	// seconds: the end of ctx closes the connection while Connect runs.
	var abandon func() bool
	cs, err := client.Connect(ctx, wrapTransport(&cp, func(conn mcp.Connection) mcp.Connection {
		abandon = context.AfterFunc(ctx, func() { conn.Close() })
		return c.tasks.calls.Record(conn)
	}), opts)
	if abandon != nil && !abandon() && err == nil {
		cs.Close()
		err = fmt.Errorf("the handshake was abandoned: %w", context.Cause(ctx))
	}
	if err != nil {
		return nil, rt.statusOf(err)
	}
	c.http, c.overHTTP, c.tasks.streamable = rt, true, st
	return cs, nil
}

// connectSSE is connectStreamable for an HTTP+SSE transport, whose
// connection is the adapter's own (conn.own). go-sdk's SSE transport has no
// OAuth support: the adapter's transport brings the OAuth handler of a URL
// server's dial (c.oauth), a token on every request and the Authorize flow
// on a 401 or 403, as go-sdk does for Streamable HTTP.
func (d *dialer) connectSSE(ctx context.Context, client *mcp.Client, c *conn, sc *wire.Screen, sse *mcp.SSEClientTransport, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	rt := newHTTPConn(c, sc, sse.Endpoint, c.oauth)
	cp := *sse
	cp.HTTPClient = rt.Client(sse.HTTPClient)
	cp.MaxEventSize = d.maxEventSize()
	cs, err := client.Connect(ctx, c.own(&cp), opts)
	if err != nil {
		return nil, rt.statusOf(err)
	}
	c.overHTTP = true
	return cs, nil
}

// maxEventSize is the SDK's cap on one server-sent event of an HTTP
// transport. The screen in the RoundTripper bounds every message at
// MaxMessageBytes and fails only the call concerned; the SDK's cap stays
// as a backstop, with room for the unknown-content placeholders the screen
// may add to a message within the bound.
func (d *dialer) maxEventSize() int { return 2*d.maxMessageBytes() + 64<<10 }

// shouldFallBack decides whether a failed Streamable HTTP dial that got
// HTTP status code is retried over SSE.
func shouldFallBack(s *Server, code int) bool {
	if s.DisableSSEFallback || s.Mode == ModeModern {
		return false
	}
	switch {
	case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
		return true
	case s.Mode == ModeLegacy:
		return code >= 400 && code < 500 && code != http.StatusUnauthorized && code != http.StatusForbidden
	}
	return false
}

// sseEndpoints lists where an SSE server may be: the same URL, then the URL
// with a trailing /mcp replaced by /sse.
func sseEndpoints(rawURL string) []string {
	endpoints := []string{rawURL}
	if base, ok := strings.CutSuffix(rawURL, "/mcp"); ok {
		endpoints = append(endpoints, base+"/sse")
	} else if base, ok := strings.CutSuffix(rawURL, "/mcp/"); ok {
		endpoints = append(endpoints, base+"/sse")
	}
	return endpoints
}

// maxMessageBytes returns Config.MaxMessageBytes, or its default.
func (d *dialer) maxMessageBytes() int {
	return int(orDefault(d.a.cfg.MaxMessageBytes, defaultMaxMessageBytes))
}

// orDefault returns v when it is positive (set), else def.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// The adapter's side of the wire screen (internal/wire): each connection's
// screen gets the adapter's size bound, logger and placeholder text, and
// its faults become the adapter's errors.

// newScreen returns the screen of one connection to the named server;
// claim (when not nil) takes the answers to the adapter's own requests
// (tasks.Calls, internal/tasks), handshake (when not nil) the results
// that pass until it finds the handshake's (wire.Options.Handshake),
// progress (when not nil) the params of each progress notification, in
// order with the answers (wire.Options.Progress).
func (d *dialer) newScreen(server string, claim func([]byte), handshake func([]byte) bool, progress func([]byte)) *wire.Screen {
	return wire.New(d.screenOptions(server, claim, handshake, progress))
}

// screenOptions returns the options of newScreen.
func (d *dialer) screenOptions(server string, claim func([]byte), handshake func([]byte) bool, progress func([]byte)) wire.Options {
	return wire.Options{
		MaxMessageBytes: d.maxMessageBytes(),
		Logger:          d.a.logger.With("server", server),
		Placeholder:     unsupportedText,
		PlaceholderKey:  originalMetaKey,
		Claim:           claim,
		ClaimPrefix:     tasks.IDPrefix,
		Handshake:       handshake,
		Progress:        progress,
	}
}

// screenTransport screens the messages of a custom transport t: the lines
// of an *mcp.IOTransport (a copy of it: the caller's value is not changed)
// and of an InMemory server's pipe, the decoded messages of any other. It
// returns nil for nil. go-sdk's HTTP client transports never come here:
// connectCustom gives them the adapter's HTTP transport, which screens
// their answer bodies.
func screenTransport(sc *wire.Screen, t mcp.Transport) mcp.Transport {
	switch t := t.(type) {
	case nil:
		return nil
	case *memoryTransport:
		return &memoryTransport{pipe: t.pipe, screen: sc}
	case *mcp.IOTransport:
		return sc.IO(t)
	}
	return wrapTransport(t, sc.Conn)
}

// classifyFault adds [ErrMessageTooLarge] to the chain of err when err
// reports a server message over the size bound, naming the setting.
func classifyFault(err error) error {
	if f := wire.FaultOf(err); f != nil && f.Kind == wire.TooLarge && !errors.Is(err, ErrMessageTooLarge) {
		return fmt.Errorf("%w (Config.MaxMessageBytes): %w", ErrMessageTooLarge, err)
	}
	return err
}

// tracedDial is [dialer.dial] in a client span ("initialize", or
// "server/discover" when the modern era was negotiated), a child of the
// span of the caller whose discovery started the dial.
func (d *dialer) tracedDial(parent trace.SpanContext, g *generation, key connKey, s *Server, dialFor *conn) (*conn, error) {
	span := d.a.tracer.StartDial(parent, peerOf(key.server, s)) // nil without a tracer: EndDial does nothing
	c, err := d.dial(g, key, s, dialFor)
	var modern bool
	var done observe.Peer
	if err == nil {
		modern, done = c.modern(), observe.Peer{Protocol: c.info.ProtocolVersion, Session: c.session.ID()}
	}
	d.a.tracer.EndDial(span, modern, done, err)
	return c, err
}
