package wire

// The one JSON scanner of the package. It validates a JSON text as its
// bytes stream by, in one pass, and tells its recorder (record.go) where the
// values of the first few levels start and end. Every byte is examined a
// bounded number of times (once, but for the bytes of short keys and
// envelope scalars, which are also copied), whatever the input: strings of
// escapes, deep nesting and huge values all cost time linear in their size.
// It accepts exactly what encoding/json's Valid accepts (the differential
// fuzz target FuzzScanValid holds it to that).

import "encoding/binary"

// maxTrack is the deepest value the recorder is told about: a nested
// content item's type sits at depth 6 of a message.
const maxTrack = 6

// maxCapture bounds the bytes kept of a key or of a top-level scalar (an id,
// the version); the ones the screen looks for are short.
const maxCapture = 256

// Scanner states.
type state uint8

const (
	stValue        state = iota // a value must follow
	stValueOrClose              // after '[': a value or ']'
	stKeyOrClose                // after '{': a key or '}'
	stKey                       // after ',' in an object: a key
	stColon                     // after a key
	stAfter                     // after a value: ',' or a closer
	stString                    // inside a string
	stEscape                    // after a backslash in a string
	stHex                       // inside \uXXXX (hexLeft digits to go)
	stNeg                       // after '-'
	stZero                      // after a leading 0
	stInt                       // in the integer digits
	stDot                       // after '.'
	stFrac                      // in the fraction digits
	stExp                       // after 'e'
	stExpSign                   // after 'e+' or 'e-'
	stExpDigits                 // in the exponent digits
	stLiteral                   // inside true, false or null
	stEnd                       // the value ended: only whitespace may follow
	stError                     // not JSON
)

// safe marks the bytes a string may hold as they are.
var safe = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// shortEscape marks the bytes that complete a two-byte escape.
var shortEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// A scanner checks one JSON value fed to it in pieces. The zero value is not
// ready: see init.
type scanner struct {
	rec *record // told about the values of the first track levels

	off     int   // offset of the next byte
	state   state // where the scan is
	track   uint8 // maxTrack, or 1 for a record kept to the top level
	depth   int   // containers open
	floor   int   // the depth of the value scanned (1 for a result alone)
	objects []uint64
	deepest int // the most containers open at once, since the recorder last reset it

	isKey   bool   // the string being scanned is a key
	hexLeft int    // digits left in \uXXXX
	literal string // the rest of the literal being scanned

	whole     bool   // the input comes in one piece: keys and scalars are sliced from it
	cur       []byte // the piece being scanned
	curBase   int    // its offset
	keyStart  int    // where the key being scanned starts
	capturing bool   // the current key or scalar is kept (in pieces only)
	capture   []byte // its bytes, up to maxCapture
	long      bool   // it was longer

	start [maxTrack + 1]int  // where the open value at each tracked depth started
	kind  [maxTrack + 1]byte // its kind: its first byte, '0' for numbers

	err    string // why the input is not JSON
	errOff int    // where
}

// init readies s to scan one value at depth floor: 0 for a whole message,
// 1 for a result alone, as if it were the "result" member of a message.
// It reports to rec.
func (s *scanner) init(rec *record, floor int) {
	*s = scanner{rec: rec, track: maxTrack, floor: floor, whole: !rec.streaming, capture: s.capture[:0]}
	if rec.topOnly {
		s.track = 1
	}
	if floor == 1 {
		s.push(true)
		s.kind[0] = '{'
		rec.places[0], rec.keys[1] = pTop, pResult
	}
}

// failed reports whether the input is not JSON.
func (s *scanner) failed() bool { return s.state == stError }

// complete reports whether a whole value was scanned (it may not be
// followed by anything but whitespace).
func (s *scanner) complete() bool { return s.state == stEnd }

// fail records a syntax error at offset off.
func (s *scanner) fail(off int, msg string) {
	if s.state != stError {
		s.state, s.err, s.errOff = stError, msg, off
	}
}

// push records a container opened at depth s.depth+1.
func (s *scanner) push(object bool) {
	i := s.depth
	for len(s.objects)*64 <= i {
		s.objects = append(s.objects, 0)
	}
	if object {
		s.objects[i/64] |= 1 << (i % 64)
	} else {
		s.objects[i/64] &^= 1 << (i % 64)
	}
	s.depth++
	s.deepest = max(s.deepest, s.depth)
}

