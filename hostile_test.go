package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A handServer is a legacy MCP server written by hand, for what a go-sdk
// server cannot send. It answers initialize, and tools/list with one tool,
// ask. It answers a tools/call by sending the messages of onCall (raw
// JSON-RPC) first, and then, once the client answered each request among
// them, the text "answered". The client's answers go to answers, when it
// is set (buffered for them all). It answers any other method, and
// tools/list when they have one for it, with its raw result in results,
// or method not found.
type handServer struct {
	onCall  []string
	answers chan<- *jsonrpc.Response
	results map[string]string
}

// transport returns a Server.Transport serving s, one connection each
// dial: over go-sdk's in-memory transport, whose messages the adapter
// screens decoded (wire.Screen.Conn), or, with pipe, over newline-delimited
// JSON on a net.Pipe, whose bytes it screens as a stdio server's.
func (s handServer) transport(pipe bool) func(context.Context) (mcp.Transport, error) {
	return func(context.Context) (mcp.Transport, error) {
		var client, server mcp.Transport
		if pipe {
			c, s := net.Pipe()
			client, server = &mcp.IOTransport{Reader: c, Writer: c}, &mcp.IOTransport{Reader: s, Writer: s}
		} else {
			client, server = mcp.NewInMemoryTransports()
		}
		conn, err := server.Connect(context.Background())
		if err != nil {
			return nil, err
		}
		go s.serve(conn)
		return client, nil
	}
}

// serve serves conn until the client goes away.
func (s handServer) serve(conn mcp.Connection) {
	ctx := context.Background()
	defer conn.Close()
	var call jsonrpc.ID
	waiting := 0 // requests of onCall not answered yet
	answered := func() {
		conn.Write(ctx, &jsonrpc.Response{ID: call, Result: json.RawMessage(`{"content":[{"type":"text","text":"answered"}]}`)})
	}
	for {
		msg, err := conn.Read(ctx)
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			switch {
			case !m.ID.IsValid(): // a notification
			case m.Method == "initialize":
				conn.Write(ctx, &jsonrpc.Response{ID: m.ID, Result: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"hand","version":"1"}}`)})
			case s.results[m.Method] != "":
				conn.Write(ctx, &jsonrpc.Response{ID: m.ID, Result: json.RawMessage(s.results[m.Method])})
			case m.Method == "tools/list":
				conn.Write(ctx, &jsonrpc.Response{ID: m.ID, Result: json.RawMessage(`{"tools":[{"name":"ask","inputSchema":{"type":"object"}}]}`)})
			case m.Method == "tools/call":
				call, waiting = m.ID, 0
				for _, raw := range s.onCall {
					out, err := jsonrpc.DecodeMessage([]byte(raw))
					if err != nil {
						panic(err) // the test's own message
					}
					if r, ok := out.(*jsonrpc.Request); ok && r.ID.IsValid() {
						waiting++
					}
					conn.Write(ctx, out)
				}
				if waiting == 0 {
					answered()
				}
			default:
				conn.Write(ctx, &jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}})
			}
		case *jsonrpc.Response:
			if s.answers != nil {
				s.answers <- m
			}
			if waiting--; waiting == 0 {
				answered()
			}
		}
	}
}

// TestElicitationCompleteWithoutParams: a server's
// notifications/elicitation/complete without params (missing, null, or
// with an id of null, which makes it no request) is dropped by the screen,
// over decoded and byte transports alike: go-sdk's client takes it and
// reads its params (v1.8.0, Client.callElicitationCompleteHandler), so it
// used to panic and end the process. The ping after the notifications
// makes the call wait until the client handled them: its handlers run in
// order.
func TestElicitationCompleteWithoutParams(t *testing.T) {
	for _, pipe := range []bool{false, true} {
		t.Run(map[bool]string{false: "decoded", true: "bytes"}[pipe], func(t *testing.T) {
			s := handServer{onCall: []string{
				`{"jsonrpc":"2.0","method":"notifications/elicitation/complete"}`,
				`{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":null}`,
				`{"jsonrpc":"2.0","id":null,"method":"notifications/elicitation/complete"}`,
				`{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e"}}`,
				`{"jsonrpc":"2.0","id":"p","method":"ping"}`,
			}}
			a := newAdapter(t, Config{Servers: map[string]Server{"b": {Transport: s.transport(pipe)}}})
			res := must(t).result(lookupTool(t, a, "b__ask").Invoke(t.Context(), nil))
			if res.Text() != "answered" {
				t.Errorf("Invoke() = %s, want the server's result", resultText(res))
			}
		})
	}
}

