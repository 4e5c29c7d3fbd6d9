package tasks

// Requests of the adapter's own on a session's connection, for methods
// go-sdk has no API for (the tasks of Call). A request is written on the
// transport connection the session runs on, or on a task line joined to
// it (line.go), with an id of the adapter's namespace (a string: go-sdk
// numbers its own), and its answer is claimed by the connection's screen
// as it passes (internal/wire, Options.Claim); go-sdk, which reads it too
// on the session's own connection, drops a response it sent no request
// for. See the root's sdkcompat.go, entry 8.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// IDPrefix starts the id of every request of the adapter's own.
const IDPrefix = "mcpadapter-"

// rawCancelTimeout bounds the notice that tells a server a request of the
// adapter's own was abandoned.
const rawCancelTimeout = time.Second

var (
	// ErrNoConn is returned by [Calls.Call] when no connection was
	// recorded: the transport is not one the adapter can write to.
	ErrNoConn = errors.New("requests of the adapter's own need a transport it can write to")

	// ErrLost is returned by [Calls.Call] when the session (or the task
	// line) ended before the answer came.
	ErrLost = errors.New("connection lost")
)

// A Calls is the registry of one connection's requests of the adapter's
// own: the connection they are written on, and the answers awaited, by
// id. The zero value is ready; Record sets the connection.
//
// Ids are IDPrefix, a random tag of the registry's and a count: connections
// joined to one session (task lines, of this process or another) never
// send the same id, which the server would take for one request.
type Calls struct {
	conn mcp.Connection // set once, by the dial, before the session is used
	tag  string         // set with conn
	seq  atomic.Uint64

	// asked, a task line's, carries the server's requests to the call
	// that takes them (CallAsking); nil on other connections.
	asked <-chan *jsonrpc.Request

	mu      sync.Mutex
	waiting map[string]chan *jsonrpc.Response // guarded by mu
}

// Record records conn as the connection requests are written on, and
// returns it. The dial calls it once, before the session is used.
func (r *Calls) Record(conn mcp.Connection) mcp.Connection {
	var b [4]byte
	rand.Read(b[:])
	r.conn, r.tag = conn, hex.EncodeToString(b[:])+"-"
	return conn
}

// Claim takes msg, a screened response to a request of the adapter's own,
// to its caller; answers nobody waits for are dropped.
func (r *Calls) Claim(msg []byte) {
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
func (r *Calls) wait(id string) (<-chan *jsonrpc.Response, func()) {
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

// Call sends method with params as a request of the adapter's own and
// returns its result, within ctx, the session (lost is closed when it
// ends) and the connection's life. It fails with ErrNoConn, ErrLost, the
// error of the write, the server's JSON-RPC error (a *jsonrpc.Error), or
// ctx's cause, after telling the server that the request was abandoned
// (notifications/cancelled).
func (r *Calls) Call(ctx, life context.Context, lost <-chan struct{}, method string, params json.RawMessage) (json.RawMessage, error) {
	return r.CallAsking(ctx, life, lost, method, params, nil)
}

// CallAsking is Call, and, on a task line, hands ask the questions the
// server asks while the answer is awaited (a legacy tasks/result's), those
// that came together at once; an error of ask ends the call with it, the
// request abandoned unannounced: its stream goes with the line.
func (r *Calls) CallAsking(ctx, life context.Context, lost <-chan struct{}, method string, params json.RawMessage, ask func([]*jsonrpc.Request) error) (json.RawMessage, error) {
	if r.conn == nil {
		return nil, ErrNoConn
	}
	var asked <-chan *jsonrpc.Request
	if ask != nil {
		asked = r.asked
	}
	id := IDPrefix + r.tag + strconv.FormatUint(r.seq.Add(1), 10)
	rid, _ := jsonrpc.MakeID(id)
	answer, forget := r.wait(id)
	defer forget()
	if err := r.conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: params}); err != nil {
		return nil, err
	}
	for {
		select {
		case resp := <-answer:
			if resp.Error != nil {
				return nil, resp.Error
			}
			return resp.Result, nil
		case req := <-asked:
			if err := ask(drain(req, asked)); err != nil {
				return nil, err
			}
		case <-ctx.Done():
			r.cancel(life, lost, id)
			return nil, context.Cause(ctx)
		case <-lost:
			return nil, ErrLost
		}
	}
}

// drain returns first and the requests waiting in asked.
func drain(first *jsonrpc.Request, asked <-chan *jsonrpc.Request) []*jsonrpc.Request {
	reqs := []*jsonrpc.Request{first}
	for {
		select {
		case req := <-asked:
			reqs = append(reqs, req)
		default:
			return reqs
		}
	}
}

// Respond answers the server's request id with result, or with the error
// e when it is not nil.
func (r *Calls) Respond(ctx context.Context, id jsonrpc.ID, result json.RawMessage, e *jsonrpc.Error) error {
	if r.conn == nil {
		return ErrNoConn
	}
	resp := &jsonrpc.Response{ID: id, Result: result}
	if e != nil {
		resp = &jsonrpc.Response{ID: id, Error: e}
	}
	return r.conn.Write(ctx, resp)
}

// cancel tells the server that the request id was abandoned, best effort,
// within rawCancelTimeout and the connection's life.
func (r *Calls) cancel(life context.Context, lost <-chan struct{}, id string) {
	select {
	case <-lost:
		return
	default:
	}
	if life.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(life, rawCancelTimeout)
	defer cancel()
	p, _ := json.Marshal(map[string]any{"requestId": id, "reason": "abandoned by the caller"})
	_ = r.conn.Write(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: p})
}
