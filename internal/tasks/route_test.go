package tasks

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRoute: requests go on the connection without an own session and
// for tools/call; on a line to the task's session (or the own one)
// otherwise, opened once; a foreign session the server refused falls back
// to the own one, an own one never does; Close closes the line.
func TestRoute(t *testing.T) {
	ctx := t.Context()
	var opened []string
	gone := false
	r := &Route{Own: "own", Session: "theirs", Open: func(_ context.Context, session string) (*Line, func() bool, error) {
		opened = append(opened, session)
		ct, _ := mcp.NewInMemoryTransports()
		conn, err := ct.Connect(ctx)
		if err != nil {
			return nil, nil, err
		}
		return NewLine(conn), func() bool { return gone }, nil
	}}
	if l, err := r.Line(ctx, "tools/call"); l != nil || err != nil {
		t.Errorf("tools/call on a line: %v, %v", l, err)
	}
	l1, err := r.Line(ctx, "tasks/get")
	if err != nil || l1 == nil {
		t.Fatal(err)
	}
	if l2, _ := r.Line(ctx, MethodResult); l2 != l1 || len(opened) != 1 || opened[0] != "theirs" || r.OnOwn() {
		t.Errorf("opened %v, a second line %v", opened, l2 != l1)
	}
	if r.FallBack() {
		t.Error("fell back while the session was not refused")
	}
	gone = true
	if !r.FallBack() || r.LineSession() != "own" || !r.OnOwn() {
		t.Fatalf("no fallback to the own session: %q", r.LineSession())
	}
	select {
	case <-l1.Lost():
	default:
		t.Error("the refused session's line is open")
	}
	if _, err := r.Line(ctx, "tasks/get"); err != nil || len(opened) != 2 || opened[1] != "own" || r.FallBack() {
		t.Errorf("after the fallback: opened %v, %v", opened, err)
	}
	r.Close()

	if (&Route{}).LineSession() != "" {
		t.Error("a route without an own session has lines")
	}
	fail := errors.New("no")
	bad := &Route{Own: "own", Open: func(context.Context, string) (*Line, func() bool, error) { return nil, nil, fail }}
	if _, err := bad.Line(ctx, "tasks/get"); err != fail {
		t.Errorf("Line = %v, want the open's error", err)
	}
}
