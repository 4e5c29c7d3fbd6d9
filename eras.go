package mcpadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol versions of the two eras.
const (
	modernVersion = "2026-07-28" // server/discover, stateless requests
	legacyVersion = "2025-11-25" // initialize handshake
)

const (
	// defaultMaxMessageBytes is the default bound on one server message; the
	// go-sdk stdio transport caps a line at this size whatever is asked.
	defaultMaxMessageBytes = 16 << 20
	// terminateDuration is how long a stdio server gets to exit after its
	// stdin is closed, and then after SIGTERM, before it is killed.
	terminateDuration = 2 * time.Second
	// dialTimeout is the default Config.DialTimeout, the bound on one dial
	// (a handshake, with its SSE fallbacks): callers wait on their own
	// contexts, but a server that never answers must not hold the shared
	// dial forever.
	dialTimeout = time.Minute
	// clientName identifies the adapter to servers.
	clientName = "mcpadapter"
)

// dial opens a new session with the named server under the generation's
// context (not a caller's: the SSE transport ties its stream to the context
// of Connect, and the dial is shared by every waiting caller).
func (a *Adapter) dial(g *generation, key connKey, s *Server) (*conn, error) {
	name := key.server
	c := &conn{server: name, key: key, cfg: s, a: a, gen: g, life: g.ctx, done: make(chan struct{})}
	client := s.Client
	if client == nil {
		client = a.newClient(g, name)
		client.AddReceivingMiddleware(c.refuseInputRequests)
	} else {
		prepare(client)
	}
	// The session keeps the dial's context (SSE ties its stream to it), so
	// the dial timeout cancels it only while the handshake runs.
	ctx, cancel := context.WithCancel(g.ctx)
	limit := a.dialTimeout()
	timer := time.AfterFunc(limit, cancel)
	cs, err := a.connectEra(ctx, c, client)
	if !timer.Stop() { // timed out, maybe just after the handshake ended
		if err == nil {
			cs.Close()
		}
		err = fmt.Errorf("no handshake within %v (Config.DialTimeout): %w", limit, context.DeadlineExceeded)
	}
	if err != nil {
		cancel()
		if c.stop != nil {
			c.stop()
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
	ir := cs.InitializeResult()
	c.info = ServerInfo{ProtocolVersion: ir.ProtocolVersion, Instructions: ir.Instructions, Capabilities: ir.Capabilities, Era: ModeLegacy}
	if ir.ProtocolVersion >= modernVersion {
		c.info.Era = ModeModern
	}
	if ir.ServerInfo != nil {
		c.info.Name, c.info.Version, c.info.Title = ir.ServerInfo.Name, ir.ServerInfo.Version, ir.ServerInfo.Title
	}
	if s.Mode == ModeModern && c.info.Era != ModeModern {
		c.close()
		return nil, serverError(name, "dial", fmt.Errorf("%w (negotiated %s)", ErrLegacyOnly, ir.ProtocolVersion))
	}
	a.logger.Debug("mcpadapter: connected", "server", name, "era", c.info.Era, "protocol", ir.ProtocolVersion)
	return c, nil
}

// newClient builds the go-sdk client of one dial: automatic multi-round-trip
// handling off (the adapter drives input rounds itself), elicitation
// advertised (form and URL), list_changed wired to the catalog cache and,
// with resources/updated, to the change callbacks (notify.go).
func (a *Adapter) newClient(g *generation, name string) *mcp.Client {
	client := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1"}, &mcp.ClientOptions{
		Logger: a.cfg.Logger,
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return a.answerLive(ctx, name, req)
		},
		// A non-nil Capabilities also drops the SDK's default roots capability.
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
			Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{},
		}},
		ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedRequest) {
			a.listChanged(g, name, ToolList, req.Session)
		},
		ResourceListChangedHandler: func(ctx context.Context, req *mcp.ResourceListChangedRequest) {
			a.listChanged(g, name, ResourceList, req.Session)
		},
		PromptListChangedHandler: func(ctx context.Context, req *mcp.PromptListChangedRequest) {
			a.listChanged(g, name, PromptList, req.Session)
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			a.notify.resourceUpdated(g, name, req)
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			a.notify.serverLog(g, name, req.Params) // bounded (notify.go)
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			a.notify.progressed(g, name, req.Session, req.Params)
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	client.AddSendingMiddleware(middleware)
	return client
}

