package wire

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"net/http"
)

// Response screens the body of resp, the answer to req on a Streamable
// HTTP or SSE connection, as the SDK reads it: a successful
// application/json body is read up to the size bound and screened as one
// message (a batch, which the SDK cannot decode from a JSON body, becomes
// an event stream of its messages); an event stream is screened event by
// event; any other body fails a read past the bound (the SDK reads error
// bodies whole). A screened body loses its Content-Length.
func (s *Screen) Response(req *http.Request, resp *http.Response) {
	s.ResponseAnswered(req, resp, nil)
}

// ResponseAnswered is Response, and calls answered (when not nil) once
// an event stream has passed on a response, before the SDK can read it:
// on a POST's stream, the answer to the request (one a POST), after which
// the SDK reads the rest of the stream only to reuse the connection.
func (s *Screen) ResponseAnswered(req *http.Request, resp *http.Response, answered func()) {
	if resp == nil || resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	reqID := func() []byte { return requestID(req) }
	switch {
	case ok && mt == "application/json":
		s.jsonBody(resp, reqID, listingOf(req))
	case mt == "text/event-stream":
		r := s.newEventReader(resp.Body, bufio.NewReaderSize(resp.Body, eventBuffer), reqID)
		r.answered, r.listing = answered, listingOf(req)
		resp.Body = r
	default:
		resp.Body = &boundedBody{src: resp.Body, left: int64(s.opts.MaxMessageBytes) + 1, s: s}
		return
	}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
}

// jsonBody reads and screens the application/json body of resp, the
// answer to a request made with listing (WithListing; nil for none). The SDK
// reads such bodies whole anyway.
func (s *Screen) jsonBody(resp *http.Response, reqID func() []byte, listing *Listing) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.opts.MaxMessageBytes)+1))
	var (
		out  []byte
		msgs [][]byte
	)
	switch {
	case err != nil:
		out = data // what was read, then the error
	case len(data) > s.opts.MaxMessageBytes:
		out, _, err = s.replace(new(record), reqID, s.tooLarge(s.opts.MaxMessageBytes, true))
	default:
		err = s.each(data, reqID, listing, func(msg []byte, _ bool, _ *record) { msgs = append(msgs, msg) })
		if isBatch(data) && err == nil {
			// A batch: the same messages as an event stream, one event each.
			for _, m := range msgs {
				out = appendEvent(out, nil, m)
			}
			resp.Header.Set("Content-Type", "text/event-stream")
		} else if len(msgs) == 1 {
			out = msgs[0]
		}
	}
	resp.Body = &readBody{Reader: bytes.NewReader(out), src: resp.Body, err: err}
}

// A readBody serves bytes already read, then err (io.EOF when nil).
type readBody struct {
	*bytes.Reader
	src io.Closer
	err error
}

// Read implements [io.Reader].
func (b *readBody) Read(p []byte) (int, error) {
	n, _ := b.Reader.Read(p)
	if n > 0 || b.Len() > 0 {
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return 0, io.EOF
}

// Close implements [io.Closer].
func (b *readBody) Close() error { return b.src.Close() }

// A boundedBody fails a read past the size bound.
type boundedBody struct {
	src  io.ReadCloser
	left int64
	s    *Screen
}

// Read implements [io.Reader].
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, b.s.tooLarge(b.s.opts.MaxMessageBytes, true)
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
	o := newOverflow(nil)
	buf := make([]byte, 32<<10)
	for !o.sc.complete() && !o.sc.failed() {
		n, err := body.Read(buf)
		o.feed(buf[:n])
		if err != nil {
			break
		}
	}
	if o.rec.at[pMethod].ok {
		return o.rec.usableID()
	}
	return nil
}
