package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"math/bits"
	"strings"
	"sync"
)

// An overflow follows a message over the size bound as its bytes stream
// by, without keeping them, to learn its id.
type overflow struct {
	rec  record
	sc   scanner
	size int // the message's bytes so far
}

// newOverflow starts following a message whose first bytes are held.
func newOverflow(held []byte) *overflow {
	o := &overflow{rec: record{topOnly: true, streaming: true}}
	o.sc.init(&o.rec, 0)
	o.feed(held)
	return o
}

// feed scans the next bytes of the message.
func (o *overflow) feed(p []byte) {
	o.size += len(p)
	o.sc.feed(p)
}

// oversized returns what stands for the message o followed: nothing (a
// request or notification), an error response for its id (or fallbackID's),
// or, without either, the fault that ends the stream.
func (s *Screen) oversized(o *overflow, fallbackID func() []byte) ([]byte, error) {
	f := s.tooLarge(o.size, false)
	out, _, err := s.replace(&o.rec, fallbackID, f)
	if err != nil {
		return nil, &Fault{Kind: TooLarge, Text: f.Text + ", and has no id to answer"}
	}
	return out, nil
}

// A LineReader is the screened output of a stdio server, or of any stream
// of newline-delimited JSON-RPC messages, as the SDK reads it: one message a
// line, each line of at most MaxMessageBytes screened (a batch becomes its
// messages, one a line); a longer one is never held whole, and becomes an
// error response for its id. Lines that are not JSON at all (a program
// printing a banner on stdout) are logged and skipped, as the TypeScript and
// Python SDKs do.
type LineReader struct {
	s   *Screen
	src io.Reader

	pending        // screened lines, in in or in buf
	in      []byte // what was read of src; in[start:] is not split into lines yet
	start   int
	srcErr  error    // why src ended
	buf     []byte   // storage of the lines the screen changed or split
	own     []byte   // in's storage between lines: readChunk bytes
	long    *[]byte  // in's storage while a longer line is read, borrowed
	hint    int      // the bytes read into the last borrowed storage, up to maxHint
	env     Envelope // of the line in out, when the screen passed it on as it came
	hasEnv  bool     // env is known
}

// An Envelope is what the screen learned of a message's top-level members,
// matched by name as the SDK's decoder matches them: the raw JSON of each,
// nil when absent. It is known only of a message the screen passed on as
// it came, whose id, if any, is a scalar of at most 256 bytes, and none of
// whose method, params, result or error members came twice (the SDK's
// decoder keeps the last of the others, but merges two error objects).
type Envelope struct {
	Version, ID, Method, Params, Result, Error []byte
}

// envelope returns the Envelope of msg, whose scan is rec, and whether it
// is known.
func (r *record) envelope(msg []byte) (Envelope, bool) {
	if r.again || r.idKind != 0 && r.id == nil {
		return Envelope{}, false
	}
	raw := func(p place) []byte {
		if v := r.at[p]; v.ok {
			return v.raw(msg)
		}
		return nil
	}
	return Envelope{Version: r.version, ID: r.id, Method: raw(pMethod), Params: raw(pParams), Result: raw(pResult), Error: raw(pError)}, true
}

// readChunk is the least a LineReader asks of its source at once, and the
// size of the storage it keeps of its own: an idle connection holds 512
// bytes, not the 64 KiB a pipe can deliver at once, nor the longest line
// it ever read. A longer line is read into storage borrowed from
// longBuffers, which doubles while the line fills it, and goes back once
// the line has been handed out and every byte read is used.
const readChunk = 512

// maxHint bounds the storage a LineReader first borrows for a longer line
// (what the last one took): past it, the storage doubles as the line
// comes. A line of 16 MiB, once, does not make the next line of a few KiB
// take as much, which the pool may no longer hold when the reader was
// idle meanwhile.
const maxHint = 1 << 20

// longBuffers hold the storage of lines longer than readChunk, by size
// (pool i: 1<<i bytes), shared by every LineReader: a stream of long lines
// reuses the same storage, and an idle one holds none.
var longBuffers [bits.UintSize]sync.Pool

// borrow returns storage of at least n bytes (a power of two).
func borrow(n int) *[]byte {
	i := bits.Len(uint(n - 1))
	if p, _ := longBuffers[i].Get().(*[]byte); p != nil {
		return p
	}
	b := make([]byte, 1<<i)
	return &b
}

// giveBack returns storage from borrow.
func giveBack(p *[]byte) { longBuffers[bits.Len(uint(cap(*p)))-1].Put(p) }

// pending is the read side of the screen's readers: screened bytes ready
// to be read, then the error that ended the stream (the source's, or the
// screen's).
type pending struct {
	out []byte
	err error
}

// wait calls fill until there are bytes to read, and returns the stream's
// error when there are none.
func (q *pending) wait(fill func()) error {
	for len(q.out) == 0 {
		if q.err != nil {
			return q.err
		}
		fill()
	}
	return nil
}

// read serves p from the bytes ready, calling fill for more.
func (q *pending) read(p []byte, fill func()) (int, error) {
	if err := q.wait(fill); err != nil {
		return 0, err
	}
	n := copy(p, q.out)
	q.out = q.out[n:]
	return n, nil
}

// Lines returns the screened messages of src.
func (s *Screen) Lines(src io.Reader) *LineReader {
	return &LineReader{s: s, src: src}
}

// Read implements [io.Reader].
func (r *LineReader) Read(p []byte) (int, error) { return r.read(p, r.next) }

// Next returns the next screened message, without its newline: a JSON
// object, never empty. It is valid until the next call, as is its
// Envelope.
func (r *LineReader) Next() ([]byte, error) {
	if err := r.wait(r.next); err != nil {
		return nil, err
	}
	i := bytes.IndexByte(r.out, '\n')
	msg := r.out[:i]
	r.out = r.out[i+1:]
	return msg, nil
}

