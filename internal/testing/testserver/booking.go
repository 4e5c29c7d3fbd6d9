package testserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// URL-mode elicitation fixtures, as sent by "ask_url".
const (
	ConsentURL           = "https://example.com/consent"
	ConsentElicitationID = "consent-1"
)

// errInvalidState is the JSON-RPC error for a missing, tampered or foreign
// requestState.
var errInvalidState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState"}

// seal returns payload sealed for tool: base64url(payload) "."
// base64url(HMAC-SHA256(key, tool NUL payload)).
func (s *Server) seal(tool, payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(s.mac(tool, payload))
}

// open verifies a state produced by seal for tool and returns its payload.
func (s *Server) open(tool, state string) (url.Values, bool) {
	enc := base64.RawURLEncoding
	p, m, ok := strings.Cut(state, ".")
	if !ok {
		return nil, false
	}
	payload, err1 := enc.DecodeString(p)
	sum, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil || !hmac.Equal(sum, s.mac(tool, string(payload))) {
		return nil, false
	}
	v, err := url.ParseQuery(string(payload))
	if err != nil {
		return nil, false
	}
	return v, true
}

func (s *Server) mac(tool, payload string) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write([]byte(payload))
	return h.Sum(nil)
}

// formSchema returns an object schema with one required string property.
func formSchema(prop, format string) map[string]any {
	p := map[string]any{"type": "string"}
	if format != "" {
		p["format"] = format
	}
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{prop: p},
		"required":   []any{prop},
	}
}

// DateRequest returns the elicitation "book_table" and "book_two_rounds" send
// under the key "date": message "Which date?", schema {date: string, format
// date}, date required.
func DateRequest() *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "form", Message: "Which date?", RequestedSchema: formSchema("date", "date")}
}

// TimeRequest returns the second-round elicitation of "book_two_rounds",
// under the key "time": message "Which time?", schema {time: string}, time
// required.
func TimeRequest() *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "form", Message: "Which time?", RequestedSchema: formSchema("time", "")}
}

// partySchema is the input schema of the booking tools.
func partySchema() map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"party": map[string]any{"type": "integer", "minimum": 1, "description": "Number of guests"}},
		"required":   []any{"party"},
	}
}

// needInput returns an input-required result.
func needInput(reqs mcp.InputRequestMap, state string) *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}
}

// elicitAnswer returns the elicitation answer under key, or an invalid params
// error when it is missing or of another kind.
func elicitAnswer(req *mcp.CallToolRequest, key string) (*mcp.ElicitResult, error) {
	r, ok := req.Params.InputResponses[key].(*mcp.ElicitResult)
	if !ok || r == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("missing input response %q", key)}
	}
	return r, nil
}

