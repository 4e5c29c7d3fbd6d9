package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMembersTwice: go-sdk's decoder decodes every occurrence of a member
// into the same field, so a check of the last one alone misses what an
// earlier one does: an input request that is not an object panics as its
// occurrence is decoded, whatever follows, a null leaves the
// inputRequests or resultType before it, and the depth bound counts what a
// later occurrence replaces (a tool nesting too deep, which the screen
// drops from the last occurrence of a tools/list result). The screen
// faults such results, and what it passes the SDK decodes without
// panicking.
func TestMembersTwice(t *testing.T) {
	const (
		fine    = `{"method":"elicitation/create","params":{"message":"m"}}`
		nullOpt = `{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"p":{"type":"string","oneOf":[null]}}}}}`
	)
	deep := strings.Repeat("[", SDKMaxDepth) + strings.Repeat("]", SDKMaxDepth)
	tests := []struct{ name, result, want string }{
		{"null request, then none", `{"resultType":"input_required","inputRequests":{"q":null},"inputRequests":{}}`, `input request "q" is not an object`},
		{"null request, then null", `{"resultType":"input_required","inputRequests":{"q":null},"inputRequests":null}`, `input request "q" is not an object`},
		{"scalar request, then a fine one", `{"inputRequests":{"q":5},"inputRequests":{"r":` + fine + `}}`, `input request "q" is not an object`},
		{"panicking request, then null", `{"resultType":"input_required","inputRequests":{"q":` + nullOpt + `},"inputRequests":null}`, `input request "q" has null`},
		{"undefined resultType, then null", `{"resultType":"bogus","resultType":null,"content":[]}`, `resultType "bogus"`},
		{"fine requests, then null", `{"resultType":"input_required","inputRequests":{"r":` + fine + `},"inputRequests":null}`, ""},
		{"panicking request, then fine ones", `{"resultType":"input_required","inputRequests":{"q":` + nullOpt + `},"inputRequests":{"r":` + fine + `}}`, ""},
		{"defined resultType, then null", `{"resultType":"complete","resultType":null,"content":[]}`, ""},
		// The SDK's depth bound counts the whole message, the tools and
		// results a later occurrence replaces too.
		{"deep tool, then none", `{"tools":[{"name":"a","inputSchema":{"x":` + deep + `}}],"tools":[]}`, "nests deeper"},
		{"deep tool, then another result", `{"tools":[{"name":"a","inputSchema":{"x":` + deep + `}}]},"result":{"tools":[]}`, "nests deeper"},
		{"deep tool alone", `{"tools":[{"name":"a","inputSchema":{"x":` + deep + `}},{"name":"b","inputSchema":{}}]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := []byte(`{"jsonrpc":"2.0","id":1,"result":` + tt.result + `}`)
			var out []byte
			if err := testScreen(1<<20, nil).each(msg, nil, nil, func(m []byte, _ bool, _ *record) { out = m }); err != nil {
				t.Fatal(err)
			}
			got, err := jsonrpc.DecodeMessage(out)
			if err != nil {
				t.Fatalf("the SDK cannot decode %s: %v", out, err)
			}
			res := got.(*jsonrpc.Response)
			if tt.want != "" {
				if res.Error == nil || !strings.Contains(res.Error.Error(), tt.want) {
					t.Fatalf("screened %s = %s; want an error saying %s", msg, out, tt.want)
				}
				return
			}
			if res.Error != nil {
				t.Fatalf("screened %s = %s; want it passed", msg, out)
			}
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("the SDK panics decoding the result the screen passed, %s: %v", out, p)
					}
				}()
				_ = json.Unmarshal(res.Result, new(mcp.CallToolResult))
			}()
		})
	}
}

// FuzzSDKDecodesPassed holds the screen to go-sdk's decoder: whatever a
// message, a message the screen passes on decodes without an error (one
// would end the connection) or a panic, and its result decodes as a
// tools/call result without a panic.
func FuzzSDKDecodesPassed(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"q":null},"inputRequests":{}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{"q":{"method":"elicitation/create","params":{}}},"inputRequests":null}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"x":[[[[]]]]}}],"tools":[]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"video"}],"content":[{"type":"text","text":"a"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"bogus","resultType":null}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"x"},"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"x":` + strings.Repeat("[", SDKMaxDepth) + strings.Repeat("]", SDKMaxDepth) + `}}],"tools":[]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = testScreen(1<<20, nil).each(data, nil, nil, func(out []byte, _ bool, _ *record) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("the SDK panics decoding %q, which the screen passed on: %v", out, p)
				}
			}()
			msg, err := jsonrpc.DecodeMessage(out)
			if err != nil {
				t.Fatalf("the SDK fails %q, which the screen passed on: %v", out, err)
			}
			if res, ok := msg.(*jsonrpc.Response); ok && len(res.Result) > 0 {
				_ = json.Unmarshal(res.Result, new(mcp.CallToolResult))
			}
		})
	})
}

// TestErrorTwice: an error member of the wrong shape in any occurrence
// (the error, its code or its message) makes go-sdk's decoder fail the
// message, which ends the connection: the screen answers the call with
// its fault instead, as for one occurrence.
func TestErrorTwice(t *testing.T) {
	for _, e := range []string{
		`"error":{"code":"x"},"error":{"code":1,"message":"m"}`,
		`"error":{"code":1.5,"message":"m"},"error":null`,
		`"error":5,"error":{"code":1,"message":"m"}`,
		`"error":{"code":1,"message":2,"message":"m"}`,
		`"error":{"code":1,"code":null,"message":"m","message":[]}`,
	} {
		msg := []byte(`{"jsonrpc":"2.0","id":1,` + e + `}`)
		if _, err := jsonrpc.DecodeMessage(msg); err == nil {
			t.Fatalf("the SDK decodes %s: not a case", msg)
		}
		var out []byte
		if err := testScreen(1<<20, nil).each(msg, nil, nil, func(m []byte, _ bool, _ *record) { out = m }); err != nil {
			t.Fatal(err)
		}
		got, err := jsonrpc.DecodeMessage(out)
		if err != nil || !strings.Contains(got.(*jsonrpc.Response).Error.Error(), "invalid JSON-RPC error from server") {
			t.Errorf("screened %s = %s, %v; want the screen's fault", msg, out, err)
		}
	}
	// A fine error twice passes as it came.
	msg := []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":null},"error":{"code":null,"message":"m"}}`)
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		t.Fatalf("the SDK fails %s: %v", msg, err)
	}
	var out []byte
	if err := testScreen(1<<20, nil).each(msg, nil, nil, func(m []byte, _ bool, _ *record) { out = m }); err != nil || string(out) != string(msg) {
		t.Errorf("screened %s = %s, %v; want it passed as it came", msg, out, err)
	}
}

// TestRequestIDOfOtherKind: a server request or notification whose id is
// an object, an array or a boolean is dropped: go-sdk cannot decode such
// an id, and fails the message, which ends the connection.
func TestRequestIDOfOtherKind(t *testing.T) {
	for _, id := range []string{`{}`, `{"a":1}`, `[1]`, `true`, `false`} {
		msg := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if _, err := jsonrpc.DecodeMessage(msg); err == nil {
			t.Fatalf("the SDK decodes %s: not a case", msg)
		}
		passed := false
		if err := testScreen(1<<20, nil).each(msg, nil, nil, func([]byte, bool, *record) { passed = true }); err != nil || passed {
			t.Errorf("screened %s: passed %v, %v; want it dropped", msg, passed, err)
		}
	}
	for _, id := range []string{`1`, `"a"`, `null`} { // decoded as ids (null: a notification)
		msg := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		passed := false
		if err := testScreen(1<<20, nil).each(msg, nil, nil, func([]byte, bool, *record) { passed = true }); err != nil || !passed {
			t.Errorf("screened %s: passed %v, %v; want it passed", msg, passed, err)
		}
	}
}
