package elicit

// A server's requests and the user's answers in the root package's terms:
// its ElicitationRequest and Answer, named here by their shapes, [Request]
// and [Answer] (identical struct types, so that the root package stops
// compiling when the two drift apart).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Request is the shape of the root package's ElicitationRequest, whose
// documentation says what each field holds.
type Request = struct {
	Server, Tool    string
	Key             string
	Mode            string
	Message         string
	RequestedSchema map[string]any
	URL             string
	ElicitationID   string
}

// Answer is the shape of the root package's Answer, A its Action.
type Answer[A ~string] = struct {
	Action  A
	Content map[string]any
}

// Requests converts a server's input requests, sorted by key. Requests
// other than form and URL elicitation are refused: refused names them and
// their method ([Unsupported]), for the root package's
// ErrUnsupportedInputRequest. Their requested schemas are screened here
// ([CheckSchema]), for input rounds and stored interrupts alike; go-sdk
// checks the schemas of live elicitation/create requests itself.
func Requests[R ~Request](m mcp.InputRequestMap) (reqs []R, refused string) {
	reqs = make([]R, 0, len(m))
	var why []string
	for _, key := range slices.Sorted(maps.Keys(m)) {
		if w := Unsupported(key, m[key]); w != "" {
			why = append(why, w)
		} else {
			reqs = append(reqs, FromParams[R](key, m[key].(*mcp.ElicitParams)))
		}
	}
	if len(why) > 0 {
		return nil, strings.Join(why, ", ")
	}
	return reqs, ""
}

// FromParams converts one elicitation; key is empty for a live one.
func FromParams[R ~Request](key string, p *mcp.ElicitParams) R {
	r := Request{Key: key, Mode: Mode(p), Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}
	if p.RequestedSchema != nil {
		r.RequestedSchema = jsonvalue.Object(p.RequestedSchema)
	}
	return R(r)
}

// Responses checks answers against the requests: one per key, each with
// its action, and its content against its request's schema, whose
// defaults it applies ([CheckKeys], [Check]). It returns them as the
// server's input responses.
func Responses[R ~Request, N ~Answer[A], A ~string](reqs []R, answers map[string]N) (mcp.InputResponseMap, error) {
	keys := make([]string, len(reqs))
	for i, r := range reqs {
		keys[i] = Request(r).Key
	}
	if err := CheckKeys(keys, answers); err != nil {
		return nil, err
	}
	responses := make(mcp.InputResponseMap, len(reqs))
	for _, r := range reqs {
		r := Request(r)
		ans := Answer[A](answers[r.Key])
		res, err := Check(r.Mode, r.RequestedSchema, string(ans.Action), ans.Content)
		if err != nil {
			return nil, fmt.Errorf("answer %q: %w", r.Key, err)
		}
		responses[r.Key] = res
	}
	return responses, nil
}

// Inline answers a round's requests of tool of server with handler, in
// key order, and checks the answers as [Responses] does. A handler's
// error comes back as it is.
func Inline[R ~Request, N ~Answer[A], A ~string](ctx context.Context, handler func(context.Context, R) (N, error), server, tool string, reqs []R) (mcp.InputResponseMap, error) {
	answers := make(map[string]N, len(reqs))
	for _, r := range reqs {
		r := Request(r)
		r.Server, r.Tool = server, tool
		ans, err := handler(ctx, R(r))
		if err != nil {
			return nil, err
		}
		answers[r.Key] = ans
	}
	return Responses(reqs, answers)
}

