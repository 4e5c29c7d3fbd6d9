package mcpadapter

// The adapter's side of the wire screen (internal/wire): each connection's
// screen gets the adapter's size bound, logger and placeholder text, and
// its faults become the adapter's errors.

import (
	"errors"
	"fmt"
	"io"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newScreen returns the screen of one connection to the named server.
func (d *dialer) newScreen(server string) *wire.Screen {
	return wire.New(wire.Options{
		MaxMessageBytes: d.maxMessageBytes(),
		Logger:          d.a.logger.With("server", server),
		Placeholder:     unsupportedText,
		PlaceholderKey:  originalMetaKey,
	})
}

// screenTransport screens the messages of a custom transport t: the lines
// of an *mcp.IOTransport (a copy of it: the caller's value is not changed)
// and of an InMemory server's pipe, the decoded messages of any other. It
// returns nil for nil. go-sdk's HTTP client transports never come here:
// connectCustom gives them the adapter's HTTP transport, which screens
// their answer bodies.
func screenTransport(sc *wire.Screen, t mcp.Transport) mcp.Transport {
	switch t := t.(type) {
	case nil:
		return nil
	case *memoryTransport:
		return &memoryTransport{pipe: t.pipe, screen: sc}
	case *mcp.IOTransport:
		if t == nil || t.Reader == nil {
			return t
		}
		cp := *t
		cp.Reader = readCloser{sc.Lines(t.Reader), t.Reader}
		if cp.MaxLineLength == 0 {
			// The screen bounds each line exactly; the SDK's count, which
			// includes the decoder's read-ahead, must not second-guess it.
			cp.MaxLineLength = -1
		}
		return &cp
	}
	return wrapTransport(t, sc.Conn)
}

// A readCloser reads from one source and closes another.
type readCloser struct {
	*wire.LineReader
	c io.ReadCloser
}

// Close implements [io.Closer].
func (r readCloser) Close() error { return r.c.Close() }

// classifyFault adds [ErrMessageTooLarge] to the chain of err when err
// reports a server message over the size bound.
func classifyFault(err error) error {
	if f := wire.FaultOf(err); f != nil && f.Kind == wire.TooLarge && !errors.Is(err, ErrMessageTooLarge) {
		return fmt.Errorf("%w: %w", ErrMessageTooLarge, err)
	}
	return err
}
