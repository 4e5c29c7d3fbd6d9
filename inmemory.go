package mcpadapter

import (
	"context"
	"net"
	"sync"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// InMemory returns a Server that runs srv in this process: each dial
// connects a new session of srv to the adapter over an in-process pipe,
// so a restart after [Adapter.Close] gets a fresh session. Set other
// fields (Mode, DefaultToolTimeout, ...) on the result as for any
// Server. More in docs/reference.md, "InMemory".
func InMemory(srv *mcp.Server) Server {
	return Server{Transport: func(ctx context.Context) (mcp.Transport, error) {
		serverEnd, clientEnd := net.Pipe()
		if _, err := srv.Connect(context.WithoutCancel(ctx), &mcp.IOTransport{Reader: serverEnd, Writer: serverEnd}, nil); err != nil {
			clientEnd.Close()
			return nil, err
		}
		return &memoryTransport{pipe: clientEnd}, nil
	}}
}

// A memoryTransport is the client end of an [InMemory] server's pipe.
// screenTransport gives it the connection's screen.
type memoryTransport struct {
	pipe   net.Conn
	screen *wire.Screen // nil outside an Adapter: a screen with the default bound
}

// Connect implements [mcp.Transport].
func (t *memoryTransport) Connect(context.Context) (mcp.Connection, error) {
	sc := t.screen
	if sc == nil {
		sc = wire.New(wire.Options{MaxMessageBytes: defaultMaxMessageBytes})
	}
	return &memoryConn{lines: sc.Lines(t.pipe), pipe: t.pipe, closed: make(chan struct{})}, nil
}

// A memoryConn is the [mcp.Connection] of an [InMemory] server: one
// JSON-RPC message per line each way over the pipe, read through the
// screen and decoded as a stdio server's (internal/stdio). As
// with go-sdk's in-memory transport, a write is not bounded by its
// context once begun: the server's end reads continuously, and a write
// cut short would tear a message.
type memoryConn struct {
	lines *wire.LineReader // Read's alone
	pipe  net.Conn         // net.Pipe: writes are whole and in order

	closeOnce sync.Once
	closed    chan struct{}
}

// SessionID implements [mcp.Connection]: a pipe has no session id.
func (c *memoryConn) SessionID() string { return "" }

// Read implements [mcp.Connection]. It returns io.EOF once the connection
// is closed, at either end.
func (c *memoryConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	return stdio.ReadLine(ctx, c.lines, c.closed, nil)
}

// Write implements [mcp.Connection].
func (c *memoryConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	line, err := stdio.EncodeLine(ctx, msg)
	if err != nil {
		return err
	}
	_, err = c.pipe.Write(line)
	return err
}

// Close implements [mcp.Connection]: the server's end reads io.EOF, and a
// Read in progress returns io.EOF.
func (c *memoryConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.pipe.Close()
}
