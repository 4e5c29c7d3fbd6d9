// Package wire screens what MCP servers send, before the go-sdk decodes it.
//
// The go-sdk treats several kinds of bad server output as fatal for the
// whole connection (a message over its size cap, a line that is not JSON,
// a message nesting deeper than its decoder allows, an id it cannot
// decode), loses a whole tools/list page for one descriptor of the wrong
// shape, a whole result for one content item of a type it does not know,
// and panics on an input request that is null. A [Screen] checks every
// server message once, in one pass over its bytes (scan.go), for all of
// these, and passes on what the SDK can decode:
//
//   - a message that needs no change, byte for byte;
//   - a repaired message: tools the SDK cannot decode dropped from a
//     tools/list page, content items of unknown types replaced by text
//     placeholders that keep the original item;
//   - an error response for the message's id (a [Fault]) in place of a
//     message that cannot be repaired, so that only the call it answers
//     fails;
//   - nothing, for a request or notification from the server that cannot
//     be passed on, or a response no call can claim;
//   - a batch as its messages, one at a time.
//
// Only when a message answers no call the screen can name does the stream
// end, with a [*Fault]. A message over the size bound is never held whole:
// its id is recovered by the same scanner, as the bytes stream by.
//
// The screen reads stdio and other newline-delimited streams
// ([Screen.Lines]), HTTP response bodies ([Screen.Response]: JSON bodies
// and server-sent events) and, for transports whose bytes it cannot reach,
// decoded messages ([Screen.Conn]). It knows nothing of its user's errors
// and configuration: it is given [Options] and returns [Fault]s.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter/internal/elicit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SDKMaxDepth is the deepest nesting of objects and arrays the go-sdk's
// decoder accepts in one message (its internal/json: defaultMaxDepth).
const SDKMaxDepth = 1000

// Options configure a [Screen].
type Options struct {
	// MaxMessageBytes bounds one server message; it must be positive.
	MaxMessageBytes int
	// Logger gets a warning for every message dropped or replaced and every
	// tool dropped; nil discards them.
	Logger *slog.Logger
	// Placeholder returns the text of the item that stands in for a content
	// item of unknown type typ ("" when it has none). The original item is
	// kept in the placeholder's _meta, under PlaceholderKey.
	Placeholder    func(typ string) string
	PlaceholderKey string
	// Claim, when set, is handed every response whose id is a JSON string
	// starting with ClaimPrefix, as it is passed on (screened: repaired,
	// or the error response that stands for it): the answers to requests
	// the screen's user sent itself on the connection, beside the SDK's.
	Claim       func(msg []byte)
	ClaimPrefix string
	// Handshake, when set, is handed the result of each response passed
	// on (of at most maxHandshake bytes), until it reports true (the
	// handshake's answer was found) or EndHandshake is called: what go-sdk
	// does not keep of that answer.
	Handshake func(result []byte) bool
	// Progress, when set, is handed the params of every progress
	// notification passed on (its raw JSON, valid during the call only),
	// in the order the connection reads its messages, before the
	// notification is passed on: the progress a server sent before an
	// answer reaches Progress before the answer reaches anyone, whatever
	// order the SDK hands them on in later.
	Progress func(params []byte)
	// SDKRounds says that go-sdk's client may fulfil a result's input
	// requests itself (its multi-round-trip middleware, on in a client
	// built without MultiRoundTripOptions.Disabled). Then a result is
	// also failed when one of its elicitations has a requested schema
	// that elicit.CheckSchema refuses: the SDK resolves and validates an
	// accepted answer against it with jsonschema-go, which follows a
	// cycle of references ({"$ref":"#/properties/p"} in p) until the
	// stack overflows. A client that leaves the rounds to its user checks
	// the schemas itself (elicit.Unsupported).
	SDKRounds bool
}

// methodProgress is the method of a progress notification.
const methodProgress = "notifications/progress"

// methodElicitationComplete is the method of the notification that a URL
// elicitation is done. go-sdk's client accepts it without params, and then
// reads them (v1.8.0, Client.callElicitationCompleteHandler), panicking on
// a goroutine of the connection: the screen drops such a notification,
// missing params or null (completeWithoutParams).
const methodElicitationComplete = "notifications/elicitation/complete"

