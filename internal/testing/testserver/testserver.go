// Package testserver builds real go-sdk MCP servers for mcpadapter's tests and
// examples: both protocol eras, every content type, elicitation in every
// shape, and scriptable faults.
//
// A [Server] embeds an [mcp.Server] and adds counters that tests assert on:
// [Server.Count] for received methods, [Server.Runs] for tool handler runs,
// [Server.Dials] for in-memory connections. Tool sets are added with
// [Server.AddWeather], [Server.AddBooking], [Server.AddFeatures] and
// [Server.AddResources]. The server is reachable in memory
// ([Server.Transport]), over HTTP ([Server.StreamableHTTP], [Server.SSE],
// [Server.SSEOnly]) and over stdio by re-executing the test binary ([Main],
// [Command]).
//
// Faults are triggered by the test, never by a timer: [Server.Release] and
// [Server.Cancelled] drive the "slow" tool, [Server.KillSessions] ends every
// live session, [Server.SetHTTPStatus] makes the HTTP endpoints answer with a
// fixed status, and [Server.AddTool]/[Server.RemoveTool] fire list_changed.
//
// The package must not import mcpadapter itself: the root package's tests
// import it.
package testserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol versions, as the go-sdk spells them.
const (
	// ModernVersion is the first protocol version of the modern
	// (server/discover, stateless) era.
	ModernVersion = "2026-07-28"
	// LegacyVersion is the newest protocol version of the legacy
	// (initialize handshake) era.
	LegacyVersion = "2025-11-25"
)

// legacyVersions are the pre-2026 versions a legacy-only server supports.
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Options configures a test server. The zero value is a modern-capable server
// (it speaks both eras, as every go-sdk server does) named "test-server".
type Options struct {
	// Name and Version identify the server; they default to "test-server"
	// and "1.0.0".
	Name, Version string
	// Title is the server's display name; none by default.
	Title string
	// Instructions are sent to clients at connection time.
	Instructions string
	// Legacy makes the server legacy-only in the go-sdk style: the server
	// supports only the pre-2026 versions, so the SDK answers server/discover
	// with a -32022 error (before any middleware runs, so such a discover is
	// not seen by [Server.Count]).
	Legacy bool
	// NoDiscover makes the server legacy-only in the style of pre-2026 servers
	// that do not know server/discover: it is answered with -32601 (method not
	// found). NoDiscover takes precedence over Legacy for server/discover.
	NoDiscover bool
	// ModernOnly rejects the legacy "initialize" handshake with a -32022
	// JSON-RPC error and advertises only the modern version.
	ModernOnly bool
	// TTLMs is the ttlMs the server puts on every list result; 0 means none.
	TTLMs int
	// PageSize is the maximum number of items per list page; 0 means the
	// SDK's default.
	PageSize int
	// ConnectDelay delays the answer to initialize and server/discover, to
	// simulate a slow server. It honours the request's context.
	ConnectDelay time.Duration
	// NoResources answers every resources/* request with -32601, as a server
	// without resources support would.
	NoResources bool
	// Subscriptions makes the server support resource subscriptions
	// (resources.subscribe): each subscribe and unsubscribe is reported on
	// [Server.Subscribed] and [Server.Unsubscribed]. Send updates with the
	// embedded server's ResourceUpdated.
	Subscriptions bool
	// StateKey is the HMAC key that seals requestState. Empty means a random
	// key per Server, so state from another server (or process) is refused;
	// set it to resume an interrupt against a restarted server.
	StateKey string
	// Lean selects the bare server of [Lean] in [FromKind] and [Full]: only
	// the "echo" tool and none of the instrumentation. Only Name, Version,
	// Title, Instructions and Legacy apply to it.
	Lean bool
	// Runs adds the tool "runs": the run counts of every tool ([Server.Runs])
	// as a JSON object, so that a test can count runs in a stdio server.
	Runs bool
	// ProgressSteps is how many progress notifications the "progress" tool
	// sends before it answers; 0 means 2.
	ProgressSteps int
}

// withDefaults resolves the zero-value defaults of o.
func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "test-server"
	}
	if o.Version == "" {
		o.Version = "1.0.0"
	}
	return o
}

