package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/agent"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
)

// bookingServer is an in-process booking server of the modern era: its
// book_table tool asks for the date with an input-required result.
func bookingServer() func(context.Context) (mcp.Transport, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "booking-service", Version: "1.0.0"}, nil)
	type bookIn struct {
		Party int `json:"party" jsonschema:"number of guests"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "book_table", Description: "Book a table; asks for the date."},
		func(_ context.Context, req *mcp.CallToolRequest, in bookIn) (*mcp.CallToolResult, any, error) {
			answer, ok := req.Params.InputResponses["date"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"date": &mcp.ElicitParams{
					Message: "Which date?",
					RequestedSchema: &jsonschema.Schema{Type: "object", Required: []string{"date"},
						Properties: map[string]*jsonschema.Schema{"date": {Type: "string", Format: "date"}}},
				}}}, nil, nil
			}
			text := fmt.Sprintf("Booked a table for %d on %v", in.Party, answer.Content["date"])
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	return mcpadapter.InMemory(s).Transport
}

// A tool-calling agent offers the model each tool's real JSON schema. Its
// run pauses where a tool needs the user: the run's state is JSON, and
// Resume continues the same run later, in any process, with the user's
// answers. The model sees the real booking as the tool's result.
func ExampleExecutor_Resume() {
	ctx := context.Background()
	cfg := mcpadapter.Config{Servers: map[string]mcpadapter.Server{"booking": {Transport: bookingServer()}}}
	model := mcpadaptertest.NewModel( // any llms.Model with tool calling
		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_1", "booking__book_table", `{"party":2}`)),
		mcpadaptertest.FinalAnswer("Your table for 2 is booked for 1 October."),
	)
	a, err := mcpadapter.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	ag, err := agent.New(model, ts)
	if err != nil {
		log.Fatal(err)
	}
	_, err = chains.Run(ctx, agent.NewExecutor(ag), "Book a table for 2.")
	var paused *agent.PausedRun
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &paused) || !errors.As(err, &intr) {
		log.Fatalf("want a paused run, got %v", err)
	}
	offered, _ := json.Marshal(model.Options()[0].Tools[0].Function.Parameters)
	fmt.Printf("offered: %s\n", offered)
	fmt.Printf("paused: %s asks %q\n", intr.Tool, intr.Requests[0].Message)
	stored, err := json.Marshal(paused)
	if err != nil {
		log.Fatal(err)
	}
	a.Close()

	// Later, elsewhere: the same run, on a new Adapter.
	var run agent.PausedRun
	if err := json.Unmarshal(stored, &run); err != nil {
		log.Fatal(err)
	}
	b, err := mcpadapter.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	ts, err = b.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	ag, err = agent.New(model, ts)
	if err != nil {
		log.Fatal(err)
	}
	out, err := agent.NewExecutor(ag).Resume(ctx, &run, mcpadapter.Answered(map[string]mcpadapter.Answer{
		"date": {Action: mcpadapter.Accept, Content: map[string]any{"date": "2026-10-01"}},
	}))
	if err != nil {
		log.Fatal(err)
	}
	last := model.Requests()[1]
	fmt.Println("the model saw:", last[len(last)-1].Parts[0].(llms.ToolCallResponse).Content)
	fmt.Println("answer:", out["output"])
	// Output:
	// offered: {"additionalProperties":false,"properties":{"party":{"description":"number of guests","type":"integer"}},"required":["party"],"type":"object"}
	// paused: booking__book_table asks "Which date?"
	// the model saw: Booked a table for 2 on 2026-10-01
	// answer: Your table for 2 is booked for 1 October.
}