// completeWithoutParams is the fault of a notifications/elicitation/complete
// without params, which the screen drops (methodElicitationComplete).
var completeWithoutParams = &Fault{Kind: Malformed, Text: "server notification " + methodElicitationComplete + " without params"}

// maxHandshake bounds a result handed to Options.Handshake.
const maxHandshake = 1 << 20

// A Screen checks the messages of one server connection. It is safe for
// concurrent use.
type Screen struct {
	opts Options
	log  *slog.Logger

	listed Listing // the tools and prompts listed and not yet taken, but a Listing's

	shook atomic.Bool // Options.Handshake is done
}

// A listed is the key of a listed item: its list ("tools", "prompts") and
// name.
type listed struct{ list, name string }

// New returns a screen configured by opts.
func New(opts Options) *Screen {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Placeholder == nil {
		opts.Placeholder = func(string) string { return "[unsupported content]" }
	}
	return &Screen{opts: opts, log: log}
}

// Listed returns the JSON of the item called name of list ("tools" or
// "prompts") as the last page of list that listed it had it, byte for byte
// (with what the go-sdk does not decode: a tool's execution, the absence
// of an annotation hint or of a prompt argument's required), and forgets
// it; nil when no page listed it since the last Listed of it, or s is nil.
// The pages answering a request made with a Listing (WithListing) are kept
// there instead.
func (s *Screen) Listed(list, name string) []byte {
	if s == nil {
		return nil
	}
	return s.listed.Take(list, name)
}

// keep records the items of a list of msg (see Listed), whose scan is
// rec: in the Listing of its request, if any (WithListing), else in s's.
func (s *Screen) keep(rec *record, list string, msg []byte, items []descriptor) {
	if len(items) == 0 {
		return
	}
	l := rec.listing
	if l == nil {
		l = &s.listed
	}
	l.keep(list, msg, items)
}

// tooLarge returns the fault of a message of size bytes (or more, when
// atLeast) over the bound.
func (s *Screen) tooLarge(size int, atLeast bool) *Fault {
	more := ""
	if atLeast {
		more = "more than "
	}
	return &Fault{Kind: TooLarge, Text: fmt.Sprintf("server message of %s%d bytes exceeds the limit of %d bytes; it was discarded", more, size, s.opts.MaxMessageBytes)}
}

// each screens data, one message or a batch, and calls emit with each
// message to pass on, whether the screen changed it, and the record of its
// scan (a response, or the error response the screen put in its place,
// has no method there). fallbackID, when not nil, supplies the id of the
// request the data answers (an HTTP POST's); listing, when not nil, the
// Listing of that request (WithListing). It fails only when a message
// can neither be passed on nor attributed to a call.
func (s *Screen) each(data []byte, fallbackID func() []byte, listing *Listing, emit func(msg []byte, changed bool, rec *record)) error {
	if isBatch(data) {
		rec := record{topOnly: true}
		var sc scanner
		sc.init(&rec, 0)
		sc.feed(data)
		sc.finish()
		if sc.complete() {
			if len(rec.batch) == 0 {
				s.log.Warn("mcpadapter: dropped an empty JSON-RPC batch")
			}
			for _, m := range rec.batch {
				member := record{listing: listing}
				out, _, err := s.message(m.raw(data), fallbackID, &member)
				if err != nil {
					return err
				}
				if out != nil {
					emit(out, true, &member) // a member alone is not what came
				}
			}
			return nil
		}
	}
	rec := record{listing: listing}
	out, changed, err := s.message(data, fallbackID, &rec)
	if err != nil {
		return err
	}
	if out != nil {
		emit(out, changed, &rec)
	}
	return nil
}