// TestServerRequestPanicsAnswered: the live server requests go-sdk's
// client handlers would panic on (v1.8.0) are answered invalid params
// (-32602) without asking any handler, on the adapter's clients and on a
// prebuilt one (Server.Client) with handlers of its own: an
// elicitation/create without params (Client.elicit reads them), or whose
// requested schema has null for a titled enum option (in a property's
// oneOf, or its items' anyOf), which validateTitledEnumEntry dereferences;
// a sampling/createMessage with a null message, which
// CreateMessageWithToolsParams.toBase dereferences. Each used to end the
// process, but the first on the adapter's clients (see
// TestLiveElicitationWithoutParams) and the last there (the adapter
// refuses sampling before the SDK's handler).
func TestServerRequestPanicsAnswered(t *testing.T) {
	requests := map[string]string{
		"without params": `{"jsonrpc":"2.0","id":"q","method":"elicitation/create"}`,
		"oneOf":          `{"jsonrpc":"2.0","id":"q","method":"elicitation/create","params":{"message":"pick","requestedSchema":{"type":"object","properties":{"p":{"type":"string","oneOf":[null]}}}}}`,
		"anyOf":          `{"jsonrpc":"2.0","id":"q","method":"elicitation/create","params":{"message":"pick","requestedSchema":{"type":"object","properties":{"p":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"},null]}}}}}}`,
		"null message":   `{"jsonrpc":"2.0","id":"q","method":"sampling/createMessage","params":{"maxTokens":1,"messages":[null]}}`,
	}
	checkRequestsRefused(t, requests)
}

// checkRequestsRefused checks, with checkRefused, that each of requests
// (by name), sent by a server during a call, is answered invalid params
// before any handler sees it, on the adapter's clients and on a prebuilt
// one.
func checkRequestsRefused(t *testing.T, requests map[string]string) {
	for name, req := range requests {
		for _, prebuilt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/prebuilt=%t", name, prebuilt), func(t *testing.T) {
				answers := make(chan *jsonrpc.Response, 1)
				s := handServer{answers: answers, onCall: []string{req}}
				var calls atomic.Int32
				server := Server{Transport: s.transport(false)}
				var handler func(context.Context, ElicitationRequest) (Answer, error)
				if prebuilt {
					server.Client = prebuiltClient(&calls)
				} else {
					handler = func(context.Context, ElicitationRequest) (Answer, error) {
						calls.Add(1)
						return Answer{Action: Decline}, nil
					}
				}
				a := newAdapter(t, Config{Servers: map[string]Server{"b": server}, ElicitationHandler: handler})
				checkRefused(t, a, answers, &calls)
			})
		}
	}
}

// TestNullEnumOptionAnyCase: go-sdk reads an elicitation's requested
// schema with jsonschema-go, whose keys match without regard to case
// (and by Unicode folding: the long s is an s), so an enum option that is
// null under "ONEOF", "Properties", "ANYOF" or "itemſ" panics it as one
// under "oneOf" does; of two spellings, the one it decodes last counts. Such a schema is refused as that one is: a live
// request answered invalid params, an input round failing its call. The
// check used to read the keys exactly, and each case ended the process.
func TestNullEnumOptionAnyCase(t *testing.T) {
	schemas := map[string]string{
		"ONEOF":       `{"type":"object","properties":{"p":{"type":"string","ONEOF":[null]}}}`,
		"Properties":  `{"type":"object","Properties":{"p":{"type":"string","oneOf":[null]}}}`,
		"ITEMS ANYOF": `{"type":"object","properties":{"p":{"type":"array","ITEMS":{"AnyOf":[null]}}}}`,
		"long s":      `{"type":"object","properties":{"p":{"type":"array","item\u017f":{"anyOf":[null]}}}}`,
		"twice":       `{"type":"object","properties":{"p":{"type":"string","oneOf":[{"const":"a","title":"A"}],"oneof":[null]}}}`,
	}
	live, rounds := map[string]string{}, map[string]string{}
	for name, schema := range schemas {
		params := `{"message":"pick","requestedSchema":` + schema + `}`
		live[name] = `{"jsonrpc":"2.0","id":"q","method":"elicitation/create","params":` + params + `}`
		rounds[name] = `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":` + params + `}}}`
	}
	t.Run("live", func(t *testing.T) { checkRequestsRefused(t, live) })
	t.Run("rounds", func(t *testing.T) { checkRoundsRefused(t, rounds, `input request "q"`) })
}

