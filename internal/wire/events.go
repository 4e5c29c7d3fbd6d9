package wire

import (
	"bufio"
	"bytes"
	"io"
)

// eventBuffer is the size of an event stream's read buffer. Lines longer
// than it are read in fragments, so it bounds no message, and screening
// reads as fast through it as through 64 KiB (BenchmarkScreen); it is
// small because a stream may stay open and idle for a connection's whole
// life (subscriptions/listen, the standalone GET), behind the SDK's own
// 4 KiB buffer: each such stream held 64 KiB.
const eventBuffer = 512

// maxFieldBytes bounds an event's fields other than data (event, id,
// retry), which are kept; a longer one is dropped.
const maxFieldBytes = 4 << 10

// An eventReader screens a server-sent event stream, one event at a time,
// holding at most one message of up to MaxMessageBytes. It reads events as
// the SDK does (fields split at the first colon and trimmed, data lines
// joined by newlines, comments and unknown fields ignored), so the message
// it screens is the one the SDK would decode, and the bound counts the
// message, not its framing. A message event's data is screened (a batch
// becomes one event per message); a message over the bound is never held,
// and becomes an error response for its id, or the request's on a POST's
// stream. Each event is written out again in a plain form: its event, id
// and retry fields, then its data, on one line.
type eventReader struct {
	s     *Screen
	src   io.ReadCloser
	br    *bufio.Reader
	reqID func() []byte

	answered func()   // called at the first response passed on (Screen.ResponseAnswered)
	listing  *Listing // of the request the stream answers, if any (WithListing)

	pending        // events ready to be read, in buf
	buf     []byte // storage of out

	// The current event.
	fields  []byte    // its event, id and retry lines, as written out
	name    string    // its event field
	data    []byte    // its data while within the bound
	hasData bool      // it has a data line
	over    *overflow // set once its data is over the bound

	// The current line.
	midLine bool   // a fragment of it was read
	field   []byte // its field name (up to the colon)
	value   []byte // a kept field's value so far
	inData  bool   // it is a data line
	start   int    // where its value starts in data
	skip    bool   // it is ignored
}

// newEventReader screens the event stream read from br (src's).
func (s *Screen) newEventReader(src io.ReadCloser, br *bufio.Reader, reqID func() []byte) *eventReader {
	return &eventReader{s: s, src: src, br: br, reqID: reqID}
}

// Read implements [io.Reader].
func (r *eventReader) Read(p []byte) (int, error) { return r.read(p, r.fill) }

// Close implements [io.Closer].
func (r *eventReader) Close() error { return r.src.Close() }

// fill reads one line fragment, and moves the event to out when it ends.
func (r *eventReader) fill() {
	r.out = r.buf[:0]
	defer func() { r.buf = r.out }()
	frag, err := r.br.ReadSlice('\n')
	ended := err != bufio.ErrBufferFull
	if ended {
		frag = bytes.TrimRight(frag, "\r\n")
	}
	r.fragment(frag, ended)
	switch {
	case err == nil || err == bufio.ErrBufferFull:
	default:
		// The SDK also delivers an event cut short by the end of the stream.
		r.endEvent()
		r.err = err
	}
}

// fragment takes the next piece of a line; ended says it ends the line.
func (r *eventReader) fragment(frag []byte, ended bool) {
	if !r.midLine {
		if ended && len(frag) == 0 {
			r.endEvent() // a blank line
			return
		}
		r.startLine(frag)
		frag = frag[min(len(frag), len(r.field)+1):]
		if r.inData {
			frag = bytes.TrimLeft(frag, " \t")
		}
	}
	r.midLine = !ended
	switch {
	case r.skip:
	case r.inData && r.over != nil:
		r.over.feed(frag)
	case r.inData:
		r.data = append(r.data, frag...)
		if len(r.data) > r.s.opts.MaxMessageBytes+maxFieldBytes {
			r.overflow()
		}
	default:
		if r.value = append(r.value, frag...); len(r.value) > maxFieldBytes {
			r.s.log.Warn("mcpadapter: dropped a server-sent event field over 4 KiB", "field", string(r.field))
			r.skip = true
		}
	}
	if ended {
		r.endLine()
	}
}

