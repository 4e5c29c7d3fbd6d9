package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
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

// testScreen returns a screen with the bound n, placeholders as the
// adapter writes them and its logs in logs (when not nil).
func testScreen(n int, logs io.Writer) *Screen {
	opts := Options{MaxMessageBytes: n, PlaceholderKey: "mcpadapter/original", Placeholder: func(typ string) string {
		if typ == "" {
			return "[unsupported content]"
		}
		return fmt.Sprintf("[unsupported content type %q]", typ)
	}}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	return New(opts)
}

// sanitizeResultJSON screens a result alone (Screen.Result), and reports
// whether it changed.
func sanitizeResultJSON(res []byte) ([]byte, bool) {
	out, err := testScreen(16<<20, nil).Result(res, nil)
	if err != nil {
		return res, false
	}
	return out, !bytes.Equal(out, res) || len(out) > 0 && len(res) > 0 && &out[0] != &res[0]
}

// sanitizeMessageJSON screens one complete message or batch, and reports
// whether it changed.
func sanitizeMessageJSON(msg []byte) ([]byte, bool) {
	var out [][]byte
	changed := false
	if err := testScreen(16<<20, nil).each(msg, nil, nil, func(m []byte, c bool, _ *record) { out, changed = append(out, m), changed || c }); err != nil || len(out) == 0 {
		return msg, false
	}
	return bytes.Join(out, []byte("\n")), changed
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
		v     = `"jsonrpc":"2.0",`
	)
	tests := []struct{ name, in, want string }{
		{"response", `{` + v + `"id":1,"result":{"content":[` + video + `]}}`, `{` + v + `"id":1,"result":{"content":[` + fixed + `]}}`},
		{"batch", `[{` + v + `"id":1,"result":{"content":[]}},{` + v + `"id":2,"result":{"content":[` + video + `]}},{` + v + `"method":"x"}]`,
			`{` + v + `"id":1,"result":{"content":[]}}` + "\n" + `{` + v + `"id":2,"result":{"content":[` + fixed + `]}}` + "\n" + `{` + v + `"method":"x"}`},
		{"request", `{` + v + `"id":1,"method":"tools/call","params":{"content":[` + video + `]}}`, ""},
		{"error", `{` + v + `"id":1,"error":{"code":1,"message":"m"}}`, ""},
		{"not JSON", `/mcp/message?sessionId=1`, ""},
		{"malformed", `{` + v + `"id":1,"result":{"content":[` + video + `]}`, "fault"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := sanitizeMessageJSON([]byte(tt.in))
			want := tt.want
			if want == "fault" {
				if !changed || !isFault(got, Malformed) {
					t.Errorf("sanitizeMessageJSON(%s) = %s, want a fault response", tt.in, got)
				}
				return
			}
			if want == "" {
				want = tt.in
			}
			if string(got) != want || changed != (tt.want != "") {
				t.Errorf("sanitizeMessageJSON(%s)\n = %s, %v\nwant %s", tt.in, got, changed, want)
			}
		})
	}
}

// checkUnknownResult checks the unknown_content result of the fault peer:
// every item survives, the unknown one as a text placeholder keeping the
// original item.
func checkUnknownResult(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	if len(res.Content) != 3 {
		t.Fatalf("got %d items, want 3: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[1].(*mcp.TextContent)
	if !ok || tc.Text != `[unsupported content type "video"]` {
		t.Fatalf("unknown item = %#v, want a text placeholder", res.Content[1])
	}
	if orig, _ := json.Marshal(tc.Meta["mcpadapter/original"]); !bytes.Contains(orig, []byte(`"video"`)) {
		t.Errorf("placeholder keeps %s, want the original item", orig)
	}
}

// connectPeer connects a legacy client to a fault peer over transport.
func connectPeer(t *testing.T, transport mcp.Transport) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "content-client", Version: "v1"}, nil).
		Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// pipe returns a new connection to p, a plain *mcp.IOTransport.
