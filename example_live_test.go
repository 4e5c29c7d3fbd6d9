package mcpadapter_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A legacy server (protocol 2025-11-25, as today's npm servers) asks for
// input with an elicitation/create request while the call is open. Without
// an ElicitationHandler the call returns a live interrupt: the request
// waits on the connection, and a resume on the same Adapter answers it,
// then waits for the call's result. A store can keep its JSON, but only
// this Adapter, in this process, can resume it, within
// StateOptions.LiveMaxAge.
func ExampleInterrupt_Live() {
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "booking-service", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "book_table", Description: "Book a table; asks for the date."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			answer, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message: "Which date?",
				RequestedSchema: &jsonschema.Schema{
					Type:       "object",
					Properties: map[string]*jsonschema.Schema{"date": {Type: "string", Format: "date"}},
					Required:   []string{"date"},
				},
			})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Booked for %v (%s)", answer.Content["date"], answer.Action)}}}, nil, nil
		})
	server := mcpadapter.InMemory(s)
	server.Mode = mcpadapter.ModeLegacy
	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{"booking": server}})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}

	_, err = ts.Lookup("booking__book_table").Invoke(ctx, nil)
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &intr) {
		log.Fatalf("want an interrupt, got %v", err)
	}
	fmt.Println("live:", intr.Live())
	for _, r := range intr.Requests {
		fmt.Printf("%s: %s\n", r.Key, r.Message)
	}
	res, err := a.Resume(ctx, intr, mcpadapter.Answered(map[string]mcpadapter.Answer{
		intr.Requests[0].Key: {Action: mcpadapter.Accept, Content: map[string]any{"date": "2026-09-18"}},
	}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// live: true
	// elicitation: Which date?
	// Booked for 2026-09-18 (accept)
}
