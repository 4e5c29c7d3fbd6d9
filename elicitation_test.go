package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/everything"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"
)

// stateKey seals the booking servers' requestState in these tests, so that
// state stays valid across server instances and processes.
const stateKey = "k1"

// bookingServer is an in-memory server with the booking tools.
func bookingServer(legacy bool) *testserver.Server {
	return testserver.New(testserver.Options{Legacy: legacy, StateKey: stateKey}).AddBooking()
}

// eraName names the era of a legacy flag in test names.
func eraName(legacy bool) string {
	if legacy {
		return "legacy"
	}
	return "modern"
}

// lookupTool discovers a's tools and returns the one named name.
func lookupTool(t testing.TB, a *Adapter, name string) *Tool {
	t.Helper()
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	tool := ts.Lookup(name)
	if tool == nil {
		t.Fatalf("ListTools() = %v, want %s", toolNames(ts), name)
	}
	return tool
}

// must checks call outcomes: must(t).interrupt(tool.Invoke(...)).
func must(t testing.TB) checker { return checker{t} }

type checker struct{ t testing.TB }

// interrupt returns the *Interrupt in err, or fails the test.
func (c checker) interrupt(res *Result, err error) *Interrupt {
	t := c.t
	t.Helper()
	var intr *Interrupt
	if !errors.As(err, &intr) {
		t.Fatalf("call = %v, %v; want an *Interrupt", resultText(res), err)
	}
	if res != nil {
		t.Errorf("call returned a result with its interrupt: %q", res.Text())
	}
	return intr
}

// result returns res after checking that err is nil (an untyped nil).
func (c checker) result(res *Result, err error) *Result {
	t := c.t
	t.Helper()
	if err != nil {
		t.Fatalf("call error = %v, want a result", err)
	}
	if res == nil {
		t.Fatal("call = nil result and nil error")
	}
	return res
}

func resultText(res *Result) string {
	if res == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%q (isError %t)", res.Text(), res.IsError)
}

// roundTrip encodes in as JSON and decodes it, as a store would.
func roundTrip(t testing.TB, in *Interrupt) *Interrupt {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("json.Marshal(interrupt): %v", err)
	}
	var out Interrupt
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("json.Unmarshal(%s): %v", b, err)
	}
	return &out
}

func answer(key string, action Action, content map[string]any) map[string]Answer {
	return map[string]Answer{key: {Action: action, Content: content}}
}

func date(d string) map[string]any { return map[string]any{"date": d} }

// TestBooking is the booking scenario ("Book a table for 4"; the server asks
// for a date) in both eras. Modern servers interrupt the call: accept books,
// decline and cancel reach the server and come back as its results. Legacy
// servers ask live, answered by Config.ElicitationHandler or declined.
func TestBooking(t *testing.T) {
	t.Run("modern", func(t *testing.T) {
		for _, tt := range []struct {
			action  Action
			content map[string]any
			want    string
			isError bool
		}{
			{Accept, date("2026-09-18"), "Booked a table for 4 on 2026-09-18", false},
			{Decline, nil, "booking declined by user", true},
			{Cancel, nil, "booking cancelled by user", true},
		} {
			t.Run(string(tt.action), func(t *testing.T) {
				s := bookingServer(false)
				a := newAdapter(t, Config{Servers: map[string]Server{"booking": memServer(s, ModeAuto)}})
				tool := lookupTool(t, a, "booking__book_table")
				intr := must(t).interrupt(tool.Invoke(t.Context(), map[string]any{"party": 4}))
				want := []ElicitationRequest{{
					Key: "date", Mode: "form", Message: "Which date?",
					RequestedSchema: map[string]any{
						"type":       "object",
						"properties": map[string]any{"date": map[string]any{"type": "string", "format": "date"}},
						"required":   []any{"date"},
					},
				}}
				if !reflect.DeepEqual(intr.Requests, want) {
					t.Errorf("Requests = %+v\nwant %+v", intr.Requests, want)
				}
				if intr.Server != "booking" || intr.Tool != "booking__book_table" || intr.MCPName != "book_table" {
					t.Errorf("interrupt names = %q, %q, %q; want booking, booking__book_table, book_table", intr.Server, intr.Tool, intr.MCPName)
				}
				if got := s.Runs("book_table"); got != 1 {
					t.Errorf("runs before resume = %d, want 1", got)
				}
				res := must(t).result(a.Resume(t.Context(), intr, Answered(answer("date", tt.action, tt.content))))
				if res.Text() != tt.want || res.IsError != tt.isError {
					t.Errorf("Resume() = %s, want %q (isError %t)", resultText(res), tt.want, tt.isError)
				}
				if got := s.Runs("book_table"); got != 2 {
					t.Errorf("runs after resume = %d, want 2 (the answer reached the server)", got)
				}
			})
		}
	})

	t.Run("legacy", func(t *testing.T) {
		tests := []struct {
			name    string
			handler func(ctx context.Context, req ElicitationRequest) (Answer, error)
			want    string
			isError bool
		}{
			{"no handler, decline setting: declined", nil, "booking declined by user", true},
			{"handler accepts", func(_ context.Context, req ElicitationRequest) (Answer, error) {
				return Answer{Action: Accept, Content: date("2026-09-18")}, nil
			}, "Booked a table for 4 on 2026-09-18", false},
			{"handler cancels", func(_ context.Context, req ElicitationRequest) (Answer, error) {
				return Answer{Action: Cancel}, nil
			}, "booking cancelled by user", true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := bookingServer(true)
				var seen []ElicitationRequest
				var handler func(context.Context, ElicitationRequest) (Answer, error)
				if tt.handler != nil {
					handler = func(ctx context.Context, req ElicitationRequest) (Answer, error) {
						seen = append(seen, req)
						return tt.handler(ctx, req)
					}
				}
				a := newAdapter(t, Config{
					Servers:            map[string]Server{"booking": memServer(s, ModeAuto)},
					ElicitationHandler: handler,
					State:              StateOptions{LiveMaxAge: -1}, // no live interrupt: TestLiveInterrupt
				})
				tool := lookupTool(t, a, "booking__book_table")
				res := must(t).result(tool.Invoke(t.Context(), map[string]any{"party": 4}))
				if res.Text() != tt.want || res.IsError != tt.isError {
					t.Errorf("Invoke() = %s, want %q (isError %t)", resultText(res), tt.want, tt.isError)
				}
				if tt.handler != nil {
					// A live request has no key.
					if len(seen) != 1 || seen[0].Key != "" || seen[0].Mode != "form" || seen[0].Message != "Which date?" {
						t.Errorf("handler saw %+v, want one keyless form request \"Which date?\"", seen)
					}
				}
			})
		}
	})
}

