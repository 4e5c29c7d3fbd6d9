package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type availabilityIn struct {
	Restaurant string `json:"restaurant" jsonschema:"the restaurant's name"`
	Party      int    `json:"party" jsonschema:"number of guests"`
}

type bookingIn struct {
	Restaurant string `json:"restaurant" jsonschema:"the restaurant's name"`
	Party      int    `json:"party" jsonschema:"number of guests"`
}

// freeDates are the dates with a free table, at every restaurant.
var freeDates = []string{"2026-09-18", "2026-09-19"}

// newRestaurantServer returns an MCP server with two tools:
// check_availability, an ordinary tool, and book_table, which asks the user
// for the date with an input-required result (SEP-2322, modern era). The
// requestState it hands out is sealed with an HMAC of secret, so that a
// client cannot forge it: a server restarted with the same secret accepts
// the answers to a question asked before the restart.
//
// legacy makes it a legacy-only server (2025-11-25): the go-sdk server then
// turns the same input request into a live elicitation/create request,
// which only a synchronous handler can answer.
func newRestaurantServer(secret string, legacy bool) *mcp.Server {
	var opts *mcp.ServerOptions
	if legacy {
		opts = &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "restaurant-service", Version: "1.0.0"}, opts)

	mcp.AddTool(s, &mcp.Tool{
		Name:        "check_availability",
		Description: "List the dates with a free table at a restaurant.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in availabilityIn) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprintf("%s has tables for %d on %s.", in.Restaurant, in.Party, strings.Join(freeDates, " and "))), nil, nil
	})

	seal := newSealer(secret)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "book_table",
		Description: "Book a table at a restaurant. Asks the user for the date.",
	}, func(_ context.Context, req *mcp.CallToolRequest, in bookingIn) (*mcp.CallToolResult, any, error) {
		// Round 1: ask, and remember what was asked in the sealed state.
		if req.Params.RequestState == "" {
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"date": &mcp.ElicitParams{
					Message: fmt.Sprintf("Which date should I book at %s for %d?", in.Restaurant, in.Party),
					RequestedSchema: &jsonschema.Schema{
						Type: "object",
						Properties: map[string]*jsonschema.Schema{
							"date": {Type: "string", Format: "date", Enum: []any{freeDates[0], freeDates[1]}},
						},
						Required: []string{"date"},
					},
				}},
				RequestState: seal.seal(in),
			}, nil, nil
		}
		// Round 2: the client called again with the answer and the state.
		var asked bookingIn
		if !seal.open(req.Params.RequestState, &asked) || asked != in {
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState"}
		}
		answer, ok := req.Params.InputResponses["date"].(*mcp.ElicitResult)
		switch {
		case !ok:
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `missing input response "date"`}
		case answer.Action != "accept":
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{
				&mcp.TextContent{Text: "No table booked: the user did not choose a date (" + answer.Action + ")."},
			}}, nil, nil
		}
		return text(fmt.Sprintf("Booked a table for %d at %s on %v.", in.Party, in.Restaurant, answer.Content["date"])), nil, nil
	})
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// A sealer seals values as base64url(JSON) "." base64url(HMAC-SHA256).
type sealer struct{ key []byte }

func newSealer(secret string) sealer { return sealer{key: []byte(secret)} }

func (s sealer) mac(payload []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write(payload)
	return h.Sum(nil)
}

func (s sealer) seal(v any) string {
	payload, _ := json.Marshal(v)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac(payload))
}

func (s sealer) open(state string, v any) bool {
	enc := base64.RawURLEncoding
	p, m, ok := strings.Cut(state, ".")
	if !ok {
		return false
	}
	payload, err1 := enc.DecodeString(p)
	sum, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil || !hmac.Equal(sum, s.mac(payload)) {
		return false
	}
	return json.Unmarshal(payload, v) == nil
}
