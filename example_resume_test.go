package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/llms"
)

// A batch of native tool calls pauses at the call that needs the user;
// ResumeToolCalls settles it and runs the rest, and returns the messages of
// the whole batch.
func ExampleToolset_ResumeToolCalls() {
	ctx := context.Background()
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers:  map[string]mcpadapter.Server{"booking": {Transport: docsBookingServer()}},
		Approval: func(call mcpadapter.ToolCall) bool { return call.MCPName == "cancel_booking" },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		mcpadaptertest.ToolCall("call_1", "booking__book_table", `{"party":4}`),
		mcpadaptertest.ToolCall("call_2", "booking__cancel_booking", `{"id":"b-17"}`),
	}}
	_, err = ts.HandleToolCalls(ctx, choice)
	var paused *mcpadapter.PausedCalls
	for errors.As(err, &paused) {
		var r mcpadapter.Resolution
		var intr *mcpadapter.Interrupt
		if errors.As(err, &intr) {
			fmt.Printf("call %d: %s asks %q\n", paused.Next+1, intr.Tool, intr.Requests[0].Message)
			r = mcpadapter.Answered(map[string]mcpadapter.Answer{"date": {Action: mcpadapter.Accept, Content: map[string]any{"date": "2026-09-18"}}})
		} else {
			fmt.Printf("call %d: %v\n", paused.Next+1, err)
			r = mcpadapter.Rejected("not today")
		}
		var msgs []llms.MessageContent
		msgs, err = ts.ResumeToolCalls(ctx, paused, r)
		for _, m := range msgs {
			if res, ok := m.Parts[0].(llms.ToolCallResponse); ok && err == nil {
				fmt.Printf("  %s: %s\n", res.ToolCallID, res.Content)
			}
		}
	}
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// call 1: booking__book_table asks "Which date?"
	// call 2: mcpadapter: server "booking": tool "booking__cancel_booking" needs approval
	//   call_1: Booked a table for 4 on 2026-09-18 (party=4)
	//   call_2: The user rejected the call to tool booking__cancel_booking; it was not run. Reason: not today
}

// An approval request is JSON: a reviewer decides it later, on any replica.
// With a State.Key, the stored request is sealed, and a forged one refused.
func ExampleAdapter_Resume_approval() {
	ctx := context.Background()
	cfg := mcpadapter.Config{
		Servers:  map[string]mcpadapter.Server{"booking": {Transport: docsBookingServer()}},
		Approval: func(c mcpadapter.ToolCall) bool { return c.Metadata.Annotations().MayBeDestructive() },
		State:    mcpadapter.StateOptions{Key: []byte("a key of at least 32 random bytes, shared by replicas")},
	}
	a, err := mcpadapter.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, err = ts.Lookup("booking__cancel_booking").Invoke(ctx, map[string]any{"id": "b-17"})
	var held *mcpadapter.ApprovalRequired
	if !errors.As(err, &held) {
		log.Fatalf("want an approval request, got %v", err)
	}
	stored, err := json.Marshal(held)
	if err != nil {
		log.Fatal(err)
	}
	a.Close()

	// The reviewer's request, on another replica. Config.State.Claims
	// makes each request decided once across replicas.
	var p mcpadapter.ApprovalRequired
	if err := json.Unmarshal(stored, &p); err != nil {
		log.Fatal(err)
	}
	b, err := mcpadapter.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	if err := b.Unseal(&p); err != nil { // sealed: encrypted, so read with the key
		log.Fatal(err)
	}
	fmt.Printf("review: %s %v\n", p.Call.Tool, p.Call.Args)
	res, err := b.Resume(ctx, &p, mcpadapter.Approved())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	_, err = b.Resume(ctx, &p, mcpadapter.Approved())
	fmt.Println("again:", err != nil)
	// Output:
	// review: booking__cancel_booking map[id:b-17]
	// cancelled booking b-17
	// again: true
}