// prepared records the prebuilt clients that have the adapter's
// middleware, whichever Adapter installed it: the middleware is stateless,
// and a client shared by many Adapters (one per request, say) must not
// grow a layer per Adapter, which go-sdk cannot remove again. Keys are
// weak, and an entry goes with its client. It is the package's one piece
// of mutable state, because the client it describes outlives any Adapter.
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
	client.AddSendingMiddleware(middleware)
	runtime.AddCleanup(client, func(key weak.Pointer[mcp.Client]) {
		preparedMu.Lock()
		delete(prepared, key)
		preparedMu.Unlock()
	}, key)
}

// slogLevel maps an MCP (syslog) level to a slog level.
func slogLevel(l mcp.LoggingLevel) slog.Level {
	switch l {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// Context keys read by the middleware. The middleware is stateless so that
// it can serve a prebuilt client shared by several dials.
type (
	modernOnlyKey struct{}
	logLevelKey   struct{}
)

// A modernOnly is the state of a ModeModern handshake, for the middleware.
type modernOnly struct {
	discoverErr error // why server/discover failed, if it did
}

// A fallbackError is the middleware's refusal of the SDK's fallback to
// initialize in a ModeModern handshake. It says why server/discover failed.
type fallbackError struct {
	discoverErr error // nil: the server offered no modern version
}

func (e *fallbackError) Error() string {
	if e.discoverErr == nil {
		return "server/discover offered no modern protocol version"
	}
	return "server/discover: " + e.discoverErr.Error()
}

func (e *fallbackError) Unwrap() error { return e.discoverErr }

// classify classifies the failure err of a ModeModern handshake: when the
// SDK wanted to fall back to initialize because the server answered
// server/discover as a legacy server does (method not found, unsupported
// version, no modern version offered, or, over HTTP, 400, 404 or 405 to
// the discover POST), err also wraps ErrLegacyOnly. Any other discover
// failure (an auth failure, a server down) says nothing about eras, and
// err is left to say what it is.
func (m *modernOnly) classify(err error) error {
	var fe *fallbackError
	if !errors.As(err, &fe) {
		return err
	}
	var (
		rpcErr *jsonrpc.Error
		status *httpStatusError
	)
	switch {
	case fe.discoverErr == nil,
		errors.As(fe.discoverErr, &rpcErr) && (rpcErr.Code == jsonrpc.CodeMethodNotFound || rpcErr.Code == codeUnsupportedVersion),
		errors.As(err, &status) && (status.code == http.StatusBadRequest || status.code == http.StatusNotFound || status.code == http.StatusMethodNotAllowed):
		return fmt.Errorf("%w: %w", ErrLegacyOnly, err)
	}
	return err
}

// codeUnsupportedVersion is the JSON-RPC error code of a server that does
// not support the requested protocol version.
const codeUnsupportedVersion = -32022

// middleware enforces the era policy, restores uncached keys (and keeps
// the SDK's cache in slots, and its _meta maps small, sdkcache.go) and
// attaches the modern per-request log level.
func middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if m, ok := ctx.Value(modernOnlyKey{}).(*modernOnly); ok {
			// The SDK falls back to initialize on any discover failure and
			// has no modern-only option: refusing the fallback makes it an
			// error (see modernOnly.classify).
			switch method {
			case "server/discover":
				res, err := next(ctx, method, req)
				m.discoverErr = err // the handshake is sequential
				return res, err
			case "initialize":
				return nil, &fallbackError{discoverErr: m.discoverErr}
			}
		}
		params := req.GetParams()
		slot, uncached := sdkSlotOf(params) // sdkcache.go
		if uncached && slot.purge {
			slot.stored()
			return emptyPage(method), nil
		}
		if level, ok := ctx.Value(logLevelKey{}).(mcp.LoggingLevel); ok && params != nil && !strings.HasPrefix(method, "notifications/") {
			m := params.GetMeta()
			if m == nil {
				m = map[string]any{}
			}
			m[mcp.MetaKeyLogLevel] = level
			params.SetMeta(m)
		}
		res, err := next(ctx, method, req)
		if err == nil {
			compactMeta(res) // sdkcache.go
		}
		if uncached && err == nil {
			slot.stored()
		}
		return res, err
	}
}

