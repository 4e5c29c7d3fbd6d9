package mcpadapter

// The configuration: Config, Server and the types they use. New's checks
// of it are in validate.go, configuration files in configfile.go.

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/callbacks"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Mode selects the protocol era of a server.
type Mode string

const (
	// ModeAuto (the zero value) tries the modern protocol (2026-07-28,
	// server/discover) and falls back to the legacy initialize handshake.
	ModeAuto Mode = ""
	// ModeModern requires the modern protocol; a legacy-only server fails
	// with an error wrapping [ErrLegacyOnly].
	ModeModern Mode = "modern"
	// ModeLegacy never sends server/discover: it speaks the 2025-11-25
	// protocol through initialize.
	ModeLegacy Mode = "legacy"
)

// Config configures an [Adapter]. [New] copies it: later changes to the
// caller's maps and slices have no effect.
type Config struct {
	// Servers maps a server name to its target. Names are made of ASCII
	// letters, digits, '_' and '-' (the characters providers accept in tool
	// names) and must not contain "__" (the separator of prefixed tool
	// names).
	Servers map[string]Server

	// ToolName, when set, names the tools the model sees, replacing the
	// default policy: "server__tool", made provider-safe by [SafeToolName]
	// (at most 64 characters of [A-Za-z0-9_-]). It gets the server's name
	// and the tool's MCP name and must be deterministic; its result is used
	// as given. Discovery fails when it gives an empty name or two tools
	// the same name (see [ErrDuplicateToolName]). To keep the servers' own
	// names (LangChain's prefixToolNameWithServerName: false):
	//
	//	ToolName: func(_, tool string) string { return mcpadapter.SafeToolName(tool, 64) },
	ToolName func(server, tool string) string

	// Filter selects the tools of every server the model is offered; see
	// [Filter].
	Filter Filter

	// DefaultToolTimeout, when positive, bounds every tool call and replaces
	// each [Server.DefaultToolTimeout], longer or shorter. A deadline on the
	// caller's context shortens either.
	DefaultToolTimeout time.Duration

	// TaskWait bounds how long a call that runs as a task waits for it
	// (besides its context) before it returns a [*PendingTask] to collect
	// later; 0 means ten minutes. The tool timeout bounds each request of
	// the task, not the task.
	TaskWait time.Duration

	// OnConnectionError decides what a failed server does to discovery. When
	// nil, discovery fails with an error naming every failed server. When it
	// returns nil, the server is skipped: it stays skipped until
	// [Adapter.Close], unless it has a [Server.Retry] policy (later
	// discoveries then dial it again, with backoff). A non-nil return value
	// fails discovery with that error. Details in docs/reference.md,
	// "Config.OnConnectionError".
	OnConnectionError func(server string, err error) error

	// ElicitationHandler, when set, answers servers' requests for user
	// input synchronously: legacy servers' live elicitation/create
	// requests, and modern input-required rounds (instead of returning
	// an [*Interrupt]). Without it a legacy server's live request during a
	// call makes the call return a live *Interrupt ([Interrupt.Live]),
	// which only this Adapter can resume, within [StateOptions.LiveMaxAge]
	// (a negative LiveMaxAge declines such requests instead).
	// More in docs/reference.md, "Config.ElicitationHandler".
	ElicitationHandler func(ctx context.Context, req ElicitationRequest) (Answer, error)

	// Approval, when set and returning true for a call, makes [Tool.Invoke]
	// and [Tool.Call] return an [*ApprovalRequired] before the server is
	// contacted. It runs after [Config.Middleware]: it sees, and a
	// reviewer approves, the arguments that are sent (see [Middleware]). To
	// hold every call that may destroy something, by the tools' annotations
	// (see [ToolAnnotations.MayBeDestructive]):
	//
	//	Approval: func(c ToolCall) bool { return c.Metadata.Annotations().MayBeDestructive() },
	Approval func(call ToolCall) bool

	// State protects stored state (see [Resolution]): its seal, its age,
	// and settling it once across replicas.
	State StateOptions

	// CallbacksHandler receives langchaingo tool callbacks for every call:
	// HandleToolStart, then exactly one of HandleToolEnd or HandleToolError.
	CallbacksHandler callbacks.Handler

	// MaxMessageBytes bounds one message from a server, and a server's tool
	// list and each of its resource lists over all their pages; 0 means 16
	// MiB. A larger message is discarded, never truncated, and the call it
	// answers fails with an error wrapping [ErrMessageTooLarge] (a list over
	// it fails that server's listing only). Which transports enforce it, and
	// how, is in docs/reference.md, "Config.MaxMessageBytes".
	MaxMessageBytes int64

	// OnListChanged, when set, is called after a server announced that
	// its list of a kind changed (notifications/tools/list_changed and
	// its resources and prompts twins; on modern sessions they arrive
	// over subscriptions/listen), with the principal of the connection
	// it came on. The adapter has dropped that connection's cached list
	// first, so a callback that lists again (under that principal) gets
	// the new one. The calls for one (server, principal) come one at a
	// time, in order; those of different pairs may run at the same time.
	// More in docs/reference.md, "Config.OnListChanged".
	OnListChanged func(ListChange)

	// OnResourceUpdated, when set, is called after a server announced that
	// a resource changed (notifications/resources/updated), once for each
	// principal that subscribed to it on that connection with
	// [Adapter.SubscribeResource]. An update of a URI nobody subscribed to
	// is dropped, counted and logged. It runs like OnListChanged.
	OnResourceUpdated func(ResourceUpdate)

	// ResultBudget bounds what one tool result gives the model, in
	// characters: the text of [Tool.Call] and the messages of
	// [Toolset.HandleToolCalls] (media count about 1,000 characters each,
	// what providers charge for an image of about a megapixel). A longer
	// text is cut at a line break or character, keeping its head and a
	// little of its tail around a note saying how much was left out; the
	// [Result] of [Tool.Invoke] is never cut. 0 means 100,000 characters
	// (about 25,000 tokens); a negative value means no bound.
	ResultBudget int

	// CatalogTTL, when positive, is how long a server's lists (of tools,
	// resources, resource templates and prompts) stay cached, per
	// connection, when the server gives them no positive ttlMs: legacy
	// servers send none, and go-sdk reads an absent ttlMs as 0. 0 keeps
	// the default: such lists are fetched at every discovery. A server's
	// list_changed ends a cached list early, and [WithCacheMode] applies
	// as usual. See [Service].
	CatalogTTL time.Duration

	// DialSelectedOnly makes a discovery given [FromServers] contact the
	// selected servers alone. By default every discovery contacts every
	// configured server, whatever it selects: a slow server delays it,
	// and one that fails fails it (see OnConnectionError). See [Service].
	DialSelectedOnly bool

	// Logger receives the adapter's diagnostics and the stderr of stdio
	// servers. Nil means silence. Records carry the caller's context where
	// there is one; at debug level there is one record per tool call
	// (server, tool, call id, duration, isError, rounds, error). The
	// servers' log messages are records "mcpadapter: server log" with the
	// server, the principal of a per-principal connection, the server's
	// logger name and data; they are delivered like OnListChanged.
	Logger *slog.Logger

	// Middleware wraps every tool call, the first outermost, before the
	// [Config.Approval] gate: it may rewrite the arguments and the
	// request's _meta, answer without contacting the server, replace the
	// result, or observe errors. See [Middleware].
	Middleware []Middleware

	// MaxToolTimeout, when positive, makes the tool timeout
	// (DefaultToolTimeout or the server's) count the time since the call's
	// last progress notification instead of since its start, so that a
	// long call that keeps reporting progress is not cut off, and bounds
	// the whole call (each round) whatever the progress. A progress token
	// is then sent with each call. A deadline on the caller's context
	// bounds either.
	MaxToolTimeout time.Duration

	// TracerProvider, when set, traces dials, tool lists and tool calls with
	// OpenTelemetry spans named after the semantic conventions for MCP
	// ("tools/call get_weather", client spans) under an "execute_tool"
	// span per call. Nil means no spans (use otel.GetTracerProvider() for
	// the global one). Whether or not it is set, every tools/call request
	// carries the W3C trace context of the caller's span, if any, in its
	// _meta (traceparent, tracestate), so that a server can join the trace.
	TracerProvider trace.TracerProvider

	// MeterProvider, when set, records OpenTelemetry metrics; nil means
	// none, at no cost (use otel.GetMeterProvider() for the global one).
	// Every instrument has the attribute mcpadapter.server: More in
	// docs/reference.md, "Config.MeterProvider".
	MeterProvider metric.MeterProvider

	// DialTimeout bounds one dial of a server: starting it or opening its
	// connection, and the handshake (with the SSE fallbacks). 0 means one
	// minute. Callers also wait on their own contexts; the dial, which
	// they share, is bounded by this alone. A stdio server that did not
	// answer in time is ended after the error is returned, and reaped
	// before [Adapter.Close] returns.
	DialTimeout time.Duration

	// ToolsFollowServer makes every [Tool] (and what holds one: a
	// [Toolset], a [ToolSearch], an agent) call its server's current
	// connection. By default a tool keeps the connection it was listed
	// on: once that connection ended (a stdio server that exited or was
	// killed, an HTTP session that ended) its calls fail, and a new
	// [Adapter.ListTools] returns tools on a new one. With this option,
	// a call of a tool whose connection ended dials the server again
	// under its [Server.Retry] policy, as a discovery would (for the
	// principal the tool was listed for), and calls the tool of the same
	// MCP name there; a call fails, saying so, when the server no longer
	// lists the tool. After [Adapter.Close] calls fail with [ErrClosed]
	// either way. See [Service].
	ToolsFollowServer bool

	// PrincipalIdleTimeout closes a per-principal connection (see
	// [Server.HeadersFor]) that no request has used for this long; the
	// principal's next use dials again. 0 means 10 minutes. A connection with
	// requests in flight is never closed for idleness. A principal of a
	// shared session (ShareStatelessSessions) is forgotten instead, the
	// session kept: its next use joins again without a dial.
	PrincipalIdleTimeout time.Duration

	// MaxPrincipalConns bounds the per-principal connections open at once,
	// over every server, the principals of shared sessions included (each
	// counts as one): past it the least recently used idle one is
	// closed (forgotten, on a shared session). 0 means 1000. Connections with
	// requests in flight are never closed for it: when every one is busy,
	// the bound is passed, and restored when a connection is next opened
	// or closed for idleness.
	MaxPrincipalConns int

	// ShareStatelessSessions makes the principals of a stateless
	// per-principal server share one session: a URL server in the modern
	// era ([ModeModern], or [ModeAuto] once a dial found it modern), over
	// Streamable HTTP, which keeps no session. Each request carries its
	// principal's headers ([Server.HeadersFor]) or OAuth token
	// ([Server.OAuthFor]); each principal keeps its own catalog. A new
	// principal's first use dials nothing. Stateful and legacy servers,
	// SSE and servers with a prebuilt [Server.Client] keep a session per
	// principal. PrincipalIdleTimeout and MaxPrincipalConns bound the
	// principals of a shared session as they bound sessions. The shared
	// session opens no subscriptions/listen stream (it would carry no
	// principal's credentials): its catalogs follow their ttlMs and
	// [Config.CatalogTTL], without list_changed, and resource
	// subscriptions are refused there ([ErrNotSupported]). [Service] sets
	// it. More in docs/reference.md, "Server.HeadersFor".
	ShareStatelessSessions bool
}