// checkRefused calls b__ask on a, whose handServer sends one request
// during the call, with the client's answer to answers: it checks that
// the call ends with the server's result, that the request was answered
// invalid params, and that no elicitation handler ran (calls counts their
// runs).
func checkRefused(t *testing.T, a *Adapter, answers <-chan *jsonrpc.Response, calls *atomic.Int32) {
	t.Helper()
	res := must(t).result(lookupTool(t, a, "b__ask").Invoke(t.Context(), nil))
	if res.Text() != "answered" {
		t.Errorf("Invoke() = %s, want the server's result", resultText(res))
	}
	r := <-answers
	var we *jsonrpc.Error
	if !errors.As(r.Error, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("the server's request was answered %+v, want invalid params", r)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("handler ran %d times, want 0", n)
	}
}

// TestInputRequestPanicsRefused: a result whose input requests go-sdk's
// client panics on when it fulfils them itself (v1.8.0, its multi-round-trip
// middleware, on by default in a prebuilt client: Server.Client) fails
// its call with a *ServerError saying which request, in both eras, and on
// the adapter's clients alike: an elicitation whose requested schema has
// null for a titled enum option, a sampling request with a null message.
// On a prebuilt client with handlers each used to end the process.
func TestInputRequestPanicsRefused(t *testing.T) {
	requests := map[string]string{
		"oneOf":        `{"method":"elicitation/create","params":{"message":"pick","requestedSchema":{"type":"object","properties":{"p":{"type":"string","oneOf":[null]}}}}}`,
		"anyOf":        `{"method":"elicitation/create","params":{"message":"pick","requestedSchema":{"type":"object","properties":{"p":{"type":"array","items":{"anyOf":[null]}}}}}}`,
		"null message": `{"method":"sampling/createMessage","params":{"maxTokens":1,"messages":[null]}}`,
	}
	results := map[string]string{}
	for name, req := range requests {
		results[name] = `{"resultType":"input_required","inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"fine"}},"q":` + req + `}}`
	}
	checkRoundsRefused(t, results, `input request "q"`)
}

// checkRoundsRefused checks that each of results (by name), a tools/call
// result, fails its call with a *ServerError saying want, in both eras,
// on the adapter's clients and on a prebuilt one, whose handlers never
// run.
func checkRoundsRefused(t *testing.T, results map[string]string, want string) {
	for name, result := range results {
		for _, mode := range []Mode{ModeModern, ModeLegacy} {
			for _, prebuilt := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/prebuilt=%t", name, mode, prebuilt), func(t *testing.T) {
					server := rewritingServer(mode, func() string { return result })
					var calls atomic.Int32
					if prebuilt {
						server.Client = prebuiltClient(&calls)
					}
					a := newAdapter(t, Config{Servers: map[string]Server{"r": server}})
					res, err := lookupTool(t, a, "r__x").Invoke(t.Context(), nil)
					checkServerErr(t, err, "r")
					if !strings.Contains(err.Error(), want) {
						t.Errorf("Invoke() = %v, %v; want an error naming %s", res, err, want)
					}
					if n := calls.Load(); n != 0 {
						t.Errorf("handlers ran %d times, want 0", n)
					}
				})
			}
		}
	}
}