func pipe(t *testing.T, p *faultserver.Peer) mcp.Transport {
	tr, err := p.Transport()(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// sanitizeTransport screens the lines of an *mcp.IOTransport.
func sanitizeTransport(t mcp.Transport) mcp.Transport {
	io := *t.(*mcp.IOTransport)
	io.Reader = lineCloser{testScreen(16<<20, nil).Lines(io.Reader), io.Reader}
	return &io
}

// A lineCloser reads screened lines and closes their source.
type lineCloser struct {
	*LineReader
	c io.Closer
}

func (l lineCloser) Close() error { return l.c.Close() }

// TestSanitizeTransport calls a tool whose result holds an unknown content
// type: without sanitizeTransport the SDK fails the whole call, with it the
// call succeeds and keeps every block.
func TestSanitizeTransport(t *testing.T) {
	p := faultserver.NewPeer(faultserver.PeerOptions{Tools: faultserver.BasicCatalog()})
	call := func(cs *mcp.ClientSession, tool string) (*mcp.CallToolResult, error) {
		return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool})
	}
	t.Run("without", func(t *testing.T) {
		_, err := call(connectPeer(t, pipe(t, p)), faultserver.ToolUnknownContent)
		if err == nil || !strings.Contains(err.Error(), `unrecognized content type "video"`) {
			t.Fatalf("CallTool = %v, want the SDK's unrecognized content type error (if the SDK became lenient, revisit contentEdits)", err)
		}
	})
	t.Run("with", func(t *testing.T) {
		cs := connectPeer(t, sanitizeTransport(pipe(t, p)))
		res, err := call(cs, faultserver.ToolUnknownContent)
		if err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		checkUnknownResult(t, res)
		if res, err := call(cs, faultserver.ToolOK); err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "ok" {
			t.Errorf("CallTool(ok) = %v, %v; want \"ok\"", res, err)
		}
	})
}