// StateOptions protect stored state: the JSON of an [*Interrupt],
// [*ApprovalRequired], [*PendingTask], [*PausedCalls] and agent.PausedRun
// (see [Resolution]). The zero value stores state unsealed, with no age
// limit, applied once per decoded value.
type StateOptions struct {
	// Key, when set, seals stored state: encrypted and authenticated
	// (AES-256-GCM under a key derived from this one), its JSON showing only
	// the state's ID and issue time. Every Adapter with the key refuses
	// decoded state not sealed with it, or altered ([ErrTamperedState]),
	// before anything is sent. Give every replica the same key, of at least
	// 32 random bytes. Without a key, stored state is not protected: see
	// docs/reference.md, "StateOptions.Key".
	Key []byte

	// OldKeys are keys that Key replaced: state sealed with one
	// of them still opens, and state made now is sealed with Key.
	// To rotate, give every replica the new Key with the old one
	// here; drop an old key once the state it sealed is past MaxAge.
	OldKeys [][]byte

	// MaxAge, when set, refuses stored state issued longer ago
	// ([ErrInvalidState]), before anything is sent. State that says it
	// was issued more than a minute in the future of this Adapter's clock
	// (the replicas' clocks may differ that much) is refused
	// ([ErrInvalidState]) whatever the age.
	MaxAge time.Duration

	// Claims, when set, makes every resume and decision of stored
	// state claim the state's ID in the application's store first, so
	// that each state is applied at most once across the Adapters that
	// share the store ([ErrClaimedState]), and lets a sealed interrupt
	// of an approved call resume without asking Approval again (without
	// a store it asks again, as a replay could otherwise resend the call).
	// Without it each value is applied once, but the same JSON decoded
	// again is a new value that can be applied again.
	Claims ClaimStore

	// RequireKey makes [New] refuse a configuration whose Key
	// is shorter than 32 bytes (or missing): a service whose replicas
	// share stored state then fails at start-up, rather than storing
	// state unsealed, when its key was not provided. See [Service].
	RequireKey bool

	// KeptSessionMaxAge bounds how long the Adapter keeps a legacy
	// Streamable HTTP session open for tasks it handed out and has not
	// seen end, after the session's connection closed; 0 means 4 hours.
	// See docs/reference.md, "Long-running tools".
	KeptSessionMaxAge time.Duration

	// LiveMaxAge bounds how long a live [*Interrupt] ([Interrupt.Live])
	// waits for its resume: a legacy server's question asked on its open
	// connection during a call (elicitation/create), with no
	// [Config.ElicitationHandler] to answer it. When it passes, the
	// server's question is answered with action cancel (the user dismissed
	// it without choosing, which is what happened; a decline would say
	// they refused), the call is given 10 s to end on its own and then
	// cancelled, and a resume fails with [ErrInvalidState], saying so. 0
	// means 10 minutes. A server may stop waiting sooner: a TypeScript
	// server's request times out after 60 s unless its tool asks for
	// longer (server-everything's trigger-elicitation-request waits 10
	// minutes), a go-sdk server's when its context ends; the interrupt then
	// ends, and its resume says that the server withdrew the question.
	// A negative value turns live interrupts off: such questions are
	// declined, as in version 0.3.
	LiveMaxAge time.Duration
}

