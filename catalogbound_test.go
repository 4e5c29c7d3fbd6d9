package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCatalogBound: a server whose tool list passes MaxMessageBytes fails
// its own listing with ErrMessageTooLarge, reported through
// OnConnectionError; the other servers' tools are discovered. Both eras.
func TestCatalogBound(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			big := testserver.New(testserver.Options{Legacy: legacy, PageSize: 3})
			for i := range 10 {
				big.Server.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), Description: strings.Repeat("d", 1000), InputSchema: emptyInput},
					func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return textResult1("ok"), nil
					})
			}
			var reported error
			a := newAdapter(t, Config{
				Servers: map[string]Server{
					"big":   memServer(big, ModeAuto),
					"small": memServer(testserver.New(testserver.Options{Legacy: legacy}).AddFeatures(), ModeAuto),
				},
				MaxMessageBytes: 8 << 10,
				OnConnectionError: func(server string, err error) error {
					if server == "big" {
						reported = err
					}
					return nil
				},
			})
			ts, err := a.ListTools(t.Context())
			if err != nil || ts.Lookup("small__echo") == nil {
				t.Fatalf("ListTools() = %v, %v; want small's tools", toolNames(ts), err)
			}
			var se *ServerError
			if !errors.Is(reported, ErrMessageTooLarge) || !errors.As(reported, &se) || se.Server != "big" {
				t.Errorf("big reported %v, want a *ServerError for big wrapping ErrMessageTooLarge", reported)
			}
		})
	}
}

// TestCatalogBoundResources: resource lists have the same bound.
func TestCatalogBoundResources(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: legacy, PageSize: 3})
			for i := range 10 {
				s.Server.AddResource(&mcp.Resource{URI: fmt.Sprintf("test://r%d", i), Name: fmt.Sprintf("r%d", i), Description: strings.Repeat("d", 1000)},
					func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
						return &mcp.ReadResourceResult{}, nil
					})
			}
			a := newAdapter(t, Config{Servers: map[string]Server{"r": memServer(s, ModeAuto)}, MaxMessageBytes: 8 << 10})
			if _, err := a.ListResources(t.Context(), "r"); !errors.Is(err, ErrMessageTooLarge) {
				t.Errorf("ListResources() error = %v, want ErrMessageTooLarge", err)
			}
		})
	}
}
