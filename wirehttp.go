package mcpadapter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// httpResponse screens the body of resp, an answer to req on a Streamable
// HTTP or SSE connection: a successful application/json body is read up to
// the size bound and checked as one message; an event stream is checked
// event by event; any other body is cut off at the bound (the SDK reads
// error bodies whole).
func (s *screen) httpResponse(req *http.Request, resp *http.Response) {
	if resp == nil || resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	reqID := func() []byte { return requestID(req) }
	switch {
	case ok && mt == "application/json":
		// Read now (the SDK reads a JSON body whole at once anyway), up to
		// one byte over the bound.
		data, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.limit)+1))
		if events := batchEvents(data); err == nil && len(data) <= s.limit && events != nil {
			// A JSON-RPC batch, which the SDK cannot decode from a JSON
			// body: the same messages as an event stream, one event each.
			resp.Header.Set("Content-Type", "text/event-stream")
			resp.Body = &eventScreen{src: resp.Body, br: bufio.NewReader(bytes.NewReader(events)), s: s, reqID: reqID, lineStart: true}
			break
		}
		resp.Body = &jsonScreen{src: resp.Body, s: s, reqID: reqID, data: data, readErr: err}
	case mt == "text/event-stream":
		resp.Body = &eventScreen{src: resp.Body, br: bufio.NewReaderSize(resp.Body, 64<<10), s: s, reqID: reqID, lineStart: true}
	default:
		resp.Body = &boundedBody{src: resp.Body, left: int64(s.limit) + 1, s: s}
		return
	}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
}

// requestID returns the JSON-RPC id of the request req carries, or nil.
func requestID(req *http.Request) []byte {
	if req == nil || req.Method != http.MethodPost || req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	var e envelope
	buf := make([]byte, 32<<10)
	for !e.done {
		n, err := body.Read(buf)
		e.feed(buf[:n])
		if err != nil {
			break
		}
	}
	if e.method {
		return e.id
	}
	return nil
}

// A jsonScreen is a successful application/json body, read up to the size
// bound (by screen.httpResponse) and screened as one message when first
// read.
type jsonScreen struct {
	src     io.ReadCloser
	s       *screen
	reqID   func() []byte
	data    []byte // the body, up to one byte over the bound
	readErr error  // why reading it stopped early

	r   *bytes.Reader // nil before the first Read
	err error
}

// Read implements [io.Reader].
func (b *jsonScreen) Read(p []byte) (int, error) {
	if b.r == nil {
		data, err := b.load()
		b.r, b.err = bytes.NewReader(data), err
	}
	n, _ := b.r.Read(p)
	if b.r.Len() > 0 || n > 0 {
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return 0, io.EOF
}

// load screens the body.
func (b *jsonScreen) load() ([]byte, error) {
	data := b.data
	if b.readErr != nil {
		return data, b.readErr
	}
	if len(data) > b.s.limit {
		text := b.s.tooLargeText(b.s.limit, true)
		id := b.reqID()
		if id == nil {
			return nil, fmt.Errorf("%w: %s", ErrMessageTooLarge, text)
		}
		b.s.logger.Warn("mcpadapter: replaced a server message by an error", "server", b.s.server, "reason", text)
		return faultResponse(id, faultTooLarge, text), nil
	}
	out, _, err := b.s.message(data, b.reqID)
	return out, err
}

// Close implements [io.Closer].
func (b *jsonScreen) Close() error { return b.src.Close() }

// A boundedBody fails a read past the size bound.
type boundedBody struct {
	src  io.ReadCloser
	left int64
	s    *screen
}

// Read implements [io.Reader].
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("%w: %s", ErrMessageTooLarge, b.s.tooLargeText(b.s.limit, true))
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.src.Read(p)
	b.left -= int64(n)
	return n, err
}

// Close implements [io.Closer].
func (b *boundedBody) Close() error { return b.src.Close() }

// An eventScreen screens a server-sent event stream event by event, holding
// at most one event of up to the size bound: an event within the bound is
// checked by screen.message (its data is the message); a larger one is
// never held, and becomes an error response for its id (or the request's,
// on a POST's stream). Events other than messages pass as they are, or are
// dropped when too large (the SDK ignores them).
type eventScreen struct {
	pending
	src   io.ReadCloser
	br    *bufio.Reader
	s     *screen
	reqID func() []byte

	event     []byte    // the current event's raw lines while within the bound
	size      int       // the current event's raw size
	over      *envelope // set once the event is over the bound: scans its data
	fields    []byte    // the oversized event's short non-data lines (id:, event:)
	name      string    // the event's name ("event:" field)
	lineStart bool      // the next fragment starts a line
	inData    bool      // the current line is a "data:" line
	dataLines int       // data lines of the oversized event so far
	blank     bool      // the current line is empty so far
}

// Read implements [io.Reader].
func (s *eventScreen) Read(p []byte) (int, error) { return s.read(p, s.fill) }

// Close implements [io.Closer].
func (s *eventScreen) Close() error { return s.src.Close() }

