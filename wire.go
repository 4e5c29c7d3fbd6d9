package mcpadapter

// Screening what servers send, before the SDK decodes it.
//
// The go-sdk treats several kinds of bad server output as fatal for the whole
// connection: a message over its size cap, a line that is not JSON, a message
// nesting deeper than its decoder allows, a tool descriptor of the wrong
// shape (which loses the whole tools/list page). One misbehaving answer then
// fails every call in flight and the server stays dead until a re-dial. DESIGN
// asks for the opposite: fail only the call concerned, keep the rest of the
// catalog, never truncate silently, never run out of memory.
//
// So the adapter screens server messages where it can reach the bytes:
//
//   - stdio servers and custom *mcp.IOTransport streams, line by line
//     (lineReader, which the adapter's own stdio connection reads directly:
//     stdio.go), with the size bound applied by us instead of the SDK's
//     fixed 16 MiB cap;
//   - Streamable HTTP and SSE response bodies (screen.httpResponse): a whole
//     application/json body, or each server-sent event;
//   - decoded messages of the remaining transports (in-memory and other
//     custom ones: screenedConn), where only what is left to check after the
//     SDK's own decoding can be checked.
//
// A message that cannot be passed on is replaced, when its JSON-RPC id can
// be recovered, by an error response for that id (faultResponse): the call
// waiting for it fails with a clear error and the connection lives on. Only
// when no id can be recovered does the connection fail, as before, with an
// error saying why. A message that is too large is never buffered whole: the
// id is recovered by a streaming scan of its top level (envelope).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// sdkMaxDepth is the deepest nesting of objects and arrays the go-sdk's
	// decoder accepts in one message (internal/json: defaultMaxDepth).
	sdkMaxDepth = 1000

	// faultCode is the JSON-RPC error code of the error responses the
	// adapter substitutes for server messages it cannot pass on. The kind
	// of fault travels in the error's data (faultData), which is what
	// classifyFault matches.
	faultCode = jsonrpc.CodeInternalError

	// Kinds of substituted messages.
	faultTooLarge  = "messageTooLarge"
	faultMalformed = "malformedMessage"
	faultTooDeep   = "messageTooDeep"

	// maxIDBytes bounds the JSON-RPC id the envelope scanner keeps; real ids
	// are numbers or short strings.
	maxIDBytes = 256
	// maxKeyBytes bounds the top-level keys the envelope scanner reads; the
	// ones it looks for are short.
	maxKeyBytes = 64
)

// A screen checks the messages of one server's connection. It is immutable
// and safe for concurrent use.
type screen struct {
	server string
	limit  int // the message size bound (Config.MaxMessageBytes, resolved)
	logger *slog.Logger
}

// newScreen returns the screen of the named server's connections.
func (a *Adapter) newScreen(server string) *screen {
	return &screen{server: server, limit: a.maxMessageBytes(), logger: a.logger}
}

// faultData is the data of a substituted error response.
type faultData struct {
	Kind string `json:"mcpadapter"`
}