// TestResumeValidation: answers are checked before anything is sent.
func TestResumeValidation(t *testing.T) {
	s := bookingServer(false)
	a := newAdapter(t, Config{Servers: map[string]Server{"booking": memServer(s, ModeAuto)}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	book := must(t).interrupt(ts.Lookup("booking__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
	url := must(t).interrupt(ts.Lookup("booking__ask_url").Invoke(t.Context(), nil))

	tests := []struct {
		name    string
		intr    *Interrupt
		answers map[string]Answer
		want    []string // fragments of the error
	}{
		{"missing key", book, map[string]Answer{}, []string{`no answer for request "date"`}},
		{"nil answers", book, nil, []string{`no answer for request "date"`}},
		{"wrong key", book, answer("day", Accept, date("2026-09-18")), []string{`no answer for request "date"`, `answer "day" matches no request`}},
		{"extra key", book, map[string]Answer{"date": {Action: Accept, Content: date("2026-09-18")}, "time": {Action: Accept}}, []string{`answer "time" matches no request (requests: "date")`}},
		{"bad action", book, answer("date", "yes", date("2026-09-18")), []string{`answer "date": unknown action "yes"`}},
		{"empty action", book, answer("date", "", nil), []string{`unknown action ""`}},
		{"schema mismatch", book, answer("date", Accept, map[string]any{"date": 42}), []string{`answer "date": content does not match the requested schema`}},
		{"accept without required content", book, answer("date", Accept, nil), []string{"content does not match the requested schema", "date"}},
		{"decline with content", book, answer("date", Decline, date("2026-09-18")), []string{`content is only allowed when accepting a form request (action "decline"`}},
		{"url answer with content", url, answer("consent", Accept, map[string]any{"ok": true}), []string{`answer "consent": content is only allowed when accepting a form request (action "accept", mode "url")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := s.Count("tools/call")
			res, err := a.Resume(t.Context(), tt.intr, Answered(tt.answers))
			if err == nil {
				t.Fatalf("Resume() = %s, want an error", resultText(res))
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Resume() error = %v, want it to contain %q", err, want)
				}
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("server %q: tool %q", "booking", tt.intr.Tool)) {
				t.Errorf("Resume() error = %v, want it to name the server and tool", err)
			}
			if got := s.Count("tools/call"); got != calls {
				t.Errorf("tools/call count = %d after a refused resume, want %d (nothing sent)", got, calls)
			}
		})
	}
	// The refused answers left the interrupt usable.
	res := must(t).result(a.Resume(t.Context(), book, Answered(answer("date", Accept, date("2026-09-18")))))
	if want := "Booked a table for 4 on 2026-09-18"; res.Text() != want {
		t.Errorf("Resume() after refusals = %s, want %q", resultText(res), want)
	}
	res = must(t).result(a.Resume(t.Context(), url, Answered(answer("consent", Accept, nil))))
	if want := "consent given"; res.Text() != want {
		t.Errorf("Resume(url) = %s, want %q", resultText(res), want)
	}
	if got, want := s.Runs("book_table"), 2; got != want {
		t.Errorf("book_table runs = %d, want %d", got, want)
	}
}

// TestSchemaDefaults: the requested schema's defaults fill in the answer.
func TestSchemaDefaults(t *testing.T) {
	s := testserver.New(testserver.Options{})
	var got atomic.Value
	s.Server.AddTool(&mcp.Tool{Name: "ask_defaults", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["prefs"].(*mcp.ElicitResult); ok {
				b, _ := json.Marshal(r.Content)
				got.Store(string(b))
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			}
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"prefs": &mcp.ElicitParams{Message: "Preferences?", RequestedSchema: map[string]any{
					"type": "object",
					"properties": map[string]any{
						"seat":  map[string]any{"type": "string", "enum": []any{"window", "aisle"}, "default": "window"},
						"count": map[string]any{"type": "integer", "default": 1},
					},
				}}},
				RequestState: "s",
			}, nil
		})
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}})
	intr := must(t).interrupt(lookupTool(t, a, "s__ask_defaults").Invoke(t.Context(), nil))
	if _, err := a.Resume(t.Context(), intr, Answered(answer("prefs", Accept, map[string]any{"seat": "middle"}))); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("Resume(seat=middle) error = %v, want a schema mismatch", err)
	}
	must(t).result(a.Resume(t.Context(), intr, Answered(answer("prefs", Accept, map[string]any{"count": 2}))))
	if want := `{"count":2,"seat":"window"}`; got.Load() != want {
		t.Errorf("server got %v, want %s (defaults applied)", got.Load(), want)
	}
}

// TestTwoRounds: a tool that asks twice; the second interrupt continues the
// first, also through JSON, and the server verifies its state each round.
func TestTwoRounds(t *testing.T) {
	s := bookingServer(false)
	a := newAdapter(t, Config{Servers: map[string]Server{"booking": memServer(s, ModeAuto)}})
	tool := lookupTool(t, a, "booking__book_two_rounds")
	first := must(t).interrupt(tool.Invoke(t.Context(), map[string]any{"party": 4}))
	if len(first.Requests) != 1 || first.Requests[0].Key != "date" {
		t.Fatalf("first round Requests = %+v, want date", first.Requests)
	}
	second := must(t).interrupt(a.Resume(t.Context(), first, Answered(answer("date", Accept, date("2026-09-18")))))
	if len(second.Requests) != 1 || second.Requests[0].Key != "time" || second.Requests[0].Message != "Which time?" {
		t.Fatalf("second round Requests = %+v, want time", second.Requests)
	}
	if second.round != 2 {
		t.Errorf("second round = %d, want 2", second.round)
	}
	// The first round's answer is not valid for the second.
	if _, err := a.Resume(t.Context(), second, Answered(answer("date", Accept, date("2026-09-18")))); err == nil {
		t.Fatal("Resume(second, date) succeeded, want a wrong-key error")
	}
	res := must(t).result(a.Resume(t.Context(), roundTrip(t, second), Answered(answer("time", Accept, map[string]any{"time": "19:30"}))))
	if want := "Booked a table for 4 on 2026-09-18 at 19:30"; res.Text() != want {
		t.Errorf("Resume(second) = %s, want %q", resultText(res), want)
	}
	if got := s.Runs("book_two_rounds"); got != 3 {
		t.Errorf("runs = %d, want 3", got)
	}
}

// TestTamperedState: the server verifies requestState; a tampered one is
// rejected (an invalid-params error, which is a model-visible result).
func TestTamperedState(t *testing.T) {
	s := bookingServer(false)
	a := newAdapter(t, Config{Servers: map[string]Server{"booking": memServer(s, ModeAuto)}})
	intr := must(t).interrupt(lookupTool(t, a, "booking__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
	tampered := tamper(t, intr, func(w map[string]any) {
		st := w["requestState"].(string)
		w["requestState"] = "x" + st[1:]
	})
	res := must(t).result(a.Resume(t.Context(), tampered, Answered(answer("date", Accept, date("2026-09-18")))))
	if !res.IsError || !strings.Contains(res.Text(), "invalid requestState") {
		t.Errorf("Resume(tampered) = %s, want the server's invalid requestState", resultText(res))
	}
	// State sealed for another tool is refused too.
	foreign := tamper(t, intr, func(w map[string]any) { w["mcpName"] = "book_two_rounds" })
	if _, err := a.Resume(t.Context(), foreign, Answered(answer("date", Accept, date("2026-09-18")))); !errors.Is(err, ErrInvalidState) {
		t.Errorf("Resume(mcpName edited, tool not) error = %v, want ErrInvalidState", err)
	}
	foreign = tamper(t, intr, func(w map[string]any) { w["mcpName"], w["tool"] = "book_two_rounds", "booking__book_two_rounds" })
	res = must(t).result(a.Resume(t.Context(), foreign, Answered(answer("date", Accept, date("2026-09-18")))))
	if !res.IsError || !strings.Contains(res.Text(), "invalid requestState") {
		t.Errorf("Resume(foreign state) = %s, want the server's invalid requestState", resultText(res))
	}
}

// tamper edits an interrupt's JSON with edit and decodes it again.
func tamper(t testing.TB, in *Interrupt, edit func(map[string]any)) *Interrupt {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var w map[string]any
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	edit(w)
	if b, err = json.Marshal(w); err != nil {
		t.Fatal(err)
	}
	var out Interrupt
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("json.Unmarshal(tampered): %v", err)
	}
	return &out
}

// TestRoundCap: a server that never stops asking gets 32 rounds.
func TestRoundCap(t *testing.T) {
	t.Run("interrupts", func(t *testing.T) {
		s := bookingServer(false)
		a := newAdapter(t, Config{Servers: map[string]Server{"booking": memServer(s, ModeAuto)}})
		res, err := lookupTool(t, a, "booking__ask_forever").Invoke(t.Context(), nil)
		for round := 1; round <= maxRounds; round++ {
			intr := must(t).interrupt(res, err)
			if want := fmt.Sprintf("Again? (round %d)", round); intr.Requests[0].Message != want {
				t.Fatalf("round %d message = %q, want %q", round, intr.Requests[0].Message, want)
			}
			if round%8 == 0 {
				intr = roundTrip(t, intr) // the count survives JSON
			}
			res, err = a.Resume(t.Context(), intr, Answered(answer("again", Accept, map[string]any{"ok": true})))
		}
		var se *ServerError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "more than 32 times") {
			t.Fatalf("round 33: %s, %v; want a *ServerError about the round cap", resultText(res), err)
		}
		if got := s.Runs("ask_forever"); got != maxRounds+1 {
			t.Errorf("runs = %d, want %d", got, maxRounds+1)
		}
	})
	t.Run("inline handler", func(t *testing.T) {
		s := bookingServer(false)
		var asked atomic.Int32
		a := newAdapter(t, Config{
			Servers: map[string]Server{"booking": memServer(s, ModeAuto)},
			ElicitationHandler: func(context.Context, ElicitationRequest) (Answer, error) {
				asked.Add(1)
				return Answer{Action: Accept, Content: map[string]any{"ok": true}}, nil
			},
		})
		_, err := lookupTool(t, a, "booking__ask_forever").Invoke(t.Context(), nil)
		if err == nil || !strings.Contains(err.Error(), "more than 32 times") {
			t.Fatalf("Invoke() error = %v, want the round cap", err)
		}
		if got := asked.Load(); got != maxRounds {
			t.Errorf("handler answered %d rounds, want %d", got, maxRounds)
		}
	})
}

// TestEmptyRoundBackoff: a round that asks for nothing (load shedding) is
// retried with its state after a delay that doubles (fake time).
func TestEmptyRoundBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testserver.New(testserver.Options{})
		var states []string
		s.Server.AddTool(&mcp.Tool{Name: "busy", InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				states = append(states, req.Params.RequestState)
				if n := len(states); n <= 3 {
					// Busy: no requests, a new state.
					return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}, RequestState: fmt.Sprintf("busy-%d", n)}, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			})
		a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}})
		tool := lookupTool(t, a, "s__busy")
		start := time.Now()
		res := must(t).result(tool.Invoke(t.Context(), nil))
		if got, want := time.Since(start), 700*time.Millisecond; got != want {
			t.Errorf("Invoke() took %v, want %v (100ms + 200ms + 400ms)", got, want)
		}
		if res.Text() != "done" {
			t.Errorf("Invoke() = %s, want done", resultText(res))
		}
		if want := []string{"", "busy-1", "busy-2", "busy-3"}; !reflect.DeepEqual(states, want) {
			t.Errorf("states sent = %q, want %q", states, want)
		}

		// The call's deadline bounds the waiting.
		states = nil
		ctx, cancel := context.WithTimeout(t.Context(), 250*time.Millisecond)
		defer cancel()
		_, err := tool.Invoke(ctx, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Invoke(250ms) error = %v, want DeadlineExceeded", err)
		}
		if len(states) != 2 {
			t.Errorf("calls within 250ms = %d, want 2", len(states))
		}
	})
}

// TestInterruptJSON: an interrupt survives JSON and resumes on a new
// Adapter with the same server name; the JSON is pinned by a golden.
func TestInterruptJSON(t *testing.T) {
	s := bookingServer(false)
	a := newAdapter(t, Config{Servers: map[string]Server{"booking": memServer(s, ModeAuto)}})
	intr := must(t).interrupt(lookupTool(t, a, "booking__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
	b, err := json.MarshalIndent(intr, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	// The stamp differs each time: its form is checked, the golden holds
	// placeholders.
	stampRE := regexp.MustCompile(`"id": "([0-9a-f]{32})",\n  "issued": "([^"]+)",`)
	m := stampRE.FindSubmatch(b)
	if m == nil || string(m[1]) != intr.ID() {
		t.Fatalf("stored interrupt has no id %s and issue time: %s", intr.ID(), b)
	}
	if issued, err := time.Parse(time.RFC3339Nano, string(m[2])); err != nil || !issued.Equal(intr.Issued()) || time.Since(issued) > time.Minute {
		t.Errorf("stored issue time %s, want %s, now", m[2], intr.Issued())
	}
	checkGolden(t, "interrupt/book_table.json", append(stampRE.ReplaceAll(b, []byte("\"id\": \"<id>\",\n  \"issued\": \"<issued>\",")), '\n'))

	var back Interrupt
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Requests, intr.Requests) || back.Server != intr.Server || back.Tool != intr.Tool || back.MCPName != intr.MCPName {
		t.Errorf("decoded = %+v, want %+v", back, intr)
	}
	// A new adapter (another process, as far as the interrupt knows).
	s2 := bookingServer(false)
	// An adapter whose naming differs refuses it: its name for the tool is
	// not the interrupt's.
	raw := newAdapter(t, Config{Servers: map[string]Server{"booking": memServer(s2, ModeAuto)}, ToolName: rawToolNames})
	if _, err := raw.Resume(t.Context(), &back, Answered(answer("date", Accept, date("2026-09-18")))); !errors.Is(err, ErrInvalidState) {
		t.Errorf("Resume on an adapter with raw tool names: error = %v, want ErrInvalidState", err)
	}
	a2 := newAdapter(t, Config{Servers: map[string]Server{"booking": memServer(s2, ModeAuto)}})
	res := must(t).result(a2.Resume(t.Context(), &back, Answered(answer("date", Accept, date("2026-09-18")))))
	if want := "Booked a table for 4 on 2026-09-18"; res.Text() != want {
		t.Errorf("Adapter.Resume(decoded) = %s, want %q", resultText(res), want)
	}
	if s.Runs("book_table") != 1 || s2.Runs("book_table") != 1 {
		t.Errorf("runs = %d (old server), %d (new server); want 1, 1", s.Runs("book_table"), s2.Runs("book_table"))
	}
	// Held by value in a checkpoint, it marshals the same.
	type checkpoint struct{ I Interrupt }
	cb, err := json.Marshal(checkpoint{I: *intr})
	if err != nil {
		t.Fatal(err)
	}
	var cp checkpoint
	if err := json.Unmarshal(cb, &cp); err != nil || cp.I.state != intr.state || !reflect.DeepEqual(cp.I.args, intr.args) {
		t.Errorf("checkpoint round trip = %+v, %v; want the whole interrupt", cp.I, err)
	}
	// Numbers stay exact through JSON.
	big := must(t).interrupt(lookupTool(t, a, "booking__book_table").Invoke(t.Context(), map[string]any{"party": 4, "note": json.Number("12345678901234567890")}))
	if got := roundTrip(t, big).args["note"]; got != json.Number("12345678901234567890") {
		t.Errorf("decoded argument = %#v, want the exact number", got)
	}
}

// TestInterruptJSONErrors: malformed interrupt JSON is refused on decoding.
func TestInterruptJSONErrors(t *testing.T) {
	valid := `"server":"b","tool":"b__t","mcpName":"t","round":1,"inputRequests":{"k":{"method":"elicitation/create","params":{"message":"m"}}}`
	tests := []struct{ name, json, want string }{
		{"not an object", `[]`, "decoding interrupt"},
		{"future version", `{"version":2,"kind":"inputRequired",` + valid + `}`, "unsupported version 2"},
		{"no version", `{"kind":"inputRequired",` + valid + `}`, "unsupported version 0"},
		{"unknown kind", `{"version":1,"kind":"other",` + valid + `}`, `unknown kind "other"`},
		{"no requests", `{"version":1,"kind":"inputRequired","server":"b","mcpName":"t","round":1,"inputRequests":{}}`, "missing server, tool or requests"},
		{"no server", `{"version":1,"kind":"inputRequired","mcpName":"t","round":1,"inputRequests":{"k":{"method":"elicitation/create","params":{}}}}`, "missing server"},
		{"round 0", `{"version":1,"kind":"inputRequired","server":"b","mcpName":"t","round":0,"inputRequests":{"k":{"method":"elicitation/create","params":{}}}}`, "invalid round 0"},
		{"round 33", `{"version":1,"kind":"inputRequired","server":"b","mcpName":"t","round":33,"inputRequests":{"k":{"method":"elicitation/create","params":{}}}}`, "invalid round 33"},
		{"sampling request", `{"version":1,"kind":"inputRequired","server":"b","mcpName":"t","round":1,"inputRequests":{"k":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}}}`, "sampling/createMessage"},
		{"arguments not an object", `{"version":1,"kind":"inputRequired",` + valid + `,"arguments":[1]}`, "arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var i Interrupt
			err := json.Unmarshal([]byte(tt.json), &i)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("json.Unmarshal() error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// Zero and nil interrupts are refused, not a panic.
	a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(bookingServer(false), ModeAuto)}})
	for _, in := range []*Interrupt{nil, {}, {Server: "b", MCPName: "book_table", Requests: []ElicitationRequest{{Key: "date"}}}} {
		if _, err := a.Resume(t.Context(), in, Answered(nil)); err == nil || !strings.Contains(err.Error(), "not an interrupt returned by a tool call") {
			t.Errorf("Adapter.Resume(%+v) error = %v, want a refusal", in, err)
		}
		if _, err := a.Resume(t.Context(), in, Answered(nil)); err == nil {
			t.Errorf("Resume(%+v) succeeded, want an error", in)
		}
	}
}

// TestResumeAfterRestart: a stdio server process ends with its adapter; a
// new process with the same state key accepts the stored interrupt, one
// with another key refuses its state.
func TestResumeAfterRestart(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"booking": stdioServer(t, "modern:key=k1")}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	pid := serverPID(t, ts, "booking__pid")
	intr := must(t).interrupt(ts.Lookup("booking__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
	stored, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if !processGone(pid) {
		t.Fatalf("server process %d still exists after Close", pid)
	}
	if _, err := a.Resume(t.Context(), intr, Answered(answer("date", Accept, date("2026-09-18")))); !errors.Is(err, ErrClosed) {
		t.Errorf("Resume(live interrupt) after Close = %v, want ErrClosed", err)
	}

	for _, tt := range []struct {
		kind    string
		want    string
		isError bool
	}{
		{"modern:key=k1", "Booked a table for 4 on 2026-09-18", false},
		{"modern:key=k2", "invalid requestState", true},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			var back Interrupt
			if err := json.Unmarshal(stored, &back); err != nil {
				t.Fatal(err)
			}
			a2 := newAdapter(t, Config{Servers: map[string]Server{"booking": stdioServer(t, tt.kind)}})
			res := must(t).result(a2.Resume(t.Context(), &back, Answered(answer("date", Accept, date("2026-09-18")))))
			if res.Text() != tt.want || res.IsError != tt.isError {
				t.Errorf("Resume() = %s, want %q (isError %t)", resultText(res), tt.want, tt.isError)
			}
			ts2, err := a2.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if pid2 := serverPID(t, ts2, "booking__pid"); pid2 == pid {
				t.Errorf("resumed on pid %d, the old process", pid2)
			}
		})
	}
}

// TestInterruptHidesSecrets: arguments and request state travel in the
// JSON only, never in Requests, Error or formatting.
func TestInterruptHidesSecrets(t *testing.T) {
	s := bookingServer(false)
	a := newAdapter(t, Config{Servers: map[string]Server{"booking": memServer(s, ModeAuto)}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = ts.Lookup("booking__book_table").Invoke(t.Context(), map[string]any{"party": 4817})
	intr := must(t).interrupt(nil, err)
	if intr.state == "" {
		t.Fatal("interrupt has no request state")
	}
	reqs, err := json.Marshal(intr.Requests)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := fmt.Errorf("agent run: %w", err)
	for _, shown := range []string{string(reqs), intr.Error(), fmt.Sprint(err), fmt.Sprintf("%+v", err), fmt.Sprintf("%v", wrapped), fmt.Sprintf("%#v", intr.Requests)} {
		for _, secret := range []string{intr.state, "4817"} {
			if strings.Contains(shown, secret) {
				t.Errorf("%q shows %q", shown, secret)
			}
		}
	}
	if want := `mcpadapter: server "booking": tool "booking__book_table" needs user input: date (form) "Which date?"`; intr.Error() != want {
		t.Errorf("Error() = %q, want %q", intr.Error(), want)
	}
	stored, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stored), intr.state) || !strings.Contains(string(stored), "4817") {
		t.Errorf("JSON %s lacks the state or the arguments", stored)
	}
	// The snapshot does not follow the caller's map.
	args := map[string]any{"party": 2}
	later := must(t).interrupt(ts.Lookup("booking__book_table").Invoke(t.Context(), args))
	args["party"] = 9
	res := must(t).result(a.Resume(t.Context(), later, Answered(answer("date", Accept, date("2026-09-18")))))
	if want := "Booked a table for 2 on 2026-09-18"; res.Text() != want {
		t.Errorf("Resume() = %s, want %q", resultText(res), want)
	}
}

// TestUnsupportedInputRequests: sampling and roots are refused on modern
// servers, naming the method, with or without an ElicitationHandler.
// Legacy servers ask for them live: the SDK client answers roots/list with
// no roots, and fails sampling (no CreateMessage handler).
func TestUnsupportedInputRequests(t *testing.T) {
	handler := func(context.Context, ElicitationRequest) (Answer, error) { return Answer{Action: Accept}, nil }
	for _, withHandler := range []bool{false, true} {
		for _, tt := range []struct{ tool, method string }{
			{"ask_sampling", "sampling/createMessage"},
			{"ask_roots", "roots/list"},
		} {
			t.Run(fmt.Sprintf("%s handler=%t", tt.tool, withHandler), func(t *testing.T) {
				s := bookingServer(false)
				cfg := Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}}
				if withHandler {
					cfg.ElicitationHandler = handler
				}
				a := newAdapter(t, cfg)
				res, err := lookupTool(t, a, "b__"+tt.tool).Invoke(t.Context(), nil)
				if !errors.Is(err, ErrUnsupportedInputRequest) || !strings.Contains(err.Error(), tt.method) {
					t.Fatalf("Invoke() = %s, %v; want ErrUnsupportedInputRequest naming %s", resultText(res), err, tt.method)
				}
				var se *ServerError
				if !errors.As(err, &se) || se.Server != "b" {
					t.Errorf("Invoke() error = %v, want a *ServerError for server b", err)
				}
				if got := s.Runs(tt.tool); got != 1 {
					t.Errorf("runs = %d, want 1 (nothing answered)", got)
				}
			})
		}
	}
	t.Run("legacy", func(t *testing.T) {
		a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(bookingServer(true), ModeAuto)}})
		ts, err := a.ListTools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		// Legacy servers ask live; the adapter refuses and names the method.
		for tool, method := range map[string]string{"b__ask_roots": "roots/list", "b__ask_sampling": "sampling/createMessage"} {
			res, err := ts.Lookup(tool).Invoke(t.Context(), nil)
			var se *ServerError
			if !errors.Is(err, ErrUnsupportedInputRequest) || !strings.Contains(err.Error(), method) || !errors.As(err, &se) {
				t.Errorf("legacy %s = %s, %v; want a *ServerError wrapping ErrUnsupportedInputRequest naming %s", tool, resultText(res), err, method)
			}
		}
	})
	// The conformance server's mix of elicitation, sampling and roots names
	// both unsupported methods (see TestEverythingServer).
	_, err := elicitationRequests(mcp.InputRequestMap{
		"a": &mcp.ElicitParams{Message: "m"},
		"b": &mcp.CreateMessageWithToolsParams{},
		"c": &mcp.ListRootsParams{},
		"d": &mcp.ElicitParams{Mode: "telepathy"},
	})
	for _, want := range []string{`"b" asks for sampling/createMessage`, `"c" asks for roots/list`, `"d" asks for elicitation/create in mode "telepathy"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("elicitationRequests() error = %v, want it to contain %q", err, want)
		}
	}
}

// TestLiveElicitation: ask_live elicits with a live elicitation/create
// request, which only legacy sessions allow.
func TestLiveElicitation(t *testing.T) {
	tests := []struct {
		name    string
		legacy  bool
		handler func(context.Context, ElicitationRequest) (Answer, error)
		want    string
		isError bool
	}{
		{"legacy without handler, decline setting", true, nil, "live elicitation decline", false},
		{"legacy with handler", true, func(_ context.Context, r ElicitationRequest) (Answer, error) {
			if r.Key != "" || r.Message != "Which date?" {
				return Answer{}, fmt.Errorf("unexpected request %+v", r)
			}
			return Answer{Action: Accept, Content: date("2026-09-18")}, nil
		}, "live elicitation accepted: 2026-09-18", false},
		{"legacy handler answers badly", true, func(context.Context, ElicitationRequest) (Answer, error) {
			return Answer{Action: Accept, Content: map[string]any{"date": 42}}, nil
		}, "Elicit failed:", true},
		{"legacy handler fails", true, func(context.Context, ElicitationRequest) (Answer, error) {
			return Answer{}, errors.New("no user around")
		}, "no user around", true},
		{"modern", false, nil, "Elicit failed:", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdapter(t, Config{
				Servers:            map[string]Server{"b": memServer(bookingServer(tt.legacy), ModeAuto)},
				ElicitationHandler: tt.handler,
				State:              StateOptions{LiveMaxAge: -1}, // no live interrupt: TestLiveInterrupt
			})
			res := must(t).result(lookupTool(t, a, "b__ask_live").Invoke(t.Context(), nil))
			if !strings.Contains(res.Text(), tt.want) || res.IsError != tt.isError {
				t.Errorf("Invoke() = %s, want %q (isError %t)", resultText(res), tt.want, tt.isError)
			}
		})
	}
}

// TestInlineHandler: with Config.ElicitationHandler, modern rounds are
// answered inline instead of interrupting.
func TestInlineHandler(t *testing.T) {
	answers := map[string]Answer{
		"date": {Action: Accept, Content: date("2026-09-18")},
		"time": {Action: Accept, Content: map[string]any{"time": "19:30"}},
	}
	var asked []string
	var mu sync.Mutex
	ok := func(_ context.Context, r ElicitationRequest) (Answer, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r.Key)
		return answers[r.Key], nil
	}
	s := bookingServer(false)
	a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}, ElicitationHandler: ok})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	res := must(t).result(ts.Lookup("b__book_two_rounds").Invoke(t.Context(), map[string]any{"party": 4}))
	if want := "Booked a table for 4 on 2026-09-18 at 19:30"; res.Text() != want {
		t.Errorf("Invoke() = %s, want %q", resultText(res), want)
	}
	if want := []string{"date", "time"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("handler asked %q, want %q", asked, want)
	}

	t.Run("Close ends a waiting handler", func(t *testing.T) {
		// The handler waits for a human who never comes: Close must end
		// its wait, over a transport that Close ends by closing the
		// connection (memory, stdio) as over HTTP.
		targets := map[string]Server{
			"memory": memServer(s, ModeAuto),
			"stdio":  stdioServer(t, "modern"),
			"http":   {URL: testserver.Full(testserver.Options{}).StreamableHTTP(t, true).URL},
		}
		for name, srv := range targets {
			t.Run(name, func(t *testing.T) {
				asking := make(chan struct{})
				a := newAdapter(t, Config{Servers: map[string]Server{"b": srv},
					ElicitationHandler: func(ctx context.Context, _ ElicitationRequest) (Answer, error) {
						close(asking)
						<-ctx.Done()
						return Answer{}, ctx.Err()
					}})
				tool := lookupTool(t, a, "b__book_table")
				errc := make(chan error, 1)
				go func() {
					_, err := tool.Invoke(context.Background(), map[string]any{"party": 4})
					errc <- err
				}()
				<-asking
				bound := faultCtx(t)
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-errc:
					if !errors.Is(err, ErrClosed) {
						t.Fatalf("Invoke() after Close = %v, want ErrClosed", err)
					}
				case <-bound.Done():
					t.Fatal("Close did not end the handler's wait")
				}
			})
		}
	})
	t.Run("handler error", func(t *testing.T) {
		errNoUser := errors.New("no user around")
		a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)},
			ElicitationHandler: func(context.Context, ElicitationRequest) (Answer, error) { return Answer{}, errNoUser }})
		before := s.Runs("book_table")
		_, err := lookupTool(t, a, "b__book_table").Invoke(t.Context(), map[string]any{"party": 4})
		if !errors.Is(err, errNoUser) || !strings.Contains(err.Error(), `server "b": tool "b__book_table": elicitation handler`) {
			t.Errorf("Invoke() error = %v, want the handler's error, named", err)
		}
		if got := s.Runs("book_table") - before; got != 1 {
			t.Errorf("runs = %d, want 1 (no answer sent)", got)
		}
	})
	t.Run("invalid answer", func(t *testing.T) {
		a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)},
			ElicitationHandler: func(context.Context, ElicitationRequest) (Answer, error) {
				return Answer{Action: Accept, Content: map[string]any{"date": false}}, nil
			}})
		before := s.Runs("book_table")
		_, err := lookupTool(t, a, "b__book_table").Invoke(t.Context(), map[string]any{"party": 4})
		if err == nil || !strings.Contains(err.Error(), "does not match the requested schema") {
			t.Errorf("Invoke() error = %v, want a schema mismatch", err)
		}
		if got := s.Runs("book_table") - before; got != 1 {
			t.Errorf("runs = %d, want 1 (no answer sent)", got)
		}
	})
}

// TestPrebuiltClientElicitation: a Server.Client is used as given; its own handler
// answers (the SDK's multi round-trip handling is on by default), and
// Config.ElicitationHandler is not consulted.
func TestPrebuiltClientElicitation(t *testing.T) {
	configHandler := func(context.Context, ElicitationRequest) (Answer, error) {
		return Answer{}, errors.New("Config.ElicitationHandler called")
	}
	own := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"date": "2030-01-01"}}, nil
	}
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			srv := memServer(bookingServer(legacy), ModeAuto)
			srv.Client = mcp.NewClient(&mcp.Implementation{Name: "mine", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: own})
			a := newAdapter(t, Config{Servers: map[string]Server{"b": srv}, ElicitationHandler: configHandler})
			res := must(t).result(lookupTool(t, a, "b__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
			if want := "Booked a table for 4 on 2030-01-01"; res.Text() != want {
				t.Errorf("Invoke() = %s, want %q", resultText(res), want)
			}
		})
	}
	t.Run("multi round-trip disabled", func(t *testing.T) {
		srv := memServer(bookingServer(false), ModeAuto)
		srv.Client = mcp.NewClient(&mcp.Implementation{Name: "mine", Version: "1"}, &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		})
		// The adapter drives the rounds, and still leaves them to the caller.
		a := newAdapter(t, Config{Servers: map[string]Server{"b": srv}, ElicitationHandler: configHandler})
		intr := must(t).interrupt(lookupTool(t, a, "b__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
		res := must(t).result(a.Resume(t.Context(), intr, Answered(answer("date", Accept, date("2026-09-18")))))
		if want := "Booked a table for 4 on 2026-09-18"; res.Text() != want {
			t.Errorf("Resume() = %s, want %q", resultText(res), want)
		}
	})
}

// TestURLMode: URL-mode requests, as input requests (ask_url) and as the
// URL elicitation required error (-32042), whose accepted resume sends the
// failed request again.
func TestURLMode(t *testing.T) {
	t.Run("input request", func(t *testing.T) {
		a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(bookingServer(false), ModeAuto)}})
		intr := must(t).interrupt(lookupTool(t, a, "b__ask_url").Invoke(t.Context(), nil))
		want := []ElicitationRequest{{Key: "consent", Mode: "url", Message: "Please give consent on the web page.",
			URL: testserver.ConsentURL, ElicitationID: testserver.ConsentElicitationID}}
		if !reflect.DeepEqual(intr.Requests, want) {
			t.Errorf("Requests = %+v, want %+v", intr.Requests, want)
		}
		res := must(t).result(a.Resume(t.Context(), intr, Answered(answer("consent", Decline, nil))))
		if res.Text() != "consent declined by user" {
			t.Errorf("Resume(decline) = %s", resultText(res))
		}
	})

	for _, legacy := range []bool{false, true} {
		t.Run("-32042 "+eraName(legacy), func(t *testing.T) {
			s, calls := urlRequiredServer(legacy)
			a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}})
			tool := lookupTool(t, a, "s__pay")
			intr := must(t).interrupt(tool.Invoke(t.Context(), map[string]any{"amount": 5}))
			want := []ElicitationRequest{{Key: "pay-1", Mode: "url", Message: "Confirm the payment.", URL: "https://pay.example.com/confirm", ElicitationID: "pay-1"}}
			if !reflect.DeepEqual(intr.Requests, want) {
				t.Errorf("Requests = %+v, want %+v", intr.Requests, want)
			}
			// Declined: nothing can be sent, the model is told.
			res := must(t).result(a.Resume(t.Context(), intr, Answered(answer("pay-1", Decline, nil))))
			if !res.IsError || !strings.Contains(res.Text(), "declined") || calls.Load() != 1 {
				t.Errorf("Resume(decline) = %s after %d calls, want a local refusal after 1", resultText(res), calls.Load())
			}
			// Accepted, after JSON: the same request again.
			res = must(t).result(a.Resume(t.Context(), roundTrip(t, intr), Answered(answer("pay-1", Accept, nil))))
			if res.Text() != "paid 5" || calls.Load() != 2 {
				t.Errorf("Resume(accept) = %s after %d calls, want paid 5 after 2", resultText(res), calls.Load())
			}
		})
	}
	t.Run("-32042 inline handler", func(t *testing.T) {
		s, calls := urlRequiredServer(false)
		var seen []ElicitationRequest
		a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)},
			ElicitationHandler: func(_ context.Context, r ElicitationRequest) (Answer, error) {
				seen = append(seen, r)
				return Answer{Action: Accept}, nil
			}})
		res := must(t).result(lookupTool(t, a, "s__pay").Invoke(t.Context(), map[string]any{"amount": 7}))
		if res.Text() != "paid 7" || calls.Load() != 2 || len(seen) != 1 || seen[0].URL != "https://pay.example.com/confirm" {
			t.Errorf("Invoke() = %s after %d calls, handler saw %+v", resultText(res), calls.Load(), seen)
		}
	})
	t.Run("malformed -32042 stays an error", func(t *testing.T) {
		for _, data := range []string{``, `{}`, `{"elicitations":[{"mode":"form","message":"m"}]}`, `{"elicitations":[{"mode":"url"}]}`, `not json`} {
			err := &ServerError{Server: "s", Op: "x", Err: &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Data: json.RawMessage(data)}}
			if m := urlElicitations(err); m != nil {
				t.Errorf("urlElicitations(%s) = %v, want nil", data, m)
			}
		}
	})
}

// urlRequiredServer has a tool "pay" {amount} that fails its first call with
// a URL elicitation required error and pays on the next; calls counts them.
func urlRequiredServer(legacy bool) (*testserver.Server, *atomic.Int32) {
	s := testserver.New(testserver.Options{Legacy: legacy})
	calls := new(atomic.Int32)
	s.Server.AddTool(&mcp.Tool{Name: "pay", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if calls.Add(1) == 1 {
				return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{
					Mode: "url", Message: "Confirm the payment.", URL: "https://pay.example.com/confirm", ElicitationID: "pay-1",
				}})
			}
			var args struct{ Amount int }
			json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("paid %d", args.Amount)}}}, nil
		})
	return s, calls
}

// startCounter counts HandleToolStart callbacks.
type startCounter struct {
	callbacks.SimpleHandler
	n atomic.Int32
}

func (c *startCounter) HandleToolStart(context.Context, string) { c.n.Add(1) }

// TestInterruptTable ports LangChain JS's interrupt scenarios
// (src/tests/interrupts.test.ts) to every transport. Each case interrupts a
// call on one adapter, stores the interrupt as JSON and resumes it on a
// rebuilt adapter (in the stdio case a new server process too: "outside the
// graph"); callbacks run once across the resume, and the opaque state never
// shows in the requests. The state-only round (load shedding) is
// TestEmptyRoundBackoff; concurrent interrupts are TestConcurrentInterrupts.
func TestInterruptTable(t *testing.T) {
	transports := []struct {
		name   string
		server func(t *testing.T) (fresh func() Server, s *testserver.Server) // s is nil for stdio
	}{
		{"memory", func(t *testing.T) (func() Server, *testserver.Server) {
			s := bookingServer(false)
			return func() Server { return memServer(s, ModeAuto) }, s
		}},
		{"stdio", func(t *testing.T) (func() Server, *testserver.Server) {
			return func() Server { return stdioServer(t, "modern:key="+stateKey) }, nil
		}},
		{"http", func(t *testing.T) (func() Server, *testserver.Server) {
			s := testserver.New(testserver.Options{StateKey: stateKey}).AddBooking()
			url := s.StreamableHTTP(t, true).URL
			return func() Server { return Server{URL: url, Headers: map[string]string{"X-Resume-Test": "yes"}} }, s
		}},
	}
	cases := []struct {
		name    string
		answers map[string]Answer
		want    string // result text, or a fragment of the error
		isError bool
		refused bool // refused before anything is sent
	}{
		{"accept", answer("date", Accept, date("2026-09-18")), "Booked a table for 4 on 2026-09-18", false, false},
		{"decline", answer("date", Decline, nil), "booking declined by user", true, false},
		{"cancel", answer("date", Cancel, nil), "booking cancelled by user", true, false},
		{"bad content", answer("date", Accept, map[string]any{"date": []any{"2026-09-18"}}), "does not match the requested schema", false, true},
		{"wrong key", answer("when", Accept, date("2026-09-18")), `no answer for request "date"`, false, true},
		{"extra key", map[string]Answer{"date": {Action: Accept, Content: date("2026-09-18")}, "x": {Action: Cancel}}, `answer "x" matches no request`, false, true},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			fresh, s := tr.server(t)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					starts := new(startCounter)
					a := newAdapter(t, Config{Servers: map[string]Server{"booking": fresh()}, CallbacksHandler: starts})
					intr := must(t).interrupt(lookupTool(t, a, "booking__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
					reqs, _ := json.Marshal(intr.Requests)
					if strings.Contains(string(reqs), intr.state) || strings.Contains(intr.Error(), intr.state) {
						t.Errorf("the request state shows in %s / %q", reqs, intr.Error())
					}
					stored, err := json.Marshal(intr)
					if err != nil {
						t.Fatal(err)
					}
					if err := a.Close(); err != nil {
						t.Fatal(err)
					}
					var back Interrupt
					if err := json.Unmarshal(stored, &back); err != nil {
						t.Fatal(err)
					}
					b := newAdapter(t, Config{Servers: map[string]Server{"booking": fresh()}, CallbacksHandler: starts})
					calls := -1
					if s != nil {
						calls = s.Count("tools/call")
					}
					res, err := b.Resume(t.Context(), &back, Answered(tc.answers))
					switch {
					case tc.refused:
						if err == nil || !strings.Contains(err.Error(), tc.want) {
							t.Fatalf("Resume() = %s, %v; want an error containing %q", resultText(res), err, tc.want)
						}
						if s != nil && s.Count("tools/call") != calls {
							t.Errorf("tools/call count changed on a refused resume")
						}
					default:
						res = must(t).result(res, err)
						if res.Text() != tc.want || res.IsError != tc.isError {
							t.Errorf("Resume() = %s, want %q (isError %t)", resultText(res), tc.want, tc.isError)
						}
						if tr.name == "http" && s.LastHTTPHeader().Get("X-Resume-Test") != "yes" {
							t.Errorf("the resumed call lacks the server's headers: %v", s.LastHTTPHeader())
						}
					}
					if got := starts.n.Load(); got != 1 {
						t.Errorf("HandleToolStart ran %d times across the resume, want 1", got)
					}
				})
			}
		})
	}
}

// TestConcurrentInterrupts: interrupts of concurrent calls are independent.
func TestConcurrentInterrupts(t *testing.T) {
	for _, tt := range []struct {
		name   string
		server func(t *testing.T) Server
	}{
		{"memory", func(*testing.T) Server { return memServer(bookingServer(false), ModeAuto) }},
		{"stdio", func(t *testing.T) Server { return stdioServer(t, "modern:key="+stateKey) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdapter(t, Config{Servers: map[string]Server{"booking": tt.server(t)}})
			tool := lookupTool(t, a, "booking__book_table")
			const n = 6
			intrs := make([]*Interrupt, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { _, errs[i] = tool.Invoke(t.Context(), map[string]any{"party": i + 1}) })
			}
			wg.Wait()
			for i, err := range errs {
				if !errors.As(err, &intrs[i]) {
					t.Fatalf("call %d: %v, want an interrupt", i, err)
				}
			}
			results := make([]*Result, n)
			for i := range n {
				wg.Go(func() {
					results[i], errs[i] = a.Resume(t.Context(), intrs[i], Answered(answer("date", Accept, date(fmt.Sprintf("2026-09-%02d", i+1)))))
				})
			}
			wg.Wait()
			for i := range n {
				res := must(t).result(results[i], errs[i])
				if want := fmt.Sprintf("Booked a table for %d on 2026-09-%02d", i+1, i+1); res.Text() != want {
					t.Errorf("resume %d = %s, want %q", i, resultText(res), want)
				}
			}
		})
	}
}

// TestInterruptThroughTextAPIs: Call and HandleToolCalls return the
// interrupt as an error, with the messages of the calls before it.
func TestInterruptThroughTextAPIs(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"booking": memServer(bookingServer(false), ModeAuto)}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out, err := ts.Lookup("booking__book_table").Call(t.Context(), `{"party": 4}`)
	intr := must(t).interrupt(nil, err)
	if out != "" {
		t.Errorf("Call() text = %q with its interrupt, want none", out)
	}
	res := must(t).result(a.Resume(t.Context(), intr, Answered(answer("date", Accept, date("2026-09-18")))))
	if want := "Booked a table for 4 on 2026-09-18"; res.Text() != want {
		t.Errorf("Resume() = %s, want %q", resultText(res), want)
	}
	choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "booking__ask_url", Arguments: `{}`}},
		{ID: "c2", Type: "function", FunctionCall: &llms.FunctionCall{Name: "booking__book_table", Arguments: `{"party":2}`}},
	}}
	msgs, err := ts.HandleToolCalls(t.Context(), choice)
	intr = must(t).interrupt(nil, err)
	if intr.MCPName != "ask_url" || len(msgs) != 0 {
		t.Errorf("HandleToolCalls() = %d messages, interrupt of %q; want 0 messages, ask_url", len(msgs), intr.MCPName)
	}
}

// TestEverythingServer runs the input-required tools of go-sdk's own
// conformance server (conformance/everything-server, over stdio) through the
// interrupt API.
func TestEverythingServer(t *testing.T) {
	path := everything.Build(t)
	a := newAdapter(t, Config{Servers: map[string]Server{"everything": {Command: path}}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tool := func(name string) *Tool {
		t.Helper()
		tool := ts.Lookup("everything__" + name)
		if tool == nil {
			t.Fatalf("no tool %s in %v", name, toolNames(ts))
		}
		return tool
	}
	if info, err := a.ServerInfo(t.Context(), "everything"); err != nil || info.Era != EraModern {
		t.Fatalf("ServerInfo() = %+v, %v; want the modern era", info, err)
	}

	t.Run("elicitation", func(t *testing.T) {
		intr := must(t).interrupt(tool("test_input_required_result_elicitation").Invoke(t.Context(), nil))
		if len(intr.Requests) != 1 || intr.Requests[0].Key != "user_name" || intr.Requests[0].Message != "What is your name?" {
			t.Fatalf("Requests = %+v, want user_name", intr.Requests)
		}
		res := must(t).result(a.Resume(t.Context(), roundTrip(t, intr), Answered(answer("user_name", Accept, map[string]any{"name": "Ada"}))))
		if res.Text() != "Hello, Ada!" {
			t.Errorf("Resume() = %s, want Hello, Ada!", resultText(res))
		}
	})
	t.Run("multi round", func(t *testing.T) {
		first := must(t).interrupt(tool("test_input_required_result_multi_round").Invoke(t.Context(), nil))
		second := must(t).interrupt(a.Resume(t.Context(), first, Answered(answer("step1", Accept, map[string]any{"name": "Ada"}))))
		if len(second.Requests) != 1 || second.Requests[0].Key != "step2" {
			t.Fatalf("second round Requests = %+v, want step2", second.Requests)
		}
		res := must(t).result(a.Resume(t.Context(), roundTrip(t, second), Answered(answer("step2", Accept, map[string]any{"color": "teal"}))))
		if want := "Multi-round complete: Ada likes teal"; res.Text() != want {
			t.Errorf("Resume() = %s, want %q", resultText(res), want)
		}
	})
	t.Run("request state", func(t *testing.T) {
		for _, name := range []string{"test_input_required_result_request_state", "test_input_required_result_tampered_state"} {
			intr := must(t).interrupt(tool(name).Invoke(t.Context(), nil))
			res := must(t).result(a.Resume(t.Context(), intr, Answered(answer("confirm", Accept, map[string]any{"ok": true}))))
			if want := "state-ok: requestState received and confirmation accepted"; res.Text() != want {
				t.Errorf("%s: Resume() = %s, want %q", name, resultText(res), want)
			}
		}
	})
	t.Run("tampered state", func(t *testing.T) {
		intr := must(t).interrupt(tool("test_input_required_result_tampered_state").Invoke(t.Context(), nil))
		tampered := tamper(t, intr, func(w map[string]any) { w["requestState"] = w["requestState"].(string) + "-TAMPERED" })
		res := must(t).result(a.Resume(t.Context(), tampered, Answered(answer("confirm", Accept, map[string]any{"ok": true}))))
		if !res.IsError || !strings.Contains(res.Text(), "invalid requestState: tampered") {
			t.Errorf("Resume(tampered) = %s, want the server's refusal", resultText(res))
		}
	})
	t.Run("validation", func(t *testing.T) {
		intr := must(t).interrupt(tool("test_input_required_result_request_state").Invoke(t.Context(), nil))
		if _, err := a.Resume(t.Context(), intr, Answered(answer("confirm", Accept, map[string]any{"ok": "yes"}))); err == nil || !strings.Contains(err.Error(), "does not match") {
			t.Errorf("Resume(ok=\"yes\") error = %v, want a schema mismatch", err)
		}
	})
	t.Run("capabilities", func(t *testing.T) {
		// The adapter declares elicitation only: the server asks for no
		// sampling and no roots.
		intr := must(t).interrupt(tool("test_input_required_result_capabilities").Invoke(t.Context(), nil))
		if len(intr.Requests) != 1 || intr.Requests[0].Key != "user_name" {
			t.Fatalf("Requests = %+v, want only user_name", intr.Requests)
		}
		res := must(t).result(a.Resume(t.Context(), intr, Answered(answer("user_name", Accept, map[string]any{"name": "Ada"}))))
		if want := "Capability-aware input requests fulfilled"; res.Text() != want {
			t.Errorf("Resume() = %s, want %q", resultText(res), want)
		}
	})
	for _, tt := range []struct{ name, want string }{
		{"test_input_required_result_sampling", `"capital_question" asks for sampling/createMessage`},
		{"test_input_required_result_list_roots", `"client_roots" asks for roots/list`},
		{"test_input_required_result_multiple_inputs", `"client_roots" asks for roots/list, "greeting" asks for sampling/createMessage`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tool(tt.name).Invoke(t.Context(), nil)
			if !errors.Is(err, ErrUnsupportedInputRequest) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Invoke() error = %v, want ErrUnsupportedInputRequest with %q", err, tt.want)
			}
		})
	}
}

// TestTwoRoundsLegacyInline: on a legacy session the SDK's server shim asks
// the first round live and lets the second leak out as a result with input
// requests; the handler answers both.
func TestTwoRoundsLegacyInline(t *testing.T) {
	var keys []string
	a := newAdapter(t, Config{
		Servers: map[string]Server{"b": memServer(bookingServer(true), ModeAuto)},
		ElicitationHandler: func(_ context.Context, r ElicitationRequest) (Answer, error) {
			keys = append(keys, r.Key)
			if r.Message == "Which time?" {
				return Answer{Action: Accept, Content: map[string]any{"time": "19:30"}}, nil
			}
			return Answer{Action: Accept, Content: date("2026-09-18")}, nil
		},
	})
	res := must(t).result(lookupTool(t, a, "b__book_two_rounds").Invoke(t.Context(), map[string]any{"party": 4}))
	if want := "Booked a table for 4 on 2026-09-18 at 19:30"; res.Text() != want {
		t.Errorf("Invoke() = %s, want %q", resultText(res), want)
	}
	if want := []string{"", "time"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("handler keys = %q, want %q (a live request, then a keyed round)", keys, want)
	}
}

// TestRoundTimeout: the tool timeout bounds each round, not the time the
// handler takes to ask a human (fake time).
func TestRoundTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := bookingServer(false)
		a := newAdapter(t, Config{
			Servers:            map[string]Server{"b": memServer(s, ModeAuto)},
			DefaultToolTimeout: time.Second,
			ElicitationHandler: func(ctx context.Context, _ ElicitationRequest) (Answer, error) {
				time.Sleep(5 * time.Second) // the human thinks
				return Answer{Action: Accept, Content: date("2026-09-18")}, ctx.Err()
			},
		})
		start := time.Now()
		res := must(t).result(lookupTool(t, a, "b__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
		if want := "Booked a table for 4 on 2026-09-18"; res.Text() != want {
			t.Errorf("Invoke() = %s, want %q", resultText(res), want)
		}
		if got := time.Since(start); got != 5*time.Second {
			t.Errorf("Invoke() took %v, want 5s", got)
		}
	})
}