// message screens one complete message of at most MaxMessageBytes and
// returns what to pass on (nil: nothing), and whether it differs from msg;
// rec, zero, receives what the scan found.
func (s *Screen) message(msg []byte, fallbackID func() []byte, rec *record) (out []byte, changed bool, err error) {
	var sc scanner
	sc.init(rec, 0)
	sc.feed(msg)
	sc.finish()
	if sc.failed() || rec.top != '{' {
		reason := "not a JSON object"
		if sc.failed() {
			reason = sc.err + " at offset " + strconv.Itoa(sc.errOff)
		}
		return s.replace(rec, fallbackID, &Fault{Kind: Malformed, Text: fmt.Sprintf("malformed message from server (%s): %s", reason, preview(msg))})
	}
	if !stringIs(rec.version, "2.0") || rec.at[pMethod].ok && rec.at[pMethod].kind != '"' {
		return s.replace(rec, fallbackID, invalidMessage(msg))
	}
	if params := rec.at[pParams]; rec.at[pMethod].ok && (rec.idKind == 0 || rec.idKind == 'n') && (!params.ok || params.kind == 'n') && stringIs(rec.at[pMethod].raw(msg), methodElicitationComplete) {
		return s.replace(rec, fallbackID, completeWithoutParams) // a notification: an id of null is none
	}
	if !rec.at[pMethod].ok {
		if f := s.checkResponse(msg, rec); f != nil {
			return s.replace(rec, fallbackID, f)
		}
	} else if rec.idKind != 0 && rec.idKind != '0' && rec.idKind != '"' && rec.idKind != 'n' {
		// A request whose id is an object, an array or a boolean: the SDK
		// cannot decode it, which would end the connection.
		return s.replace(rec, fallbackID, &Fault{Kind: Malformed, Text: "server request's id is not a string or a number: " + preview(msg)})
	}
	if rec.idKind == '0' && !decodableNumber(rec.id) {
		// An id the SDK cannot decode (1e400) answers none of our calls,
		// and would end the connection: drop it, or answer the request of
		// an HTTP POST.
		f := &Fault{Kind: Malformed, Text: "server message's id " + preview(rec.id) + " is not a number the SDK decodes"}
		if !rec.at[pMethod].ok && fallbackID != nil {
			return s.replace(rec, fallbackID, f)
		}
		s.log.Warn("mcpadapter: dropped a server message", "reason", f.Text)
		return nil, true, nil
	}
	out = msg
	deepest := sc.deepest
	if !rec.at[pMethod].ok && rec.at[pResult].kind == '{' && (!rec.at[pError].ok || rec.at[pError].kind == 'n') {
		var (
			edits []edit
			f     *Fault
		)
		if edits, deepest, f = s.screenResult(msg, rec, deepest); f != nil {
			return s.replace(rec, fallbackID, f)
		}
		if len(edits) > 0 {
			out, changed = apply(msg, edits), true
		}
	}
	if deepest > SDKMaxDepth {
		return s.replace(rec, fallbackID, &Fault{Kind: TooDeep, Text: fmt.Sprintf("server message nests deeper than the %d levels the SDK decodes", SDKMaxDepth)})
	}
	if !rec.at[pMethod].ok {
		if rec.at[pResult].kind == '{' {
			s.handshake(rec.at[pResult].raw(msg))
		}
		s.claim(rec.usableID(), out)
	} else if s.opts.Progress != nil && rec.idKind == 0 && rec.at[pParams].ok && stringIs(rec.at[pMethod].raw(msg), methodProgress) {
		s.opts.Progress(rec.at[pParams].raw(msg))
	}
	return out, changed, nil
}

// handshake hands result to Options.Handshake until it is done.
func (s *Screen) handshake(result []byte) {
	if s.opts.Handshake == nil || s.shook.Load() || len(result) > maxHandshake {
		return
	}
	if s.opts.Handshake(result) {
		s.shook.Store(true)
	}
}

// EndHandshake ends the calls of Options.Handshake.
func (s *Screen) EndHandshake() { s.shook.Store(true) }

// Result screens the result of a response to id (its raw JSON, nil when
// unknown) that the SDK has already decoded (see [Screen.Conn]): it
// returns result itself, a repaired copy, or the fault to answer the call
// with instead.
func (s *Screen) Result(result, id []byte) ([]byte, error) {
	if len(result) > s.opts.MaxMessageBytes {
		f := s.tooLarge(len(result), false)
		s.log.Warn("mcpadapter: replaced a server message by an error", "reason", f.Text)
		return nil, f
	}
	var rec record
	var sc scanner
	sc.init(&rec, 1)
	sc.feed(result)
	sc.finish()
	if !sc.complete() || rec.at[pResult].kind != '{' {
		return result, nil // the SDK decoded it: only a valid object needs a look
	}
	s.handshake(result)
	if len(id) > 0 {
		rec.id, rec.idKind = id, id[0]
	}
	edits, _, f := s.screenResult(result, &rec, sc.deepest)
	if f != nil {
		s.log.Warn("mcpadapter: replaced a server message by an error", "reason", f.Text)
		return nil, f
	}
	if len(edits) > 0 {
		return apply(result, edits), nil
	}
	return result, nil
}