// startLine starts a line whose first fragment is frag.
func (r *eventReader) startLine(frag []byte) {
	r.field, r.value, r.skip, r.inData = r.field[:0], r.value[:0], false, false
	name, _, found := bytes.Cut(frag, []byte(":"))
	switch {
	case !found:
		// The SDK fails the stream on such a line; it carries nothing.
		r.s.log.Warn("mcpadapter: skipped a malformed server-sent event line", "line", preview(frag))
		r.field, r.skip = append(r.field, frag...), true
		return
	case len(name) == 0: // a comment
		r.skip = true
	case string(name) == "data":
		r.inData = true
		switch {
		case r.hasData && r.over != nil:
			r.over.feed([]byte{'\n'})
		case r.hasData:
			r.data = append(r.data, '\n')
		}
		r.hasData, r.start = true, len(r.data)
	case string(name) != "event" && string(name) != "id" && string(name) != "retry":
		r.skip = true // ignored by the SDK
	}
	r.field = append(r.field, name...)
}

// endLine completes the current line.
func (r *eventReader) endLine() {
	switch {
	case r.skip:
	case r.inData && r.over == nil:
		// The SDK trims each data value.
		line := bytes.TrimSpace(r.data[r.start:])
		r.data = append(r.data[:r.start], line...)
		if len(r.data) > r.s.opts.MaxMessageBytes {
			r.overflow()
		}
	case r.inData:
	default:
		v := bytes.TrimSpace(r.value)
		if string(r.field) == "event" {
			r.name = string(v)
		}
		r.fields = append(append(append(append(r.fields, r.field...), ": "...), v...), '\n')
	}
}

// overflow stops holding the event's data, which is over the bound.
func (r *eventReader) overflow() {
	r.over = newOverflow(r.data)
	r.data = nil
}

// endEvent moves the current event, screened, to out.
func (r *eventReader) endEvent() {
	fields, name, data, hasData, over := r.fields, r.name, r.data, r.hasData, r.over
	r.fields, r.name, r.data, r.hasData, r.over = nil, "", r.data[:0], false, nil
	if len(fields) == 0 && !hasData {
		return // nothing the SDK would deliver
	}
	isMessage := name == "" || name == "message"
	switch {
	case over != nil && !isMessage:
		r.s.log.Warn("mcpadapter: dropped a server message", "reason", r.s.tooLarge(over.size, false).Text)
	case over != nil:
		out, err := r.s.oversized(over, r.reqID)
		if err != nil {
			r.err = err
			return
		}
		if out != nil { // an error response
			r.out = appendEvent(r.out, fields, out)
			r.answer()
		}
	case !isMessage || len(data) == 0:
		// Not a message (an SSE endpoint, say), or no data (a priming
		// event, SEP-1699): as it came.
		r.out = append(r.out, fields...)
		if hasData {
			for line := range bytes.SplitSeq(data, []byte("\n")) {
				r.out = append(append(append(r.out, "data: "...), line...), '\n')
			}
		}
		r.out = append(r.out, '\n')
	default:
		err := r.s.each(data, r.reqID, r.listing, func(msg []byte, _ bool, rec *record) {
			r.out = appendEvent(r.out, fields, msg)
			if !rec.at[pMethod].ok { // a response
				r.answer()
			}
		})
		if err != nil {
			r.err = err
		}
	}
}

// answer calls answered, once: a response is being passed on.
func (r *eventReader) answer() {
	if f := r.answered; f != nil {
		r.answered = nil
		f()
	}
}

// appendEvent appends to out a message event of fields and msg. JSON has
// newlines only between tokens, where a space does as well, so msg takes
// one line: the framing stays small whatever the message.
func appendEvent(out, fields, msg []byte) []byte {
	out = append(out, fields...)
	out = append(out, "data: "...)
	start := len(out)
	out = append(out, msg...)
	for rest := out[start:]; ; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		rest[i], rest = ' ', rest[i+1:]
	}
	return append(out, "\n\n"...)
}