// Service returns cfg set up for a long-lived service: what a service
// needs and the defaults leave out, each an option of its own, set here
// wherever cfg leaves it unset: a retry policy on every server, a required
// [StateOptions.Key], a catalog TTL, discoveries that dial only the servers
// they name, held tools that follow a restarted server
// ([Config.ToolsFollowServer]) and one session for every user of a
// stateless server ([Config.ShareStatelessSessions]). Set Servers first;
// the caller's map is not changed. More in docs/reference.md, "Service".
func Service(cfg Config) Config {
	servers := make(map[string]Server, len(cfg.Servers))
	for name, s := range cfg.Servers {
		if s.Retry == nil {
			s.Retry = &RetryPolicy{MaxAttempts: 3, Delay: time.Second}
		}
		servers[name] = s
	}
	cfg.Servers = servers
	cfg.State.RequireKey = true
	if cfg.CatalogTTL == 0 {
		cfg.CatalogTTL = time.Minute
	}
	cfg.DialSelectedOnly = true
	cfg.ToolsFollowServer = true
	cfg.ShareStatelessSessions = true
	return cfg
}

// IgnoreConnectionErrors is an [Config.OnConnectionError] policy that skips
// every server that fails.
func IgnoreConnectionErrors(server string, err error) error { return nil }