// faultResponse returns the JSON-RPC error response the adapter substitutes
// for a server message of the given kind answering request id (raw JSON).
func faultResponse(id []byte, kind, msg string) []byte {
	m, _ := json.Marshal(msg) // a string always marshals
	out := make([]byte, 0, len(id)+len(m)+128)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"error":{"code":`...)
	out = fmt.Appendf(out, "%d", faultCode)
	out = append(out, `,"message":`...)
	out = append(out, m...)
	out = append(out, `,"data":{"mcpadapter":"`+kind+`"}}}`...)
	return out
}

// faultError is faultResponse as a decoded error, for screenedConn.
func faultError(kind, msg string) *jsonrpc.Error {
	data, _ := json.Marshal(faultData{Kind: kind})
	return &jsonrpc.Error{Code: faultCode, Message: msg, Data: data}
}

// classifyFault adds [ErrMessageTooLarge] to the chain of err when err
// reports a server message over the size bound: one the adapter replaced by
// an error response, or the SDK's own caps (the in-memory transport's line
// cap, the SSE event cap), which it reports as untyped strings.
func classifyFault(err error) error {
	if err == nil || errors.Is(err, ErrMessageTooLarge) {
		return err
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == faultCode && len(we.Data) > 0 {
		var d faultData
		if json.Unmarshal(we.Data, &d) == nil && d.Kind == faultTooLarge {
			return fmt.Errorf("%w: %w", ErrMessageTooLarge, err)
		}
	}
	msg := err.Error()
	if strings.Contains(msg, "exceeded the configured maximum line length") || strings.Contains(msg, "SSE event exceeded") {
		return fmt.Errorf("%w: %w", ErrMessageTooLarge, err)
	}
	return err
}

// tooLargeText describes a message of size bytes (or more, when atLeast)
// over the bound.
func (s *screen) tooLargeText(size int, atLeast bool) string {
	more := ""
	if atLeast {
		more = "more than "
	}
	return fmt.Sprintf("server message of %s%d bytes exceeds the limit of %d bytes (Config.MaxMessageBytes); it was discarded", more, size, s.limit)
}

// message checks one complete message of at most s.limit bytes and returns
// what to pass on: msg itself (changed false), a repaired message, an error
// response for its id, or nil when a request or notification from the
// server must be dropped. It fails only when the message can neither be
// passed on nor attributed to a call; fallbackID, when not nil, supplies
// the id of the request the message answers (an HTTP POST's).
//
// It repairs a tools/list page holding descriptors the SDK cannot decode by
// dropping those (see toolList), and replaces malformed JSON, messages that
// are not JSON-RPC and messages too deep for the SDK's decoder.
func (s *screen) message(msg []byte, fallbackID func() []byte) (out []byte, changed bool, err error) {
	// The common case first: an answer to a call that passes unchanged,
	// recognised in one pass over the top level without allocating. The
	// full checks below cost ~1.6 µs and 6 allocations for a short message,
	// a few per cent of a stdio call (bench_test.go, BenchmarkRatio).
	if plainResponse(msg) {
		return msg, false, nil
	}
	return s.screenMessage(msg, fallbackID)
}

// plainResponse reports whether msg is a message that screen.message
// passes unchanged, of the most common shape: a valid JSON object with
// jsonrpc "2.0", a numeric or string id of at most maxIDBytes, no method,
// and no result holding a "tools" array (a tools/list page, which
// screenMessage checks), nesting within the SDK's bound. It may say false
// for messages that pass too: screenMessage decides those.
func plainResponse(msg []byte) bool {
	i := skipSpace(msg, 0)
	if i == len(msg) || msg[i] != '{' {
		return false
	}
	var version, id []byte
	plain := true
	_, ok := eachMember(msg, i, func(key []byte, start, end int) {
		switch {
		case keyIs(key, "jsonrpc"):
			version = msg[start:end]
		case keyIs(key, "id"):
			id = msg[start:end]
		case keyIs(key, "method"):
			plain = false
		case keyIs(key, "result"):
			if ts, _, hasTools := lastMember(msg[start:end], "tools"); hasTools && msg[start+ts] == '[' {
				plain = false
			}
		}
	})
	// The last duplicate of a member counts, as for the SDK's decoder and
	// the envelope.
	return ok && plain && string(version) == `"2.0"` &&
		len(id) > 0 && len(id) <= maxIDBytes && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') &&
		json.Valid(msg) && !tooDeep(msg, sdkMaxDepth)
}

// screenMessage is screen.message past the fast path of plainResponse.
func (s *screen) screenMessage(msg []byte, fallbackID func() []byte) (out []byte, changed bool, err error) {
	var e envelope
	i := skipSpace(msg, 0)
	if i == len(msg) || msg[i] != '{' && msg[i] != '[' || !json.Valid(msg) {
		reason := "not JSON"
		if i < len(msg) && (msg[i] == '{' || msg[i] == '[') {
			var v json.RawMessage
			if err := json.Unmarshal(msg, &v); err != nil {
				reason = err.Error()
			}
		}
		e.feed(msg)
		return s.replace(&e, fallbackID, faultMalformed, fmt.Sprintf("malformed message from server (%s): %s", reason, preview(msg)))
	}
	if msg[i] == '[' {
		return msg, false, nil // a batch: the SDK decodes it (or refuses it) as a whole
	}
	e.feed(msg)
	if !e.method && !e.response() {
		return s.replace(&e, fallbackID, faultMalformed, "invalid JSON-RPC message from server: "+preview(msg))
	}
	start, end, ok := lastMember(msg, "result")
	if !e.method && ok && msg[start] == '{' {
		// A result sits at depth 2 of the message.
		if res, resChanged := s.toolList(msg[start:end], 2); resChanged {
			msg, changed = splice(msg, start, end, res), true
		}
	}
	if tooDeep(msg, sdkMaxDepth) {
		return s.replace(&e, fallbackID, faultTooDeep, fmt.Sprintf("server message nests deeper than the %d levels the SDK decodes", sdkMaxDepth))
	}
	return msg, changed, nil
}

// replace returns the error response of kind for the message scanned by e,
// or nil for a request or notification (there is no call of ours to fail:
// dropping it is all that can be done), or an error when the message has
// no id and fallbackID has none either.
func (s *screen) replace(e *envelope, fallbackID func() []byte, kind, text string) ([]byte, bool, error) {
	if e.method {
		s.logger.Warn("mcpadapter: dropped a server message", "server", s.server, "reason", text)
		return nil, true, nil
	}
	id := e.id
	if id == nil && fallbackID != nil {
		id = fallbackID()
	}
	if id == nil {
		return nil, false, errors.New(text)
	}
	s.logger.Warn("mcpadapter: replaced a server message by an error", "server", s.server, "reason", text)
	return faultResponse(id, kind, text), true, nil
}

// preview returns the start of msg for an error message.
func preview(msg []byte) string {
	const n = 64
	msg = bytes.TrimSpace(msg)
	if len(msg) > n {
		return fmt.Sprintf("%q...", msg[:n])
	}
	return fmt.Sprintf("%q", msg)
}

// toolList drops from result, when it is a tools/list result, the tool
// descriptors the SDK cannot decode: those whose JSON has the wrong shape
// (a non-string name, say) and those nesting too deep, given that result
// sits at depth outer of its message. Such a descriptor would fail the
// whole page, and with it every other tool of the server. Each dropped tool
// is logged. It returns result itself and false when nothing changes.
func (s *screen) toolList(result []byte, outer int) ([]byte, bool) {
	start, end, ok := lastMember(result, "tools")
	if !ok || result[start] != '[' {
		return result, false
	}
	// The common case, checked at the cost of one decode of the page.
	if !tooDeep(result, sdkMaxDepth-outer) && json.Unmarshal(result, new(mcp.ListToolsResult)) == nil {
		return result, false
	}
	arr := result[start:end]
	var kept [][]byte
	dropped := 0
	eachElement(arr, 0, func(es, ee int) {
		elem := arr[es:ee]
		// The descriptor sits at depth outer+2 (result, tools array).
		reason := ""
		switch {
		case tooDeep(elem, sdkMaxDepth-outer-2):
			reason = fmt.Sprintf("nests deeper than the %d levels the SDK decodes", sdkMaxDepth)
		default:
			if err := json.Unmarshal(elem, new(mcp.Tool)); err != nil {
				reason = err.Error()
			}
		}
		if reason == "" {
			kept = append(kept, elem)
			return
		}
		dropped++
		name := ""
		if ns, ne, ok := lastMember(elem, "name"); ok {
			name, _ = stringValue(elem[ns:ne])
		}
		s.logger.Warn("mcpadapter: dropped a tool the SDK cannot decode", "server", s.server, "tool", name, "reason", reason)
	})
	if dropped == 0 {
		return result, false
	}
	var b bytes.Buffer
	b.Grow(len(arr))
	b.WriteByte('[')
	for i, elem := range kept {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(elem)
	}
	b.WriteByte(']')
	return splice(result, start, end, b.Bytes()), true
}

// A lineReader is the screened output of a stdio server (or of any
// newline-delimited JSON stream), as the SDK reads it: each line of at most
// s.limit bytes is checked by screen.message; a longer one is never buffered
// whole, and becomes an error response for its id. Lines that are not JSON
// at all (a program printing a banner on stdout, say) are logged and
// skipped, as the TypeScript and Python SDKs do.
type lineReader struct {
	pending
	src *bufio.Reader
	c   io.Closer
	s   *screen

	line []byte // the current line while it is within the limit
}

// pending is the read side of the screening readers: bytes ready for
// Read, then the source's error.
type pending struct {
	out []byte // bytes ready for Read
	err error  // the source's error, returned once out drains
}

// read serves p from out, calling fill to produce more until out has bytes
// or err is set.
func (r *pending) read(p []byte, fill func()) (int, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		fill()
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// newLineReader screens src, which Close closes when closer is not nil.
func (s *screen) newLineReader(src io.Reader, closer io.Closer) *lineReader {
	return &lineReader{src: bufio.NewReaderSize(src, 64<<10), c: closer, s: s}
}

// Read implements [io.Reader].
func (r *lineReader) Read(p []byte) (int, error) { return r.read(p, r.next) }

// nextLine returns the next screened line, without its newline: a JSON
// value, never empty. It is valid until the next call.
func (r *lineReader) nextLine() ([]byte, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			return nil, r.err
		}
		r.next()
	}
	line := r.out[:len(r.out)-1]
	r.out = r.out[:0]
	return line, nil
}

// Close implements [io.Closer].
func (r *lineReader) Close() error {
	if r.c == nil {
		return nil
	}
	return r.c.Close()
}

// next reads one line from the source into out, screened.
func (r *lineReader) next() {
	r.line = r.line[:0]
	var (
		over *envelope // set once the line is over the limit
		size int
	)
	for {
		frag, err := r.src.ReadSlice('\n')
		size += len(frag)
		if over == nil {
			r.line = append(r.line, frag...)
			if len(bytes.TrimRight(r.line, "\r\n")) > r.s.limit {
				over = new(envelope)
				over.feed(r.line)
				r.line = nil // do not keep a buffer of the limit's size around
			}
		} else {
			over.feed(frag)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			r.err = err
			if err != io.EOF || size == 0 {
				return // a broken stream: its last line is lost with it
			}
		}
		break
	}
	if over != nil {
		r.oversized(over, size)
		return
	}
	msg := bytes.TrimSpace(r.line)
	if len(msg) == 0 {
		return
	}
	if msg[0] != '{' && msg[0] != '[' {
		r.s.logger.Warn("mcpadapter: skipped server output that is not JSON-RPC", "server", r.s.server, "line", preview(msg))
		return
	}
	out, _, err := r.s.message(msg, nil)
	if err != nil {
		r.fail(err)
		return
	}
	if out != nil {
		r.out = append(append(r.out[:0], out...), '\n')
	}
}

// oversized answers a line of size bytes over the limit, scanned by e.
func (r *lineReader) oversized(e *envelope, size int) {
	text := r.s.tooLargeText(size, false)
	switch {
	case e.method:
		r.s.logger.Warn("mcpadapter: dropped a server message", "server", r.s.server, "reason", text)
	case e.id != nil:
		r.s.logger.Warn("mcpadapter: replaced a server message by an error", "server", r.s.server, "reason", text)
		r.out = append(faultResponse(e.id, faultTooLarge, text), '\n')
	default:
		r.fail(fmt.Errorf("%w: %s, and has no id to answer", ErrMessageTooLarge, text))
	}
}

// fail ends the stream with err: the connection fails with it.
func (r *lineReader) fail(err error) {
	r.out = nil
	r.err = err
}

// screenTransport screens the messages of a custom transport t: the lines
// of an *mcp.IOTransport (a copy of it: the caller's value is not changed),
// the decoded messages of any other transport but Streamable HTTP, whose
// bodies are screened in its HTTP client instead. It returns nil for nil.
func (s *screen) transport(t mcp.Transport) mcp.Transport {
	switch t := t.(type) {
	case nil:
		return nil
	case *mcp.StreamableClientTransport, *mcp.SSEClientTransport:
		return t
	case *mcp.IOTransport:
		if t == nil || t.Reader == nil {
			return t
		}
		cp := *t
		cp.Reader = s.newLineReader(t.Reader, t.Reader)
		if cp.MaxLineLength == 0 {
			// The screen bounds each line exactly; the SDK's count, which
			// includes the decoder's read-ahead, must not second-guess it.
			cp.MaxLineLength = -1
		}
		return &cp
	}
	return wrapTransport(t, func(conn mcp.Connection) mcp.Connection { return &screenedConn{Connection: conn, s: s} })
}

// A screenedConn checks the responses it reads after the SDK decoded their
// envelope (the transport's own caps apply first): a result over the size
// bound becomes an error, and a tools/list page loses the descriptors the
// SDK cannot decode.
type screenedConn struct {
	mcp.Connection
	s *screen
}

// Read implements [mcp.Connection].
func (c *screenedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp == nil || resp.Error != nil {
		return msg, err
	}
	if len(resp.Result) > c.s.limit {
		text := c.s.tooLargeText(len(resp.Result), false)
		c.s.logger.Warn("mcpadapter: replaced a server message by an error", "server", c.s.server, "reason", text)
		resp.Result, resp.Error = nil, faultError(faultTooLarge, text)
		return msg, err
	}
	if out, changed := c.s.toolList(resp.Result, 1); changed {
		resp.Result = out
	}
	return msg, err
}
