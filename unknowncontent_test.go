package mcpadapter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkContentError returns the SDK's error when it fails to decode result
// because of a content item's type (the failure sanitizeResultJSON exists
// to prevent), and nil otherwise.
func sdkContentError(result []byte) error {
	var res mcp.CallToolResult
	err := json.Unmarshal(result, &res)
	if err == nil {
		return nil
	}
	// Besides the unknown-type errors, the decoder's own messages for an
	// item that is not an object or a type that is not a string.
	msg := err.Error()
	if strings.Contains(msg, "content type") || strings.Contains(msg, "nil content") ||
		strings.HasSuffix(msg, "of type mcp.wireContent") || strings.HasSuffix(msg, ".type of type string") {
		return err
	}
	return nil
}

// sdkAccepts reports whether the SDK decodes result without error.
func sdkAccepts(result []byte) bool {
	var res mcp.CallToolResult
	return json.Unmarshal(result, &res) == nil
}

// placeholder is the item sanitizeResultJSON puts in place of item.
func placeholder(text, item string) string {
	return `{"type":"text","text":` + strconv.Quote(text) + `,"_meta":{"mcpadapter/original":` + item + `}}`
}

func TestSanitizeResultJSON(t *testing.T) {
	const (
		text  = `{"type":"text","text":"a"}`
		video = `{"type":"video","uri":"https://x/v.mp4"}`
	)
	tests := []struct {
		name string
		in   string
		want string // "" means unchanged
	}{
		{"empty input", ``, ""},
		{"null", `null`, ""},
		{"array", `[` + video + `]`, ""},
		{"no content", `{"structuredContent":{"a":1}}`, ""},
		{"null content", `{"content":null}`, ""},
		{"object content", `{"content":` + video + `}`, ""},
		{"empty content", `{"content":[]}`, ""},
		{"all known", `{"content":[` + text + `,{"type":"image","data":"","mimeType":"image/png"},{"type":"audio","data":"","mimeType":"audio/wav"},{"type":"resource_link","uri":"u","name":"n"},{"type":"resource","resource":{"uri":"u","text":"t"}},{"type":"tool_use","id":"1","name":"f","input":{}},{"type":"tool_result","toolUseId":"1","content":[` + text + `]}]}`, ""},
		{"unknown", `{"content":[` + text + `,` + video + `,` + text + `]}`,
			`{"content":[` + text + `,` + placeholder(`[unsupported content type "video"]`, video) + `,` + text + `]}`},
		{"unknown keeps other members", ` { "isError" : true , "content" : [ ` + video + ` ] , "_meta" : {"k":"v"} } `,
			` { "isError" : true , "content" : [ ` + placeholder(`[unsupported content type "video"]`, video) + ` ] , "_meta" : {"k":"v"} } `},
		{"multi-line item", "{\"content\":[{\n\"type\": \"video\"\n}]}",
			"{\"content\":[" + placeholder(`[unsupported content type "video"]`, "{\n\"type\": \"video\"\n}") + "]}"},
		{"missing type", `{"content":[{"text":"a"}]}`, `{"content":[` + placeholder(`[unsupported content]`, `{"text":"a"}`) + `]}`},
		{"null type", `{"content":[{"type":null}]}`, `{"content":[` + placeholder(`[unsupported content]`, `{"type":null}`) + `]}`},
		{"number type", `{"content":[{"type":1}]}`, `{"content":[` + placeholder(`[unsupported content]`, `{"type":1}`) + `]}`},
		{"wrong case key", `{"content":[{"Type":"text","text":"a"}]}`, `{"content":[` + placeholder(`[unsupported content]`, `{"Type":"text","text":"a"}`) + `]}`},
		{"wrong case value", `{"content":[{"type":"Text"}]}`, `{"content":[` + placeholder(`[unsupported content type "Text"]`, `{"type":"Text"}`) + `]}`},
		{"escaped known type", `{"content":[{"type":"t\u0065xt","text":"a"}]}`, ""},
		{"escaped key", `{"content":[{"t\u0079pe":"video"}]}`, `{"content":[` + placeholder(`[unsupported content type "video"]`, `{"t\u0079pe":"video"}`) + `]}`},
		{"escaped content key", `{"\u0063ontent":[` + video + `]}`, `{"\u0063ontent":[` + placeholder(`[unsupported content type "video"]`, video) + `]}`},
		{"wrong case content key", `{"Content":[` + video + `]}`, ""},
		{"last type wins", `{"content":[{"type":"video","type":"text","text":"a"}]}`, ""},
		{"last type wins unknown", `{"content":[{"type":"text","type":"video"}]}`, `{"content":[` + placeholder(`[unsupported content type "video"]`, `{"type":"text","type":"video"}`) + `]}`},
		{"last content wins", `{"content":[` + video + `],"content":[` + text + `]}`, ""},
		{"non-object items", `{"content":["s",1,null,[],true]}`, `{"content":[` + strings.Join([]string{
			placeholder(`[unsupported content]`, `"s"`), placeholder(`[unsupported content]`, `1`), placeholder(`[unsupported content]`, `null`),
			placeholder(`[unsupported content]`, `[]`), placeholder(`[unsupported content]`, `true`)}, ",") + `]}`},
		{"quote in type", `{"content":[{"type":"a\"b"}]}`, `{"content":[` + placeholder(`[unsupported content type "a\"b"]`, `{"type":"a\"b"}`) + `]}`},
		{"nested unknown", `{"content":[{"type":"tool_result","toolUseId":"1","content":[` + text + `,` + video + `]}]}`,
			`{"content":[{"type":"tool_result","toolUseId":"1","content":[` + text + `,` + placeholder(`[unsupported content type "video"]`, video) + `]}]}`},
		{"nested tool_use", `{"content":[{"type":"tool_result","content":[{"type":"tool_use"}]}]}`,
			`{"content":[{"type":"tool_result","content":[` + placeholder(`[unsupported content type "tool_use"]`, `{"type":"tool_use"}`) + `]}]}`},
		{"nested null", `{"content":[{"type":"tool_result","content":null}]}`, ""},
		{"nested not an array", `{"content":[{"type":"tool_result","content":"x"}]}`,
			`{"content":[` + placeholder(`[unsupported content type "tool_result"]`, `{"type":"tool_result","content":"x"}`) + `]}`},
		{"malformed", `{"content":[` + video + `,]}`, ""},
		{"malformed elsewhere", `{"content":[` + video + `],"x":}`, ""},
		{"truncated", `{"content":[` + video, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			got, changed := sanitizeResultJSON(in)
			if tt.want == "" {
				if changed || !bytes.Equal(got, in) {
					t.Errorf("sanitizeResultJSON(%s) = %s, %v; want it unchanged", in, got, changed)
				}
				if len(in) > 0 && &got[0] != &in[0] {
					t.Errorf("sanitizeResultJSON(%s) copied an unchanged result", in)
				}
			} else if !changed || string(got) != tt.want {
				t.Errorf("sanitizeResultJSON(%s)\n = %s, %v\nwant %s, true", in, got, changed, tt.want)
			}
			// Whatever the SDK rejects for its content type, it accepts
			// once sanitized; what it accepts, we leave alone.
			if json.Valid(in) {
				if err := sdkContentError(got); err != nil {
					t.Errorf("the SDK still rejects the sanitized result: %v", err)
				}
				if changed && sdkAccepts(in) {
					t.Errorf("changed a result the SDK accepts")
				}
			}
		})
	}
}