// roundTripperFunc adapts a function to http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestSanitizeHTTP runs the unknown-content call over Streamable HTTP with
// each response style, through an HTTP client whose RoundTripper calls
// Screen.Response.
func TestSanitizeHTTP(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprint("sse=", sse), func(t *testing.T) {
			srv := httptest.NewServer(faultserver.NewPeer(faultserver.PeerOptions{Tools: faultserver.BasicCatalog()}).HTTPHandler(sse))
			t.Cleanup(srv.Close)
			connect := func(screen bool) *mcp.ClientSession {
				t.Helper()
				base := srv.Client().Transport
				hc := &http.Client{Transport: roundTripperFunc(func(req *http.Request) (*http.Response, error) {
					resp, err := base.RoundTrip(req)
					if err == nil && screen {
						testScreen(16<<20, nil).Response(req, resp)
					}
					return resp, err
				})}
				return connectPeer(t, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, DisableStandaloneSSE: true})
			}
			params := &mcp.CallToolParams{Name: faultserver.ToolUnknownContent}
			if _, err := connect(false).CallTool(t.Context(), params); err == nil || !strings.Contains(err.Error(), "unrecognized content type") {
				t.Fatalf("unscreened CallTool = %v, want the SDK's unrecognized content type error", err)
			}
			res, err := connect(true).CallTool(t.Context(), params)
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
		{"json batch", "application/json", "[" + known + "," + unknown + "]", "data: " + known + "\n\ndata: " + fixed + "\n\n", false},
		{"other type", "text/plain", unknown, unknown, true},
		{"bad type", "application/json;;", unknown, fixed, false}, // read as the SDK reads it: JSON
		{"sse", "text/event-stream", "id: 7\ndata: " + unknown + "\n\n", "id: 7\ndata: " + fixed + "\n\n", false},
		{"sse crlf", "text/event-stream", "data: " + unknown + "\r\n\r\n", "data: " + fixed + "\n\n", false},
		{"sse several events", "text/event-stream",
			"event: endpoint\ndata: /message?id=1\n\n: ping\n\ndata: " + known + "\n\ndata: " + unknown + "\n\n",
			"event: endpoint\ndata: /message?id=1\n\ndata: " + known + "\n\ndata: " + fixed + "\n\n", false},
		{"sse multi-line data", "text/event-stream",
			"data: {\"jsonrpc\":\"2.0\",\"id\":1,\ndata:  \"result\":{\"content\":[\ndata: {\"type\":\"video\"}]}}\nid: 2\n\n",
			"id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1, \"result\":{\"content\":[ {\"type\":\"text\",\"text\":\"[unsupported content type \\\"video\\\"]\",\"_meta\":{\"mcpadapter/original\":{\"type\":\"video\"}}}]}}\n\n", false},
		{"sse unchanged multi-line", "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n", "data: {\"jsonrpc\":\"2.0\", \"id\":1,\"result\":{}}\n\n", false},
		{"sse event cut by EOF", "text/event-stream", "data: " + unknown, "data: " + fixed + "\n\n", false},
		{"sse empty", "text/event-stream", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := newHTTPResponse(tt.contentType, strings.NewReader(tt.body), len(tt.body))
			testScreen(16<<20, nil).Response(nil, resp)
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
		testScreen(16<<20, nil).Response(nil, nil)
		resp := &http.Response{Header: http.Header{"Content-Type": {"application/json"}}, Body: http.NoBody}
		testScreen(16<<20, nil).Response(nil, resp)
		if resp.Body != http.NoBody {
			t.Errorf("Body replaced on an empty response")
		}
	})

	t.Run("read errors", func(t *testing.T) {
		boom := errors.New("boom")
		for _, ct := range []string{"application/json", "text/event-stream"} {
			body := io.MultiReader(strings.NewReader("data: "+unknown), iotest.ErrReader(boom))
			resp := newHTTPResponse(ct, body, -1)
			testScreen(16<<20, nil).Response(nil, resp)
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
	testScreen(16<<20, nil).Response(nil, resp)
	t.Cleanup(func() { resp.Body.Close() })

	events := []string{
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"video\"}]}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n",
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

// TestSanitizeSSELargeEvent checks that a message event over the bound is
// replaced by an error response for its id, and the events after it are
// screened as before.
func TestSanitizeSSELargeEvent(t *testing.T) {
	const limit = 1 << 10
	pad := strings.Repeat("x", 4*limit)
	body := "data: {\"jsonrpc\":\"2.0\",\"result\":{\"content\":[{\"type\":\"video\",\"pad\":\"" + pad + "\"}]},\"id\":1}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"video\"}]}}\n\n"
	resp := newHTTPResponse("text/event-stream", strings.NewReader(body), -1)
	testScreen(limit, nil).Response(nil, resp)
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	first, second, _ := strings.Cut(string(got), "\n\n")
	if !isFault([]byte(strings.TrimPrefix(first, "data: ")), TooLarge) || !strings.Contains(first, `"id":1`) {
		t.Errorf("the large event = %q, want a fault response for id 1", first)
	}
	if !strings.Contains(second, "[unsupported content type") {
		t.Errorf("the event after the large one = %q, want it sanitized", second)
	}
}

// isFault reports whether msg is an error response the screen substituted,
// of kind (any kind when "").
func isFault(msg []byte, kind Kind) bool {
	var r struct {
		Error *struct {
			Data map[string]Kind `json:"data"`
		} `json:"error"`
	}
	return json.Unmarshal(msg, &r) == nil && r.Error != nil && r.Error.Data[faultKey] != "" && (kind == "" || r.Error.Data[faultKey] == kind)
}

// FuzzResult checks that Screen.Result never panics, keeps
// valid JSON valid, and agrees with the SDK's decoder: after sanitizing, the
// SDK never rejects a result for its content types, and a result the SDK
// accepts is left alone.
func FuzzResult(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"before"},{"type":"video","uri":"https://example.com/v.mp4"}],"_meta":{"k":"v"}}`))
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
	_ mcp.Connection = (*screenedConn)(nil)
	_ io.ReadCloser  = (*readBody)(nil)
	_ io.ReadCloser  = (*eventReader)(nil)
)

// TestEventBoundCountsTheMessage: on an event stream the size bound counts
// the message, not its framing: a message of exactly MaxMessageBytes split
// over data lines, with event and id fields, passes; one byte more is
// refused.
func TestEventBoundCountsTheMessage(t *testing.T) {
	for _, extra := range []int{0, 1} {
		msg := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}]}}`
		limit := len(msg) + 1 - extra     // the data lines join with one newline
		cut := strings.Index(msg, `"id"`) // a token boundary
		body := "event: message\nid: 42\ndata: " + msg[:cut] + "\ndata: " + msg[cut:] + "\n\n"
		resp := newHTTPResponse("text/event-stream", strings.NewReader(body), -1)
		testScreen(limit, nil).Response(nil, resp)
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		fault := isFault(bytes.TrimSpace(bytes.TrimPrefix(got, []byte("event: message\nid: 42\ndata: "))), TooLarge)
		if fault != (extra == 1) {
			t.Errorf("a message of %d bytes with a bound of %d: %q", len(msg)+1, limit, got)
		}
	}
}
