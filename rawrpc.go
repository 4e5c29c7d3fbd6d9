package mcpadapter

// Requests of the adapter's own on a session's connection, for methods
// go-sdk has no API for (the tasks of tasks.go). A request is written on
// the transport connection the session runs on, with an id of the
// adapter's namespace (a string: go-sdk numbers its own), and its answer
// is claimed by the connection's screen as it passes (internal/wire,
// Options.Claim); go-sdk, which reads it too, drops a response it sent no
// request for. See sdkcompat.go, entry 8.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawPrefix starts the id of every request of the adapter's own.
const rawPrefix = "mcpadapter-"

// rawCancelTimeout bounds the notice that tells a server a request of the
// adapter's own was abandoned.
const rawCancelTimeout = time.Second

// A rawCalls is the registry of one connection's requests of the
// adapter's own: the connection they are written on, and the answers
// awaited, by id.
type rawCalls struct {
	conn mcp.Connection // set once, by the dial, before the session is used
	seq  atomic.Uint64

	mu      sync.Mutex
	waiting map[string]chan *jsonrpc.Response // guarded by mu
}

// claim takes msg, a screened response to a request of the adapter's own,
// to its caller; answers nobody waits for are dropped.
func (r *rawCalls) claim(msg []byte) {
	m, err := jsonrpc.DecodeMessage(msg)
	resp, ok := m.(*jsonrpc.Response)
	if err != nil || !ok {
		return
	}
	id, _ := resp.ID.Raw().(string)
	r.mu.Lock()
	ch := r.waiting[id]
	delete(r.waiting, id)
	r.mu.Unlock()
	if ch != nil {
		ch <- resp // buffered: never blocks the reader
	}
}

// wait registers a request id and returns its answer's channel and the
// func that forgets it.
func (r *rawCalls) wait(id string) (<-chan *jsonrpc.Response, func()) {
	ch := make(chan *jsonrpc.Response, 1)
	r.mu.Lock()
	if r.waiting == nil {
		r.waiting = make(map[string]chan *jsonrpc.Response)
	}
	r.waiting[id] = ch
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		delete(r.waiting, id)
		r.mu.Unlock()
	}
}

// rawCall sends method with params on c as a request of the adapter's own
// and returns its result, or its JSON-RPC error (a *jsonrpc.Error), within
// ctx, the adapter's Close and the connection's life. op names the
// operation in errors. A request abandoned by ctx is followed by
// notifications/cancelled.
func (c *conn) rawCall(ctx context.Context, op, method string, params any) (json.RawMessage, error) {
	if err := c.usable(op); err != nil {
		return nil, err
	}
	if c.raw.conn == nil {
		return nil, serverError(c.server, op, fmt.Errorf("%w: requests of the adapter's own need a transport it can write to", ErrNotSupported))
	}
	p, err := json.Marshal(params)
	if err != nil {
		return nil, serverError(c.server, op, err)
	}
	id := rawPrefix + strconv.FormatUint(c.raw.seq.Add(1), 10)
	rid, _ := jsonrpc.MakeID(id)
	answer, forget := c.raw.wait(id)
	defer forget()
	ctx, done := c.callContext(ctx)
	defer done()
	if err := c.raw.conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: p}); err != nil {
		return nil, c.callError(op, classifyFault(err))
	}
	select {
	case resp := <-answer:
		if resp.Error != nil {
			return nil, c.callError(op, classifyFault(resp.Error))
		}
		return resp.Result, nil
	case <-ctx.Done():
		c.rawCancel(id)
		return nil, c.callError(op, context.Cause(ctx))
	case <-c.done:
		return nil, serverError(c.server, op, fmt.Errorf("connection lost: %w", c.cause()))
	}
}

// rawCancel tells the server that the request id was abandoned, best
// effort, within rawCancelTimeout and the connection's life.
func (c *conn) rawCancel(id string) {
	if !c.alive() || c.life.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.life, rawCancelTimeout)
	defer cancel()
	p, _ := json.Marshal(map[string]any{"requestId": id, "reason": "abandoned by the caller"})
	_ = c.raw.conn.Write(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: p})
}

// recordRPC returns t, recording the connection it makes as the one
// requests of the adapter's own are written on, unwrapped (a Streamable
// HTTP connection must stay the SDK's own: sdkcompat.go, entry 5).
func (c *conn) recordRPC(t mcp.Transport) mcp.Transport {
	return wrapTransport(t, func(conn mcp.Connection) mcp.Connection {
		c.raw.conn = conn
		return conn
	})
}
