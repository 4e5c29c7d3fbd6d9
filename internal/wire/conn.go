package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Conn screens the responses read from c after the SDK decoded their
// envelope, for transports whose bytes the screen cannot reach (in-memory
// and custom ones): the transport's own caps apply first, then
// [Screen.Result] checks each result. Progress notifications go to
// Options.Progress as they are read. Write, Close and SessionID are c's.
func (s *Screen) Conn(c mcp.Connection) mcp.Connection { return &screenedConn{Connection: c, s: s} }

// A screenedConn is the Connection of [Screen.Conn].
type screenedConn struct {
	mcp.Connection
	s *Screen
}

// Read implements [mcp.Connection].
func (c *screenedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	for err == nil && isCompleteWithoutParams(msg) {
		c.s.log.Warn("mcpadapter: dropped a server message", "reason", completeWithoutParams.Text)
		msg, err = c.Connection.Read(ctx)
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req != nil && !req.IsCall() && req.Method == methodProgress && len(req.Params) > 0 && c.s.opts.Progress != nil {
		c.s.opts.Progress(req.Params)
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp == nil {
		return msg, err
	}
	var id []byte
	if s, ok := resp.ID.Raw().(string); ok && c.s.opts.Claim != nil && strings.HasPrefix(s, c.s.opts.ClaimPrefix) {
		id, _ = json.Marshal(s)
	}
	if resp.Error == nil && resp.Result != nil {
		out, ferr := c.s.Result(resp.Result, id)
		if f, ok := ferr.(*Fault); ok {
			resp.Result, resp.Error = nil, f.rpcError()
		} else {
			resp.Result = out
		}
	}
	if id != nil {
		if b, err := jsonrpc.EncodeMessage(resp); err == nil {
			c.s.opts.Claim(b)
		}
	}
	return msg, err
}

// isCompleteWithoutParams reports whether msg is a
// notifications/elicitation/complete without params, missing or null,
// which the screen drops (methodElicitationComplete).
func isCompleteWithoutParams(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	return ok && req != nil && !req.IsCall() && req.Method == methodElicitationComplete && (len(req.Params) == 0 || string(bytes.TrimSpace(req.Params)) == "null")
}

// IO returns a copy of t whose Reader passes through [Screen.Lines] (and
// closes t's Reader), its MaxLineLength -1 when t left it 0: the screen
// bounds each line exactly, and the SDK's count, which includes the
// decoder's read-ahead, must not second-guess it. It returns t itself
// when t or its Reader is nil; the caller's value is never changed.
func (s *Screen) IO(t *mcp.IOTransport) *mcp.IOTransport {
	if t == nil || t.Reader == nil {
		return t
	}
	cp := *t
	cp.Reader = readCloser{s.Lines(t.Reader), t.Reader}
	if cp.MaxLineLength == 0 {
		cp.MaxLineLength = -1
	}
	return &cp
}

// A readCloser reads from one source and closes another.
type readCloser struct {
	*LineReader
	c io.ReadCloser
}

// Close implements [io.Closer].
func (r readCloser) Close() error { return r.c.Close() }