// Server is a go-sdk MCP server instrumented for tests. Create it with [New];
// it is safe for concurrent use. The embedded [mcp.Server] may be used
// directly, for example to add custom tools.
type Server struct {
	*mcp.Server

	opts  Options
	key   []byte
	stdio bool // running as a stdio server process (see Main): "exit" may exit

	dials atomic.Int64

	// slow tool signalling; channels are created by New and never replaced.
	cancelled   chan struct{}
	slowStarted chan struct{}
	release     chan struct{}
	releaseOnce sync.Once

	// resource subscriptions (Options.Subscriptions), by URI
	subscribed   chan string
	unsubscribed chan string

	mu         sync.Mutex
	counts     map[string]int             // received methods, by method name
	runs       map[string]int             // handler runs, by tool name
	lastArgs   map[string]json.RawMessage // last arguments, by tool name
	lastMeta   map[string]json.RawMessage // last request _meta, by tool name
	lastHeader http.Header                // header of the last HTTP request
	httpStatus int                        // when non-zero, HTTP endpoints answer with it

	// inflight holds the cancel funcs of the requests each session is
	// handling; killed marks the sessions KillSessions is closing.
	inflight map[mcp.Session]map[*context.CancelCauseFunc]struct{}
	killed   map[mcp.Session]bool
}

// errKilled is the cause of the cancellation of requests in flight when
// KillSessions closes their session, and the error of requests arriving
// meanwhile.
var errKilled = errors.New("testserver: session killed")

// signalBuffer is the capacity of the Cancelled and SlowStarted channels.
const signalBuffer = 64

// New returns a server configured by opts, with no tools. A receiving
// middleware counts every method the server receives (see [Server.Count]) and
// implements the era options.
func New(opts Options) *Server {
	opts = opts.withDefaults()
	s := newServer(opts)
	if opts.StateKey != "" {
		s.key = []byte(opts.StateKey)
	} else {
		s.key = make([]byte, 32)
		rand.Read(s.key)
	}
	so := &mcp.ServerOptions{
		Instructions: opts.Instructions,
		PageSize:     opts.PageSize,
	}
	switch {
	case opts.ModernOnly:
		so.SupportedProtocolVersions = []string{ModernVersion}
	case opts.Legacy && !opts.NoDiscover:
		so.SupportedProtocolVersions = slices.Clone(legacyVersions)
	}
	if opts.Subscriptions {
		// Subscribed is signalled by subscribedMiddleware, once the
		// subscription is registered.
		so.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
		so.UnsubscribeHandler = func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			signalURI(s.unsubscribed, req.Params.URI)
			return nil
		}
	}
	if opts.TTLMs > 0 {
		ttl := opts.TTLMs
		so.SetCacheable = func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
			switch req.(type) {
			case *mcp.ListToolsRequest, *mcp.ListResourcesRequest,
				*mcp.ListResourceTemplatesRequest, *mcp.ListPromptsRequest:
				c.TTLMs = ttl
			}
		}
	}
	s.Server = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Title: opts.Title, Version: opts.Version}, so)
	s.Server.AddReceivingMiddleware(s.countMiddleware, s.killMiddleware, s.eraMiddleware)
	if opts.Subscriptions {
		s.Server.AddReceivingMiddleware(s.subscribedMiddleware)
		s.Server.AddSendingMiddleware(s.subscribedMiddleware)
	}
	if opts.Runs {
		s.addRunsTool()
	}
	return s
}

// subscribedMiddleware signals Subscribed when a subscription is in
// place: a legacy resources/subscribe has been answered, or a modern
// subscriptions/listen stream has been acknowledged (the server registers
// its resources before it sends the acknowledgement).
func (s *Server) subscribedMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch p := req.GetParams().(type) {
		case *mcp.SubscribeParams:
			signalURI(s.subscribed, p.URI)
		case *mcp.SubscriptionsAcknowledgedParams:
			for _, uri := range p.Notifications.ResourceSubscriptions {
				signalURI(s.subscribed, uri)
			}
		}
		return res, nil
	}
}

// newServer returns a Server with its channels and maps made and no
// mcp.Server yet.
func newServer(opts Options) *Server {
	return &Server{
		opts:         opts,
		cancelled:    make(chan struct{}, signalBuffer),
		slowStarted:  make(chan struct{}, signalBuffer),
		release:      make(chan struct{}),
		subscribed:   make(chan string, signalBuffer),
		unsubscribed: make(chan string, signalBuffer),
		counts:       make(map[string]int),
		runs:         make(map[string]int),
		lastArgs:     make(map[string]json.RawMessage),
		lastMeta:     make(map[string]json.RawMessage),
		inflight:     make(map[mcp.Session]map[*context.CancelCauseFunc]struct{}),
		killed:       make(map[mcp.Session]bool),
	}
}