// connectEra connects client to the server of c in the era its Mode asks for.
func (a *Adapter) connectEra(ctx context.Context, c *conn, client *mcp.Client) (*mcp.ClientSession, error) {
	s := c.cfg
	var opts *mcp.ClientSessionOptions
	switch s.Mode {
	case ModeLegacy:
		opts = &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion}
	case ModeModern:
		m := new(modernOnly)
		ctx = context.WithValue(ctx, modernOnlyKey{}, m)
		cs, err := a.connectTransport(ctx, c, client, opts)
		return cs, m.classify(err)
	}
	return a.connectTransport(ctx, c, client, opts)
}

// connectTransport connects client to the server of c over its transport.
func (a *Adapter) connectTransport(ctx context.Context, c *conn, client *mcp.Client, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	s := c.cfg
	sc := a.newScreen(c.server)
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
		return client.Connect(ctx, c.own(screenTransport(sc, t)), opts)
	case s.Command != "":
		return client.Connect(ctx, c.own(a.commandTransport(c, sc)), opts)
	default:
		cs, err := a.connectHTTP(ctx, client, c, sc, opts)
		return cs, hideURLs(err, sseEndpoints(s.URL)...) // s.URL is the first
	}
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
func (a *Adapter) connectHTTP(ctx context.Context, client *mcp.Client, c *conn, sc *wire.Screen, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	s := c.cfg
	// The screen in the RoundTripper bounds every message at
	// MaxMessageBytes and fails only the call concerned; the SDK's event cap
	// stays as a backstop, with room for the unknown-content placeholders
	// the screen may add to a message within the bound.
	maxBytes := 2*a.maxMessageBytes() + 64<<10
	rt := newServerTransport(c, sc)
	oauth := s.OAuth
	if s.OAuthFor != nil {
		oauth = s.OAuthFor(c.key.principal)
	}
	st := &mcp.StreamableClientTransport{
		Endpoint:     s.URL,
		HTTPClient:   rt.client(s.HTTPClient),
		OAuthHandler: oauth,
		MaxEventSize: maxBytes,
	}
	cs, err := client.Connect(ctx, st, opts)
	if err == nil {
		c.http = rt
		return cs, nil
	}
	code := rt.firstFailure()
	if code != 0 {
		err = &httpStatusError{code: code, err: err}
	}
	if !shouldFallBack(s, code) {
		if code == http.StatusBadRequest && s.Mode == ModeAuto && !s.DisableSSEFallback {
			// What an SSE-only go-sdk server answers a Streamable POST.
			err = fmt.Errorf("%w (if this is an HTTP+SSE server, set Mode: ModeLegacy: it falls back to SSE on any 4xx)", err)
		}
		return nil, err
	}
	errs := []error{fmt.Errorf("streamable HTTP: %w", err)}
	for _, endpoint := range sseEndpoints(s.URL) {
		rt := newServerTransport(c, sc)
		sse := &mcp.SSEClientTransport{Endpoint: endpoint, HTTPClient: rt.client(s.HTTPClient), MaxEventSize: maxBytes}
		// SSE servers are legacy-only: skip the discover probe.
		cs, err := client.Connect(ctx, c.own(sse), &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
		if err == nil {
			a.logger.DebugContext(ctx, "mcpadapter: fell back to SSE", "url", redactURL(endpoint))
			return cs, nil
		}
		if code := rt.firstFailure(); code != 0 {
			err = &httpStatusError{code: code, err: err}
		}
		errs = append(errs, fmt.Errorf("SSE %s: %w", redactURL(endpoint), err))
	}
	return nil, errors.Join(errs...)
}

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

// dialTimeout returns Config.DialTimeout, or its default.
func (a *Adapter) dialTimeout() time.Duration { return orDefault(a.cfg.DialTimeout, dialTimeout) }

// maxMessageBytes returns Config.MaxMessageBytes, or its default.
func (a *Adapter) maxMessageBytes() int {
	return int(orDefault(a.cfg.MaxMessageBytes, defaultMaxMessageBytes))
}

// orDefault returns v when it is positive (set), else def.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// A serverTransport is the http.RoundTripper of one server's dial: it adds
// the server's headers, records the first failing status (to tell auth
// failures and missing endpoints apart: the SDK's HTTP errors are strings),
// and rewrites content the SDK cannot decode.
type serverTransport struct {
	base      http.RoundTripper
	origin    *url.URL // the server's URL: its credentials go nowhere else
	headers   map[string]string
	principal string                                                                 // whom the connection acts for
	more      func(ctx context.Context, principal string) (map[string]string, error) // Server.HeadersFor
	screen    *wire.Screen
	failure   atomic.Int32 // first HTTP status >= 400

	// Once watching (conn.beginClose), POSTs of notifications/cancelled
	// are counted as they complete, and signalled on cancelSent.
	watching   atomic.Bool
	cancels    atomic.Int64
	cancelSent chan struct{}

	// end learns that a Streamable HTTP session ended. Whatever ends it,
	// the SDK closes its connection, which ends the standalone event
	// stream (answerBody), or sends a DELETE (a session with an ID). A
	// session of neither, stateless, ends on an answer the SDK fails it
	// for (answered), on a failed read of one (answerBody again: a
	// decoding failure is the screen's to prevent), or by the adapter's
	// close and giveUp, which sign it themselves.
	end endSignal
}

// newServerTransport returns the transport of a dial of c, over which
// screen reads.
func newServerTransport(c *conn, screen *wire.Screen) *serverTransport {
	s := c.cfg
	origin, _ := url.Parse(s.URL) // validated by New
	return &serverTransport{origin: origin, headers: s.Headers, principal: c.key.principal, more: s.HeadersFor, screen: screen,
		cancelSent: make(chan struct{}, 1), end: endSignal{c: c}}
}

// watchCancels starts counting the cancellation notices sent.
func (t *serverTransport) watchCancels() { t.watching.Store(true) }

// cancelsSent returns how many cancellation notices were sent since
// watchCancels.
func (t *serverTransport) cancelsSent() int64 { return t.cancels.Load() }

// cancelNotice reports whether req, sent while watching, posts
// notifications/cancelled. The SDK posts one small message per request,
// with a GetBody: reading it costs nothing to the request.
func (t *serverTransport) cancelNotice(req *http.Request) bool {
	if !t.watching.Load() || req.Method != http.MethodPost || req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	b, _ := io.ReadAll(io.LimitReader(body, 4<<10))
	return bytes.Contains(b, []byte(`"notifications/cancelled"`))
}

// sameOrigin reports whether u is on the server's origin: the same host
// and port, over the same scheme or upgraded from http to https. A redirect
// or an SSE message endpoint elsewhere is another server.
func (t *serverTransport) sameOrigin(u *url.URL) bool {
	if t.origin == nil || u == nil || !strings.EqualFold(t.origin.Hostname(), u.Hostname()) {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	switch {
	case strings.EqualFold(t.origin.Scheme, u.Scheme):
		return port(t.origin) == port(u)
	case strings.EqualFold(t.origin.Scheme, "http") && strings.EqualFold(u.Scheme, "https"):
		return t.origin.Port() == "" && u.Port() == "" // the standard upgrade
	}
	return false
}

// client returns a copy of hc (a zero Client when nil) that sends through t.
func (t *serverTransport) client(hc *http.Client) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	}
	t.base = c.Transport
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	c.Transport = t
	return &c
}

