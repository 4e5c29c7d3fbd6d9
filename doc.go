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
// later, in another process. Legacy servers ask while the call is open:
// the call returns a live Interrupt ([Interrupt.Live]), which the same
// Adapter resumes, in the same process, within [StateOptions.LiveMaxAge]
// (a legacy task's questions over Streamable HTTP are durable interrupts,
// see [PendingTask]). [Config.ElicitationHandler] answers every question
// inline instead, in both eras. A call's progress reaches [WithProgress]
// before the call returns.
// [Config.Approval] holds chosen calls for a human with [*ApprovalRequired],
// which [Adapter.Resume] settles with [Approved] or [Rejected]. [Resolution]'s
// doc has the table of stored state and its entry points.
//
// # Errors
//
// Failures to reach or talk to a server are [*ServerError] values naming the
// server; the sentinel errors ([ErrClosed], [ErrUnknownServer], ...) are
// matched with [errors.Is].
//
// # Services
//
// One Adapter serves every request of a process, concurrently.
// [Service] sets what a long-lived service needs and the defaults leave
// out: a retry policy on every server, a required [StateOptions.Key], a
// catalog TTL, discoveries that dial only the servers they name, held
// tools that follow a restarted server ([Config.ToolsFollowServer]) and
// one session for every user of a stateless server
// ([Config.ShareStatelessSessions]).
// [Adapter.Status] reports each server's state for a health endpoint. A
// server with [Server.HeadersFor] or [Server.OAuthFor] gets a connection
// per principal ([WithPrincipal]). [Config.Logger], [Config.MeterProvider]
// and [Config.TracerProvider] observe dials and calls, and the adapter
// calls them, and every callback and hook, without a lock of its own held.
//
// # Read more
//
// The README (https://github.com/mcpadapter/mcpadapter) starts with two
// commands and the common tasks; docs/reference.md documents every
// option, error, era and setting of a service; the examples here run as
// tests. How the package is built, its layers, a call's path and every
// file's job, is in internal/README.md.
package mcpadapter