// Server is one MCP server. Exactly one of URL, Command or Transport
// must be set; a URL is never run as a program and a Command never goes
// through a shell. More in docs/reference.md, "Server".
type Server struct {
	// URL is an http or https endpoint spoken to with Streamable HTTP,
	// falling back to SSE (see DisableSSEFallback).
	URL string `json:"url,omitempty"`

	// Command, with Args, Env and Dir, starts a stdio server. The server's
	// stderr goes to [Config.Logger], one record per line, and its last lines
	// are quoted by the error that reports its exit. The server gets only a
	// few variables of the adapter's environment (PATH, HOME and the like,
	// listed in docs/reference.md, "Server.Command"), plus Env, which
	// overrides them: to pass the whole environment, put it in Env.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"cwd,omitempty"`

	// Transport returns a fresh transport for each dial (transports are
	// single-use), e.g. one end of mcp.NewInMemoryTransports. A go-sdk
	// *mcp.StreamableClientTransport or *mcp.SSEClientTransport is copied
	// (the value returned is left alone) and sent through the adapter's
	// HTTP transport, as a URL server is: MaxMessageBytes, the screen and
	// the credential-origin policy apply to it.
	Transport func(ctx context.Context) (mcp.Transport, error) `json:"-"`

	// Mode selects the protocol era; see [ModeAuto], [ModeModern], [ModeLegacy].
	Mode Mode `json:"mode,omitempty"`

	// Headers are added to every HTTP request sent to this server (and
	// never to another one), e.g. Authorization. A redirect, or an SSE
	// message endpoint, on another origin (scheme, host and port) gets
	// neither these headers nor an Authorization header.
	Headers map[string]string `json:"headers,omitempty"`

	// HTTPClient is used for HTTP and SSE. It is copied, never mutated; nil
	// means a zero http.Client. Do not set its Timeout: SSE streams are
	// long-lived; use context deadlines instead.
	HTTPClient *http.Client `json:"-"`

	// OAuth authorizes the server's requests: Streamable HTTP through
	// go-sdk's OAuth support, SSE (the fallback) through the adapter's HTTP
	// transport, alike: the token on every request (the stream's GET and
	// each POST), and on a 401 or 403 the handler's Authorize flow, then
	// the request once more. An Authorization in Headers or HeadersFor
	// wins over the token. The token is never sent to another origin.
	OAuth auth.OAuthHandler `json:"-"`

	// HeadersFor, when set, makes the server per-principal: each principal
	// (see [WithPrincipal]) gets a connection, catalog and cache of its own,
	// and no tool of one principal ever uses another's. It is called for
	// every HTTP request of a principal's connection; what it returns is
	// added to Headers, overriding them. Servers without HeadersFor or
	// OAuthFor are shared by every principal. Details in docs/reference.md,
	// "Server.HeadersFor".
	HeadersFor func(ctx context.Context, principal string) (map[string]string, error) `json:"-"`

	// OAuthFor, when set, makes the server per-principal like HeadersFor
	// and gives each principal's connection its own OAuth handler (in
	// place of OAuth), called once per dial of that principal.
	OAuthFor func(principal string) auth.OAuthHandler `json:"-"`

	// DefaultToolTimeout bounds every tool call of this server when positive,
	// unless [Config.DefaultToolTimeout] is set.
	DefaultToolTimeout time.Duration `json:"-"`

	// Tasks says which of the server's tools run as tasks (long-running
	// calls the server runs in the background; see [TaskMode]): by
	// default those that require it.
	Tasks TaskMode `json:"-"`

	// DisableSSEFallback turns off the retry over SSE when Streamable HTTP
	// answers 404 or 405 (any 4xx in ModeLegacy).
	DisableSSEFallback bool `json:"disableSSEFallback,omitempty"`

	// Retry dials a dead server again, at the next discovery: a stdio
	// server's process is started again, an HTTP or SSE server gets a new
	// session. Nil means a dead server stays failed, with
	// one exception the MCP spec makes: a Streamable HTTP server that
	// answers 404 for the session (it restarted) gets a new session at
	// once, policy or not; the request it refused is sent again on it, and
	// tools handed out before go on there. A call that may have run (its
	// answer was lost) is never sent again. A 404 is taken, as the spec
	// says, to mean the request was not executed (docs/reference.md).
	Retry *RetryPolicy `json:"-"`

	// LogLevel, when set, is sent with every request to a modern-era server
	// (modern servers have no logging/setLevel; see [Adapter.SetLoggingLevel]).
	LogLevel mcp.LoggingLevel `json:"logLevel,omitempty"`

	// Client is a prebuilt go-sdk client to dial with. It is used as given:
	// go-sdk copies client options at construction, so its own handlers and
	// its multi-round-trip setting win over the adapter's. Interrupts need a
	// client built with MultiRoundTrip disabled, list_changed invalidation
	// needs its ToolListChangedHandler, and [Config.ElicitationHandler] does
	// not apply to it. The adapter adds its middleware to it once.
	Client *mcp.Client `json:"-"`
}

// RetryPolicy bounds how a dead connection is dialed again.
type RetryPolicy struct {
	MaxAttempts int           // dials per discovery; values below 1 mean 1
	Delay       time.Duration // wait between two dials
}