// TestInputRequestsTwice: a result with inputRequests twice fails its
// call as one with the first alone would, when the first has an input
// request go-sdk panics on: its decoder decodes every occurrence, and
// panics on a null request as it decodes it; a null second occurrence
// leaves the first to be fulfilled. The screen used to read the last
// occurrence alone, and each case ended the process.
func TestInputRequestsTwice(t *testing.T) {
	const nullOption = `{"method":"elicitation/create","params":{"message":"pick","requestedSchema":{"type":"object","properties":{"p":{"type":"string","oneOf":[null]}}}}}`
	checkRoundsRefused(t, map[string]string{
		"null request, then none":     `{"resultType":"input_required","inputRequests":{"q":null},"inputRequests":{}}`,
		"null enum option, then null": `{"resultType":"input_required","inputRequests":{"q":` + nullOption + `},"inputRequests":null}`,
		"scalar request, then null":   `{"resultType":"input_required","inputRequests":{"q":1},"inputRequests":null}`,
	}, `input request "q"`)
}

// prebuiltClient returns a go-sdk client with an elicitation and a
// sampling handler of its own, each counted in calls, and its
// multi-round-trip middleware on (go-sdk's default).
func prebuiltClient(calls *atomic.Int32) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "prebuilt", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			calls.Add(1)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			calls.Add(1)
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
	})
}

// TestResourceListsWithoutNulls: the null entries a server may put in its
// resource lists and in a read's contents, which go-sdk decodes as nil
// pointers, are left out (as ListPrompts leaves out null prompts), so a
// caller ranging over them needs no nil check.
func TestResourceListsWithoutNulls(t *testing.T) {
	srv := handServer{results: map[string]string{
		"resources/list":           `{"resources":[null,{"uri":"file:///a","name":"a"},null]}`,
		"resources/templates/list": `{"resourceTemplates":[null,{"uriTemplate":"file:///{x}","name":"x"}]}`,
		"resources/read":           `{"contents":[null,{"uri":"file:///a","text":"A"}]}`,
	}}
	a := newAdapter(t, Config{Servers: map[string]Server{"h": {Transport: srv.transport(false)}}})
	rs, err := a.ListResources(t.Context(), "h")
	if err != nil || len(rs) != 1 || rs[0] == nil || rs[0].URI != "file:///a" {
		t.Errorf("ListResources() = %v, %v; want the one resource", rs, err)
	}
	ts, err := a.ListResourceTemplates(t.Context(), "h")
	if err != nil || len(ts) != 1 || ts[0] == nil || ts[0].Name != "x" {
		t.Errorf("ListResourceTemplates() = %v, %v; want the one template", ts, err)
	}
	res, err := a.ReadResource(t.Context(), "h", "file:///a")
	if err != nil || len(res.Contents) != 1 || res.Contents[0] == nil || res.Contents[0].Text != "A" {
		t.Errorf("ReadResource() = %+v, %v; want the one content", res, err)
	}
}

// TestElicitationPropertiesAnySpelling: an answer that breaks a requested
// schema whose properties sit under "PROPERTIES" (jsonschema-go reads it
// as properties) fails with the property named. Each property that
// refuses the answer is resolved alone, as a root, after the guard checks
// it: {"$ref":"#"} there refers to the property itself. The guard used to
// look the property up under "properties" exactly, found none, and let the
// validator recurse until the process died of a stack overflow.
func TestElicitationPropertiesAnySpelling(t *testing.T) {
	server := rewritingServer(ModeModern, func() string {
		return `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","PROPERTIES":{"p":{"$ref":"#"}}}}}}}`
	})
	a := newAdapter(t, Config{Servers: map[string]Server{"r": server}, ElicitationHandler: func(context.Context, ElicitationRequest) (Answer, error) {
		return Answer{Action: Accept, Content: map[string]any{"p": 5}}, nil
	}})
	res, err := lookupTool(t, a, "r__x").Invoke(t.Context(), nil)
	if want := `content does not match the requested schema (invalid "p")`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Invoke() = %v, %v; want an error saying %s", res, err, want)
	}
}