// screenResult checks the result recorded in rec (of msg): it returns the
// fault of a result that cannot be passed on, or the edits that repair it
// and the message's depth once they are made.
func (s *Screen) screenResult(msg []byte, rec *record, deepest int) ([]edit, int, *Fault) {
	if f := s.checkResult(msg, rec); f != nil {
		return nil, deepest, f
	}
	edits, deepest := s.toolList(msg, rec, deepest)
	s.keep(rec, "prompts", msg, rec.prompts)
	return append(edits, s.contentEdits(msg, rec.items, false)...), deepest, nil
}

// invalidMessage is the fault of a message that is JSON but not JSON-RPC.
func invalidMessage(msg []byte) *Fault {
	return &Fault{Kind: Malformed, Text: "invalid JSON-RPC message from server: " + preview(msg)}
}

// checkResponse returns the fault of a response the SDK cannot decode: one
// without a usable id, or with an error member of the wrong shape, in any
// of its occurrences (the SDK's decoder decodes each).
func (s *Screen) checkResponse(msg []byte, rec *record) *Fault {
	if rec.idKind != '0' && rec.idKind != '"' || rec.id == nil {
		return invalidMessage(msg)
	}
	if rec.badError {
		return &Fault{Kind: Malformed, Text: "invalid JSON-RPC error from server: " + preview(rec.at[pError].raw(msg))}
	}
	return nil
}

// resultTypes are the values of a result's resultType the protocol
// defines (2026-07-28: SEP-2322), and the tasks extension's "task"
// (SEP-2663), which only the screen user's own requests may get: the SDK
// never declares the extension.
var resultTypes = map[string]bool{"complete": true, "input_required": true}

// checkResult returns the fault of a result the SDK would panic on or
// misread: an input request that is not an object, in any occurrence of
// inputRequests (the SDK's InputRequestMap decoder panics on null as it
// decodes that occurrence), a resultType the protocol does not define (the
// SDK reads it as a complete, empty result).
func (s *Screen) checkResult(msg []byte, rec *record) *Fault {
	if rec.hasBadInput {
		return &Fault{Kind: InvalidResult, Text: fmt.Sprintf("invalid result from server: input request %q is not an object", rec.badInput)}
	}
	if rec.at[pInputRequests].kind == '{' {
		if key, why := sdkPanics(rec.at[pInputRequests].raw(msg), s.opts.SDKRounds); why != "" {
			return &Fault{Kind: InvalidResult, Text: fmt.Sprintf("invalid result from server: input request %q %s", key, why)}
		}
	}
	if rt := rec.at[pResultType]; rt.ok && rt.kind == '"' {
		if v, _ := stringValue(rt.raw(msg)); !resultTypes[v] && (v != "task" || !s.claims(rec.usableID())) {
			return &Fault{Kind: InvalidResult, Text: fmt.Sprintf("invalid result from server: resultType %q is not one this protocol defines", v)}
		}
	}
	return nil
}

