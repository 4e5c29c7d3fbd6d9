package wire

// What the scanner records of one message: the envelope (id, version,
// method, params, result, error) and, in a result, the parts the screen
// checks. Where a member appears twice, the last one counts, as for the SDK's
// decoder: a new occurrence resets what the previous one recorded. But the
// SDK's decoder decodes every occurrence into the same field, and the
// record follows it there too: a null resultType or inputRequests leaves
// the one before (a null leaves a string as it was, and go-sdk's
// InputRequestMap ignores one); what the decoder fails or panics on counts
// in any occurrence (an input request that is not an object, an error
// member of the wrong shape); and the depth of a replaced tools/list's
// tools counts toward the message's.

import "strconv"

// A span is one value of the message: its kind (its first byte, '0' for a
// number) and its bounds.
type span struct {
	kind       byte
	start, end int
}

// raw returns the bytes of v in msg.
func (v span) raw(msg []byte) []byte { return msg[v.start:v.end] }

// A member is a key's value that may be absent.
type member struct {
	span
	ok bool
}

// An item is a content item of a result.
type item struct {
	span
	typ     member // its "type"
	content member // its "content" (a tool_result's items)
	items   []item // the items of content, when an array
}

// A descriptor is a tool descriptor of a tools/list result, or a prompt of
// a prompts/list result (its span and name only).
type descriptor struct {
	span
	name    member
	deepest int // the most containers open at once inside it
	outer   int // the scanner's deepest before it
}

// A place is where a value sits in a message.
type place uint8

const (
	pOther place = iota

	// The places whose last value a record keeps in at.
	pMethod
	pParams
	pResult
	pError
	pErrorCode
	pErrorMessage
	pTools
	pInputRequests
	pResultType

	// The places recorded otherwise.
	pTop
	pBatchMember
	pID
	pVersion
	pTool
	pToolName
	pPrompts
	pPrompt
	pPromptName
	pContent
	pItem
	pItemType
	pItemContent
	pSubItem
	pSubItemType
	pInputRequest
)

// within says where each place the screen looks at sits: in the container
// at place parent, as an element of an array (in '['), as the member called
// key of an object (in '{') or as any member (in '*'). Keys match as the
// SDK's decoder matches them: exactly, after unescaping.
var within = [...]struct {
	parent place
	in     byte
	key    string
}{
	pBatchMember:   {pTop, '[', ""},
	pID:            {pTop, '{', "id"},
	pVersion:       {pTop, '{', "jsonrpc"},
	pMethod:        {pTop, '{', "method"},
	pParams:        {pTop, '{', "params"},
	pResult:        {pTop, '{', "result"},
	pError:         {pTop, '{', "error"},
	pErrorCode:     {pError, '{', "code"},
	pErrorMessage:  {pError, '{', "message"},
	pTools:         {pResult, '{', "tools"},
	pTool:          {pTools, '[', ""},
	pPrompts:       {pResult, '{', "prompts"},
	pPrompt:        {pPrompts, '[', ""},
	pPromptName:    {pPrompt, '{', "name"},
	pToolName:      {pTool, '{', "name"},
	pContent:       {pResult, '{', "content"},
	pItem:          {pContent, '[', ""},
	pItemType:      {pItem, '{', "type"},
	pItemContent:   {pItem, '{', "content"},
	pSubItem:       {pItemContent, '[', ""},
	pSubItemType:   {pSubItem, '{', "type"},
	pInputRequests: {pResult, '{', "inputRequests"},
	pInputRequest:  {pInputRequests, '*', ""},
	pResultType:    {pResult, '{', "resultType"},
}

// children lists the places within each place (see within).
var children = func() (c [len(within)][]place) {
	for p, w := range &within {
		if w.parent != pOther {
			c[w.parent] = append(c[w.parent], place(p))
		}
	}
	return c
}()

// child returns the place of a value in the container at place parent: an
// element of an array (in '['), or the member called key of an object (in
// '{'; key unescaped).
func child(parent place, in byte, key []byte) place {
	for _, p := range children[parent] {
		if w := &within[p]; w.in == in && w.key == string(key) || w.in == '*' && in == '{' {
			return p
		}
	}
	return pOther
}

// A record is what one scan learned. topOnly keeps it to the top level (a
// batch is scanned for its members, which are screened one by one);
// streaming, to the envelope: an oversized message is scanned for its id
// alone, and must not grow a list per item.
type record struct {
	topOnly   bool
	streaming bool

	places [maxTrack + 1]place // of the open value at each depth
	keys   [maxTrack + 1]place // of the value of the key just read at each depth

	at [pTop]member // the last value at each place before pTop (method, result...)

	top     byte   // the kind of the top-level value
	id      []byte // the raw id, when a scalar of at most maxCapture bytes
	idKind  byte
	version []byte // the raw jsonrpc member
	batch   []span

	descriptors []descriptor
	prompts     []descriptor // of a prompts/list result: span and name
	items       []item
	badInput    string // the key of the first input request that is not an object, in any occurrence of inputRequests
	hasBadInput bool
	inputKey    string // the key of the input request being scanned

	listing *Listing // of the request the message answers, if any (WithListing)

	again bool // a method, params, result or error member of the message came twice

	// badError: an occurrence of the error member, or of its code or
	// message, has a shape the SDK's decoder fails on (it decodes every
	// occurrence): an error that is neither an object nor null, a code
	// that is not an int64, a message that is not a string.
	badError bool
}