// TestToolsTwiceTooDeep: a tools/list result with tools twice, the first
// holding a tool that nests deeper than go-sdk decodes, fails the list
// with the screen's error, and the connection lives on: go-sdk's depth
// bound counts the whole message, the occurrence its decoder replaces
// too. The screen used to count the depth of the last occurrence's tools
// alone; go-sdk then failed to decode the message, and the connection
// was lost until Close.
func TestToolsTwiceTooDeep(t *testing.T) {
	deep := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	srv := handServer{results: map[string]string{
		"tools/list": `{"tools":[{"name":"a","inputSchema":{"x":` + deep + `}}],"tools":[{"name":"b","inputSchema":{"type":"object"}}]}`,
	}}
	a := newAdapter(t, Config{Servers: map[string]Server{"h": {Transport: srv.transport(true)}}})
	for range 2 { // the connection lives on
		_, err := a.ListTools(t.Context())
		if want := "nests deeper than the 1000 levels the SDK decodes"; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("ListTools() = %v; want an error saying %s", err, want)
		}
	}
}

// TestToolSchemaNumberOutOfRange: a tool whose schema holds a number no
// float64 holds (1e400) is dropped from the list, and the server's other
// tools are listed: go-sdk fails the whole page on such a number, which
// the screen's check of each tool used to skip (it reads schemas for
// their syntax alone).
func TestToolSchemaNumberOutOfRange(t *testing.T) {
	srv := handServer{results: map[string]string{
		"tools/list": `{"tools":[{"name":"a","inputSchema":{"type":"object","maximum":1e400}},{"name":"b","inputSchema":{"type":"object"}}]}`,
	}}
	a := newAdapter(t, Config{Servers: map[string]Server{"h": {Transport: srv.transport(true)}}})
	ts, err := a.ListTools(t.Context())
	if err != nil || len(ts.Tools()) != 1 || ts.Lookup("h__b") == nil {
		t.Fatalf("ListTools() = %v, %v; want tool b alone", ts.Tools(), err)
	}
}

// TestErrorTwice: a response whose first error member has a code that is
// not a number, followed by a fine one, fails its call with the screen's
// error, and the connection lives on: go-sdk's decoder decodes both
// occurrences and fails on the first, which used to cost the connection
// (the screen checked the last occurrence alone).
func TestErrorTwice(t *testing.T) {
	checkPeerFault(t, faultserver.ToolErrorTwice, "invalid JSON-RPC error from server")
}

// TestRequestIDOfOtherKind: a server request whose id is an object is
// dropped, and the call during which it came ends with its result: go-sdk
// cannot decode such an id, and ended the connection (the screen dropped
// only the ids of numbers it cannot decode).
func TestRequestIDOfOtherKind(t *testing.T) {
	checkPeerFault(t, faultserver.ToolObjectIDRequest, "")
}

// checkPeerFault calls tool of a raw peer (faultserver) over a pipe, with
// no retry: the call fails with a *ServerError saying want (or, with want
// "", answers "ok"), and the next call, on the same connection, answers
// "ok".
func checkPeerFault(t *testing.T, tool, want string) {
	p := faultserver.NewPeer(faultserver.PeerOptions{Tools: append(faultserver.BasicCatalog(), faultserver.Descriptor(tool))})
	a := newAdapter(t, Config{Servers: map[string]Server{"f": {Transport: p.Transport()}}})
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	res, err := lookup(t, ts, "f__"+tool).Invoke(faultCtx(t), nil)
	switch {
	case want == "" && (err != nil || res.Text() != "ok"):
		t.Errorf("Invoke() = %v, %v; want ok", res, err)
	case want != "":
		checkServerErr(t, err, "f")
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Invoke() = %v; want an error saying %s", err, want)
		}
	}
	if res, err := lookup(t, ts, "f__ok").Invoke(faultCtx(t), nil); err != nil || res.Text() != "ok" {
		t.Fatalf("ok after the fault = %v, %v; want ok on the same connection", res, err)
	}
}