// Envelope returns the Envelope of the message Next returned last, and
// whether the screen knows it.
func (r *LineReader) Envelope() (Envelope, bool) { return r.env, r.hasEnv }

// next reads one line of the source into out, screened. Lines are read
// straight into in, which grows to the longest line within the bound; a
// longer one is fed to an overflow as it comes, and never held.
func (r *LineReader) next() {
	r.out, r.buf, r.hasEnv = nil, r.buf[:0], false
	if r.start == len(r.in) {
		r.settle()
	}
	var over *overflow // set once the line is over the bound
	scanned := r.start // in[start:scanned] holds no newline
	for {
		if i := bytes.IndexByte(r.in[scanned:], '\n'); i >= 0 {
			line := r.in[r.start : scanned+i]
			r.start = scanned + i + 1
			r.end(line, over)
			return
		}
		rest := r.in[r.start:]
		if over == nil && len(rest) > r.s.opts.MaxMessageBytes+1 { // +1: a CR may end it
			over = newOverflow(nil)
		}
		if over != nil {
			over.feed(rest)
			rest = rest[:0]
		}
		if r.srcErr != nil {
			r.in, r.start, r.err = r.in[:0], 0, r.srcErr
			switch {
			case r.srcErr != io.EOF:
				// A broken stream: its last line is lost with it.
			case over != nil || len(rest) > 0:
				r.end(rest, over)
			}
			return
		}
		// Keep what is left of the line at the start, and read more.
		r.room(rest)
		n := len(r.in)
		r.start, scanned = 0, n
		m, err := r.src.Read(r.in[n:cap(r.in)])
		r.in, r.srcErr = r.in[:n+m], err
	}
}

// settle makes the reader's own storage in's again, every byte read being
// used: the storage of a longer line goes back.
func (r *LineReader) settle() {
	if r.long != nil {
		r.hint = min(len(r.in), maxHint)
		giveBack(r.long)
		r.long = nil
	}
	if r.own == nil {
		r.own = make([]byte, readChunk)
	}
	r.in, r.start = r.own[:0], 0
}

// room makes rest, the start of a line, in, with readChunk bytes or more
// free after it: in its storage, or in storage borrowed twice as long, or
// as long as the last longer line took (hint), so that a stream of lines
// of one size does not copy each line as its storage doubles.
func (r *LineReader) room(rest []byte) {
	if cap(r.in)-len(rest) >= readChunk {
		r.in = r.in[:copy(r.in[:cap(r.in)], rest)]
		return
	}
	p := borrow(max(2*cap(r.in), len(rest)+readChunk, r.hint+readChunk))
	r.in = append((*p)[:0], rest...)
	if r.long != nil {
		giveBack(r.long)
	}
	r.long = p
}

// end screens the last bytes of a line, which over follows when the line
// went over the bound before them. A line ending at the end of the stream,
// without a newline, is held to the same bound as any other.
func (r *LineReader) end(last []byte, over *overflow) {
	if over == nil && len(bytes.TrimRight(last, "\r")) <= r.s.opts.MaxMessageBytes {
		r.line(last)
		return
	}
	if over == nil {
		over = newOverflow(nil)
	}
	over.feed(last)
	out, err := r.s.oversized(over, nil)
	r.emit(out, err)
}

// line screens one line within the bound into out.
func (r *LineReader) line(line []byte) {
	msg := bytes.TrimSpace(line)
	if len(msg) == 0 {
		return
	}
	if !messageStart(msg) {
		r.s.log.Warn("mcpadapter: skipped server output that is not JSON-RPC", "line", preview(msg))
		return
	}
	err := r.s.each(msg, nil, nil, func(out []byte, changed bool, rec *record) {
		if !changed {
			// The line itself, which nothing follows: its end of line
			// takes the place of what ended it, without a copy.
			r.out = append(out, '\n')
			r.env, r.hasEnv = rec.envelope(out)
			return
		}
		r.emit(out, nil)
	})
	if err != nil && stray(msg) {
		r.s.log.Warn("mcpadapter: skipped server output that is not JSON-RPC", "line", preview(msg))
		return
	}
	if err != nil {
		r.emit(nil, err)
	}
}

// envelopeKeys are the members of a JSON-RPC message.
var envelopeKeys = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// stray reports whether msg, a line the screen could not pass on, is a
// JSON object none of whose members is one of JSON-RPC's, whatever their
// case (such as a log record a server printed on stdout): it answers no
// call, and is skipped like a banner. Anything else that fails (broken
// JSON, which may be a broken answer) still ends the stream, so that no
// call waits for an answer that came broken.
func stray(msg []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m == nil {
		return false
	}
	for k := range m {
		for _, e := range envelopeKeys {
			if strings.EqualFold(k, e) {
				return false
			}
		}
	}
	return true
}

// messageStart reports whether msg, a line that is not blank, starts as
// a JSON-RPC message, whole or broken, does: an object, or a batch (an
// array of objects, or empty). Other lines are a server's stray output
// (a banner, a log line such as "[INFO] started"), which cannot answer a
// call.
func messageStart(msg []byte) bool {
	switch msg[0] {
	case '{':
		return true
	case '[':
		rest := bytes.TrimLeft(msg[1:], " \t\r")
		return len(rest) == 0 || rest[0] == '{' || rest[0] == ']'
	}
	return false
}

// emit queues msg, when not nil, or ends the stream with err.
func (r *LineReader) emit(msg []byte, err error) {
	if err != nil {
		r.out, r.err = nil, err
		return
	}
	if msg != nil {
		r.buf = append(append(r.buf, msg...), '\n')
		r.out = r.buf
	}
}
