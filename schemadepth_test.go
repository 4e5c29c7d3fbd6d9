package mcpadapter

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// nestedSchema returns an object schema whose one property nests depth
// objects deep.
func nestedSchema(depth int) map[string]any {
	var inner any = map[string]any{"type": "string"}
	for range depth {
		inner = map[string]any{"type": "object", "properties": map[string]any{"x": inner}}
	}
	return map[string]any{"type": "object", "properties": map[string]any{"deep": inner}}
}

func TestRequestedSchemaRefused(t *testing.T) {
	flat := map[string]any{"type": "object", "properties": map[string]any{
		"colors": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{
			map[string]any{"const": "red", "title": "Red"},
		}}},
	}}
	cases := []struct {
		name   string
		schema any
		want   string // "" means accepted: an interrupt
	}{
		{"flat multi-select", flat, ""},
		{"deep", nestedSchema(300), "nests deeper than"},
		{"false", false, "not a JSON object"},
		{"string", "x", "not a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Modern: an input-required result.
			s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
			s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"k": &mcp.ElicitParams{Mode: "form", Message: "?", RequestedSchema: tc.schema}}, RequestState: "s"}, nil
				})
			a := newAdapter(t, Config{Servers: map[string]Server{"s": inMemoryServer(s, ModeModern)}})
			_, err := lookupTool(t, a, "s__ask").Invoke(t.Context(), nil)
			var intr *Interrupt
			if tc.want == "" {
				if !errors.As(err, &intr) {
					t.Fatalf("Invoke = %v, want an interrupt", err)
				}
				return
			}
			if !errors.Is(err, ErrUnsupportedInputRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Invoke = %v, want ErrUnsupportedInputRequest saying %q", err, tc.want)
			}
		})
	}
}
