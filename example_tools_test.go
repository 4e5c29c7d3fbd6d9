package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// toolsExampleServer starts an in-memory go-sdk server with one tool,
// get_weather, and returns a factory of client transports to it, for
// [mcpadapter.Server.Transport] ([mcpadapter.InMemory]). A real program would set URL or Command
// instead.
func toolsExampleServer() func(ctx context.Context) (mcp.Transport, error) {
	type in struct {
		City string `json:"city" jsonschema:"the city name"`
	}
	type out struct {
		City  string  `json:"city"`
		TempC float64 `json:"tempC"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "get_weather",
		Description: "Get the current weather for a city.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, args in) (*mcp.CallToolResult, out, error) {
		if args.City == "Atlantis" {
			return nil, out{}, errors.New("unknown city: Atlantis") // an isError result
		}
		text := &mcp.TextContent{Text: "Sunny, 21°C in " + args.City}
		return &mcp.CallToolResult{Content: []mcp.Content{text}}, out{City: args.City, TempC: 21}, nil
	})
	return mcpadapter.InMemory(s).Transport
}

// toolsExampleTools lists the tools of the in-memory weather server.
func toolsExampleTools(ctx context.Context) (*mcpadapter.Adapter, mcpadapter.Toolset) {
	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
		"weather": {Transport: toolsExampleServer()},
	}})
	if err != nil {
		log.Fatal(err)
	}
	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	return a, ts
}

// ListTools returns langchaingo tools named "server__tool", whose
// descriptions carry an argument hint for text agents, and whose
// Parameters are the server's schema.
func ExampleAdapter_ListTools_tools() {
	ctx := context.Background()
	a, ts := toolsExampleTools(ctx)
	defer a.Close()

	for _, tool := range ts {
		fmt.Println(tool.Name())
		fmt.Println(tool.Description())
		schema, _ := json.Marshal(tool.Parameters())
		fmt.Println(string(schema))
		meta := tool.Metadata()
		fmt.Println(meta.Server().Name, meta.Server().Version, meta.Annotations().ReadOnly(), meta.Annotations().MayBeDestructive())
	}
	// Output:
	// weather__get_weather
	// Get the current weather for a city. Input: JSON object {"city": string (required)}
	// {"additionalProperties":false,"properties":{"city":{"description":"the city name","type":"string"}},"required":["city"],"type":"object"}
	// weather 1.0.0 true false
}

// Invoke returns every block of the result and its structured content; a
// tool-level failure is a result with IsError set, not an error.
func ExampleTool_Invoke() {
	ctx := context.Background()
	a, ts := toolsExampleTools(ctx)
	defer a.Close()
	tool := ts.Lookup("weather__get_weather")

	res, err := tool.Invoke(ctx, map[string]any{"city": "Paris"})
	if err != nil {
		log.Fatal(err)
	}
	structured, _ := json.Marshal(res.Artifact.StructuredContent)
	fmt.Println(res.Text())
	fmt.Println(string(structured))

	res, err = tool.Invoke(ctx, map[string]any{"city": "Atlantis"})
	fmt.Println(res.IsError, res.Text(), err)
	// Output:
	// Sunny, 21°C in Paris
	// {"city":"Paris","tempC":21}
	// true unknown city: Atlantis <nil>
}

// Call is langchaingo's text API: it accepts what agents and models send,
// and answers input it cannot use with text the model can act on.
func ExampleTool_Call() {
	ctx := context.Background()
	a, ts := toolsExampleTools(ctx)
	defer a.Close()
	tool := ts.Lookup("weather__get_weather")

	for _, input := range []string{
		`{"city": "Paris"}`,                  // a JSON object
		`{"__arg1": "{\"city\": \"Oslo\"}"}`, // OpenAIFunctionsAgent's wrapper
		"```json\n{\"city\": \"Rome\"}\n```", // fenced JSON
		"Lima",                               // a bare string: the only string property
	} {
		out, err := tool.Call(ctx, input)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(out)
	}
	// Output:
	// Sunny, 21°C in Paris
	// Sunny, 21°C in Oslo
	// Sunny, 21°C in Rome
	// Sunny, 21°C in Lima
}

// HandleToolCalls runs a model's tool calls and returns the messages to
// append: one AI message per call, each followed by its tool message.
func ExampleToolset_HandleToolCalls_interleaved() {
	ctx := context.Background()
	a, ts := toolsExampleTools(ctx)
	defer a.Close()

	// What a model answers when offered ts.LLMTools() with llms.WithTools.
	call := func(id, city string) llms.ToolCall {
		return llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{
			Name: "weather__get_weather", Arguments: `{"city":"` + city + `"}`,
		}}
	}
	choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{call("call_1", "Paris"), call("call_2", "Oslo")}}

	msgs, err := ts.HandleToolCalls(ctx, choice)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		switch p := m.Parts[0].(type) {
		case llms.ToolCall:
			fmt.Println(m.Role, p.ID, p.FunctionCall.Arguments)
		case llms.ToolCallResponse:
			fmt.Println(m.Role, p.ToolCallID, p.Content)
		}
	}
	// Output:
	// ai call_1 {"city":"Paris"}
	// tool call_1 Sunny, 21°C in Paris
	// ai call_2 {"city":"Oslo"}
	// tool call_2 Sunny, 21°C in Oslo
}
