package wire

import "encoding/json"

// What the scanner records of one message: the envelope (id, version,
// method, params, result, error) and, in a result, the parts the screen
// checks. Where a member appears twice, the last one counts, as for the SDK's
// decoder: a new occurrence resets what the previous one recorded.

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
	pTop
	pBatchMember
	pID
	pVersion
	pMethod
	pParams
	pResult
	pError
	pErrorCode
	pErrorMessage
	pTools
	pTool
	pPrompts
	pPrompt
	pPromptName
	pToolName
	pContent
	pItem
	pItemType
	pItemContent
	pSubItem
	pSubItemType
	pInputRequests
	pInputRequest
	pResultType
)

// A name is a key the screen looks for.
type name uint8

const (
	nOther name = iota
	nID
	nJSONRPC
	nMethod
	nParams
	nResult
	nError
	nCode
	nMessage
	nTools
	nPrompts
	nName
	nContent
	nType
	nInputRequests
	nResultType
)

// nameOf returns the name of key k.
func nameOf(k []byte) name {
	switch string(k) {
	case "id":
		return nID
	case "jsonrpc":
		return nJSONRPC
	case "method":
		return nMethod
	case "params":
		return nParams
	case "result":
		return nResult
	case "error":
		return nError
	case "code":
		return nCode
	case "message":
		return nMessage
	case "tools":
		return nTools
	case "prompts":
		return nPrompts
	case "name":
		return nName
	case "content":
		return nContent
	case "type":
		return nType
	case "inputRequests":
		return nInputRequests
	case "resultType":
		return nResultType
	}
	return nOther
}

// lookup returns the name of a quoted key, matched exactly after
// unescaping, as the SDK's decoder matches keys.
func lookup(quoted []byte, long bool) name {
	if long || len(quoted) < 2 {
		return nOther
	}
	inner := quoted[1 : len(quoted)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			if json.Unmarshal(quoted, &s) != nil {
				return nOther
			}
			return nameOf([]byte(s))
		}
	}
	return nameOf(inner)
}

// A record is what one scan learned. topOnly keeps it to the top level (a
// batch is scanned for its members, which are screened one by one);
// streaming, to the envelope: an oversized message is scanned for its id
// alone, and must not grow a list per item.
type record struct {
	topOnly   bool
	streaming bool

	places [maxTrack + 1]place
	keys   [maxTrack + 1]name

	top     byte   // the kind of the top-level value
	id      []byte // the raw id, when a scalar of at most maxCapture bytes
	idKind  byte
	version []byte // the raw jsonrpc member
	method  member
	params  member
	result  member
	error   member
	code    member // error.code
	message member // error.message
	batch   []span

	tools         member
	descriptors   []descriptor
	prompts       []descriptor // of a prompts/list result: span and name
	content       member
	items         []item
	inputRequests member
	badInput      string // the key of the first input request that is not an object
	hasBadInput   bool
	inputKey      string // the key of the input request being scanned
	resultType    member

	listing *Listing // of the request the message answers, if any (WithListing)
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

// child returns the place of a value at depth d, in the container at d-1.
func (r *record) child(s *scanner, d int) place {
	if d == s.floor && d == 0 {
		return pTop
	}
	parent := r.places[d-1]
	if s.kind[d-1] == '[' {
		switch parent {
		case pTop:
			return pBatchMember
		case pTools:
			return pTool
		case pPrompts:
			return pPrompt
		case pContent:
			return pItem
		case pItemContent:
			return pSubItem
		}
		return pOther
	}
	k := r.keys[d]
	switch parent {
	case pTop:
		switch k {
		case nID:
			return pID
		case nJSONRPC:
			return pVersion
		case nMethod:
			return pMethod
		case nParams:
			return pParams
		case nResult:
			return pResult
		case nError:
			return pError
		}
	case pResult:
		switch k {
		case nTools:
			return pTools
		case nPrompts:
			return pPrompts
		case nContent:
			return pContent
		case nInputRequests:
			return pInputRequests
		case nResultType:
			return pResultType
		}
	case pError:
		switch k {
		case nCode:
			return pErrorCode
		case nMessage:
			return pErrorMessage
		}
	case pTool:
		if k == nName {
			return pToolName
		}
	case pPrompt:
		if k == nName {
			return pPromptName
		}
	case pItem, pSubItem:
		switch {
		case k == nType && parent == pItem:
			return pItemType
		case k == nType:
			return pSubItemType
		case k == nContent && parent == pItem:
			return pItemContent
		}
	case pInputRequests:
		return pInputRequest
	}
	return pOther
}

// key records the key of a member of the object open at depth d.
func (r *record) key(s *scanner, d int, quoted []byte, long bool) {
	if r.topOnly && d > 1 {
		return
	}
	r.keys[d] = lookup(quoted, long)
	if r.places[d-1] == pInputRequests && !r.hasBadInput {
		var k string
		if json.Unmarshal(quoted, &k) != nil || long {
			k = string(quoted)
		}
		r.inputKey = k
	}
}

// begin records the start of a value of kind at depth d.
func (r *record) begin(s *scanner, d int, kind byte, off int) {
	if r.topOnly && d > 1 {
		return
	}
	p := r.child(s, d)
	r.places[d] = p
	switch p {
	case pTop:
		r.top = kind
	case pResult:
		r.tools, r.descriptors, r.prompts, r.content, r.items = member{}, nil, nil, member{}, nil
		r.inputRequests, r.hasBadInput, r.resultType = member{}, false, member{}
	case pError:
		r.code, r.message = member{}, member{}
	case pTools:
		r.descriptors = r.descriptors[:0]
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
	case pInputRequests:
		r.hasBadInput = false
	}
}

// memberAt returns the member of the record that a value at place p is, or
// nil.
func (r *record) memberAt(p place) *member {
	switch p {
	case pMethod:
		return &r.method
	case pParams:
		return &r.params
	case pResult:
		return &r.result
	case pError:
		return &r.error
	case pErrorCode:
		return &r.code
	case pErrorMessage:
		return &r.message
	case pTools:
		return &r.tools
	case pContent:
		return &r.content
	case pInputRequests:
		return &r.inputRequests
	case pResultType:
		return &r.resultType
	}
	return nil
}

// end records the value of kind at depth d, msg[start:end].
func (r *record) end(s *scanner, d int, kind byte, start, end int) {
	if r.topOnly && d > 1 {
		return
	}
	v := member{span{kind, start, end}, true}
	if m := r.memberAt(r.places[d]); m != nil {
		*m = v
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
