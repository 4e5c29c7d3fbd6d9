package mcpadaptertest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/agent"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
)

// An agent over an in-process MCP server, tested without a model API: the
// scripted model calls the tool, then answers; the test reads what the
// agent showed the model.
func Example() {
	ctx := context.Background()

	// The server under test: a go-sdk server in this process.
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	type args struct {
		City string `json:"city"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "get_weather", Description: "Current weather of a city."},
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + in.City}}}, nil, nil
		})

	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
		"weather": mcpadapter.InMemory(srv),
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}

	// The model's side of the run.
	model := mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_1", "weather__get_weather", `{"city":"Paris"}`)),
		mcpadaptertest.FinalAnswer("It is sunny in Paris."),
	)
	ag, err := agent.New(model, ts)
	if err != nil {
		log.Fatal(err)
	}
	answer, err := chains.Run(ctx, agent.NewExecutor(ag), "What is the weather in Paris?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("answer:", answer)

	// What the model was offered and what it saw.
	fmt.Println("tools offered:", model.Options()[0].Tools[0].Function.Name)
	last := model.Requests()[1]
	for _, msg := range last {
		for _, part := range msg.Parts {
			if r, ok := part.(llms.ToolCallResponse); ok {
				fmt.Println("tool result:", r.Content)
			}
		}
	}
	// Output:
	// answer: It is sunny in Paris.
	// tools offered: weather__get_weather
	// tool result: sunny in Paris
}
