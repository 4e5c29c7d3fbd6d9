package tasks

// A task line: a connection of the adapter's own, joined to the Streamable
// HTTP session a task lives on, that carries the requests of one follow of
// the task and reads what the server sends on their streams itself.
//
// A legacy server binds a task to the session that made it (the TypeScript
// SDK's stores do) and asks its questions as live requests on the stream
// of tasks/result. On the session's own connection go-sdk reads those
// requests and answers them when its handler returns, so a question could
// only be answered at once; on a line the adapter reads them, and may
// leave one unanswered while it waits for a person, answered later by id
// from a line of another Adapter, in another process. A line needs only
// the session's id: the root's task calls open one per follow (the
// transport that joins it, the root's tasks.go) and close it after.

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxAsked bounds the server's questions a line holds while no call takes
// them; more are refused.
const maxAsked = 4

// MethodElicit is the method of a server's question.
const MethodElicit = "elicitation/create"

// A Line is a task line: the requests of the adapter's own ([Calls]) on a
// connection that nothing else reads. Its answers are claimed by the
// screen of the connection's transport (Calls.Claim); the server's
// questions wait for the call that takes them ([Calls.CallAsking]); any
// other request is refused, notifications are dropped.
type Line struct {
	Calls

	asked chan *jsonrpc.Request
	lost  chan struct{} // closed when the connection's reads end
	wg    sync.WaitGroup
}

// NewLine returns the line over conn, an unwrapped connection whose
// transport screens its answers and hands them to the line's Claim, and
// starts reading it.
func NewLine(conn mcp.Connection) *Line {
	l := &Line{asked: make(chan *jsonrpc.Request, maxAsked), lost: make(chan struct{})}
	l.Calls.asked = l.asked
	l.Record(conn)
	l.wg.Go(l.read)
	return l
}

// Lost is closed when the line's connection ended.
func (l *Line) Lost() <-chan struct{} { return l.lost }

// read reads the line until its connection ends.
func (l *Line) read() {
	defer close(l.lost)
	for {
		msg, err := l.conn.Read(context.Background())
		if err != nil {
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue // an answer (claimed as it was screened), a notification
		}
		if req.Method == MethodElicit {
			select {
			case l.asked <- req:
				continue
			default:
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), rawCancelTimeout)
		_ = l.Respond(ctx, req.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "not taken on a task line: " + truncate(req.Method)})
		cancel()
	}
}

// Close closes the line's connection and waits for its reads to end.
func (l *Line) Close() error {
	err := l.conn.Close()
	l.wg.Wait()
	return err
}
