package sdkcache

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSend: an uncached lookup is sent with its real key and leaves the
// slot in the params (where the SDK keys its store); a purge is answered
// with an empty page, never sent; any other request passes untouched.
func TestSend(t *testing.T) {
	var sent []string
	next := func(_ context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch p := req.GetParams().(type) {
		case *mcp.ListToolsParams:
			sent = append(sent, p.Cursor)
		case *mcp.ReadResourceParams:
			sent = append(sent, p.URI)
		}
		return &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "t", Meta: mcp.Meta{"k": "v"}}}}, nil
	}
	lookup := &mcp.ListToolsParams{Cursor: Lookup(1, "c2")}
	res, err := Send(t.Context(), "tools/list", &mcp.ListToolsRequest{Params: lookup}, next)
	if err != nil {
		t.Fatal(err)
	}
	slot, _, _, _ := parseKey(Lookup(1, "c2"))
	if len(sent) != 1 || sent[0] != "c2" || lookup.Cursor != slot {
		t.Errorf("sent %q, params left with %q; want c2 sent and the slot %q left", sent, lookup.Cursor, slot)
	}
	if m := res.(*mcp.ListToolsResult).Tools[0].Meta; m["k"] != "v" {
		t.Errorf("_meta of the answer = %v, want it kept", m)
	}
	purge := &mcp.ListResourceTemplatesParams{Cursor: Purge(3)}
	res, err = Send(t.Context(), "resources/templates/list", &mcp.ListResourceTemplatesRequest{Params: purge}, next)
	if r, ok := res.(*mcp.ListResourceTemplatesResult); err != nil || !ok || len(r.ResourceTemplates) != 0 || len(sent) != 1 {
		t.Errorf("purge = %v, %v, %d sent; want an empty page, nothing sent", res, err, len(sent))
	}
	if want, _, _, _ := parseKey(Purge(3)); purge.Cursor != want {
		t.Errorf("purge left %q in the params, want its slot %q", purge.Cursor, want)
	}
	read := &mcp.ReadResourceParams{URI: "file:///x"}
	if _, err := Send(t.Context(), "resources/read", &mcp.ReadResourceRequest{Params: read}, next); err != nil || read.URI != "file:///x" || sent[1] != "file:///x" {
		t.Errorf("a cached read: sent %q, params %q", sent, read.URI)
	}
}

// TestSlots: a listing returns the slots past its end that a longer
// listing before it filled.
func TestSlots(t *testing.T) {
	var s Slots
	if from, to := s.Listed(3); from != 3 || to != 0 {
		t.Errorf("first listing: purge %d..%d, want none", from, to)
	}
	if from, to := s.Listed(1); from != 1 || to != 3 {
		t.Errorf("shorter listing: purge %d..%d, want 1..3", from, to)
	}
}
