package mcpadapter

// Lenient decoding of tool results.
//
// The go-sdk decodes a CallToolResult with a closed set of content types and
// fails the whole call on any other ("unrecognized content type \"video\""),
// so one item a newer server invents loses every other item of the result.
// DESIGN says unknown content never loses the whole result, so we rewrite
// such items on the wire, before the SDK decodes them, into a text item:
//
//	{"type":"text","text":"[unsupported content type \"video\"]","_meta":{"mcpadapter/original":<item>}}
//
// newResult turns that item back into a placeholder Block with Raw set.
//
// Two hooks reach the wire. sanitizeTransport wraps the mcp.Connection of
// in-memory, stdio, SSE and custom transports. Streamable HTTP is rewritten
// in the http.RoundTripper instead (sanitizeHTTPResponse): its connection
// must not be wrapped, because the SDK calls an unexported method on it
// after the handshake, and a wrapper would hide it (the session would lose
// its standalone SSE stream and protocol-version header).
//
// The check runs on every response, so it must be cheap: a single scan of
// the bytes, without decoding anything but the "type" strings. Output is
// built only when an item must change, by splicing the original bytes, so
// everything else reaches the SDK byte for byte. The scan matches keys the
// way the SDK's decoder does (exactly, after unescaping, last duplicate
// wins), so it replaces precisely the items the SDK would reject as unknown.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// knownContentType reports whether the SDK decodes content items of type t.
// Nested items (the content of a tool_result item) may not be tool_use or
// tool_result themselves.
func knownContentType(t string, nested bool) bool {
	switch t {
	case "text", "image", "audio", "resource_link", "resource":
		return true
	case "tool_use", "tool_result":
		return !nested
	}
	return false
}

// sanitizeResultJSON replaces the content items of a tools/call result that
// the SDK would reject (an unknown or missing type, or an item that is not an
// object) by text placeholders keeping the original item in _meta. It
// returns raw itself and false when nothing changes, including when raw is
// not valid JSON or has no content array.
func sanitizeResultJSON(raw []byte) ([]byte, bool) {
	out, changed := sanitizeResult(raw)
	if !changed || !json.Valid(raw) {
		return raw, false
	}
	return out, true
}

// sanitizeMessageJSON applies sanitizeResultJSON to the result of a JSON-RPC
// message, or of every message of a batch.
func sanitizeMessageJSON(msg []byte) ([]byte, bool) {
	var (
		out     []byte
		changed bool
	)
	i := skipSpace(msg, 0)
	switch {
	case i < len(msg) && msg[i] == '{':
		out, changed = sanitizeMessage(msg)
	case i < len(msg) && msg[i] == '[':
		out, changed = spliceElements(msg, i, sanitizeMessage)
	}
	if !changed || !json.Valid(msg) {
		return msg, false
	}
	return out, true
}

// sanitizeMessage sanitizes the "result" member of one JSON-RPC message.
func sanitizeMessage(msg []byte) ([]byte, bool) {
	start, end, ok := lastMember(msg, "result")
	if !ok {
		return nil, false
	}
	res, changed := sanitizeResult(msg[start:end])
	if !changed {
		return nil, false
	}
	return splice(msg, start, end, res), true
}

// sanitizeResult is sanitizeResultJSON without the validity check: it
// expects an object and returns false when nothing changes.
func sanitizeResult(res []byte) ([]byte, bool) {
	start, end, ok := lastMember(res, "content")
	if !ok || res[start] != '[' {
		// An absent or null content is fine; anything else the SDK rejects
		// as malformed, which is not ours to repair.
		return nil, false
	}
	arr, changed := spliceElements(res[start:end], 0, func(item []byte) ([]byte, bool) {
		return sanitizeItem(item, false)
	})
	if !changed {
		return nil, false
	}
	return splice(res, start, end, arr), true
}