// inObject reports whether the innermost open container is an object.
func (s *scanner) inObject() bool {
	i := s.depth - 1
	return s.objects[i/64]&(1<<(i%64)) != 0
}

// beginValue records the start of a value whose first byte c is at off.
func (s *scanner) beginValue(c byte, off int) {
	d := s.depth
	if d > int(s.track) {
		return
	}
	kind := c
	if c == '-' || c >= '0' && c <= '9' {
		kind = '0'
	}
	s.start[d], s.kind[d] = off, kind
	s.rec.begin(s, d, kind, off)
	if d == 1 && kind != '{' && kind != '[' {
		s.capturing, s.long, s.capture = !s.whole, false, s.capture[:0]
	}
}

// endValue records the end of the value at depth s.depth, just before off.
func (s *scanner) endValue(off int) {
	d := s.depth
	if d <= int(s.track) {
		s.rec.end(s, d, s.kind[d], s.start[d], off)
		s.capturing = false
	}
	if d == s.floor {
		s.state = stEnd
		return
	}
	s.state = stAfter
}

// keep adds p to the captured bytes.
func (s *scanner) keep(p []byte) {
	if room := maxCapture - len(s.capture); len(p) > room {
		p, s.long = p[:room], true
	}
	s.capture = append(s.capture, p...)
}

// raw returns the bytes of the key or scalar at [start, end), and whether
// it is longer than maxCapture (then, in pieces, only its start is kept).
func (s *scanner) raw(start, end int) ([]byte, bool) {
	if s.whole {
		return s.cur[start-s.curBase : end-s.curBase], end-start > maxCapture
	}
	return s.capture, s.long
}

// take keeps p[i] when capturing, and returns the index past it.
func (s *scanner) take(p []byte, i int) int {
	if s.capturing {
		s.keep(p[i : i+1])
	}
	return i + 1
}

// feed scans the next bytes of the input.
func (s *scanner) feed(p []byte) {
	base := s.off
	s.off += len(p)
	s.cur, s.curBase = p, base
	for i := 0; i < len(p); {
		c := p[i]
		switch s.state {
		case stString:
			j := skipSafe(p, i)
			for j < len(p) {
				if safe[p[j]] {
					j++
					continue
				}
				if p[j] == '\\' && j+1 < len(p) && shortEscape[p[j+1]] {
					j += 2
					continue
				}
				break
			}
			if s.capturing {
				s.keep(p[i:j])
			}
			if i = j; i == len(p) {
				return
			}
			c = p[i]
			i = s.take(p, i)
			switch {
			case c == '"':
				if s.isKey {
					s.isKey = false
					s.state = stColon
					if s.depth <= int(s.track) {
						s.capturing = false
						quoted, long := s.raw(s.keyStart, base+i)
						s.rec.key(s, s.depth, quoted, long)
					}
				} else {
					s.endValue(base + i)
				}
			case c == '\\':
				s.state = stEscape
			default:
				s.fail(base+i-1, "invalid character in string")
			}
			continue
		case stEscape:
			i = s.take(p, i)
			switch {
			case shortEscape[c]:
				s.state = stString
			case c == 'u':
				s.state, s.hexLeft = stHex, 4
			default:
				s.fail(base+i-1, "invalid escape in string")
			}
			continue
		case stHex:
			i = s.take(p, i)
			if !isHex(c) {
				s.fail(base+i-1, "invalid \\u escape in string")
				continue
			}
			if s.hexLeft--; s.hexLeft == 0 {
				s.state = stString
			}
			continue
		case stLiteral:
			if c != s.literal[0] {
				s.fail(base+i, "invalid literal")
				continue
			}
			i = s.take(p, i)
			if s.literal = s.literal[1:]; s.literal == "" {
				s.endValue(base + i)
			}
			continue
		case stNeg, stZero, stInt, stDot, stFrac, stExp, stExpSign, stExpDigits:
			switch s.number(c) {
			case numMore:
				i = s.take(p, i)
			case numBad:
				s.fail(base+i, "invalid number")
			default:
				s.endValue(base + i) // c is looked at again
			}
			continue
		case stError:
			return
		}
		// Outside strings, numbers and literals.
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		off := base + i
		i++
		switch s.state {
		case stValue, stValueOrClose:
			if c == ']' && s.state == stValueOrClose {
				s.close(off)
				continue
			}
			s.value(c, off)
		case stKeyOrClose, stKey:
			switch {
			case c == '"':
				s.isKey, s.state = true, stString
				s.capturing, s.keyStart = s.depth <= int(s.track) && !s.whole, off
				s.long, s.capture = false, append(s.capture[:0], c)
			case c == '}' && s.state == stKeyOrClose:
				s.close(off)
			default:
				s.fail(off, "invalid character looking for an object key")
			}
		case stColon:
			if c != ':' {
				s.fail(off, "invalid character after an object key")
				continue
			}
			s.state = stValue
		case stAfter:
			switch {
			case c == ',' && s.inObject():
				s.state = stKey
			case c == ',':
				s.state = stValue
			case c == '}' && s.inObject(), c == ']' && !s.inObject():
				s.close(off)
			default:
				s.fail(off, "invalid character after a value")
			}
		case stEnd:
			s.fail(off, "invalid character after the top-level value")
		}
	}
}

