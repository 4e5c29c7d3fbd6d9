package mcpadapter_test

import (
	"context"
	"fmt"
	"log"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// docsWeatherServer returns an in-process weather server (a go-sdk
// server) for the examples, as a Server.Transport ([mcpadapter.InMemory]), and a counter of the
// tools/list requests it answered. It declares its tool lists fresh for
// ttlMs milliseconds (none when 0). Protocol versions, when given, restrict
// the ones it speaks.
func docsWeatherServer(ttlMs int, versions ...string) (func(context.Context) (mcp.Transport, error), *atomic.Int64) {
	opts := &mcp.ServerOptions{SupportedProtocolVersions: versions}
	if ttlMs > 0 {
		opts.SetCacheable = func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs = ttlMs }
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "weather-service", Version: "1.2.0"}, opts)
	type in struct {
		City string `json:"city" jsonschema:"the city"`
	}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "get_forecast",
		Description: "Get tomorrow's forecast for a city.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Sunny, 24°C in " + in.City}}}, nil, nil
	})
	lists := new(atomic.Int64)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return mcpadapter.InMemory(s).Transport, lists
}

// New validates the configuration and opens nothing: servers are dialed by
// the first discovery. Every configuration problem is reported at once.
func ExampleNew() {
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{
			// Streamable HTTP, falling back to SSE.
			"weather": {URL: "https://weather.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer <token>"}},
			// A stdio server: a program the adapter starts and ends.
			"files": {Command: "mcp-server-files", Args: []string{"/srv/data"}},
		},
		// Skip servers that cannot be reached instead of failing discovery.
		OnConnectionError: mcpadapter.IgnoreConnectionErrors,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	fmt.Println("configured two servers; nothing dialed yet")

	_, err = mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
		"a__b":  {URL: "https://example.com/mcp"},
		"empty": {},
		"ftp":   {URL: "ftp://example.com/mcp"},
	}})
	fmt.Println(err)
	// Output:
	// configured two servers; nothing dialed yet
	// mcpadapter: config: server "a__b": name must not contain "__" (the tool name separator)
	// mcpadapter: config: server "empty": exactly one of URL, Command or Transport must be set (0 are)
	// mcpadapter: config: server "ftp": field URL: scheme "ftp" is not http or https
}

// ListToolsets discovers every server, in parallel, and returns each
// server's tools apart; ServerInfo tells which protocol era each one
// negotiated. Servers selects whose tools are returned.
func ExampleAdapter_ListToolsets() {
	ctx := context.Background()
	modern, _ := docsWeatherServer(0)
	legacy, _ := docsWeatherServer(0, "2025-11-25") // a server of the initialize era
	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
		"today":    {Transport: modern},
		"tomorrow": {Transport: legacy},
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	sets, err := a.ListToolsets(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, server := range []string{"today", "tomorrow"} {
		info, err := a.ServerInfo(ctx, server)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (%s era, %s): %s\n", server, info.Era, info.ProtocolVersion, sets[server][0].Name())
	}

	some, err := a.ListTools(ctx, mcpadapter.FromServers("tomorrow"))
	if err != nil {
		log.Fatal(err)
	}
	out, err := some[0].Call(ctx, `{"city":"Paris"}`) // as an agent calls it
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(some[0].Name(), "->", out)
	// Output:
	// today (modern era, 2026-07-28): today__get_forecast
	// tomorrow (legacy era, 2025-11-25): tomorrow__get_forecast
	// tomorrow__get_forecast -> Sunny, 24°C in Paris
}

// Catalogs are cached per server for as long as the server's ttlMs says.
// CacheRefresh fetches and stores a fresh list; CacheBypass fetches without
// touching the cache. Unchanged tools keep their identity.
func ExampleWithCacheMode() {
	ctx := context.Background()
	weather, lists := docsWeatherServer(60_000) // fresh for a minute
	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
		"weather": {Transport: weather},
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	first, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("first discovery, tools/list requests:", lists.Load())

	cached, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("cached, tools/list requests:", lists.Load(), "same tool:", cached[0] == first[0])

	refreshed, err := a.ListTools(ctx, mcpadapter.WithCacheMode(mcpadapter.CacheRefresh))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("refreshed, tools/list requests:", lists.Load(), "same tool:", refreshed[0] == first[0])

	if _, err := a.ListTools(ctx, mcpadapter.WithCacheMode(mcpadapter.CacheBypass)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("bypassed, tools/list requests:", lists.Load())
	// Output:
	// first discovery, tools/list requests: 1
	// cached, tools/list requests: 1 same tool: true
	// refreshed, tools/list requests: 2 same tool: true
	// bypassed, tools/list requests: 3
}
