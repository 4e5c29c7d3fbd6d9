package mcpadapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testScreen returns a screen as the adapter builds one, with the default
// bound.
func testScreen() *wire.Screen {
	return wire.New(wire.Options{MaxMessageBytes: defaultMaxMessageBytes, Placeholder: unsupportedText, PlaceholderKey: originalMetaKey})
}

// sanitizeTransport screens the decoded messages of t as the adapter does
// for a custom transport.
func sanitizeTransport(t mcp.Transport) mcp.Transport { return screenTransport(testScreen(), t) }

// sanitizeResultJSON screens a tools/call result as the adapter does, and
// reports whether it changed.
func sanitizeResultJSON(res []byte) ([]byte, bool) {
	out, err := testScreen().Result(res, nil)
	if err != nil {
		return res, false
	}
	return out, !bytes.Equal(out, res)
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
	return rawAnswer(line, func(tool string) (string, bool) {
		res, ok := rawResults[tool]
		return res, ok
	})
}

// rawAnswer is rawReply with the tools/call results of results.
func rawAnswer(line []byte, results func(tool string) (string, bool)) []byte {
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
	case "tools/list":
		reply = `"result":{"tools":[{"name":"fuzz","inputSchema":{"type":"object"}},{"name":"plain","inputSchema":{"type":"object"}}]}`
	case "tools/call":
		if res, ok := results(req.Params.Name); ok {
			reply = `"result":` + res
		} else {
			reply = `"error":{"code":-32602,"message":"unknown tool"}`
		}
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,` + reply + `}`)
}

// TestUnknownContentGolden pins the Result of a tools/call whose result
// holds a content type the SDK does not know, read through the adapter's
// screen: every block survives, the unknown one as a placeholder with its
// original JSON.
func TestUnknownContentGolden(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"srv": {Transport: rawToolsPeer(t)}}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r, err := lookup(t, ts, "srv__mixed").Invoke(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "content/unknown.json", renderResult(t, r, testCall("mixed")))
	if len(r.Content) != 3 || r.Content[1].Type != BlockText || !json.Valid(r.Content[1].Raw) || !bytes.Contains(r.Content[1].Raw, []byte(`"video"`)) {
		t.Errorf("blocks = %+v, want the unknown one as a text placeholder with the original in Raw", r.Content)
	}
}

// A resultRewriter is a server's connection that answers every tools/call
// with the raw result it holds, whatever the tool returned: what a go-sdk
// server cannot send.
type resultRewriter struct {
	mcp.Connection
	result func() string

	mu    sync.Mutex
	calls map[jsonrpc.ID]bool // ids of the tools/call requests read
}

func (c *resultRewriter) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" {
		c.mu.Lock()
		c.calls[req.ID] = true
		c.mu.Unlock()
	}
	return msg, err
}

func (c *resultRewriter) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		call := c.calls[resp.ID]
		c.mu.Unlock()
		if call {
			resp.Result, resp.Error = json.RawMessage(c.result()), nil
		}
	}
	return c.Connection.Write(ctx, msg)
}

// rewritingServer is an in-memory go-sdk server whose tools/call answers
// are all result().
func rewritingServer(mode Mode, result func() string) Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "rewriter", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "x"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	return Server{Mode: mode, Transport: func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		wrapped := wrapTransport(st, func(c mcp.Connection) mcp.Connection {
			return &resultRewriter{Connection: c, result: result, calls: map[jsonrpc.ID]bool{}}
		})
		if _, err := s.Connect(context.WithoutCancel(ctx), wrapped, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

// TestInvalidResults: a tools/call result the SDK would panic on (an input
// request that is null) or read as an empty success (a resultType the
// protocol does not define) fails that call with a *ServerError saying
// why, in both eras, and the connection answers the next call.
func TestInvalidResults(t *testing.T) {
	tests := []struct{ name, result, want string }{
		{"null input request", `{"resultType":"input_required","inputRequests":{"k":null},"requestState":"s"}`, `input request "k" is not an object`},
		{"scalar input request", `{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{}},"k":5}}`, `input request "k" is not an object`},
		{"unknown resultType", `{"resultType":"unknown","content":[]}`, `resultType "unknown" is not one this protocol defines`},
	}
	for _, mode := range []Mode{ModeModern, ModeLegacy} {
		for _, tt := range tests {
			t.Run(fmt.Sprint(mode)+"/"+tt.name, func(t *testing.T) {
				a := newAdapter(t, Config{Servers: map[string]Server{"r": rewritingServer(mode, func() string { return tt.result })}})
				ts, err := a.ListTools(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				for range 2 { // the connection lives on
					res, err := lookup(t, ts, "r__x").Invoke(t.Context(), nil)
					checkServerErr(t, err, "r")
					if !strings.Contains(err.Error(), tt.want) {
						t.Fatalf("Invoke() = %v, %v; want an error saying %q", res, err, tt.want)
					}
				}
			})
		}
	}
}

// TestTaskRequiredTools: on a server whose tasks are off (TasksOff), a
// tool whose descriptor requires task-based execution
// (execution.taskSupport "required", which go-sdk v1.8.0 does not decode)
// is not offered to the model, and calling it fails locally with
// ErrTaskRequired; a tool that only allows tasks is offered as usual.
func TestTaskRequiredTools(t *testing.T) {
	catalog := []string{
		faultserver.Descriptor(faultserver.ToolOK),
		`{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`,
		`{"name":"optional","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}`,
	}
	for _, target := range peerTargets {
		if target.name == "stdio" {
			continue // the stdio peer lists a fixed catalog
		}
		t.Run(target.name, func(t *testing.T) {
			p := faultserver.NewPeer(faultserver.PeerOptions{Tools: catalog})
			srv := target.server(t, p, "")
			srv.Tasks = TasksOff
			a := newAdapter(t, Config{Servers: map[string]Server{"f": srv}})
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if got := toolNames(ts); !slices.Equal(got, []string{"f__ok", "f__optional"}) {
				t.Errorf("ListTools() = %q, want the task-required tool left out", got)
			}
			sets, err := a.ListToolsets(faultCtx(t))
			if err != nil || len(sets["f"]) != 2 {
				t.Errorf("ListToolsets() = %v, %v; want the task-required tool left out", sets, err)
			}
			// No discovery offers the tool: take it from the catalog.
			c, err := a.connect(faultCtx(t), "f")
			if err != nil {
				t.Fatal(err)
			}
			all, err := a.catalogs.tools(faultCtx(t), c, CacheUse)
			if err != nil {
				t.Fatal(err)
			}
			_, err = lookup(t, all, "f__research").Invoke(faultCtx(t), nil)
			if !errors.Is(err, ErrTaskRequired) {
				t.Fatalf("Invoke(research) = %v, want ErrTaskRequired", err)
			}
			checkServerErr(t, err, "f")
			if n := p.Calls("research"); n != 0 {
				t.Errorf("the server got %d calls of the task-required tool, want none", n)
			}
		})
	}
}