// fill reads one line fragment and moves an event to out when it ends.
func (s *eventScreen) fill() {
	frag, err := s.br.ReadSlice('\n')
	if s.lineStart {
		s.blank = true
		s.inData = bytes.HasPrefix(frag, []byte("data:"))
		if name, ok := bytes.CutPrefix(frag, []byte("event:")); ok {
			s.name = string(bytes.TrimSpace(name))
		}
	}
	if len(bytes.TrimRight(frag, "\r\n")) > 0 {
		s.blank = false
	}
	s.size += len(frag)
	switch {
	case s.over != nil:
		s.scan(frag)
	case s.size > s.s.limit:
		// The event just went over the bound: scan what is held, then
		// the rest as it comes.
		s.over = new(envelope)
		held := append(s.event, frag...)
		s.event = nil
		s.lineStart = true
		for line := range bytes.Lines(held) {
			s.inData = bytes.HasPrefix(line, []byte("data:"))
			s.scan(line)
			s.lineStart = bytes.HasSuffix(line, []byte("\n"))
		}
	default:
		s.event = append(s.event, frag...)
	}
	s.lineStart = err == nil
	switch {
	case err == nil:
		if s.blank {
			s.endEvent()
		}
	case err == bufio.ErrBufferFull:
	default:
		// The SDK also delivers an event cut short by the end of the stream.
		s.endEvent()
		s.err = err
	}
}

// scan feeds a fragment of the oversized event to its envelope: the values
// of data lines, joined by newlines; other short lines are kept.
func (s *eventScreen) scan(frag []byte) {
	if !s.inData {
		keep := s.lineStart && bytes.HasSuffix(frag, []byte("\n")) && len(s.fields)+len(frag) < 4096
		if keep && len(bytes.TrimSpace(frag)) > 0 && !bytes.HasPrefix(frag, []byte(":")) { // not the blank line that ends the event, nor a comment
			s.fields = append(s.fields, frag...)
		}
		return
	}
	if s.lineStart {
		if s.dataLines > 0 {
			s.over.feed([]byte{'\n'})
		}
		s.dataLines++
		frag = frag[len("data:"):]
	}
	s.over.feed(frag)
}

// endEvent moves the current event, screened, to out.
func (s *eventScreen) endEvent() {
	event, over, size, name, fields := s.event, s.over, s.size, s.name, s.fields
	s.event, s.over, s.size, s.name, s.fields, s.dataLines = s.event[:0], nil, 0, "", nil, 0
	isMessage := name == "" || name == "message"
	if over != nil {
		text := s.s.tooLargeText(size, false)
		id := over.id
		if id == nil && !over.method {
			id = s.reqID()
		}
		switch {
		case !isMessage || over.method:
			s.s.logger.Warn("mcpadapter: dropped a server message", "server", s.s.server, "reason", text)
		case id != nil:
			s.s.logger.Warn("mcpadapter: replaced a server message by an error", "server", s.s.server, "reason", text)
			s.out = append(s.out, fields...)
			s.out = append(s.out, "data: "...)
			s.out = append(s.out, faultResponse(id, faultTooLarge, text)...)
			s.out = append(s.out, "\n\n"...)
		default:
			s.err = fmt.Errorf("%w: %s, and has no id to answer", ErrMessageTooLarge, text)
		}
		return
	}
	if !isMessage {
		s.out = append(s.out, event...)
		return
	}
	joined := bytes.Join(eventData(event), []byte("\n"))
	if len(joined) == 0 {
		// No data (a priming event, SEP-1699): the SDK skips it.
		s.out = append(s.out, event...)
		return
	}
	if batch := batchMembers(joined); batch != nil {
		// A JSON-RPC batch, which servers of the 2025-03-26 era may send
		// and the SDK cannot decode: one event per message, in order.
		for _, m := range batch {
			s.screenEvent(event, m, false)
		}
		return
	}
	s.screenEvent(event, joined, true)
}

// screenEvent moves to out a message event whose data is msg (all of
// event's data when whole, else one member of its batch), screened: event's
// other lines (event:, id:) with the screened msg, or event as it came when
// msg is all of its data and passes unchanged, or nothing when msg is
// dropped.
func (s *eventScreen) screenEvent(event, msg []byte, whole bool) {
	out, changed, err := s.s.message(msg, s.reqID)
	switch {
	case err != nil || !changed && whole:
		// Unchanged, or beyond repair: the SDK gets it as it came (and
		// fails the connection on what it cannot decode, as before).
		if whole {
			s.out = append(s.out, event...)
			return
		}
		out = msg
	case out == nil:
		// A dropped request or notification: drop the whole event (the
		// legacy SSE client would fail on a message event without data).
		return
	}
	for line := range bytes.Lines(event) {
		if _, ok := dataValue(line); !ok && len(bytes.TrimSpace(line)) > 0 {
			s.out = append(s.out, line...)
		}
	}
	for l := range bytes.Lines(out) {
		s.out = append(s.out, "data: "...)
		s.out = append(s.out, bytes.TrimSuffix(l, []byte("\n"))...)
		s.out = append(s.out, '\n')
	}
	s.out = append(s.out, '\n')
}

// eventData returns the values of the data lines of event.
func eventData(event []byte) [][]byte {
	var data [][]byte
	for line := range bytes.Lines(event) {
		if v, ok := dataValue(line); ok {
			data = append(data, v)
		}
	}
	return data
}

// batchEvents returns the members of the JSON-RPC batch data as an event
// stream, one message event each, or nil when data is not a batch.
func batchEvents(data []byte) []byte {
	members := batchMembers(data)
	if members == nil {
		return nil
	}
	var events bytes.Buffer
	for _, m := range members {
		events.WriteString("data: ")
		if json.Compact(&events, m) != nil {
			return nil
		}
		events.WriteString("\n\n")
	}
	return events.Bytes()
}

// batchMembers returns the members of a JSON-RPC batch (a JSON array of at
// least one value), or nil when data is not one.
func batchMembers(data []byte) []json.RawMessage {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '[' {
		return nil
	}
	var members []json.RawMessage
	if json.Unmarshal(data, &members) != nil || len(members) == 0 {
		return nil
	}
	return members
}