// Live answers a legacy server's live elicitation/create request, whose
// params are p, with handler, for the call of tool of server that waits
// for it (the request has no key). Its errors go on the wire, as the
// JSON-RPC error answering the server's request: standard codes, and
// messages without the adapter's prefixes. Missing params are -32602; a
// failed handler is -32603 with the handler's own message; an answer that
// breaks the request (its schema, its mode) is -32603 with a fixed
// message, since the reason may quote the user's answer, and misfit is
// true.
func Live[R ~Request, N ~Answer[A], A ~string](ctx context.Context, handler func(context.Context, R) (N, error), server, tool string, p *mcp.ElicitParams) (res *mcp.ElicitResult, misfit bool, err error) {
	if p == nil {
		return nil, false, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "elicitation/create without params"}
	}
	r := Request(FromParams[R]("", p)) // go-sdk checked its schema: flat, primitive properties (client.go)
	r.Server, r.Tool = server, tool
	ans, err := handler(ctx, R(r))
	if err != nil {
		return nil, false, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	a := Answer[A](ans)
	if res, err = Check(r.Mode, r.RequestedSchema, string(a.Action), a.Content); err != nil {
		return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client's answer does not fit the elicitation request"}
	}
	return res, false, nil
}

// Refused returns the model-visible text of a URL elicitation required
// error whose requests the user did not all accept: there is nothing to
// send to the server for a decline. It returns "" when all were accepted.
func Refused[R ~Request](reqs []R, responses mcp.InputResponseMap) string {
	for _, r := range reqs {
		r := Request(r)
		er, _ := responses[r.Key].(*mcp.ElicitResult)
		if er == nil || er.Action == accept {
			continue
		}
		verb := "declined"
		if er.Action == cancel {
			verb = "cancelled"
		}
		if r.Message != "" {
			return fmt.Sprintf("The user %s a step the server requires (%s: %s), so the tool was not run.", verb, r.Key, r.Message)
		}
		return fmt.Sprintf("The user %s a step the server requires (%s), so the tool was not run.", verb, r.Key)
	}
	return ""
}

// Describe lists what tool of server asks, for an error's text: the
// requests' keys, modes and messages, never their schemas or answers.
func Describe[R ~Request](server, tool string, reqs []R) string {
	var b strings.Builder
	fmt.Fprintf(&b, "server %q: tool %q needs user input", server, tool)
	sep := ": "
	for _, r := range reqs {
		r := Request(r)
		fmt.Fprintf(&b, "%s%s (%s)", sep, r.Key, r.Mode)
		sep = "; "
		if r.Message != "" {
			fmt.Fprintf(&b, " %q", r.Message)
		}
	}
	return b.String()
}

// URLRequired returns the requests of a URL elicitation required error
// (-32042), keyed by elicitation id, or nil when err is not one (or is
// malformed: it then stays an error).
func URLRequired(err error) mcp.InputRequestMap {
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcp.CodeURLElicitationRequired || len(we.Data) == 0 {
		return nil
	}
	var data struct {
		Elicitations []*mcp.ElicitParams `json:"elicitations"`
	}
	if json.Unmarshal(we.Data, &data) != nil || len(data.Elicitations) == 0 {
		return nil
	}
	m := make(mcp.InputRequestMap, len(data.Elicitations))
	for n, p := range data.Elicitations {
		if p == nil || p.Mode != "url" || p.URL == "" {
			return nil
		}
		key := p.ElicitationID
		for i := n + 1; key == "" || m[key] != nil; i++ {
			key = fmt.Sprintf("url-%d", i)
		}
		m[key] = p
	}
	return m
}

// maxRequests bounds the input requests of one round: a stored
// interrupt's, a task's.
const maxRequests = 256

// DecodeRequests decodes input requests, stored or as a server sent them.
// go-sdk's decoder panics on a null entry ({"k": null}); entries are
// checked first, and their number is bounded.
func DecodeRequests(b json.RawMessage) (mcp.InputRequestMap, error) {
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("input requests: %w", err)
	}
	if len(entries) > maxRequests {
		return nil, fmt.Errorf("input requests: %d, more than %d", len(entries), maxRequests)
	}
	for key, e := range entries {
		if t := bytes.TrimSpace(e); len(t) == 0 || t[0] != '{' {
			return nil, fmt.Errorf("input request %q is not an object", key)
		}
	}
	var m mcp.InputRequestMap
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("input requests: %w", err)
	}
	return m, nil
}
