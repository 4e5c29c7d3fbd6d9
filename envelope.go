package mcpadapter

import (
	"bytes"
	"encoding/json"
)

// tooDeep reports whether the JSON in data nests objects and arrays deeper
// than max, counting as the SDK's decoder does.
func tooDeep(data []byte, max int) bool {
	// Cheap exit: the nesting cannot exceed the number of openers.
	if bytes.Count(data, []byte{'{'})+bytes.Count(data, []byte{'['}) <= max {
		return false
	}
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			end, ok := skipString(data, i)
			if !ok {
				return false
			}
			i = end - 1
		case '{', '[':
			depth++
			if depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// An envelope follows the top level of one JSON message as its bytes stream
// by, without keeping them: it records the raw value of the last top-level
// "id" member and whether a "method" member is present, which is what it
// takes to answer a message that cannot be passed on. It reads any input
// without failing; on input that is not a JSON object it learns nothing.
type envelope struct {
	depth   int   // nesting depth of objects and arrays
	inStr   bool  // inside a string
	esc     bool  // the previous byte was a backslash inside a string
	phase   phase // where the scan is in the top-level object (depth 1)
	done    bool  // the top-level value ended, or is not an object
	key     []byte
	member  string // the current top-level member's name
	val     []byte // the value being read
	reading string // the member whose value is being read ("id" or "jsonrpc"), or ""
	long    bool   // the current key or value is over its bound

	id      []byte // raw value of the last complete top-level "id"; nil if none
	version []byte // raw value of the last complete top-level "jsonrpc"
	method  bool   // a top-level "method" member was seen
}

// phase is the position of an envelope scan inside the top-level object.
type phase uint8

// feed scans the next bytes of the message.
func (e *envelope) feed(p []byte) {
	for i := 0; i < len(p) && !e.done; i++ {
		c := p[i]
		if e.inStr {
			if e.esc {
				e.esc = false
				e.record(c)
				continue
			}
			if !e.recording() {
				// Jump to the next quote or backslash: strings such as
				// base64 media are most of a large message, and
				// IndexByte is the fastest scan there is.
				rest := p[i:]
				q := bytes.IndexByte(rest, '"')
				if q >= 0 {
					rest = rest[:q]
				}
				j := bytes.IndexByte(rest, '\\')
				if j < 0 {
					j = q
				}
				if j < 0 {
					return
				}
				i += j
				c = p[i]
			}
			switch c {
			case '\\':
				e.esc = true
				e.record(c)
			case '"':
				e.inStr = false
				e.record(c)
				e.endString()
			default:
				e.record(c)
			}
			continue
		}
		if e.depth >= 2 {
			// Inside a nested value only the structure matters.
			j := bytes.IndexAny(p[i:], `"{}[]`)
			if j < 0 {
				return
			}
			i += j
			switch p[i] {
			case '"':
				e.inStr = true
			case '{', '[':
				e.depth++
			case '}', ']':
				if e.depth--; e.depth == 1 {
					e.phase = phaseComma
				}
			}
			continue
		}
		if e.depth == 0 {
			switch {
			case isJSONSpace(c):
			case c == '{':
				e.depth, e.phase = 1, phaseKey
			default:
				e.done = true // not an object
			}
			continue
		}
		e.top(c)
	}
}

// top scans byte c of the top-level object, outside strings.
func (e *envelope) top(c byte) {
	if e.phase == phaseScalar {
		switch {
		case c == ',' || c == '}' || isJSONSpace(c):
			e.endValue()
			e.phase = phaseComma
		default:
			e.record(c)
			return
		}
	}
	switch e.phase {
	case phaseKey:
		switch {
		case isJSONSpace(c):
		case c == '"':
			e.inStr = true
			e.key, e.long = append(e.key[:0], c), false
		case c == '}':
			e.end()
		default:
			e.done = true
		}
	case phaseColon:
		switch {
		case isJSONSpace(c):
		case c == ':':
			e.phase = phaseValue
		default:
			e.done = true
		}
	case phaseValue:
		switch {
		case isJSONSpace(c):
			return
		case c == '"':
			e.inStr = true
			e.phase = phaseNested
		case c == '{' || c == '[':
			e.depth = 2
			e.phase = phaseNested
		default:
			e.phase = phaseScalar
		}
		if e.member == "method" {
			e.method = true
		}
		if (e.member == "id" || e.member == "jsonrpc") && c != '{' && c != '[' {
			e.reading, e.long = e.member, false
			e.val = append(e.val[:0], c)
		}
	case phaseComma:
		switch {
		case isJSONSpace(c):
		case c == ',':
			e.phase = phaseKey
		case c == '}':
			e.end()
		default:
			e.done = true
		}
	}
}

// end records the end of the top-level object.
func (e *envelope) end() {
	e.depth = 0
	e.done = true
}

// recording reports whether the bytes of the current string are kept.
func (e *envelope) recording() bool {
	return e.depth == 1 && (e.phase == phaseKey || e.reading != "")
}

// record keeps byte c of a top-level key or of the id value.
func (e *envelope) record(c byte) {
	switch {
	case e.depth != 1 || e.long:
	case e.phase == phaseKey:
		if len(e.key) == maxKeyBytes {
			e.long = true
			return
		}
		e.key = append(e.key, c)
	case e.reading != "":
		if len(e.val) == maxIDBytes {
			e.long = true
			return
		}
		e.val = append(e.val, c)
	}
}

// endString records the end of a string at the current depth.
func (e *envelope) endString() {
	if e.depth != 1 {
		return
	}
	if e.phase == phaseKey {
		e.member = ""
		if !e.long {
			e.member, _ = stringValue(e.key)
		}
		e.phase = phaseColon
		return
	}
	e.endValue()
	e.phase = phaseComma
}

// endValue records the end of a top-level member's value.
func (e *envelope) endValue() {
	member := e.reading
	if member == "" {
		return
	}
	e.reading = ""
	var v []byte
	if !e.long && json.Valid(e.val) {
		v = bytes.Clone(e.val)
	}
	switch member {
	case "jsonrpc":
		e.version = v
	case "id":
		e.id = v
		if v != nil && (v[0] == 'n' || v[0] == 't' || v[0] == 'f') {
			e.id = nil // null and booleans answer nothing
		}
	}
}

// response reports whether the scanned message is a valid JSON-RPC
// response envelope: version 2.0, an id, no method.
func (e *envelope) response() bool {
	return !e.method && e.id != nil && string(e.version) == `"2.0"`
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

const (
	phaseKey    phase = iota // before a member's key, or the closing brace
	phaseColon               // after a key
	phaseValue               // after a colon
	phaseScalar              // inside a number, true, false or null
	phaseNested              // inside a string, object or array value
	phaseComma               // after a value
)