func TestSanitizeMessageJSON(t *testing.T) {
	const (
		video = `{"type":"video"}`
		fixed = `{"type":"text","text":"[unsupported content type \"video\"]","_meta":{"mcpadapter/original":{"type":"video"}}}`
	)
	tests := []struct{ name, in, want string }{
		{"response", `{"jsonrpc":"2.0","id":1,"result":{"content":[` + video + `]}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[` + fixed + `]}}`},
		{"batch", `[{"id":1,"result":{"content":[]}},{"id":2,"result":{"content":[` + video + `]}},{"method":"x"}]`,
			`[{"id":1,"result":{"content":[]}},{"id":2,"result":{"content":[` + fixed + `]}},{"method":"x"}]`},
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"content":[` + video + `]}}`, ""},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`, ""},
		{"not JSON", `/mcp/message?sessionId=1`, ""},
		{"malformed", `{"id":1,"result":{"content":[` + video + `]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := sanitizeMessageJSON([]byte(tt.in))
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if string(got) != want || changed != (tt.want != "") {
				t.Errorf("sanitizeMessageJSON(%s)\n = %s, %v\nwant %s", tt.in, got, changed, want)
			}
		})
	}
}

// rawResults are the tools/call results the hand-written peers send, by
// tool name. "mixed" holds a content type the SDK does not know.
var rawResults = map[string]string{
	"mixed": `{"content":[{"type":"text","text":"before"},{"type":"video","uri":"https://example.com/v.mp4","mimeType":"video/mp4"},` +
		`{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==","mimeType":"image/png"}],` +
		`"_meta":{"acme/trace":"t-9"}}`,
	"plain": `{"content":[{"type":"text","text":"fine"}]}`,
}

// rawReply answers one JSON-RPC request of a legacy client with the
// message a minimal server sends, or nil for a notification.
func rawReply(line []byte) []byte {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &req); err != nil || req.ID == nil {
		return nil
	}
	reply := `"error":{"code":-32601,"message":"method not found"}`
	switch req.Method {
	case "initialize":
		reply = `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"v1"}}`
	case "tools/call":
		if res, ok := rawResults[req.Params.Name]; ok {
			reply = `"result":` + res
		} else {
			reply = `"error":{"code":-32602,"message":"unknown tool"}`
		}
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,` + reply + `}`)
}

// connectRawPeer connects a legacy client, through wrap when it is not nil,
// to a hand-written peer speaking newline-delimited JSON-RPC over pipes: a
// go-sdk server cannot send content types the SDK does not know.
func connectRawPeer(t *testing.T, wrap func(mcp.Transport) mcp.Transport) *mcp.ClientSession {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer serverOut.Close()
		sc := bufio.NewScanner(serverIn)
		for sc.Scan() {
			if reply := rawReply(sc.Bytes()); reply != nil {
				if _, err := serverOut.Write(append(reply, '\n')); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		serverIn.Close()
		<-done
	})
	var transport mcp.Transport = &mcp.IOTransport{Reader: clientIn, Writer: clientOut}
	if wrap != nil {
		transport = wrap(transport)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "content-client", Version: "v1"}, nil).
		Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// checkUnknownResult checks the converted "mixed" result: every block
// survives, the unknown one as a placeholder with its original JSON.
func checkUnknownResult(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	r := newResult(res)
	checkGolden(t, "content/unknown.json", renderResult(t, r, testCall("mixed")))
	if len(r.Content) != 3 {
		t.Fatalf("got %d blocks, want 3: %+v", len(r.Content), r.Content)
	}
	if b := r.Content[1]; b.Type != BlockText || !json.Valid(b.Raw) || !bytes.Contains(b.Raw, []byte(`"video"`)) {
		t.Errorf("unknown block = %+v, want a text placeholder with the original in Raw", b)
	}
}

// TestSanitizeTransport calls a tool whose result holds an unknown content
// type: without sanitizeTransport the SDK fails the whole call, with it the
// call succeeds and keeps every block.
func TestSanitizeTransport(t *testing.T) {
	t.Run("without", func(t *testing.T) {
		cs := connectRawPeer(t, nil)
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mixed"})
		if err == nil || !strings.Contains(err.Error(), `unrecognized content type "video"`) {
			t.Fatalf("CallTool = %v, want the SDK's unrecognized content type error (if the SDK became lenient, revisit unknowncontent.go)", err)
		}
	})
	t.Run("with", func(t *testing.T) {
		cs := connectRawPeer(t, sanitizeTransport)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mixed"})
		if err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		checkUnknownResult(t, res)
		// Errors and plain results pass through.
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "nope"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("CallTool(nope) = %v, want the server's error", err)
		}
		if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "plain"}); err != nil || newResult(res).Text() != "fine" {
			t.Errorf("CallTool(plain) = %v, %v; want \"fine\"", res, err)
		}
	})
	t.Run("nil and streamable", func(t *testing.T) {
		if got := sanitizeTransport(nil); got != nil {
			t.Errorf("sanitizeTransport(nil) = %v, want nil", got)
		}
		st := &mcp.StreamableClientTransport{Endpoint: "http://localhost"}
		if got := sanitizeTransport(st); got != mcp.Transport(st) {
			t.Errorf("sanitizeTransport(streamable) = %v, want it unchanged", got)
		}
	})
}

// rawHTTPHandler is a minimal Streamable HTTP server answering with
// application/json ("json"), one-line SSE events ("sse"), or SSE events
// whose data spans several lines ("sse-multiline").
func rawHTTPHandler(mode string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		reply := rawReply(body)
		if reply == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		switch mode {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
			_, _ = w.Write(reply)
		case "sse":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, ": comment\nevent: message\nid: 1\ndata: %s\n\n", reply)
		case "sse-multiline":
			var buf bytes.Buffer
			_ = json.Indent(&buf, reply, "", "  ")
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\r\n")
			for line := range strings.Lines(buf.String()) {
				fmt.Fprintf(w, "data:%s\r\n", strings.TrimSuffix(line, "\n"))
			}
			fmt.Fprint(w, "\r\n")
		}
	})
}

// roundTripperFunc adapts a function to http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestSanitizeHTTP runs the unknown-content call over Streamable HTTP with
// each response style, through an HTTP client whose RoundTripper calls
// sanitizeHTTPResponse.
func TestSanitizeHTTP(t *testing.T) {
	for _, mode := range []string{"json", "sse", "sse-multiline"} {
		t.Run(mode, func(t *testing.T) {
			srv := httptest.NewServer(rawHTTPHandler(mode))
			t.Cleanup(srv.Close)
			connect := func(sanitize bool) *mcp.ClientSession {
				t.Helper()
				base := srv.Client().Transport
				hc := &http.Client{Transport: roundTripperFunc(func(req *http.Request) (*http.Response, error) {
					resp, err := base.RoundTrip(req)
					if err == nil && sanitize {
						sanitizeHTTPResponse(resp)
					}
					return resp, err
				})}
				transport := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, DisableStandaloneSSE: true}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "content-client", Version: "v1"}, nil).
					Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				t.Cleanup(func() { _ = cs.Close() })
				return cs
			}

			if _, err := connect(false).CallTool(t.Context(), &mcp.CallToolParams{Name: "mixed"}); err == nil || !strings.Contains(err.Error(), "unrecognized content type") {
				t.Fatalf("unsanitized CallTool = %v, want the SDK's unrecognized content type error", err)
			}
			res, err := connect(true).CallTool(t.Context(), &mcp.CallToolParams{Name: "mixed"})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			checkUnknownResult(t, res)
		})
	}
}

// newHTTPResponse returns a response with the given content type and body,
// and a Content-Length when length is not negative.
func newHTTPResponse(contentType string, body io.Reader, length int) *http.Response {
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(body), ContentLength: int64(length)}
	resp.Header.Set("Content-Type", contentType)
	if length >= 0 {
		resp.Header.Set("Content-Length", strconv.Itoa(length))
	}
	return resp
}

func TestSanitizeHTTPResponse(t *testing.T) {
	const (
		unknown = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"video"}]}}`
		fixed   = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"[unsupported content type \"video\"]","_meta":{"mcpadapter/original":{"type":"video"}}}]}}`
		known   = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}]}}`
	)
	tests := []struct {
		name, contentType, body, want string
		keepsLength                   bool
	}{
		{"json", "application/json", unknown, fixed, false},
		{"json with params", "application/json; charset=utf-8", unknown, fixed, false},
		{"json unchanged", "application/json", known, known, false},
		{"json batch", "application/json", "[" + known + "," + unknown + "]", "[" + known + "," + fixed + "]", false},
		{"other type", "text/plain", unknown, unknown, true},
		{"bad type", "application/json;;", unknown, unknown, true},
		{"sse", "text/event-stream", "id: 7\ndata: " + unknown + "\n\n", "id: 7\ndata: " + fixed + "\n\n", false},
		{"sse crlf", "text/event-stream", "data: " + unknown + "\r\n\r\n", "data: " + fixed + "\n\r\n", false},
		{"sse several events", "text/event-stream",
			"event: endpoint\ndata: /message?id=1\n\n: ping\n\ndata: " + known + "\n\ndata: " + unknown + "\n\n",
			"event: endpoint\ndata: /message?id=1\n\n: ping\n\ndata: " + known + "\n\ndata: " + fixed + "\n\n", false},
		{"sse multi-line data", "text/event-stream",
			"data: {\"id\":1,\ndata:  \"result\":{\"content\":[\ndata: {\"type\":\"video\"}]}}\nid: 2\n\n",
			"data: {\"id\":1,\ndata: \"result\":{\"content\":[\ndata: {\"type\":\"text\",\"text\":\"[unsupported content type \\\"video\\\"]\",\"_meta\":{\"mcpadapter/original\":{\"type\":\"video\"}}}]}}\nid: 2\n\n", false},
		{"sse unparsable multi-line", "text/event-stream", "data: {\"id\":1,\ndata: oops\n\n", "data: {\"id\":1,\ndata: oops\n\n", false},
		{"sse event cut by EOF", "text/event-stream", "data: " + unknown, "data: " + fixed + "\n", false},
		{"sse empty", "text/event-stream", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := newHTTPResponse(tt.contentType, strings.NewReader(tt.body), len(tt.body))
			sanitizeHTTPResponse(resp)
			if tt.keepsLength {
				if resp.ContentLength != int64(len(tt.body)) || resp.Header.Get("Content-Length") == "" {
					t.Errorf("Content-Length changed on an untouched body: %d %q", resp.ContentLength, resp.Header.Get("Content-Length"))
				}
			} else if resp.ContentLength != -1 || resp.Header.Get("Content-Length") != "" {
				t.Errorf("Content-Length = %d %q, want it removed", resp.ContentLength, resp.Header.Get("Content-Length"))
			}
			got, err := io.ReadAll(iotest.OneByteReader(resp.Body))
			if err != nil {
				t.Fatalf("reading body: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("body\n = %q\nwant %q", got, tt.want)
			}
			if err := resp.Body.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}

	t.Run("no body", func(t *testing.T) {
		sanitizeHTTPResponse(nil)
		resp := &http.Response{Header: http.Header{"Content-Type": {"application/json"}}, Body: http.NoBody}
		sanitizeHTTPResponse(resp)
		if resp.Body != http.NoBody {
			t.Errorf("Body replaced on an empty response")
		}
	})

	t.Run("read errors", func(t *testing.T) {
		boom := errors.New("boom")
		for _, ct := range []string{"application/json", "text/event-stream"} {
			body := io.MultiReader(strings.NewReader("data: "+unknown), iotest.ErrReader(boom))
			resp := newHTTPResponse(ct, body, -1)
			sanitizeHTTPResponse(resp)
			got, err := io.ReadAll(resp.Body)
			if !errors.Is(err, boom) {
				t.Errorf("%s: ReadAll error = %v, want %v", ct, err, boom)
			}
			// What was read before the error reaches the reader unchanged.
			if ct == "application/json" && string(got) != "data: "+unknown {
				t.Errorf("%s: body before the error = %q", ct, got)
			}
		}
	})
}

// TestSanitizeSSEStreams checks that events flow one at a time: the second
// event is written only after the reader has seen the first, so a body that
// buffered more than one event would block forever.
func TestSanitizeSSEStreams(t *testing.T) {
	pr, pw := io.Pipe()
	resp := newHTTPResponse("text/event-stream", pr, -1)
	resp.Body = pr
	sanitizeHTTPResponse(resp)
	t.Cleanup(func() { resp.Body.Close() })

	events := []string{
		"data: {\"id\":1,\"result\":{\"content\":[{\"type\":\"video\"}]}}\n\n",
		"data: {\"id\":2,\"result\":{\"content\":[]}}\n\n",
	}
	seen := make(chan struct{})
	writeErr := make(chan error, 1)
	go func() {
		if _, err := io.WriteString(pw, events[0]); err != nil {
			writeErr <- err
			return
		}
		select {
		case <-seen:
		case <-t.Context().Done():
			writeErr <- t.Context().Err()
			return
		}
		_, err := io.WriteString(pw, events[1])
		pw.Close()
		writeErr <- err
	}()

	br := bufio.NewReader(resp.Body)
	readEvent := func() string {
		t.Helper()
		var ev strings.Builder
		for {
			line, err := br.ReadString('\n')
			ev.WriteString(line)
			if err != nil {
				t.Fatalf("reading event: %v (got %q)", err, ev.String())
			}
			if line == "\n" {
				return ev.String()
			}
		}
	}
	if got := readEvent(); !strings.Contains(got, "[unsupported content type") {
		t.Errorf("first event = %q, want it sanitized", got)
	}
	close(seen)
	if got := readEvent(); got != events[1] {
		t.Errorf("second event = %q, want %q", got, events[1])
	}
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the last event: %v, want EOF", err)
	}
}