// sanitizeItem returns the replacement of one content item, or false when
// the SDK accepts it as it is.
func sanitizeItem(item []byte, nested bool) ([]byte, bool) {
	if item[0] != '{' {
		return placeholderItem(item, ""), true
	}
	var (
		typ, content [2]int
		hasType      bool
		hasContent   bool
	)
	_, ok := eachMember(item, 0, func(key []byte, start, end int) {
		switch {
		case keyIs(key, "type"):
			typ, hasType = [2]int{start, end}, true
		case keyIs(key, "content"):
			content, hasContent = [2]int{start, end}, true
		}
	})
	if !ok {
		return nil, false // malformed: the validity check decides
	}
	var t string
	if hasType {
		s, isString := stringValue(item[typ[0]:typ[1]])
		if !isString {
			return placeholderItem(item, ""), true
		}
		t = s
	}
	if !knownContentType(t, nested) {
		return placeholderItem(item, t), true
	}
	if t != "tool_result" || !hasContent {
		return nil, false
	}
	// The SDK checks a tool_result's own content against the nested set.
	c := item[content[0]:content[1]]
	switch {
	case c[0] == '[':
		arr, changed := spliceElements(c, 0, func(item []byte) ([]byte, bool) {
			return sanitizeItem(item, true)
		})
		if !changed {
			return nil, false
		}
		return splice(item, content[0], content[1], arr), true
	case bytes.Equal(c, []byte("null")):
		return nil, false
	default:
		return placeholderItem(item, t), true
	}
}

// placeholderItem returns the text item that stands in for item, a valid
// JSON value when the document is valid.
func placeholderItem(item []byte, typ string) []byte {
	text, _ := json.Marshal(unsupportedText(typ)) // a string always marshals
	out := make([]byte, 0, len(item)+len(text)+64)
	out = append(out, `{"type":"text","text":`...)
	out = append(out, text...)
	out = append(out, `,"_meta":{"`+originalMetaKey+`":`...)
	out = append(out, item...)
	return append(out, "}}"...)
}

// splice returns data with data[start:end] replaced by repl, in a new slice.
func splice(data []byte, start, end int, repl []byte) []byte {
	out := make([]byte, 0, len(data)-(end-start)+len(repl))
	out = append(out, data[:start]...)
	out = append(out, repl...)
	return append(out, data[end:]...)
}

// spliceElements applies fn to every element of the array at data[i] and
// returns data with the elements fn changed replaced, or false when fn
// changed none (or data is not an array).
func spliceElements(data []byte, i int, fn func([]byte) ([]byte, bool)) ([]byte, bool) {
	var (
		out  []byte
		last int
	)
	_, ok := eachElement(data, i, func(start, end int) {
		repl, changed := fn(data[start:end])
		if !changed {
			return
		}
		out = append(out, data[last:start]...)
		out = append(out, repl...)
		last = end
	})
	if !ok || out == nil {
		return nil, false
	}
	return append(out, data[last:]...), true
}

// lastMember returns the bounds of the value of the last member named key of
// the object in data (the one the SDK's decoder keeps).
func lastMember(data []byte, key string) (start, end int, found bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, 0, false
	}
	_, ok := eachMember(data, i, func(k []byte, s, e int) {
		if keyIs(k, key) {
			start, end, found = s, e, true
		}
	})
	return start, end, ok && found
}

// The scanner below walks JSON without decoding it. It never reads out of
// bounds on any input; on malformed input it reports false or returns
// bounds that the caller's json.Valid check then discards.

// skipSpace returns the index of the first non-whitespace byte at or after i.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at data[i]
// (a '"'). It jumps from quote to quote, which keeps long strings such as
// base64 media cheap.
func skipString(data []byte, i int) (int, bool) {
	start := i + 1
	for i = start; ; i++ {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return len(data), false
		}
		i += j
		// The quote is escaped when an odd number of backslashes precedes it.
		k := i
		for k > start && data[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			return i + 1, true
		}
	}
}

// skipValue returns the index just past the value starting at data[i].
func skipValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				end, ok := skipString(data, i)
				if !ok {
					return end, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	default:
		start := i
		for i < len(data) {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i, i > start
			}
			i++
		}
		return i, i > start
	}
}