// TestIntegrationFilesystemOversized reads a text file over the bound
// with the real npm server-filesystem: the call fails with
// ErrMessageTooLarge (the answer is refused as it streams by, never held
// whole), and the same connection answers the next call.
func TestIntegrationFilesystemOversized(t *testing.T) {
	node, script := extserver.NPM(t, extserver.ServerFilesystem)
	dir := t.TempDir()
	// 2.5 MiB of short lines: the answer is mostly escaped newlines, the
	// worst case of a scanner that is not linear.
	big := strings.Repeat("0123456789abcdef\n", 5<<20/2/17)
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newAdapter(t, Config{MaxMessageBytes: 1 << 20, Servers: map[string]Server{"fs": {Command: node, Args: []string{script, dir}}}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	read := lookup(t, ts, "fs__read_text_file")
	_, err = read.Invoke(t.Context(), map[string]any{"path": filepath.Join(dir, "big.txt")})
	checkServerErr(t, err, "fs")
	if !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("Invoke(big.txt) error = %v, want ErrMessageTooLarge", err)
	}
	res, err := read.Invoke(t.Context(), map[string]any{"path": filepath.Join(dir, "small.txt")})
	if err != nil || res.Text() != "hello" {
		t.Fatalf("Invoke(small.txt) on the same connection = %q, %v; want \"hello\"", res.Text(), err)
	}
}

// fuzzPeer is a raw legacy peer over a pipe whose tool "fuzz" answers the
// result held in res (newlines made spaces: one message a line), and
// "plain" answers "fine".
func fuzzPeer(res *atomic.Value) func(context.Context) (mcp.Transport, error) {
	return func(context.Context) (mcp.Transport, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			lines := bufio.NewScanner(server)
			lines.Buffer(nil, 1<<20)
			for lines.Scan() {
				reply := rawAnswer(lines.Bytes(), func(tool string) (string, bool) {
					if tool == "fuzz" {
						return strings.NewReplacer("\n", " ", "\r", " ").Replace(res.Load().(string)), true
					}
					r, ok := rawResults[tool]
					return r, ok
				})
				if reply == nil {
					continue
				}
				if _, err := server.Write(append(reply, '\n')); err != nil {
					return
				}
			}
		}()
		return &mcp.IOTransport{Reader: client, Writer: client}, nil
	}
}

