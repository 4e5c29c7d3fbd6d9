package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modelExampleServer is an in-memory server with a read-only tool, a
// destructive one, and one whose name providers refuse.
func modelExampleServer() func(ctx context.Context) (mcp.Transport, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1.0.0"}, nil)
	no := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("data ", 1000)}}}, nil
	}
	schema := map[string]any{"type": "object", "$defs": map[string]any{"path": map[string]any{"type": "string", "format": "uri-reference"}},
		"properties": map[string]any{"path": map[string]any{"$ref": "#/$defs/path"}}, "required": []any{"path"}, "additionalProperties": false}
	s.AddTool(&mcp.Tool{Name: "read_file", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}, InputSchema: schema}, no)
	s.AddTool(&mcp.Tool{Name: "delete_file", InputSchema: schema}, no)
	s.AddTool(&mcp.Tool{Name: "files.search/v2", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}, InputSchema: schema}, no)
	return func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := s.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
}

// Offer the model only the tools a user may use: a static deny list and a
// predicate on the annotations and the caller's context.
// Names the providers refuse are made safe.
func ExampleFilter() {
	type userKey struct{}
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{
			"fs": {Transport: modelExampleServer()},
		},
		Filter: mcpadapter.Filter{Deny: []string{"*_admin"}, Keep: func(ctx context.Context, server string, tool *mcpadapter.ToolDescriptor) bool {
			return ctx.Value(userKey{}) == "admin" || tool.Annotations.ReadOnly()
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	for _, user := range []string{"guest", "admin"} {
		ts, err := a.ListTools(context.WithValue(context.Background(), userKey{}, user))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(user, ":")
		for _, t := range ts {
			fmt.Print(" ", t.Name())
		}
		fmt.Println()
	}
	// Output:
	// guest: fs__files_search_v2 fs__read_file
	// admin: fs__delete_file fs__files_search_v2 fs__read_file
}

// Give Google AI a schema it accepts: $ref inlined, keywords it rejects
// dropped. Parameters() keeps the server's schema.
func ExampleToolset_LLMToolsFor() {
	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{"fs": {Transport: modelExampleServer()}}})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ts, err := a.ListTools(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	gemini, err := ts.LLMToolsFor(mcpadapter.ForGemini())
	if err != nil {
		log.Fatal(err)
	}
	b, _ := json.Marshal(gemini[0].Function.Parameters)
	fmt.Println(string(b))
	b, _ = json.Marshal(ts[0].Parameters())
	fmt.Println(string(b))
	// Output:
	// {"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}
	// {"$defs":{"path":{"format":"uri-reference","type":"string"}},"additionalProperties":false,"properties":{"path":{"$ref":"#/$defs/path"}},"required":["path"],"type":"object"}
}

// Bound what one result gives the model; the Result keeps everything.
func Example_resultBudget() {
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers:      map[string]mcpadapter.Server{"fs": {Transport: modelExampleServer()}},
		ResultBudget: 200,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ts, err := a.ListTools(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	read := ts.Lookup("fs__read_file")
	text, err := read.Call(context.Background(), `{"path": "a.txt"}`)
	if err != nil {
		log.Fatal(err)
	}
	res, err := read.Invoke(context.Background(), map[string]any{"path": "a.txt"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n%d\n", text, len(res.Text()))
	// Output:
	// "data data data data data data data data data data data data data data data data data data da\n[… 4886 of 5000 characters left out: the result is longer than the model is given …]\na data data data data "
	// 5000
}
