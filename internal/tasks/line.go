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
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Joined is the httptransport.Tasks of a task line's connection: it joins
// Session, with Version as the protocol version of its requests, and
// keeps the session when it closes (its tasks are awaited elsewhere).
type Joined struct{ Session, Version string }

// Join implements httptransport.Tasks.
func (j Joined) Join() (session, version string) { return j.Session, j.Version }

// Keep implements httptransport.Tasks: always.
func (j Joined) Keep(string) bool { return true }

// maxAsked bounds the server's questions a line holds while no call takes
// them; more are refused.
const maxAsked = 4

// MethodElicit is the method of a server's question.
const MethodElicit = "elicitation/create"

// A Line is a task line: the requests of the adapter's own ([Calls]) on a
// connection that nothing else reads. Its answers are claimed by the
// screen of the connection's transport (Calls.Claim); the server's
// questions wait for the call that takes them ([Calls.CallAsking]); a ping
// is answered, any other request refused; notifications go nowhere (the
// progress the server reports reaches the screen's user from the screen,
// in order with the answers).
type Line struct {
	Calls

	asked chan *jsonrpc.Request
	ctx   context.Context // ended by Close: bounds the line's own answers
	stop  context.CancelFunc
	lost  chan struct{} // closed when the connection's reads end
	err   error         // why; written before lost is closed
	wg    sync.WaitGroup
}

// NewLine returns the line over conn, an unwrapped connection whose
// transport screens its answers and hands them to the line's Claim, and
// starts reading it.
func NewLine(conn mcp.Connection) *Line {
	l := &Line{asked: make(chan *jsonrpc.Request, maxAsked), lost: make(chan struct{})}
	l.ctx, l.stop = context.WithCancel(context.Background())
	l.Calls.asked = l.asked
	l.Record(conn)
	l.wg.Go(l.read)
	return l
}

// Lost is closed when the line's connection ended; Err then says why.
func (l *Line) Lost() <-chan struct{} { return l.lost }

// Err returns why the line's connection ended, once Lost is closed.
func (l *Line) Err() error {
	select {
	case <-l.lost:
		return l.err
	default:
		return nil
	}
}

// read reads the line until its connection ends.
func (l *Line) read() {
	for {
		msg, err := l.conn.Read(l.ctx)
		if err != nil {
			if l.ctx.Err() != nil {
				err = errors.New("task line closed")
			}
			l.err = err
			close(l.lost)
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		switch {
		case !ok: // an answer, claimed as it was screened
		case !req.IsCall(): // a notification: progress was taken as it was screened
		case req.Method == "ping":
			l.answer(req.ID, []byte(`{}`), nil)
		case req.Method == MethodElicit && l.take(req):
		default:
			l.answer(req.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "not taken on a task line: " + Truncate(req.Method)})
		}
	}
}

// take holds a question for the call that takes it, unless maxAsked are
// held already.
func (l *Line) take(req *jsonrpc.Request) bool {
	select {
	case l.asked <- req:
		return true
	default:
		return false
	}
}

// answer answers the server's request id, within rawCancelTimeout and the
// line's life.
func (l *Line) answer(id jsonrpc.ID, result []byte, e *jsonrpc.Error) {
	ctx, cancel := context.WithTimeout(l.ctx, rawCancelTimeout)
	defer cancel()
	_ = l.Respond(ctx, id, result, e)
}

// Close closes the line's connection and waits for its reads to end. A
// question no call took is left unanswered: the call ended without it.
func (l *Line) Close() error {
	l.stop()
	err := l.conn.Close()
	l.wg.Wait()
	return err
}