// FuzzCallResult drives arbitrary tools/call results through real
// sessions: a raw peer over a pipe (the screen's line reader) and go-sdk
// servers in memory in both eras (its decoded-message check). Invoke and
// Call never panic, and the connection always answers the next call.
func FuzzCallResult(f *testing.F) {
	for _, seed := range []string{
		rawResults["mixed"], rawResults["plain"], `{"inputRequests":{"k":null},"resultType":"input_required"}`,
		`{"resultType":"unknown","content":[]}`, `{"content":[{"type":"resource","resource":null}]}`,
		`{"content":null,"structuredContent":{"a":[1,2]},"isError":true}`, `{"content":[{"type":"text","text":"` + strings.Repeat(`\\`, 40) + `"}]}`,
		`{"inputRequests":{"a":{"method":"elicitation/create","params":null}},"resultType":"input_required"}`, `{"content":[`, `5`,
	} {
		f.Add(seed)
	}
	var res atomic.Value
	res.Store("{}")
	servers := map[string]Server{"pipe": {Transport: fuzzPeer(&res)}}
	for _, mode := range []Mode{ModeModern, ModeLegacy} {
		servers[fmt.Sprint(mode)] = rewritingServer(mode, func() string { return res.Load().(string) })
	}
	a := newAdapter(f, Config{Servers: servers})
	ts, err := a.ListTools(f.Context())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, result string) {
		res.Store(result)
		for name := range servers {
			tool := name + "__fuzz"
			if name != "pipe" {
				if !json.Valid([]byte(result)) {
					continue // a go-sdk server sends only JSON
				}
				tool = name + "__x"
			}
			// A result that asks for input without saying what is retried
			// with backoff (load shedding): bound the calls.
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			_, _ = lookup(t, ts, tool).Invoke(ctx, nil)
			_, _ = lookup(t, ts, tool).Call(ctx, "{}")
			cancel()
		}
		if res, err := lookup(t, ts, "pipe__plain").Invoke(t.Context(), nil); err != nil || res.Text() != "fine" {
			t.Fatalf("after the result %q, the connection answers %v, %v", result, res, err)
		}
	})
}

