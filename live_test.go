package mcpadapter

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// liveAnswer answers a live interrupt's one request.
func liveAnswer(action Action, content map[string]any) Resolution {
	return Answered(answer(liveKey, action, content))
}

// TestLiveInterrupt: without an ElicitationHandler, a legacy server's live
// elicitation/create during a call makes the call return a live
// *Interrupt while the server waits; Resume on the same Adapter (the
// interrupt itself, or a copy through JSON) answers the server's request,
// and the call's result reflects the answer. In memory and over stdio
// (the test binary as the server).
func TestLiveInterrupt(t *testing.T) {
	servers := map[string]func(t *testing.T) Server{
		"memory": func(*testing.T) Server { return memServer(bookingServer(true), ModeAuto) },
		"stdio":  func(t *testing.T) Server { return stdioServer(t, "legacy:key="+stateKey) },
	}
	for name, server := range servers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := newAdapter(t, Config{Servers: map[string]Server{"b": server(t)}})
			for _, tt := range []struct {
				tool, json string
				args       map[string]any
				resolve    Resolution
				want       string
			}{
				{"b__ask_live", "", nil, liveAnswer(Accept, date("2026-09-18")), "live elicitation accepted: 2026-09-18"},
				{"b__ask_live", "json", nil, liveAnswer(Decline, nil), "live elicitation decline"},
				// The SDK's legacy shim asks book_table's date live.
				{"b__book_table", "", map[string]any{"party": 4}, liveAnswer(Accept, date("2026-09-18")), "Booked a table for 4 on 2026-09-18"},
			} {
				intr := must(t).interrupt(lookupTool(t, a, tt.tool).Invoke(t.Context(), tt.args))
				if !intr.Live() || len(intr.Requests) != 1 || intr.Requests[0].Key != liveKey || intr.Requests[0].Message != "Which date?" || intr.Tool != tt.tool {
					t.Fatalf("%s: interrupt live %t, requests %+v, tool %q; want a live one asking \"Which date?\" under %q", tt.tool, intr.Live(), intr.Requests, intr.Tool, liveKey)
				}
				if tt.json != "" {
					intr = roundTrip(t, intr)
					if !intr.Live() {
						t.Fatal("the interrupt's JSON does not record that it is live")
					}
				}
				res := must(t).result(a.Resume(t.Context(), intr, tt.resolve))
				if res.Text() != tt.want {
					t.Errorf("%s: Resume() = %s, want %q", tt.tool, resultText(res), tt.want)
				}
			}
		})
	}
}

// TestLiveInterruptDeclineSetting: a negative StateOptions.LiveMaxAge keeps
// the decline of earlier versions.
func TestLiveInterruptDeclineSetting(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(bookingServer(true), ModeAuto)}, State: StateOptions{LiveMaxAge: -1}})
	res := must(t).result(lookupTool(t, a, "b__ask_live").Invoke(t.Context(), nil))
	if res.Text() != "live elicitation decline" {
		t.Errorf("Invoke() = %s, want the server's decline", resultText(res))
	}
}

// asker is a legacy server's tool that elicits live n times, recording
// each answer (or failure) on answers, then answers with them.
func asker(s *testserver.Server, name string, n int, answers chan<- string) {
	addRawTool(s, name, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var got []string
		for range n {
			res, err := req.Session.Elicit(ctx, testserver.DateRequest())
			a := "error: " + errString(err)
			if err == nil {
				a = res.Action
				if d, ok := res.Content["date"].(string); ok {
					a += " " + d
				}
			}
			answers <- a
			got = append(got, a)
		}
		return textResult1(strings.Join(got, "; ")), nil
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestLiveInterruptTwice: a server that elicits twice in one call gives
// two live interrupts in turn, then the result.
func TestLiveInterruptTwice(t *testing.T) {
	s := testserver.New(testserver.Options{Legacy: true})
	answers := make(chan string, 2)
	asker(s, "twice", 2, answers)
	a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}})
	first := must(t).interrupt(lookupTool(t, a, "b__twice").Invoke(t.Context(), nil))
	second := must(t).interrupt(a.Resume(t.Context(), first, liveAnswer(Accept, date("2026-09-18"))))
	if !second.Live() || second.ID() == first.ID() {
		t.Fatalf("second interrupt live %t, id %q (first %q); want a new live one", second.Live(), second.ID(), first.ID())
	}
	res := must(t).result(a.Resume(t.Context(), second, liveAnswer(Cancel, nil)))
	if want := "accept 2026-09-18; cancel"; res.Text() != want {
		t.Errorf("result = %s, want %q", resultText(res), want)
	}
	// Each is resumed once.
	_, err := a.Resume(t.Context(), roundTrip(t, first), liveAnswer(Accept, date("2026-09-19")))
	if !errors.Is(err, ErrClaimedState) || !strings.Contains(err.Error(), "resumed already") {
		t.Errorf("second resume = %v, want ErrClaimedState", err)
	}
}
