package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// docsBookingServer returns an in-process booking server (a go-sdk server
// of the modern era) for the examples, as a Server.Transport
// ([mcpadapter.InMemory]). Its book_table tool asks for the date with an
// input-required result; its cancel_booking tool is declared destructive.
func docsBookingServer() func(context.Context) (mcp.Transport, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "booking-service", Version: "1.0.0"}, nil)
	type bookIn struct {
		Party int `json:"party" jsonschema:"number of guests"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "book_table", Description: "Book a table; asks for the date."},
		func(_ context.Context, req *mcp.CallToolRequest, in bookIn) (*mcp.CallToolResult, any, error) {
			answer, ok := req.Params.InputResponses["date"].(*mcp.ElicitResult)
			if !ok {
				// Round 1: ask. A real server seals its state (HMAC).
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"date": &mcp.ElicitParams{
						Message: "Which date?",
						RequestedSchema: &jsonschema.Schema{
							Type:       "object",
							Properties: map[string]*jsonschema.Schema{"date": {Type: "string", Format: "date"}},
							Required:   []string{"date"},
						},
					}},
					RequestState: fmt.Sprintf("party=%d", in.Party),
				}, nil, nil
			}
			if answer.Action != "accept" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no booking: " + answer.Action}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("Booked a table for %d on %v (%s)", in.Party, answer.Content["date"], req.Params.RequestState),
			}}}, nil, nil
		})
	type cancelIn struct {
		ID string `json:"id" jsonschema:"the booking's id"`
	}
	destructive := true
	mcp.AddTool(s, &mcp.Tool{Name: "cancel_booking", Description: "Cancel a booking.", Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive}},
		func(_ context.Context, _ *mcp.CallToolRequest, in cancelIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "cancelled booking " + in.ID}}}, nil, nil
		})
	return mcpadapter.InMemory(s).Transport
}

// A server that needs the user's input interrupts the call. Answer every
// request by its key and resume; invalid answers are refused before
// anything is sent.
func ExampleInterrupt() {
	ctx := context.Background()
	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
		"booking": {Transport: docsBookingServer()},
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}

	_, err = ts.Lookup("booking__book_table").Invoke(ctx, map[string]any{"party": 4})
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &intr) {
		log.Fatalf("want an interrupt, got %v", err)
	}
	for _, r := range intr.Requests {
		fmt.Printf("%s asks (%s): %s\n", intr.Tool, r.Key, r.Message)
	}

	// An answer that does not match the requested schema.
	_, err = a.Resume(ctx, intr, mcpadapter.Answered(map[string]mcpadapter.Answer{"date": {Action: mcpadapter.Accept}}))
	fmt.Println("refused:", err != nil)

	res, err := a.Resume(ctx, intr, mcpadapter.Answered(map[string]mcpadapter.Answer{
		"date": {Action: mcpadapter.Accept, Content: map[string]any{"date": "2026-09-18"}},
	}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// booking__book_table asks (date): Which date?
	// refused: true
	// Booked a table for 4 on 2026-09-18 (party=4)
}

// An Interrupt is JSON: store it while the user thinks, and resume it later
// on any Adapter (in any process) with a server of the same name.
func ExampleAdapter_Resume() {
	ctx := context.Background()
	cfg := mcpadapter.Config{Servers: map[string]mcpadapter.Server{"booking": {Transport: docsBookingServer()}}}
	a, err := mcpadapter.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, err = ts.Lookup("booking__book_table").Invoke(ctx, map[string]any{"party": 2})
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &intr) {
		log.Fatalf("want an interrupt, got %v", err)
	}
	stored, err := json.Marshal(intr)
	if err != nil {
		log.Fatal(err)
	}
	a.Close()

	// Later, elsewhere.
	var back mcpadapter.Interrupt
	if err := json.Unmarshal(stored, &back); err != nil {
		log.Fatal(err)
	}
	b, err := mcpadapter.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	res, err := b.Resume(ctx, &back, mcpadapter.Answered(map[string]mcpadapter.Answer{
		"date": {Action: mcpadapter.Accept, Content: map[string]any{"date": "2026-10-01"}},
	}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// Booked a table for 2 on 2026-10-01 (party=2)
}

// With an ElicitationHandler, the adapter answers synchronously instead of
// interrupting (and answers legacy servers' live requests).
func ExampleConfig_elicitationHandler() {
	ctx := context.Background()
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{"booking": {Transport: docsBookingServer()}},
		ElicitationHandler: func(_ context.Context, req mcpadapter.ElicitationRequest) (mcpadapter.Answer, error) {
			fmt.Println("handler:", req.Message)
			return mcpadapter.Answer{Action: mcpadapter.Accept, Content: map[string]any{"date": "2026-12-24"}}, nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	res, err := ts.Lookup("booking__book_table").Invoke(ctx, map[string]any{"party": 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// handler: Which date?
	// Booked a table for 3 on 2026-12-24 (party=3)
}

// Config.Approval holds calls for a human before the server is contacted.
// Here every tool that may be destructive (by its MCP annotations) is held.
func ExampleApprovalRequired() {
	ctx := context.Background()
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers:  map[string]mcpadapter.Server{"booking": {Transport: docsBookingServer()}},
		Approval: func(c mcpadapter.ToolCall) bool { return c.Metadata.Annotations().MayBeDestructive() },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	cancel := ts.Lookup("booking__cancel_booking")

	for _, id := range []string{"b-17", "b-42"} {
		_, err := cancel.Invoke(ctx, map[string]any{"id": id})
		var held *mcpadapter.ApprovalRequired
		if !errors.As(err, &held) {
			log.Fatalf("want an approval request, got %v", err)
		}
		fmt.Printf("held: %s %v\n", held.Call.Tool, held.Call.Args)
		var res *mcpadapter.Result
		if id == "b-17" {
			res, err = a.Resume(ctx, held, mcpadapter.Approved())
		} else {
			res, err = a.Resume(ctx, held, mcpadapter.Rejected("the guest confirmed by phone"))
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("  %s (isError %t)\n", res.Text(), res.IsError)
	}
	// Output:
	// held: booking__cancel_booking map[id:b-17]
	//   cancelled booking b-17 (isError false)
	// held: booking__cancel_booking map[id:b-42]
	//   The user rejected the call to tool booking__cancel_booking; it was not run. Reason: the guest confirmed by phone (isError true)
}