// scalar returns the bytes of a top-level scalar of kind, or nil when it
// is longer than maxCapture or not a scalar (in pieces, only keys and
// scalars are captured: an object's or array's bytes are gone).
func (r *record) scalar(s *scanner, kind byte, start, end int) []byte {
	if kind == '{' || kind == '[' {
		return nil
	}
	raw, long := s.raw(start, end)
	switch {
	case long:
		return nil
	case r.streaming:
		return append([]byte(nil), raw...) // the piece is gone after this feed
	}
	return raw
}

// key records the key of a member of the object open at depth d: the
// place of its value.
func (r *record) key(s *scanner, d int, quoted []byte, long bool) {
	parent := r.places[d-1]
	if parent == pOther {
		r.keys[d] = pOther // nothing the screen looks at: no key to unescape
		return
	}
	k := quoted // as it came, quotes and all: it matches no key
	if !long {  // a long key matches none either: not decoded
		if u, ok := unquote(quoted); ok {
			k = u
		}
	}
	r.keys[d] = child(parent, '{', k)
	if parent == pInputRequests && !r.hasBadInput {
		r.inputKey = string(k)
	}
}

// begin records the start of a value of kind at depth d.
func (r *record) begin(s *scanner, d int, kind byte, off int) {
	p := pTop
	switch {
	case d > 0 && s.kind[d-1] == '[':
		p = child(r.places[d-1], '[', nil)
	case d > 0:
		p = r.keys[d]
	}
	r.places[d] = p
	switch p {
	case pTop:
		r.top = kind
	case pResult:
		r.at[pTools], r.at[pInputRequests], r.at[pResultType] = member{}, member{}, member{}
		r.forgetDescriptors(s)
		r.prompts, r.items, r.hasBadInput = nil, nil, false
	case pError:
		r.at[pErrorCode], r.at[pErrorMessage] = member{}, member{}
	case pTools:
		r.forgetDescriptors(s)
	case pTool:
		r.descriptors = append(r.descriptors, descriptor{outer: s.deepest})
		s.deepest = 0
	case pPrompts:
		r.prompts = r.prompts[:0]
	case pPrompt:
		r.prompts = append(r.prompts, descriptor{})
	case pContent:
		r.items = r.items[:0]
	case pItem:
		r.items = append(r.items, item{})
	case pItemContent:
		it := &r.items[len(r.items)-1]
		it.items = it.items[:0]
	case pSubItem:
		it := &r.items[len(r.items)-1]
		it.items = append(it.items, item{})
	}
}

// errorShape reports whether the value of kind at [start, end), at p (an
// error member, its code or its message), is of a shape the SDK's decoder
// takes: null, or an object, an int64, a string.
func errorShape(p place, kind byte, s *scanner, start, end int) bool {
	switch {
	case kind == 'n':
		return true
	case p == pError:
		return kind == '{'
	case p == pErrorMessage:
		return kind == '"'
	}
	raw, long := s.raw(start, end)
	if kind != '0' || long {
		return false
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

// forgetDescriptors forgets the descriptors recorded, for a later
// occurrence of the result or of its tools. The scanner's deepest leaves
// out their depth (the screen counts the depth of those it keeps), but the
// SDK's decoder decodes an earlier occurrence too, and its depth bound
// counts the whole message: theirs goes back into deepest.
func (r *record) forgetDescriptors(s *scanner) {
	for _, t := range r.descriptors {
		s.deepest = max(s.deepest, t.deepest)
	}
	r.descriptors = r.descriptors[:0]
}

// end records the value of kind at depth d, msg[start:end].
func (r *record) end(s *scanner, d int, kind byte, start, end int) {
	v := member{span{kind, start, end}, true}
	if p := r.places[d]; p < pTop {
		if r.at[p].ok && d == 1 { // a member of the message's object
			r.again = true
		}
		if !r.badError && (p == pError || p == pErrorCode || p == pErrorMessage) {
			r.badError = !errorShape(p, kind, s, start, end)
		}
		if kind == 'n' && (p == pResultType || p == pInputRequests) && r.at[p].ok {
			return // the SDK's decoder keeps the one before
		}
		r.at[p] = v
		return
	}
	switch r.places[d] {
	case pBatchMember:
		if !r.streaming {
			r.batch = append(r.batch, v.span)
		}
	case pID:
		r.id, r.idKind = r.scalar(s, kind, start, end), kind
	case pVersion:
		r.version = r.scalar(s, kind, start, end)
	case pTool:
		t := &r.descriptors[len(r.descriptors)-1]
		t.span, t.deepest = v.span, s.deepest
		s.deepest = t.outer
	case pToolName:
		r.descriptors[len(r.descriptors)-1].name = v
	case pPrompt:
		r.prompts[len(r.prompts)-1].span = v.span
	case pPromptName:
		r.prompts[len(r.prompts)-1].name = v
	case pItem:
		r.items[len(r.items)-1].span = v.span
	case pItemType:
		r.items[len(r.items)-1].typ = v
	case pItemContent:
		r.items[len(r.items)-1].content = v
	case pSubItem:
		it := &r.items[len(r.items)-1]
		it.items[len(it.items)-1].span = v.span
	case pSubItemType:
		it := &r.items[len(r.items)-1]
		it.items[len(it.items)-1].typ = v
	case pInputRequest:
		if kind != '{' && !r.hasBadInput {
			r.badInput, r.hasBadInput = r.inputKey, true
		}
	}
}