// refusal returns the isError result for a declined or cancelled answer, or
// an invalid params error for an unknown action.
func refusal(what, action string) (*mcp.CallToolResult, error) {
	switch action {
	case "decline":
		return toolError(what + " declined by user"), nil
	case "cancel":
		return toolError(what + " cancelled by user"), nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown elicitation action %q", action)}
}

// partyArg reads the required integer argument "party".
func partyArg(args map[string]any) (int, bool) {
	f, ok := args["party"].(float64)
	if !ok || f < 1 || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// AddBooking adds tools that need input from the user (SEP-2322 multi
// round-trip results) and returns s. On a legacy session the SDK's server shim
// turns each input request into a live server-to-client request and runs the
// handler again once (so a second round leaks out as a result with
// InputRequests set). requestState is HMAC-sealed with the server's key (see
// Options.StateKey) and bound to the tool; a tampered or foreign state is the
// JSON-RPC error -32602 "invalid requestState". A retry with a valid state
// but no input responses asks again.
//
//   - "book_table" {party integer}: asks [DateRequest] under "date", state
//     sealing "party=<n>". On retry: accept gives "Booked a table for <n> on
//     <date>"; decline and cancel give the isError results "booking declined
//     by user" and "booking cancelled by user".
//   - "book_two_rounds" {party integer}: asks "date", then [TimeRequest]
//     under "time" (a new state each round), then "Booked a table for <n> on
//     <date> at <time>".
//   - "ask_sampling": asks a *mcp.CreateMessageParams under "summary"; on
//     retry "model said: <text>".
//   - "ask_roots": asks *mcp.ListRootsParams under "roots"; on retry "roots:
//     <uri>, ..." or "roots: (none)".
//   - "ask_forever": asks {ok boolean} under "again" on every round, the
//     message counting rounds ("Again? (round <n>)"); it never completes.
//   - "ask_url": asks a URL-mode elicitation under "consent" (URL
//     [ConsentURL], elicitation id [ConsentElicitationID]); on retry accept
//     gives "consent given", decline/cancel "consent declined by user" /
//     "consent cancelled by user".
//   - "ask_live": elicits [DateRequest] live with ServerSession.Elicit. On
//     legacy sessions that is an elicitation/create request: accept gives
//     "live elicitation accepted: <date>", otherwise "live elicitation
//     <action>". On modern sessions Elicit fails and the tool returns an
//     isError result starting with "Elicit failed:".
//
// [Server.Runs] counts every handler run.
func (s *Server) AddBooking() *Server {
	s.addTool(&mcp.Tool{Name: "book_table", Description: "Book a table; asks for the date.", InputSchema: partySchema()},
		func(_ context.Context, req *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, error) {
			const tool = "book_table"
			if req.Params.RequestState == "" && len(req.Params.InputResponses) == 0 {
				n, ok := partyArg(args)
				if !ok {
					return toolError(`validating "arguments": "party" must be a positive integer`), nil
				}
				return needInput(mcp.InputRequestMap{"date": DateRequest()}, s.seal(tool, "party="+strconv.Itoa(n))), nil
			}
			st, ok := s.open(tool, req.Params.RequestState)
			if !ok {
				return nil, errInvalidState
			}
			if len(req.Params.InputResponses) == 0 {
				return needInput(mcp.InputRequestMap{"date": DateRequest()}, req.Params.RequestState), nil
			}
			ans, err := elicitAnswer(req, "date")
			if err != nil {
				return nil, err
			}
			if ans.Action != "accept" {
				return refusal("booking", ans.Action)
			}
			date, _ := ans.Content["date"].(string)
			if date == "" {
				return toolError("booking needs a date"), nil
			}
			return text(fmt.Sprintf("Booked a table for %s on %s", st.Get("party"), date)), nil
		})

	s.addTool(&mcp.Tool{Name: "book_two_rounds", Description: "Book a table; asks for the date, then the time.", InputSchema: partySchema()},
		func(_ context.Context, req *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, error) {
			const tool = "book_two_rounds"
			if req.Params.RequestState == "" && len(req.Params.InputResponses) == 0 {
				n, ok := partyArg(args)
				if !ok {
					return toolError(`validating "arguments": "party" must be a positive integer`), nil
				}
				st := url.Values{"round": {"1"}, "party": {strconv.Itoa(n)}}
				return needInput(mcp.InputRequestMap{"date": DateRequest()}, s.seal(tool, st.Encode())), nil
			}
			st, ok := s.open(tool, req.Params.RequestState)
			if !ok {
				return nil, errInvalidState
			}
			key, ask := "date", DateRequest()
			if st.Get("round") == "2" {
				key, ask = "time", TimeRequest()
			}
			if len(req.Params.InputResponses) == 0 {
				return needInput(mcp.InputRequestMap{key: ask}, req.Params.RequestState), nil
			}
			ans, err := elicitAnswer(req, key)
			if err != nil {
				return nil, err
			}
			if ans.Action != "accept" {
				return refusal("booking", ans.Action)
			}
			v, _ := ans.Content[key].(string)
			if v == "" {
				return toolError("booking needs a " + key), nil
			}
			if key == "date" {
				next := url.Values{"round": {"2"}, "party": {st.Get("party")}, "date": {v}}
				return needInput(mcp.InputRequestMap{"time": TimeRequest()}, s.seal(tool, next.Encode())), nil
			}
			return text(fmt.Sprintf("Booked a table for %s on %s at %s", st.Get("party"), st.Get("date"), v)), nil
		})

	s.addTool(&mcp.Tool{Name: "ask_sampling", Description: "Asks the client's model for a summary.", InputSchema: emptyObject()},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, error) {
			const tool = "ask_sampling"
			if req.Params.RequestState == "" && len(req.Params.InputResponses) == 0 {
				return needInput(mcp.InputRequestMap{"summary": &mcp.CreateMessageParams{
					MaxTokens: 100,
					Messages: []*mcp.SamplingMessage{{
						Role: "user", Content: &mcp.TextContent{Text: "Summarize MCP in one sentence."},
					}},
				}}, s.seal(tool, "sampling=1")), nil
			}
			if _, ok := s.open(tool, req.Params.RequestState); !ok {
				return nil, errInvalidState
			}
			var got string
			switch r := req.Params.InputResponses["summary"].(type) {
			case *mcp.CreateMessageResult:
				if t, ok := r.Content.(*mcp.TextContent); ok {
					got = t.Text
				}
			case *mcp.CreateMessageWithToolsResult:
				for _, c := range r.Content {
					if t, ok := c.(*mcp.TextContent); ok {
						got += t.Text
					}
				}
			default:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `missing input response "summary"`}
			}
			return text("model said: " + got), nil
		})

	s.addTool(&mcp.Tool{Name: "ask_roots", Description: "Asks the client for its roots.", InputSchema: emptyObject()},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, error) {
			const tool = "ask_roots"
			if req.Params.RequestState == "" && len(req.Params.InputResponses) == 0 {
				return needInput(mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}, s.seal(tool, "roots=1")), nil
			}
			if _, ok := s.open(tool, req.Params.RequestState); !ok {
				return nil, errInvalidState
			}
			r, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult)
			if !ok || r == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `missing input response "roots"`}
			}
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			if len(uris) == 0 {
				return text("roots: (none)"), nil
			}
			return text("roots: " + strings.Join(uris, ", ")), nil
		})

	s.addTool(&mcp.Tool{Name: "ask_forever", Description: "Asks again on every round.", InputSchema: emptyObject()},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, error) {
			const tool = "ask_forever"
			round := 1
			if req.Params.RequestState != "" {
				st, ok := s.open(tool, req.Params.RequestState)
				if !ok {
					return nil, errInvalidState
				}
				n, _ := strconv.Atoi(st.Get("round"))
				round = n + 1
			}
			ask := &mcp.ElicitParams{
				Mode:    "form",
				Message: fmt.Sprintf("Again? (round %d)", round),
				RequestedSchema: map[string]any{
					"type":       "object",
					"properties": map[string]any{"ok": map[string]any{"type": "boolean"}},
				},
			}
			return needInput(mcp.InputRequestMap{"again": ask}, s.seal(tool, "round="+strconv.Itoa(round))), nil
		})

	s.addTool(&mcp.Tool{Name: "ask_url", Description: "Asks for consent on a web page.", InputSchema: emptyObject()},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, error) {
			const tool = "ask_url"
			ask := &mcp.ElicitParams{
				Mode:          "url",
				Message:       "Please give consent on the web page.",
				URL:           ConsentURL,
				ElicitationID: ConsentElicitationID,
			}
			if req.Params.RequestState == "" && len(req.Params.InputResponses) == 0 {
				return needInput(mcp.InputRequestMap{"consent": ask}, s.seal(tool, "consent=1")), nil
			}
			if _, ok := s.open(tool, req.Params.RequestState); !ok {
				return nil, errInvalidState
			}
			if len(req.Params.InputResponses) == 0 {
				return needInput(mcp.InputRequestMap{"consent": ask}, req.Params.RequestState), nil
			}
			ans, err := elicitAnswer(req, "consent")
			if err != nil {
				return nil, err
			}
			if ans.Action != "accept" {
				return refusal("consent", ans.Action)
			}
			return text("consent given"), nil
		})

	s.addTool(&mcp.Tool{Name: "ask_live", Description: "Asks for a date with a live elicitation request.", InputSchema: emptyObject()},
		func(ctx context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, error) {
			ans, err := req.Session.Elicit(ctx, DateRequest())
			if err != nil {
				return toolError("Elicit failed: " + err.Error()), nil
			}
			if ans.Action == "accept" {
				date, _ := ans.Content["date"].(string)
				return text("live elicitation accepted: " + date), nil
			}
			return text("live elicitation " + ans.Action), nil
		})
	return s
}
