package mcpadapter

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
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
				if info, _ := a.ServerInfo(t.Context(), "w"); info.Era != Era(tt.era) {
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

// TestInMemoryConnection: an InMemory server is read through the adapter's
// own line connection, in both eras: the adapter's end is a memoryConn,
// and the only go-sdk ioConn (with its reader goroutine and per-message
// decoders) is the server's. Closing the adapter ends the server's
// session and leaves no goroutine behind.
func TestInMemoryConnection(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%t", legacy), func(t *testing.T) {
			before := goroutines()
			srv := testserver.New(testserver.Options{Legacy: legacy}).AddWeather()
			a, err := New(Config{Servers: map[string]Server{"w": InMemory(srv.Server)}})
			if err != nil {
				t.Fatal(err)
			}
			c, err := a.connect(t.Context(), "w")
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := c.wire.Connection.(*memoryConn); !ok {
				t.Errorf("the connection is a %T, want *memoryConn", c.wire.Connection)
			}
			readers := 0
			for id, stack := range goroutines() {
				if _, old := before[id]; !old && strings.Contains(stack, "mcp.newIOConnLimited") {
					readers++
				}
			}
			if readers != 1 {
				t.Errorf("%d go-sdk ioConn readers, want 1 (the server's)", readers)
			}
			sessions := slices.Collect(srv.Server.Sessions())
			if len(sessions) != 1 {
				t.Fatalf("%d server sessions, want 1", len(sessions))
			}
			a.Close()
			sessions[0].Wait()
			checkNoLeaks(t, before)
		})
	}
}

// TestInMemoryServerEnds: when the server ends its session, the adapter's
// end reads the end of the pipe, and the next discovery dials a new session.
func TestInMemoryServerEnds(t *testing.T) {
	srv := testserver.New(testserver.Options{}).AddWeather()
	s := InMemory(srv.Server)
	s.Retry = &RetryPolicy{MaxAttempts: 1}
	a := newAdapter(t, Config{Servers: map[string]Server{"w": s}})
	session, err := a.Session(t.Context(), "w")
	if err != nil {
		t.Fatal(err)
	}
	srv.KillSessions()
	if err := session.Wait(); err != nil {
		t.Errorf("session.Wait() = %v, want nil (the pipe's end)", err)
	}
	ts, err := a.ListTools(t.Context(), WithCacheMode(CacheRefresh))
	if err != nil {
		t.Fatalf("ListTools() after the server ended its session: %v", err)
	}
	if res, err := ts.Lookup("w__get_weather").Invoke(t.Context(), map[string]any{"city": "Oslo"}); err != nil || res.Text() != "Sunny, 21°C in Oslo" {
		t.Fatalf("Invoke() on the new session = %v, %v", res, err)
	}
	if n := srv.Count("server/discover"); n != 2 {
		t.Fatalf("%d server/discover requests, want 2", n)
	}
}