// Lean returns a bare go-sdk server, for benchmarks: its only tool is
// "echo" ({text string} → the text), and it has none of the
// instrumentation of [New] (no middleware, no counters, no recorded
// arguments), so that a benchmark measures the client and the transport,
// not the test server. Opts.Legacy makes it legacy-only like [New] does;
// the other options but Name, Version, Title and Instructions are ignored.
// [Server.Transport], [Server.Dials] and [Server.KillSessions] work; the
// counters stay zero.
func Lean(opts Options) *Server {
	opts = opts.withDefaults()
	opts.Lean = true
	so := &mcp.ServerOptions{Instructions: opts.Instructions}
	if opts.Legacy {
		so.SupportedProtocolVersions = slices.Clone(legacyVersions)
	}
	s := newServer(opts)
	s.Server = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Title: opts.Title, Version: opts.Version}, so)
	s.Server.AddTool(echoTool(), func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}, IsError: true}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil
	})
	return s
}

// Opts returns the options the server was built with, defaults resolved.
func (s *Server) Opts() Options { return s.opts }

// ResourceListen is the key [Server.Count] counts modern resource
// subscriptions under: the subscriptions/listen requests that name resource
// URIs (the SDK's own listen for list changes names none).
const ResourceListen = "subscriptions/listen (resources)"

// countMiddleware records every received method (requests and
// notifications), and the listen requests that subscribe to resources
// under ResourceListen.
func (s *Server) countMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		s.mu.Lock()
		s.counts[method]++
		if p, ok := req.GetParams().(*mcp.SubscriptionsListenParams); ok && p.Notifications != nil && len(p.Notifications.ResourceSubscriptions) > 0 {
			s.counts[ResourceListen]++
		}
		s.mu.Unlock()
		return next(ctx, method, req)
	}
}

// killMiddleware tracks the requests in flight per session, so that
// KillSessions can cancel them, and refuses requests to a session being
// killed.
func (s *Server) killMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss := req.GetSession()
		if ss == nil || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		s.mu.Lock()
		if s.killed[ss] {
			s.mu.Unlock()
			return nil, errKilled
		}
		reqs := s.inflight[ss]
		if reqs == nil {
			reqs = make(map[*context.CancelCauseFunc]struct{})
			s.inflight[ss] = reqs
		}
		reqs[&cancel] = struct{}{}
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(reqs, &cancel)
			if len(reqs) == 0 {
				delete(s.inflight, ss)
			}
			s.mu.Unlock()
		}()
		return next(ctx, method, req)
	}
}

// eraMiddleware implements NoDiscover, ModernOnly, NoResources and
// ConnectDelay.
func (s *Server) eraMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "server/discover":
			if s.opts.NoDiscover {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}
			}
			if err := s.connectDelay(ctx); err != nil {
				return nil, err
			}
		case "initialize":
			if s.opts.ModernOnly {
				requested := ""
				if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil {
					requested = p.ProtocolVersion
				}
				data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{
					Supported: []string{ModernVersion},
					Requested: requested,
				})
				return nil, &jsonrpc.Error{
					Code:    mcp.CodeUnsupportedProtocolVersion,
					Message: "modern-only server",
					Data:    data,
				}
			}
			if err := s.connectDelay(ctx); err != nil {
				return nil, err
			}
		case "resources/list", "resources/templates/list", "resources/read",
			"resources/subscribe", "resources/unsubscribe":
			if s.opts.NoResources {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}
			}
		}
		return next(ctx, method, req)
	}
}

// connectDelay waits for Options.ConnectDelay or until ctx is done.
func (s *Server) connectDelay(ctx context.Context) error {
	if s.opts.ConnectDelay <= 0 {
		return nil
	}
	timer := time.NewTimer(s.opts.ConnectDelay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Count reports how many requests or notifications of method the server has
// received, e.g. Count("tools/list"). Requests the SDK refuses before
// dispatching them (a modern request to a Legacy server) are not counted.
// A request is counted before its handler runs; a notification may be
// counted after it took effect (the SDK acts on notifications/cancelled
// before dispatching it), so do not synchronise on notification counts.
func (s *Server) Count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[method]
}

// Counts returns a copy of every method count.
func (s *Server) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.counts)
}

// Runs reports how many times the handler of tool ran. A legacy client's
// elicitation round trip runs a handler twice within one tools/call.
func (s *Server) Runs(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[tool]
}

// addRunsTool adds the tool "runs" (see [Options.Runs]).
func (s *Server) addRunsTool() {
	s.Server.AddTool(&mcp.Tool{Name: "runs", Description: "Returns the run count of every tool.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.mu.Lock()
			b, err := json.Marshal(s.runs)
			s.mu.Unlock()
			if err != nil {
				return nil, err
			}
			return text(string(b)), nil
		})
}