// value starts the value whose first byte c is at off.
func (s *scanner) value(c byte, off int) {
	s.beginValue(c, off)
	switch {
	case c == '{':
		s.push(true)
		s.state = stKeyOrClose
	case c == '[':
		s.push(false)
		s.state = stValueOrClose
	case c == '"':
		s.state = stString
	case c == '-':
		s.state = stNeg
	case c == '0':
		s.state = stZero
	case c >= '1' && c <= '9':
		s.state = stInt
	case c == 't':
		s.state, s.literal = stLiteral, "rue"
	case c == 'f':
		s.state, s.literal = stLiteral, "alse"
	case c == 'n':
		s.state, s.literal = stLiteral, "ull"
	default:
		s.fail(off, "invalid character looking for a value")
		return
	}
	if s.capturing {
		s.keep([]byte{c})
	}
}

// close ends the container whose closer is at off.
func (s *scanner) close(off int) {
	s.depth--
	s.endValue(off + 1)
}

// Outcomes of number.
const (
	numMore = iota // c belongs to the number
	numEnd         // the number ended before c
	numBad         // the number is incomplete
)

// number advances a number by c.
func (s *scanner) number(c byte) int {
	digit := c >= '0' && c <= '9'
	switch s.state {
	case stNeg:
		switch {
		case c == '0':
			s.state = stZero
		case digit:
			s.state = stInt
		default:
			return numBad
		}
	case stZero, stInt:
		switch {
		case digit && s.state == stInt:
		case c == '.':
			s.state = stDot
		case c == 'e' || c == 'E':
			s.state = stExp
		default:
			return numEnd
		}
	case stDot:
		if !digit {
			return numBad
		}
		s.state = stFrac
	case stFrac:
		switch {
		case digit:
		case c == 'e' || c == 'E':
			s.state = stExp
		default:
			return numEnd
		}
	case stExp:
		switch {
		case c == '+' || c == '-':
			s.state = stExpSign
		case digit:
			s.state = stExpDigits
		default:
			return numBad
		}
	case stExpSign:
		if !digit {
			return numBad
		}
		s.state = stExpDigits
	case stExpDigits:
		if !digit {
			return numEnd
		}
	}
	return numMore
}

// finish ends the input: a number at the very end completes, anything else
// unfinished is an error.
func (s *scanner) finish() {
	switch s.state {
	case stZero, stInt, stFrac, stExpDigits:
		s.endValue(s.off)
	}
	switch s.state {
	case stEnd, stError:
	default:
		s.fail(s.off, "unexpected end of JSON input")
	}
}

// skipSafe returns the index of the first byte at or after i that a string
// may not hold as it is, or a little before it: it looks at eight bytes at
// a time (a control character, a quote or a backslash in any of them stops
// it), so that long plain strings cost a fraction of a byte loop.
func skipSafe(p []byte, i int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for ; i+8 <= len(p); i += 8 {
		v := binary.LittleEndian.Uint64(p[i:])
		control := (v - 0x20*ones) &^ v & highs
		quote := (v ^ '"'*ones - ones) &^ (v ^ '"'*ones) & highs
		backslash := (v ^ '\\'*ones - ones) &^ (v ^ '\\'*ones) & highs
		if control|quote|backslash != 0 {
			break
		}
	}
	return i
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
