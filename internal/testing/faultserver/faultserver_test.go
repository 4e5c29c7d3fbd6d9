package faultserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) { Main(m) }

func TestParsePeerOptions(t *testing.T) {
	o, err := parsePeerOptions("hanghandshake,repeatcursor,hanglist,basic")
	if err != nil || !o.HangHandshake || !o.RepeatCursor || !o.HangList || len(o.Tools) != len(BasicCatalog()) {
		t.Fatalf("parsePeerOptions() = %+v, %v", o, err)
	}
	if _, err := parsePeerOptions("nope"); err == nil {
		t.Fatal("parsePeerOptions(nope) succeeded")
	}
}

// TestCatalog checks that every descriptor is JSON and that the invalid
// ones are invalid the way their docs say.
func TestCatalog(t *testing.T) {
	for _, raw := range Catalog() {
		var d map[string]any
		if err := json.Unmarshal([]byte(raw), &d); err != nil {
			t.Fatalf("descriptor %.60q is not JSON: %v", raw, err)
		}
	}
	depth, maxDepth := 0, 0
	for _, c := range Catalog()[len(BasicCatalog())+len(Names)+3] { // ToolSchemaDeep
		switch c {
		case '{', '[':
			depth++
			maxDepth = max(maxDepth, depth)
		case '}', ']':
			depth--
		}
	}
	if maxDepth <= DeepSchemaLevels {
		t.Errorf("%s nests %d levels, want more than %d", ToolSchemaDeep, maxDepth, DeepSchemaLevels)
	}
}

// connect connects a go-sdk client to the peer over its pipe transport.
func connect(t *testing.T, p *Peer) *mcp.ClientSession {
	t.Helper()
	tr, err := p.Transport()(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		p.Wait()
	})
	return cs
}

func TestPeerOverPipe(t *testing.T) {
	p := NewPeer(PeerOptions{Tools: BasicCatalog()})
	cs := connect(t, p)
	if got := cs.InitializeResult().ServerInfo.Name; got != "fault-peer" {
		t.Fatalf("server name = %q", got)
	}
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(res.Tools) != len(BasicCatalog()) {
		t.Fatalf("ListTools() = %v, %v", res, err)
	}
	call, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolOK})
	if err != nil || call.Content[0].(*mcp.TextContent).Text != "ok" {
		t.Fatalf("CallTool(ok) = %v, %v", call, err)
	}
	if p.Calls(ToolOK) != 1 {
		t.Fatalf("Calls(ok) = %d, want 1", p.Calls(ToolOK))
	}
}

func TestPeerOverHTTP(t *testing.T) {
	for _, sse := range []bool{false, true} {
		p := NewPeer(PeerOptions{Tools: BasicCatalog()})
		rec := &Recorder{Next: p.HTTPHandler(sse)}
		srv := testserver.Serve(t, rec)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		call, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "with space"})
		if err != nil || call.Content[0].(*mcp.TextContent).Text != "called with space" {
			t.Fatalf("CallTool(sse=%v) = %v, %v", sse, call, err)
		}
		cs.Close()
		if !strings.HasPrefix(rec.Requests()[0], http.MethodPost) || !rec.SawHeaderValue("application/json") {
			t.Errorf("recorded %v", rec.Requests())
		}
	}
}

func TestServerTools(t *testing.T) {
	s := New(Options{ConsentURL: "https://consent.example/x"})
	t.Cleanup(s.Unhang)
	tr, err := s.Transport()(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 1}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "slept 1ms" {
		t.Fatalf("sleep = %v, %v", res, err)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "consent"})
	if err != nil || res.InputRequests["consent"].(*mcp.ElicitParams).URL != "https://consent.example/x" {
		t.Fatalf("consent = %+v, %v", res, err)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "shed_forever"})
	if err != nil || res.InputRequests == nil || len(res.InputRequests) != 0 {
		t.Fatalf("shed_forever = %+v, %v", res, err)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "grandchild"})
	if err != nil || !res.IsError {
		t.Fatalf("grandchild outside a process = %+v, %v; want an error result", res, err)
	}
}