// eachMember calls fn with the quoted key and the value bounds of every
// member of the object at data[i], and returns the index past the object.
func eachMember(data []byte, i int, fn func(key []byte, start, end int)) (int, bool) {
	i = skipSpace(data, i+1) // past '{'
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for i < len(data) {
		if data[i] != '"' {
			return i, false
		}
		keyEnd, ok := skipString(data, i)
		if !ok {
			return keyEnd, false
		}
		key := data[i:keyEnd]
		i = skipSpace(data, keyEnd)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		start := skipSpace(data, i+1)
		end, ok := skipValue(data, start)
		if !ok {
			return end, false
		}
		fn(key, start, end)
		i = skipSpace(data, end)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
	return i, false
}

// eachElement calls fn with the bounds of every element of the array at
// data[i], and returns the index past the array. It reports false when
// data[i] does not start an array.
func eachElement(data []byte, i int, fn func(start, end int)) (int, bool) {
	if i >= len(data) || data[i] != '[' {
		return i, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for i < len(data) {
		end, ok := skipValue(data, i)
		if !ok {
			return end, false
		}
		fn(i, end)
		i = skipSpace(data, end)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
	return i, false
}

// keyIs reports whether the quoted JSON key equals name after unescaping.
// Like the SDK's decoder, the match is case-sensitive.
func keyIs(quoted []byte, name string) bool {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return len(quoted) == len(name)+2 && string(quoted[1:len(quoted)-1]) == name
	}
	var s string
	return json.Unmarshal(quoted, &s) == nil && s == name
}

// stringValue decodes a JSON string value. null counts as the empty string,
// as it does for the SDK's decoder; any other value reports false.
func stringValue(v []byte) (string, bool) {
	switch {
	case bytes.Equal(v, []byte("null")):
		return "", true
	case len(v) < 2 || v[0] != '"':
		return "", false
	case bytes.IndexByte(v, '\\') < 0:
		return intern(v[1 : len(v)-1]), true
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// intern returns b as a string, without allocating for the content types
// and JSON-RPC member names that the scans of every message read (this
// file's, and wire.go's envelope).
func intern(b []byte) string {
	// A switch on string(b) does not allocate.
	switch string(b) {
	case "text":
		return "text"
	case "image":
		return "image"
	case "audio":
		return "audio"
	case "resource_link":
		return "resource_link"
	case "resource":
		return "resource"
	case "jsonrpc":
		return "jsonrpc"
	case "id":
		return "id"
	case "result":
		return "result"
	case "error":
		return "error"
	case "method":
		return "method"
	case "params":
		return "params"
	}
	return string(b)
}

// sanitizeTransport wraps a client transport so that the results it reads
// are sanitized (see sanitizeResultJSON) before the SDK decodes them. It
// returns a Streamable HTTP transport unchanged (see the file comment; use
// sanitizeHTTPResponse in its HTTP client) and nil for nil. The wrapper is
// for client sessions only: it does not forward the server-side
// [mcp.ProtocolVersionSupporter].
func sanitizeTransport(t mcp.Transport) mcp.Transport {
	switch t.(type) {
	case nil, *mcp.StreamableClientTransport:
		return t
	}
	return wrapTransport(t, func(conn mcp.Connection) mcp.Connection { return &sanitizingConn{Connection: conn} })
}

// sanitizingConn sanitizes the results of the responses it reads. Write,
// Close and SessionID are the embedded Connection's.
type sanitizingConn struct {
	mcp.Connection
}

// Read implements [mcp.Connection].
func (c *sanitizingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && resp != nil && resp.Error == nil {
		if out, changed := sanitizeResultJSON(resp.Result); changed {
			resp.Result = out
		}
	}
	return msg, err
}

// sanitizeHTTPResponse makes resp's body sanitize the JSON-RPC results it
// carries (see sanitizeResultJSON) as it is read: a whole application/json
// body (one message or a batch), or each event of a text/event-stream body,
// which streams as before, one event at a time. Other bodies are left alone.
// Because the new length is not known until the body is read, a wrapped
// body loses its Content-Length (resp.ContentLength becomes -1). It is meant
// for the http.RoundTripper of Streamable HTTP sessions, right after the base
// RoundTripper returns.
func sanitizeHTTPResponse(resp *http.Response) {
	if resp == nil || resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		return
	}
	switch mt {
	case "application/json":
		resp.Body = &jsonBody{src: resp.Body}
	case "text/event-stream":
		resp.Body = &sseBody{src: resp.Body, br: bufio.NewReader(resp.Body), lineBlank: true}
	default:
		return
	}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
}

// jsonBody reads its source whole on the first Read and serves it
// sanitized. The SDK reads such bodies whole anyway.
type jsonBody struct {
	src io.ReadCloser
	r   *bytes.Reader // nil before the first Read
	err error         // the source's read error, returned after r drains
}

// Read implements [io.Reader].
func (b *jsonBody) Read(p []byte) (int, error) {
	if b.r == nil {
		data, err := io.ReadAll(b.src)
		if err == nil {
			data, _ = sanitizeMessageJSON(data)
		}
		b.r, b.err = bytes.NewReader(data), err
	}
	n, _ := b.r.Read(p)
	if b.r.Len() > 0 {
		return n, nil
	}
	if b.err != nil {
		return n, b.err
	}
	return n, io.EOF
}

// Close implements [io.Closer].
func (b *jsonBody) Close() error { return b.src.Close() }

// sseBody sanitizes a server-sent event stream event by event. It holds at
// most one event (up to [mcp.DefaultMaxEventSize]) and releases it as soon
// as its terminating blank line arrives, so a long-lived stream flows as
// before. A larger event passes through unchanged: the SDK's own limit
// deals with it.
//
// Like the SDK, it splits lines at '\n', and an event's data is its "data:"
// values, trimmed, joined with '\n'.
type sseBody struct {
	src io.ReadCloser
	br  *bufio.Reader

	event     []byte // the current event's raw lines, terminators included
	tooLarge  bool   // the current event passes through unbuffered
	lineBlank bool   // the current line so far is empty (or "\r")
	out       []byte // bytes ready for Read
	err       error  // the source's error, returned once out drains
}

// Read implements [io.Reader].
func (s *sseBody) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.fill()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// Close implements [io.Closer].
func (s *sseBody) Close() error { return s.src.Close() }

// fill reads one line fragment from the source, and moves an event to out
// when it is complete.
func (s *sseBody) fill() {
	frag, err := s.br.ReadSlice('\n')
	if len(bytes.TrimRight(frag, "\r\n")) > 0 {
		s.lineBlank = false
	}
	if s.tooLarge {
		s.out = append(s.out[:0], frag...)
	} else {
		s.event = append(s.event, frag...)
		if len(s.event) > mcp.DefaultMaxEventSize {
			s.out = append(s.out[:0], s.event...)
			s.event = nil // do not keep the large buffer
			s.tooLarge = true
		}
	}
	switch {
	case err == nil: // a whole line
		if s.lineBlank {
			s.endEvent()
		}
		s.lineBlank = true
	case err == bufio.ErrBufferFull: // the line goes on
	default:
		// The SDK also delivers an event cut short by the end of the stream.
		s.endEvent()
		s.err = err
	}
}

// endEvent moves the current event, sanitized, to out.
func (s *sseBody) endEvent() {
	if s.tooLarge {
		s.tooLarge = false
		return
	}
	s.out = append(s.out, sanitizeEvent(s.event)...)
	s.event = s.event[:0]
}

// sanitizeEvent returns the raw event with its data sanitized, or event
// itself when nothing changes.
func sanitizeEvent(event []byte) []byte {
	var data [][]byte
	for line := range bytes.Lines(event) {
		if v, ok := dataValue(line); ok {
			data = append(data, v)
		}
	}
	if data == nil {
		return event
	}
	msg, changed := sanitizeMessageJSON(bytes.Join(data, []byte("\n")))
	if !changed {
		return event
	}
	out := make([]byte, 0, len(event)+len(msg))
	wrote := false
	for line := range bytes.Lines(event) {
		if _, ok := dataValue(line); !ok {
			out = append(out, line...)
			continue
		}
		if wrote {
			continue
		}
		// The new data takes the place of the first data line. JSON has
		// newlines only between tokens, so each one starts a data line.
		for l := range bytes.Lines(msg) {
			out = append(out, "data: "...)
			out = append(out, bytes.TrimSuffix(l, []byte("\n"))...)
			out = append(out, '\n')
		}
		wrote = true
	}
	return out
}

// dataValue returns the value of an SSE "data:" line, trimmed as the SDK
// trims it.
func dataValue(line []byte) ([]byte, bool) {
	field, value, found := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
	if !found || string(field) != "data" {
		return nil, false
	}
	return bytes.TrimSpace(value), true
}