// LastArgs returns the arguments of the last call of tool, freshly decoded
// (the caller owns the map), or nil if the tool has not been called or was
// called without arguments.
func (s *Server) LastArgs(tool string) map[string]any {
	s.mu.Lock()
	raw := s.lastArgs[tool]
	s.mu.Unlock()
	return decodeObject(raw)
}

// LastMeta returns the request _meta of the last call of tool, freshly
// decoded, or nil.
func (s *Server) LastMeta(tool string) map[string]any {
	s.mu.Lock()
	raw := s.lastMeta[tool]
	s.mu.Unlock()
	return decodeObject(raw)
}

// LastHTTPHeader returns a copy of the header of the last HTTP request
// received by an endpoint started with [Server.StreamableHTTP], [Server.SSE]
// or [Server.SSEOnly], or nil.
func (s *Server) LastHTTPHeader() http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastHeader.Clone()
}

func decodeObject(raw json.RawMessage) map[string]any {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil
	}
	return m
}

// recordRun counts a handler run and remembers its arguments and _meta.
func (s *Server) recordRun(tool string, req *mcp.CallToolRequest) {
	var meta json.RawMessage
	if m := req.Params.GetMeta(); len(m) > 0 {
		meta, _ = json.Marshal(m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[tool]++
	s.lastArgs[tool] = slices.Clone(req.Params.Arguments)
	s.lastMeta[tool] = meta
}

// Transport returns a factory for in-memory connections, suitable for
// mcpadapter's Server.Transport field. Each call connects a new server session
// over [mcp.NewInMemoryTransports] and returns the client end, which the
// caller must connect (once). The session outlives ctx; it ends when the
// client closes or [Server.KillSessions] is called.
func (s *Server) Transport() func(ctx context.Context) (mcp.Transport, error) {
	return func(ctx context.Context) (mcp.Transport, error) {
		s.dials.Add(1)
		st, ct := mcp.NewInMemoryTransports()
		if _, err := s.Server.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
}

// Dials reports how many times a [Server.Transport] factory was called.
func (s *Server) Dials() int { return int(s.dials.Load()) }

// KillSessions closes every live server session (in memory, stdio and
// stateful HTTP), simulating a server that dropped its connections. Requests
// in flight are cancelled first (a "slow" call signals [Server.Cancelled]),
// so KillSessions does not wait for them. The clients see their connection
// end; a stateful HTTP client sees its session as missing (404) at its next
// request.
func (s *Server) KillSessions() {
	sessions := slices.Collect(s.Server.Sessions())
	s.mu.Lock()
	for _, ss := range sessions {
		s.killed[ss] = true
		for cancel := range s.inflight[ss] {
			(*cancel)(errKilled)
		}
	}
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.Close()
	}
	s.mu.Lock()
	for _, ss := range sessions {
		delete(s.killed, ss)
	}
	s.mu.Unlock()
}

// Cancelled returns a channel that receives a value each time a "slow" call
// ends because its context was cancelled (the server saw
// notifications/cancelled, or the connection ended). It is buffered, so the
// signal is kept until the test reads it.
func (s *Server) Cancelled() <-chan struct{} { return s.cancelled }

// SlowStarted returns a channel that receives a value each time a "slow" call
// starts running, so a test can cancel it knowing the server has it. It is
// buffered.
func (s *Server) SlowStarted() <-chan struct{} { return s.slowStarted }

// Release makes every blocked "slow" call return successfully, and every later
// one return at once. It is idempotent.
func (s *Server) Release() { s.releaseOnce.Do(func() { close(s.release) }) }

// signal sends on a buffered signal channel without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Subscribed returns a channel that receives the URI of each resource
// subscription the server accepts (Options.Subscriptions), once the server
// has registered it: a ResourceUpdated after the receive reaches the
// subscriber. It is buffered.
func (s *Server) Subscribed() <-chan string { return s.subscribed }

// Unsubscribed returns a channel that receives the URI of each resource
// subscription ending, as the server starts to drop it: at an unsubscribe
// request (legacy) or at the end of its subscriptions/listen stream
// (modern). It is buffered.
func (s *Server) Unsubscribed() <-chan string { return s.unsubscribed }

// signalURI sends uri on a buffered signal channel without blocking.
func signalURI(ch chan string, uri string) {
	select {
	case ch <- uri:
	default:
	}
}
