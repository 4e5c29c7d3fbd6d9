package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoConn answers each request written to it through Claim (when
// answer), as a screen would, and records what was written.
type echoConn struct {
	mcp.Connection
	calls   *Calls
	answer  bool
	written []*jsonrpc.Request
}

func (c *echoConn) Write(_ context.Context, msg jsonrpc.Message) error {
	req := msg.(*jsonrpc.Request)
	c.written = append(c.written, req)
	if c.answer && req.IsCall() {
		b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"ok":true}`)})
		c.calls.Claim(b)
	}
	return nil
}

// TestCalls: a request of the adapter's own gets its answer through
// Claim; without a connection it fails at once; a lost session fails it;
// an abandoned one is followed by notifications/cancelled.
func TestCalls(t *testing.T) {
	var r Calls
	if _, err := r.Call(t.Context(), t.Context(), nil, "tasks/get", nil); !errors.Is(err, ErrNoConn) {
		t.Fatalf("Call without a connection = %v, want ErrNoConn", err)
	}
	conn := &echoConn{calls: &r, answer: true}
	r.Record(conn)
	res, err := r.Call(t.Context(), t.Context(), nil, "tasks/get", json.RawMessage(`{}`))
	if err != nil || string(res) != `{"ok":true}` {
		t.Fatalf("Call = %s, %v", res, err)
	}
	if id, _ := conn.written[0].ID.Raw().(string); !strings.HasPrefix(id, IDPrefix+r.tag) || len(r.tag) != 9 || !strings.HasSuffix(id, "-1") {
		t.Errorf("request id %v, want %s<tag>-1", conn.written[0].ID.Raw(), IDPrefix)
	}
	var other Calls
	if other.Record(conn); other.tag == r.tag {
		t.Errorf("two registries have the tag %q", r.tag)
	}
	r.Claim([]byte(`{"jsonrpc":"2.0","id":"` + IDPrefix + `9","result":{}}`)) // nobody waits: dropped
	r.Claim([]byte(`not json`))

	conn.answer = false
	lost := make(chan struct{})
	close(lost)
	if _, err := r.Call(t.Context(), t.Context(), lost, "tasks/get", nil); !errors.Is(err, ErrLost) {
		t.Errorf("Call on a lost session = %v, want ErrLost", err)
	}
	synctest.Test(t, func(t *testing.T) {
		conn.written = nil
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			synctest.Wait()
			cancel()
		}()
		if _, err := r.Call(ctx, t.Context(), make(chan struct{}), "tasks/get", nil); !errors.Is(err, context.Canceled) {
			t.Errorf("abandoned Call = %v, want context.Canceled", err)
		}
		if len(conn.written) != 2 || conn.written[1].Method != "notifications/cancelled" {
			t.Errorf("written %v, want the request and its cancellation", conn.written)
		}
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.waiting) != 0 {
		t.Errorf("%d answers still awaited", len(r.waiting))
	}
}
