package mcpadapter

import (
	"context"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInMemory runs a go-sdk server in process through InMemory, in both
// eras: its tools work, and after Close a new discovery gets a new session.
func TestInMemory(t *testing.T) {
	for _, tt := range []struct {
		name   string
		legacy bool
		era    Mode
	}{{"modern", false, ModeModern}, {"legacy", true, ModeLegacy}} {
		t.Run(tt.name, func(t *testing.T) {
			srv := testserver.New(testserver.Options{Legacy: tt.legacy}).AddWeather()
			a := newAdapter(t, Config{Servers: map[string]Server{"w": InMemory(srv.Server)}})
			for round := range 2 {
				ts, err := a.ListTools(t.Context())
				if err != nil {
					t.Fatalf("round %d: ListTools: %v", round, err)
				}
				res, err := ts.Lookup("w__get_weather").Invoke(t.Context(), map[string]any{"city": "Oslo"})
				if err != nil || res.Text() != "Sunny, 21°C in Oslo" {
					t.Fatalf("round %d: Invoke = %v, %v", round, res, err)
				}
				if info, _ := a.ServerInfo(t.Context(), "w"); info.Era != tt.era {
					t.Errorf("round %d: era %s, want %s", round, info.Era, tt.era)
				}
				a.Close()
			}
		})
	}
}

// TestInMemoryOutlivesDialContext checks that the server's session does not
// end with the context its dial was made under.
func TestInMemoryOutlivesDialContext(t *testing.T) {
	srv := testserver.New(testserver.Options{}).AddWeather()
	ctx, cancel := context.WithCancel(t.Context())
	transport, err := InMemory(srv.Server).Transport(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatalf("Connect after the dial's context ended: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_weather", Arguments: map[string]any{"city": "Oslo"}})
	if err != nil || res.IsError {
		t.Fatalf("CallTool = %v, %v", res, err)
	}
}