// TestServerCompletionRequestRefused: a completion/complete a server
// sends is answered method not found (MCP defines it as a client's
// request only), on the adapter's clients and on a prebuilt one, and is
// not sent back to the server. go-sdk's client (v1.8.0) took it as a
// server request and forwarded it to the server, answering with the
// server's own result ("reflected" here), and waited for that answer
// without bound: a goroutine per request the server left unanswered.
func TestServerCompletionRequestRefused(t *testing.T) {
	for _, prebuilt := range []bool{false, true} {
		t.Run(fmt.Sprintf("prebuilt=%t", prebuilt), func(t *testing.T) {
			answers := make(chan *jsonrpc.Response, 1)
			s := handServer{answers: answers,
				onCall:  []string{`{"jsonrpc":"2.0","id":"q","method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"}}}`},
				results: map[string]string{"completion/complete": `{"completion":{"values":["reflected"]}}`}}
			server := Server{Transport: s.transport(false)}
			if prebuilt {
				server.Client = mcp.NewClient(&mcp.Implementation{Name: "prebuilt", Version: "1"}, nil)
			}
			a := newAdapter(t, Config{Servers: map[string]Server{"b": server}})
			res := must(t).result(lookupTool(t, a, "b__ask").Invoke(t.Context(), nil))
			if res.Text() != "answered" {
				t.Errorf("Invoke() = %s, want the server's result", resultText(res))
			}
			r := <-answers
			var we *jsonrpc.Error
			if !errors.As(r.Error, &we) || we.Code != jsonrpc.CodeMethodNotFound || r.Result != nil {
				t.Errorf("the server's completion/complete was answered %s, %v; want method not found", r.Result, r.Error)
			}
		})
	}
}

// TestCyclicSchemaRefusedBeforeSDK: on a prebuilt client (Server.Client)
// whose elicitation handler accepts, an elicitation whose requested schema
// has a cycle of references the validator follows without end (here p's
// $ref is p itself) is refused before go-sdk's client sees it: a live
// request answered invalid params, a result asking it as an input request
// failing its call, in both eras. go-sdk (v1.8.0, Client.elicit) resolves
// and validates an accepted answer against the schema with jsonschema-go,
// which recursed until the stack overflowed, a fatal error that ended the
// process, for live requests and for the input requests its
// multi-round-trip middleware fulfils. The adapter's own clients refuse
// such an answer themselves (TestSchemaGuardElicitationCycle).
func TestCyclicSchemaRefusedBeforeSDK(t *testing.T) {
	const params = `{"message":"m","requestedSchema":{"type":"object","properties":{"p":{"type":"string","$ref":"#/properties/p"}}}}`
	t.Run("live", func(t *testing.T) {
		answers := make(chan *jsonrpc.Response, 1)
		s := handServer{answers: answers, onCall: []string{`{"jsonrpc":"2.0","id":"q","method":"elicitation/create","params":` + params + `}`}}
		var calls atomic.Int32
		server := Server{Transport: s.transport(false), Client: acceptingClient(&calls)}
		checkRefused(t, newAdapter(t, Config{Servers: map[string]Server{"b": server}}), answers, &calls)
	})
	for _, mode := range []Mode{ModeModern, ModeLegacy} {
		t.Run(fmt.Sprintf("round/%s", mode), func(t *testing.T) {
			server := rewritingServer(mode, func() string {
				return `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":` + params + `}}}`
			})
			var calls atomic.Int32
			server.Client = acceptingClient(&calls)
			a := newAdapter(t, Config{Servers: map[string]Server{"r": server}})
			res, err := lookupTool(t, a, "r__x").Invoke(t.Context(), nil)
			checkServerErr(t, err, "r")
			if !strings.Contains(err.Error(), `input request "q"`) {
				t.Errorf("Invoke() = %v, %v; want an error naming input request \"q\"", res, err)
			}
			if n := calls.Load(); n != 0 {
				t.Errorf("handler ran %d times, want 0", n)
			}
		})
	}
}

// acceptingClient returns a go-sdk client whose elicitation handler,
// counted in calls, accepts with {"p":"x"}, its multi-round-trip
// middleware on (go-sdk's default).
func acceptingClient(calls *atomic.Int32) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "prebuilt", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			calls.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"p": "x"}}, nil
		},
	})
}