// TestScreenTransport: a custom *mcp.IOTransport is screened line by line
// through a copy (the caller's value is not changed), and nil passes as it
// is. A custom Streamable HTTP transport does not pass through unscreened:
// the dial goes through a copy (the caller's value is not changed) whose
// requests go through the adapter's HTTP transport, around the caller's
// own RoundTripper, and the conn follows the session as a URL server's.
func TestScreenTransport(t *testing.T) {
	if got := screenTransport(testScreen(), nil); got != nil {
		t.Errorf("screenTransport(nil) = %v, want nil", got)
	}
	r, w := net.Pipe()
	defer r.Close()
	defer w.Close()
	io := &mcp.IOTransport{Reader: r, Writer: w}
	got, ok := screenTransport(testScreen(), io).(*mcp.IOTransport)
	if !ok || got == io || io.Reader != r || got.Reader == io.Reader || got.MaxLineLength != -1 {
		t.Errorf("screenTransport(io) = %#v, want a screened copy, the original unchanged", got)
	}

	base := &countingTransport{base: http.DefaultTransport}
	hc := &http.Client{Transport: base}
	st := &mcp.StreamableClientTransport{Endpoint: testserver.Lean(testserver.Options{}).StreamableHTTP(t, true).URL, HTTPClient: hc}
	a := newAdapter(t, Config{Servers: map[string]Server{"s": {Transport: func(context.Context) (mcp.Transport, error) { return st, nil }}}})
	if _, err := a.ListTools(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c := liveConn(t, a, "s"); c.http == nil || c.wire != nil {
		t.Errorf("custom Streamable HTTP: conn.http = %v, want the adapter's HTTP transport over the caller's", c.http)
	}
	if st.HTTPClient != hc || hc.Transport != base || st.MaxEventSize != 0 || base.n.Load() == 0 {
		t.Errorf("the caller's transport changed (%+v), or its RoundTripper was not used (%d requests)", st, base.n.Load())
	}
}

// A countingTransport counts the requests it sends.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64
}

// RoundTrip implements [http.RoundTripper].
func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.base.RoundTrip(req)
}

// TestCustomHTTPTransportScreened: go-sdk's HTTP client transports given
// as Server.Transport are screened as a URL server's: an answer over
// MaxMessageBytes fails its call with ErrMessageTooLarge, and the
// connection answers the next call.
func TestCustomHTTPTransportScreened(t *testing.T) {
	const limit = 64 << 10
	s := faultserver.New(faultserver.Options{})
	for _, tc := range []struct {
		name      string
		transport func(t *testing.T) mcp.Transport
	}{
		{"streamable stateless", func(t *testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: s.StatelessHTTP(t, false).URL}
		}},
		{"streamable stateful", func(t *testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: s.Server.StreamableHTTP(t, false).URL}
		}},
		{"sse", func(t *testing.T) mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: s.Server.SSE(t).URL}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			transport := tc.transport(t)
			a := newAdapter(t, Config{MaxMessageBytes: limit, Servers: map[string]Server{"h": {
				Transport: func(context.Context) (mcp.Transport, error) { return transport, nil },
			}}})
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			big := lookup(t, ts, "h__"+faultserver.ToolBig)
			if _, err := big.Invoke(faultCtx(t), map[string]any{"size": limit + 1}); !errors.Is(err, ErrMessageTooLarge) {
				t.Fatalf("Invoke(%d bytes) error = %v, want ErrMessageTooLarge", limit+1, err)
			}
			res, err := big.Invoke(faultCtx(t), map[string]any{"size": 100})
			if err != nil || len(res.Text()) != 100 {
				t.Fatalf("the call after: %d bytes, %v; want 100 bytes", len(res.Text()), err)
			}
		})
	}
}

// TestCustomStreamableCredentials: the OAuth token of a custom Streamable
// HTTP transport reaches its endpoint's origin only, as a URL server's
// does: not the server a redirect sends its requests to (on the same host
// name, another port: net/http keeps the Authorization header there).
func TestCustomStreamableCredentials(t *testing.T) {
	plainRec := &faultserver.Recorder{Next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return testserver.Full(testserver.Options{}).Server
	}, &mcp.StreamableHTTPOptions{Stateless: true})}
	plain := testserver.Serve(t, plainRec)
	redirect := testserver.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	a := newAdapter(t, Config{Servers: map[string]Server{"r": {Transport: func(context.Context) (mcp.Transport, error) {
		return &mcp.StreamableClientTransport{Endpoint: redirect.URL, OAuthHandler: staticToken("tok-custom")}, nil
	}}}})
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lookup(t, ts, "r__echo").Invoke(faultCtx(t), map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	if len(plainRec.Requests()) == 0 || plainRec.SawHeaderValue("tok-custom") {
		t.Fatalf("the redirect target got %d requests, the token among them: %v; want requests without it", len(plainRec.Requests()), plainRec.SawHeaderValue("tok-custom"))
	}
}
