// Package mcpadapter puts the tools of MCP (Model Context Protocol) servers
// into langchaingo agents and native tool-calling loops:
//
//	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
//		"weather": {URL: "https://weather.example.com/mcp"},
//		"files":   {Command: "mcp-server-files", Args: []string{"/srv/data"}},
//	}})
//	defer a.Close()
//	ts, err := a.ListTools(ctx)   // "weather__get_forecast", ...: langchaingo tools
//	ag, err := agent.New(llm, ts) // package mcpadapter/agent: native tool calling
//
// An [Adapter] dials each server on first use; a server speaks the modern
// protocol (2026-07-28) or the legacy one, and [ModeAuto] tries both. A [Tool]
// carries its server's JSON schema and metadata, and [Tool.Invoke] returns a
// [Result] that keeps every content block: a tool's failure is a result, not
// an error. When a server asks the user a question, the call returns an
// [*Interrupt]: show its Requests, then [Adapter.Resume] it (a modern server's
// survives JSON; a legacy server's is [Interrupt.Live], for the same Adapter).
// [Config.Approval] holds chosen calls for a human. Failures to reach a server
// are [*ServerError] values. One Adapter serves a whole process; a multi-user
// service starts from [Service].
//
// The README (https://github.com/mcpadapter/mcpadapter) and docs/reference.md
// document every option, error, era and setting of a service; the examples
// here run as tests; internal/README.md shows how the package is built.
package mcpadapter
