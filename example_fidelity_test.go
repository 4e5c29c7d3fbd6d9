package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fidelityExampleAdapter serves s in memory as server "apps". A real
// program would set URL or Command instead.
func fidelityExampleAdapter(s *mcp.Server) *mcpadapter.Adapter {
	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{"apps": {
		Transport: func(ctx context.Context) (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			_, err := s.Connect(context.WithoutCancel(ctx), st, nil)
			return ct, err
		},
	}}})
	if err != nil {
		log.Fatal(err)
	}
	return a
}

// fidelityText is a low-level tool handler answering text, with the
// structured content sc when it is not nil.
func fidelityText(text string, sc any) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: sc}, nil
	}
}

// An MCP Apps server lists a tool for its view alone: ListTools leaves it
// out; the app that runs the view's calls lists it with IncludeAppOnly, and
// the set still offers the model only the tools meant for it.
func ExampleIncludeAppOnly() {
	s := mcp.NewServer(&mcp.Implementation{Name: "monitor", Version: "1.0.0"}, nil)
	empty := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "get-info", InputSchema: empty}, fidelityText("info", nil))
	s.AddTool(&mcp.Tool{Name: "poll-stats", InputSchema: empty,
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}}, fidelityText("stats", nil))
	a := fidelityExampleAdapter(s)
	defer a.Close()
	ctx := context.Background()

	forModel, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	all, err := a.ListTools(ctx, mcpadapter.IncludeAppOnly())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(forModel), len(all), len(all.Tools()))

	poll := all.Lookup("apps__poll-stats")
	res, err := poll.Invoke(ctx, nil) // the view's call
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(poll.AppOnly(), res.Text())
	// Output:
	// 1 2 1
	// true stats
}

// A tool that declares an outputSchema and answers structured content that
// breaks it fails the call with an *OutputSchemaError naming where.
func ExampleOutputSchemaError() {
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{
		Name:         "get_weather",
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"tempC":{"type":"number"}}}`),
	}, fidelityText("warm", map[string]any{"tempC": "warm"}))
	a := fidelityExampleAdapter(s)
	defer a.Close()
	ctx := context.Background()

	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, err = ts.Lookup("apps__get_weather").Invoke(ctx, nil)
	var oe *mcpadapter.OutputSchemaError
	if errors.As(err, &oe) {
		fmt.Println(oe.Tool, oe.Path)
	}
	// Output:
	// get_weather /properties/tempC
}

// A content item annotated for the user alone stays in Result.Content for
// the app; the model's view of the result leaves it out.
func ExampleBlock_audience() {
	res := &mcpadapter.Result{Content: []mcpadapter.Block{
		{Type: mcpadapter.BlockText, Text: "3 rows changed"},
		{Type: mcpadapter.BlockText, Text: "Saved.", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}}},
	}}
	fmt.Println(len(res.Content))
	fmt.Println(res.Text())
	// Output:
	// 2
	// 3 rows changed
}
