package main

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// forecastIn and forecastOut are the weather tool's arguments and structured
// result; go-sdk derives the input and output schemas from them.
type forecastIn struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
}

type forecastOut struct {
	City  string `json:"city"`
	TempC int    `json:"tempC"`
	Sky   string `json:"sky"`
}

// newWeatherServer returns a legacy-era server: it supports only the
// pre-2026 protocol versions, so the adapter falls back from the modern
// handshake to initialize.
func newWeatherServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "weather-service", Version: "1.2.0"},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25", "2025-06-18"}})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "get_forecast",
		Description: "Get tomorrow's weather forecast for a city.",
		Annotations: &mcp.ToolAnnotations{Title: "Forecast", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
		Meta:        mcp.Meta{"example.com/data-source": "quickstart"},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in forecastIn) (*mcp.CallToolResult, forecastOut, error) {
		out := forecastOut{City: in.City, TempC: 24, Sky: "sunny"}
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: fmt.Sprintf("Tomorrow in %s: %s, %d°C.", out.City, out.Sky, out.TempC)},
		}}, out, nil
	})
	return s
}

type bookingIn struct {
	Restaurant string `json:"restaurant" jsonschema:"the restaurant's name"`
	Party      int    `json:"party" jsonschema:"number of guests"`
}

// newBookingServer returns a modern-era server (every go-sdk server speaks
// the modern protocol unless told otherwise) whose book_table tool asks the
// user for the date with an input-required result (SEP-2322): the call
// returns input requests instead of a result, and the client calls again
// with the answers.
func newBookingServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "booking-service", Version: "0.3.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "book_table",
		Description: "Book a table at a restaurant. Asks the user for the date.",
		Annotations: &mcp.ToolAnnotations{Title: "Book a table", DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
	}, func(_ context.Context, req *mcp.CallToolRequest, in bookingIn) (*mcp.CallToolResult, any, error) {
		// The client calls again with the same arguments and the answers.
		answer, ok := req.Params.InputResponses["date"].(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"date": &mcp.ElicitParams{
					Message: fmt.Sprintf("Which date should I book at %s for %d?", in.Restaurant, in.Party),
					RequestedSchema: &jsonschema.Schema{
						Type:       "object",
						Properties: map[string]*jsonschema.Schema{"date": {Type: "string", Format: "date"}},
						Required:   []string{"date"},
					},
				},
			}}, nil, nil
		}
		if answer.Action != "accept" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{
				&mcp.TextContent{Text: "The user did not choose a date (" + answer.Action + ")."},
			}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: fmt.Sprintf("Booked a table for %d at %s on %v.", in.Party, in.Restaurant, answer.Content["date"])},
		}}, nil, nil
	})
	return s
}

func ptr[T any](v T) *T { return &v }