// RoundTrip implements http.RoundTripper.
func (t *serverTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case !t.sameOrigin(req.URL):
		// A redirect, or an SSE endpoint, pointing at another origin: it
		// gets none of this server's credentials. net/http keeps the
		// Authorization of a redirect to the same host name on another
		// port (an OAuth token set by the SDK); drop it too.
		if req.Header.Get("Authorization") != "" {
			req = req.Clone(req.Context())
			req.Header.Del("Authorization")
		}
	case len(t.headers) > 0 || t.more != nil:
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
		if t.more != nil {
			more, err := t.more(req.Context(), t.principal)
			if err != nil {
				if req.Body != nil {
					req.Body.Close() // a RoundTripper closes it, even on error
				}
				return nil, fmt.Errorf("mcpadapter: Server.HeadersFor: %w", err)
			}
			for k, v := range more {
				req.Header.Set(k, v)
			}
		}
	}
	if t.cancelNotice(req) {
		defer func() {
			t.cancels.Add(1)
			select {
			case t.cancelSent <- struct{}{}:
			default:
			}
		}()
	}
	var life *postLife
	if req.Method == http.MethodPost {
		life = newPostLife(req.Context())
		req = req.WithContext(life.ctx)
	}
	if req.Method == http.MethodDelete {
		t.end.sign()
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		if life != nil {
			life.end()
		}
		return nil, err
	}
	t.answered(req, resp)
	var answered func()
	if life != nil {
		answered = life.answered
	}
	if t.screen != nil {
		t.screen.ResponseAnswered(req, resp, answered)
	}
	resp.Body = &answerBody{ReadCloser: resp.Body, life: life, end: &t.end}
	return resp, nil
}

func (t *serverTransport) firstFailure() int { return int(t.failure.Load()) }
