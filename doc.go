// Package mcpadapter puts the tools of MCP (Model Context Protocol) servers
// into langchaingo agents and native tool-calling loops.
//
// An [Adapter] holds named servers: stdio programs ([Server.Command]),
// Streamable HTTP or SSE endpoints ([Server.URL]) and custom transports
// ([Server.Transport]). [New] only validates the configuration. The first
// discovery dials every server in parallel, negotiates its protocol era and
// lists its tools; connections are then kept and shared until [Adapter.Close]:
//
//	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
//		"weather": {URL: "https://weather.example.com/mcp"},
//		"files":   {Command: "mcp-server-files", Args: []string{"/srv/data"}},
//	}})
//	if err != nil { ... }
//	defer a.Close()
//	ts, err := a.ListTools(ctx) // tools named "weather__get_forecast", ...
//	ag, err := agent.New(llm, ts) // package mcpadapter/agent: native tool calling, runs that pause and resume
//	answer, err := chains.Run(ctx, agent.NewExecutor(ag), "What's the weather in Paris?")
//
// # Eras
//
// A server speaks the modern protocol (2026-07-28, server/discover) or the
// legacy one (the initialize handshake); [ModeAuto] tries modern first, and
// [Adapter.ServerInfo] tells what was negotiated. [Config.OnConnectionError]
// decides whether a server that cannot be reached fails discovery (the
// default) or is skipped ([IgnoreConnectionErrors]).
//
// # Tools and results
//
// A [Tool] is a langchaingo tools.Tool ([Tool.Call] takes and returns text)
// that also carries the server's descriptor, its JSON schema
// ([Tool.Parameters]) and its metadata ([Tool.Metadata]). [Tool.Invoke]
// returns a [Result] that keeps every content block (text, images, audio,
// resources, links), the structured content ([Artifact]) and the isError
// flag: a tool's failure is a result, not an error. For native tool calling,
// [Toolset.LLMTools] gives the model the real schemas and
// [Toolset.HandleToolCalls] runs the model's calls and returns the messages to
// append; [ToolSearch] offers a big catalog through one search tool. Tool
// lists are cached as long as the server's ttlMs allows; see [WithCacheMode].
//
// # Interrupts and approval
//
// When a modern server needs the user's input (elicitation), the call
// returns an [*Interrupt] error: show its Requests, then [Adapter.Resume]
// it with [Answered]. An Interrupt survives JSON, so it can be resumed
// later, in another process. Legacy servers ask while the call is open;
// [Config.ElicitationHandler] answers them (and modern rounds, inline),
// except a legacy task's questions over Streamable HTTP, which are
// interrupts too (see [PendingTask]).
// [Config.Approval] holds chosen calls for a human with [*ApprovalRequired],
// which [Adapter.Decide] settles with [Approved] or [Rejected]. Every kind
// of stored state takes a [Resolution] at its one entry point.
//
// # Errors
//
// Failures to reach or talk to a server are [*ServerError] values naming the
// server; the sentinel errors ([ErrClosed], [ErrUnknownServer], ...) are
// matched with [errors.Is].
//
// # How it is built
//
// Data flows one way: Config → pool → dial (eras, transports, the screen) →
// conn → catalog → Tool → call → Result or Interrupt. [Adapter] holds its
// configuration, logger, tracer, meters and a call counter; its methods are short
// delegations to three owners, each with its own lock whose comment names
// the fields it guards, and no lock is held across I/O or while go-sdk
// holds one of its own.
//
//	public API   Adapter (adapter.go), Tool and Toolset (tools.go), Result (result.go),
//	             stored state (interrupt.go, approval.go, pause.go, pendingtask.go, state.go)
//	owners       pool: dials, skip/retry, per-principal admission and reaping, failures
//	               (pool.go, principal.go, status.go)
//	             catalogs: per-connection lists, TTL, shared fetches, list_changed (catalog.go)
//	             notifier: change callbacks, server logs, progress by connection, subscriptions
//	               by principal, fair delivery queues by (server, principal) (notify.go,
//	               internal/deliver)
//	connection   dialer with its screen and span (dial.go, eras.go), HTTP transport (httptransport.go
//	               over internal/httptransport), live conn (conn.go, connend.go, serverreq.go)
//	seams        internal/stdio (processes), internal/httptransport (HTTP exchanges, resends
//	             past a stale pooled connection), internal/wire (everything a server sends),
//	             internal/tasks (the tasks protocol, requests of the adapter's own),
//	             internal/observe (spans, metrics, the call's observer), internal/deliver (the
//	             notifier's fair queues, the idle timeout), internal/seal (stored state's seal,
//	             age and claims), internal/stored (every stored form's JSON and checks:
//	             interrupt, approval, pending task, paused batch), internal/sdkcache (past
//	             go-sdk's list cache),
//	             internal/schemapass, internal/configfile, internal/toolsearch, and small pure
//	             helpers: callinput, elicit, jsonvalue, modeltext,
//	             outputschema, redact, suggest, toolname
//	go-sdk       mcp.ClientSession, transports, jsonrpc; what the adapter relies on that
//	             go-sdk does not promise is listed, and pinned by tests, in sdkcompat.go
//
// A call's path, [Tool.Call] on a stdio server with the defaults (no
// callbacks, approval, middleware, tracer or progress; the files entered
// only when those are set are in brackets):
//
//	1 call.go        Call → observe [callbacks] → internal/callinput decodes the text → gated:
//	                 nulls that mean absent dropped (internal/schemapass), the one principal
//	                 check (conn.go)
//	2 call.go        run: the observer (trace.go, internal/observe), hooked [hooks.go] → send: the
//	                 approval gate [approval.go], on the arguments as sent → rounds [a tool
//	                 with task support: tasks.go, internal/tasks] → callRounds: callContext (conn.go) →
//	                 callRound: progress sink (notify.go) and idle timer (internal/deliver),
//	                 the request's trace context (internal/observe) → callOnce: recordTools
//	                 (sdkcache.go), openCall (serverreq.go) → go-sdk ClientSession.CallTool
//	3 go-sdk         sending middlewares eraPolicy and requestLogLevel (eras.go), sdkCacheSlots
//	                 (sdkcache.go, internal/sdkcache) → internal/stdio writes the line; its
//	                 reader passes each line through internal/wire before go-sdk decodes it
//	4 call.go        closeCall (serverreq.go); a failure becomes an error (conn.callError) or an
//	                 isError result (modelerror.go) → newResult and the outputSchema check
//	                 (result.go) → interrupted [an *Interrupt, elicitation.go]
//	5 call.go        answered (modelerror.go) → the model's text within the budget (budget.go)
//
// Ten root files: call.go, conn.go, trace.go, notify.go, sdkcache.go,
// serverreq.go, eras.go, result.go, modelerror.go and budget.go.
//
// A discovery's path, a cold [Adapter.ListTools] of one stdio server (in
// brackets, as above, what only a setting enters):
//
//	1 discovery.go   ListTools → discover: list, one server's part, for each server in parallel,
//	                 then settle, the skip policy
//	2 pool.go        Adapter.connect → pool.connect: the connection's key, one shared dial
//	                 (singleflight) → open → dialer.tracedDial [the dial counted, internal/observe]
//	3 dial.go        tracedDial: a span when a tracer is set (internal/observe) → dial:
//	                 newClient with its handlers and sending middlewares, connectEra (eras.go)
//	                 → the stdio transport (internal/stdio), screened (internal/wire) → go-sdk's
//	                 handshake
//	4 conn.go        attach: the death watch, the connection's progress registry (notify.go)
//	                 [the connection counted, internal/observe]
//	5 catalog.go     catalogs.tools: TTL, shared fetch → fetchTools past go-sdk's list cache
//	                 (the slots of sdkcache.go, internal/sdkcache's pages) → newTool (tools.go):
//	                 the names the model sees, the metadata
//	6 filter.go      visible: the one pass that decides what the caller is offered, then
//	                 the duplicate check
//
// Ten root files: discovery.go, pool.go, dial.go, eras.go, conn.go,
// notify.go, catalog.go, sdkcache.go, tools.go and filter.go: a discovery
// crosses every layer once.
//
// # Files
//
// Every non-test file of the package (a test keeps this table complete;
// internal/README.md has the table of internal/):
//
//	doc.go                     this overview
//	adapter.go                 Adapter, New, Close, Session, ServerInfo: thin methods over the owners
//	approval.go                ApprovalRequired: a call held for a human; Decide; its JSON (internal/stored)
//	budget.go                  ResultBudget: what one result may put into the model's context
//	call.go                    one call, top-down: Call, Invoke, InvokeJSON down to one tools/call
//	catalog.go                 catalogs: per-connection lists, TTL, versions, shared fetches
//	config.go                  Config, Server, Mode, RetryPolicy: the configuration and its documentation
//	configfile.go              LoadConfig, ParseConfig, ConfigError: internal/configfile's result mapped onto Server
//	conn.go                    the live connection: session, calls in flight, death, close, errors
//	connend.go                 a session's end, signed by its transport and met with attach, without a
//	                           waiting goroutine
//	descriptor.go              ToolDescriptor, ToolAnnotations: a tool as its server sent it
//	dial.go                    the dialer: the go-sdk client, transports (stdio: internal/stdio), SSE fallback,
//	                           handshake, its span; the adapter's side of internal/wire (screens, faults)
//	discovery.go               ListTools, ListToolsets and their options; discover fans out
//	elicitation.go             Interrupt, ElicitationRequest, Answer; Resume; live and inline answers, their
//	                           checks; -32042
//	eras.go                    era policy: the handshake each Mode asks for, the era middlewares
//	errors.go                  sentinel errors, ServerError, serverError
//	filter.go                  Filter, ToolPredicate, toolPolicy; visible: what a caller is offered
//	hooks.go                   Middleware, CallRequest, CallHandler; arguments rewritten by middleware
//	httptransport.go           the adapter's side of internal/httptransport: headers, end signs, statuses
//	inmemory.go                InMemory: an mcp.Server in this process over a screened pipe
//	interrupt.go               an Interrupt's JSON form (internal/stored)
//	modelerror.go              the one place where a failed tools/call becomes an isError result
//	notify.go                  notifier: change callbacks, server logs, progress, each connection's registry;
//	                           fair queues (internal/deliver)
//	pause.go                   Resolution, PausedCalls, ResumeToolCalls: one way to settle a pause; its JSON
//	                           (internal/stored)
//	pendingtask.go             PendingTask: a task a call stopped waiting for; CollectTask, CancelTask; its
//	                           JSON (internal/stored)
//	pool.go                    pool: generations, connection keys, shared dials, skip/retry, failures
//	principal.go               WithPrincipal; per-principal admission, LRU and idle reaping
//	modelparts.go              blocks as langchaingo parts: the provider style PartOptions select
//	prompts.go                 ListPrompts, GetPrompt, PromptResult: arguments checked, messages converted
//	providers.go               SchemaPass, ForOpenAI, ForOpenAIStrict, ForGemini, InlineRefs (internal/schemapass)
//	resources.go               ListResources, ListResourceTemplates, ReadResource, subscriptions, held across
//	                           sessions
//	result.go                  Result, Block, Artifact: a server's result kept without loss, its text;
//	                           outputSchema validation
//	sdkcache.go                go-sdk's list cache: the middleware, a conn's slots, the tools record (internal/sdkcache)
//	sdkcompat.go               every reliance on go-sdk behaviour go-sdk does not promise
//	serverreq.go               requests a server sends while serving a call
//	state.go                   stored state: the errors, ClaimStore, stamps, the owner checks (states; internal/seal)
//	status.go                  Status, ServerStatus: what a health endpoint reports; delivery counts
//	tasks.go                   long-running tools: TaskMode, WithTasks; taskCall, the adapter's side of
//	                           internal/tasks: requests of its own, task lines, kept sessions, progress,
//	                           questions, errors
//	tools.go                   Tool, Toolset, ToolCall; LLMTools, Lookup, HandleToolCalls; the names the
//	                           model sees (SafeToolName, prefixes); Metadata: annotations, _meta, server
//	toolsearch.go              ToolSearch: a big catalog offered through one search tool (internal/toolsearch)
//	trace.go                   the adapter's side of internal/observe: a call's observer, a connection's peer,
//	                           the error.type of the adapter's own failures
//	validate.go                New's checks: every problem of a configuration at once, by server and field
package mcpadapter