// sdkPanics returns the key of the first input request of raw (a result's
// inputRequests, an object of objects) that go-sdk's client panics on when
// it fulfils it itself (v1.8.0, its multi-round-trip middleware, on a
// goroutine of its own), and says why: an elicitation whose requested
// schema has null for an enum option (elicit.NullEnumOption), a sampling
// request with a null message (CreateMessageWithToolsParams.toBase and
// createMessageParamsToWithTools dereference it); with rounds
// (Options.SDKRounds), an elicitation whose requested schema
// elicit.CheckSchema refuses. It returns "" for none.
func sdkPanics(raw []byte, rounds bool) (key, why string) {
	var reqs map[string]struct {
		Method string `json:"method"`
		Params struct {
			RequestedSchema any               `json:"requestedSchema"`
			Messages        []json.RawMessage `json:"messages"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &reqs) != nil {
		return "", "" // not what the SDK decodes either: it fails the call
	}
	for _, key := range slices.Sorted(maps.Keys(reqs)) {
		switch r := reqs[key]; {
		case r.Method == "elicitation/create" && elicit.NullEnumOption(r.Params.RequestedSchema):
			return key, "has null for an enum option's schema"
		case rounds && r.Method == "elicitation/create" && elicit.CheckSchema(r.Params.RequestedSchema) != nil:
			return key, "has a requested schema that cannot be checked safely"
		case r.Method == "sampling/createMessage" && slices.ContainsFunc(r.Params.Messages, isNull):
			return key, "has a null message"
		}
	}
	return "", ""
}

// isNull reports whether the raw JSON value v is null.
func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// replace returns what stands for a message that cannot be passed on:
// nothing for a request or notification from the server (there is no call
// of ours to fail), else an error response for its id, or for
// fallbackID's; without either, the stream fails with f.
func (s *Screen) replace(rec *record, fallbackID func() []byte, f *Fault) ([]byte, bool, error) {
	if rec.at[pMethod].ok {
		s.log.Warn("mcpadapter: dropped a server message", "reason", f.Text)
		return nil, true, nil
	}
	id := rec.usableID()
	if id == nil && fallbackID != nil {
		id = fallbackID()
	}
	if id == nil {
		return nil, false, f
	}
	s.log.Warn("mcpadapter: replaced a server message by an error", "reason", f.Text)
	out := f.response(id)
	s.claim(id, out)
	return out, true, nil
}

// claim hands msg, a response to id passed on, to Options.Claim when id is
// one of its user's.
func (s *Screen) claim(id, msg []byte) {
	if s.claims(id) {
		s.opts.Claim(msg)
	}
}

// claims reports whether the raw id is one of the screen user's own
// requests (Options.Claim).
func (s *Screen) claims(id []byte) bool {
	if s.opts.Claim == nil || len(id) == 0 || id[0] != '"' {
		return false
	}
	v, ok := stringValue(id)
	return ok && strings.HasPrefix(v, s.opts.ClaimPrefix)
}

// usableID returns the raw id of the message, when it can answer a call.
func (r *record) usableID() []byte {
	switch {
	case r.idKind == '"' && r.id != nil:
		return r.id
	case r.idKind == '0' && decodableNumber(r.id):
		return r.id
	}
	return nil
}

// decodableNumber reports whether the raw JSON number is one the SDK
// decodes as an id (a float64).
func decodableNumber(raw []byte) bool {
	_, err := strconv.ParseFloat(string(raw), 64)
	return raw != nil && err == nil
}

// toolList drops from a tools/list result the descriptors the SDK cannot
// decode (the wrong shape, or nesting too deep), which would fail the whole
// page, and keeps a copy of each of the others for Listed. It returns
// the edit and the message's depth without the dropped tools.
func (s *Screen) toolList(msg []byte, rec *record, deepest int) ([]edit, int) {
	if rec.at[pTools].kind != '[' {
		return nil, deepest
	}
	var (
		keep    []descriptor
		dropped int
	)
	for _, d := range rec.descriptors {
		raw := d.raw(msg)
		name := ""
		if d.name.ok {
			name, _ = stringValue(d.name.raw(msg))
		}
		reason := ""
		if d.deepest > SDKMaxDepth {
			reason = fmt.Sprintf("nests deeper than the %d levels the SDK decodes", SDKMaxDepth)
		} else if err := json.Unmarshal(raw, &mcp.Tool{InputSchema: new(skipJSON), OutputSchema: new(skipJSON)}); err != nil {
			reason = err.Error()
		}
		if reason != "" {
			dropped++
			s.log.Warn("mcpadapter: dropped a tool the SDK cannot decode", "tool", name, "reason", reason)
			continue
		}
		deepest = max(deepest, d.deepest)
		keep = append(keep, d)
	}
	s.keep(rec, "tools", msg, keep)
	if dropped == 0 {
		return nil, deepest
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, d := range keep {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(d.raw(msg))
	}
	b.WriteByte(']')
	return []edit{{rec.at[pTools].start, rec.at[pTools].end, b.Bytes()}}, deepest
}

// A skipJSON accepts any JSON value whose numbers a float64 holds, and
// keeps nothing of it. It stands for a descriptor's schemas in the check
// that the SDK can decode the descriptor: the SDK decodes them into
// interface values, which any JSON value fits but for a number out of
// float64's range (1e400), which fails the whole page; the scanner has
// checked the syntax. (encoding/json decodes into the pointer an interface
// field holds, so the check builds no map of a schema.)
type skipJSON struct{}

// UnmarshalJSON implements [json.Unmarshaler].
func (*skipJSON) UnmarshalJSON(b []byte) error { return numbersFit(b) }

// numbersFit returns the error of the first number of b, valid JSON, that
// a float64 does not hold, as decoding it into an interface value fails;
// nil when they all fit. Only a number with an exponent, or of more than
// 300 digits, can be out of range: the others are not parsed.
func numbersFit(b []byte) error {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '-' || c >= '0' && c <= '9':
			j, exp := i, false
			for ; j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '-' || b[j] == '+' || b[j] == '.' || b[j] == 'e' || b[j] == 'E'); j++ {
				exp = exp || b[j] == 'e' || b[j] == 'E'
			}
			if exp || j-i > 300 {
				if _, err := strconv.ParseFloat(string(b[i:j]), 64); err != nil {
					return fmt.Errorf("number %s is out of range", preview(b[i:j]))
				}
			}
			i = j - 1
		}
	}
	return nil
}

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

// contentEdits returns the edits that replace the content items the SDK
// would reject (an unknown or missing type, an item that is not an object)
// by text placeholders keeping the original item, so that one item a newer
// server invents does not lose the whole result. Keys match as for the
// SDK's decoder: exactly, after unescaping, the last duplicate winning.
func (s *Screen) contentEdits(msg []byte, items []item, nested bool) []edit {
	var edits []edit
	for _, it := range items {
		if it.kind != '{' {
			edits = append(edits, s.placeholder(msg, it.span, ""))
			continue
		}
		t, isString := "", true
		if it.typ.ok {
			t, isString = stringValue(it.typ.raw(msg))
		}
		switch {
		case !isString:
			edits = append(edits, s.placeholder(msg, it.span, ""))
		case !knownContentType(t, nested):
			edits = append(edits, s.placeholder(msg, it.span, t))
		case t != "tool_result" || !it.content.ok || it.content.kind == 'n':
		case it.content.kind == '[':
			// The SDK checks a tool_result's own items against the nested set.
			edits = append(edits, s.contentEdits(msg, it.items, true)...)
		default:
			edits = append(edits, s.placeholder(msg, it.span, t))
		}
	}
	return edits
}

// placeholder returns the edit that replaces the item v, of type typ, by a
// text item keeping it in _meta.
func (s *Screen) placeholder(msg []byte, v span, typ string) edit {
	text, _ := json.Marshal(s.opts.Placeholder(typ)) // a string always marshals
	key, _ := json.Marshal(s.opts.PlaceholderKey)
	item := v.raw(msg)
	out := make([]byte, 0, len(item)+len(text)+len(key)+32)
	out = append(out, `{"type":"text","text":`...)
	out = append(out, text...)
	out = append(out, `,"_meta":{`...)
	out = append(out, key...)
	out = append(out, ':')
	out = append(out, item...)
	return edit{v.start, v.end, append(out, "}}"...)}
}

// An edit replaces msg[start:end] by repl.
type edit struct {
	start, end int
	repl       []byte
}

// apply returns msg with the edits, which do not overlap, in a new slice.
func apply(msg []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	n := len(msg)
	for _, e := range edits {
		n += len(e.repl) - (e.end - e.start)
	}
	out := make([]byte, 0, n)
	last := 0
	for _, e := range edits {
		out = append(out, msg[last:e.start]...)
		out = append(out, e.repl...)
		last = e.end
	}
	return append(out, msg[last:]...)
}

// unquote returns the text of the JSON string v (without copying, when v
// holds no escape), and whether v is one.
func unquote(v []byte) ([]byte, bool) {
	switch {
	case len(v) < 2 || v[0] != '"':
		return nil, false
	case bytes.IndexByte(v, '\\') < 0:
		return v[1 : len(v)-1], true
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, false
	}
	return []byte(s), true
}

// stringValue decodes a JSON string value. null counts as the empty string,
// as it does for the SDK's decoder; any other value reports false.
func stringValue(v []byte) (string, bool) {
	if string(v) == "null" {
		return "", true
	}
	s, ok := unquote(v)
	return string(s), ok
}

// stringIs reports whether the raw JSON value v is the string want.
func stringIs(v []byte, want string) bool {
	s, ok := unquote(v)
	return ok && string(s) == want
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

// isBatch reports whether data, when JSON, is an array: a batch.
func isBatch(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\n\r")
	return len(data) > 0 && data[0] == '['
}