// TestSanitizeSSELargeEvent checks that an event larger than the SDK's
// event limit passes through unchanged rather than being buffered.
func TestSanitizeSSELargeEvent(t *testing.T) {
	pad := strings.Repeat("x", mcp.DefaultMaxEventSize)
	body := "data: {\"id\":1,\"result\":{\"content\":[{\"type\":\"video\",\"pad\":\"" + pad + "\"}]}}\n\n" +
		"data: {\"id\":2,\"result\":{\"content\":[{\"type\":\"video\"}]}}\n\n"
	resp := newHTTPResponse("text/event-stream", strings.NewReader(body), -1)
	sanitizeHTTPResponse(resp)
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	first, second, _ := strings.Cut(string(got), "\n\n")
	if first+"\n\n" != body[:len(first)+2] {
		t.Errorf("the large event changed")
	}
	if !strings.Contains(second, "[unsupported content type") {
		t.Errorf("the event after the large one = %q, want it sanitized", second)
	}
}

// FuzzSanitizeResultJSON checks that sanitizeResultJSON never panics, keeps
// valid JSON valid, and agrees with the SDK's decoder: after sanitizing, the
// SDK never rejects a result for its content types, and a result the SDK
// accepts is left alone.
func FuzzSanitizeResultJSON(f *testing.F) {
	f.Add([]byte(rawResults["mixed"]))
	f.Add([]byte(`{"content":[{"type":"tool_result","content":[{"type":"video"}]}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := bytes.Clone(in)
		out, changed := sanitizeResultJSON(in)
		if !bytes.Equal(in, orig) {
			t.Fatalf("sanitizeResultJSON modified its input")
		}
		if !changed {
			if !bytes.Equal(out, in) {
				t.Fatalf("unchanged, but returned %q for %q", out, in)
			}
		} else if bytes.Equal(out, in) {
			t.Fatalf("changed, but returned its input %q", in)
		}
		if !json.Valid(in) {
			if changed {
				t.Fatalf("changed invalid JSON %q", in)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("sanitizeResultJSON(%q) = %q: invalid JSON", in, out)
		}
		if err := sdkContentError(out); err != nil {
			t.Fatalf("sanitizeResultJSON(%q) = %q: the SDK still rejects it: %v", in, out, err)
		}
		if changed && sdkAccepts(in) {
			t.Fatalf("sanitizeResultJSON changed %q, which the SDK accepts", in)
		}
	})
}

// BenchmarkSanitizeResultJSON measures the check on a normal result (text,
// a 64 KiB image, a link), which must stay cheap next to the SDK's own
// decoding of the same bytes, and the rewrite of a result with an unknown
// item.
func BenchmarkSanitizeResultJSON(b *testing.B) {
	img, err := json.Marshal(make([]byte, 64<<10))
	if err != nil {
		b.Fatal(err)
	}
	normal := []byte(`{"content":[{"type":"text","text":"the weather in Paris"},{"type":"image","mimeType":"image/png","data":` + string(img) +
		`},{"type":"resource_link","uri":"file:///data.csv","name":"data.csv"}],"structuredContent":{"tempC":21.5}}`)
	unknown := bytes.Replace(normal, []byte(`"type":"image"`), []byte(`"type":"video"`), 1)

	b.Run("normal", func(b *testing.B) {
		b.SetBytes(int64(len(normal)))
		b.ReportAllocs()
		for b.Loop() {
			if _, changed := sanitizeResultJSON(normal); changed {
				b.Fatal("changed a normal result")
			}
		}
	})
	b.Run("unknown", func(b *testing.B) {
		b.SetBytes(int64(len(unknown)))
		b.ReportAllocs()
		for b.Loop() {
			if _, changed := sanitizeResultJSON(unknown); !changed {
				b.Fatal("left an unknown item")
			}
		}
	})
	b.Run("sdk-decode", func(b *testing.B) {
		b.SetBytes(int64(len(normal)))
		b.ReportAllocs()
		for b.Loop() {
			var res mcp.CallToolResult
			if err := json.Unmarshal(normal, &res); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Compile-time checks that the wrappers keep their interfaces.
var (
	_ mcp.Transport  = (*wrappedTransport)(nil)
	_ mcp.Connection = (*sanitizingConn)(nil)
	_ io.ReadCloser  = (*jsonBody)(nil)
	_ io.ReadCloser  = (*sseBody)(nil)
)
