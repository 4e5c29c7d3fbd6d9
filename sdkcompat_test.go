package mcpadapter

// Pins of sdkcompat.go: each test fails when go-sdk changes the behaviour
// of the entry it names. They talk to real go-sdk servers through a plain
// go-sdk client, not through the adapter: what they pin is go-sdk's.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/tasks"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkClient returns a plain go-sdk client with opts and the given sending
// middleware.
func sdkClient(opts *mcp.ClientOptions, mw ...mcp.Middleware) *mcp.Client {
	client := mcp.NewClient(&mcp.Implementation{Name: "sdkcompat", Version: "1"}, opts)
	client.AddSendingMiddleware(mw...)
	return client
}

// connectSDK connects client to s in memory, and closes the session when
// t ends.
func connectSDK(t *testing.T, client *mcp.Client, s *testserver.Server, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	transport, err := s.Transport()(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(t.Context(), transport, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// wantCode fails t unless err is a *jsonrpc.Error with code.
func wantCode(t *testing.T, what string, err error, code int64) {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != code {
		t.Fatalf("%s: error %v, want a *jsonrpc.Error with code %d", what, err, code)
	}
}

// A breakableConn fails every Write once broken is set.
type breakableConn struct {
	mcp.Connection
	broken *atomic.Bool
}

var errBrokenWrite = errors.New("test: the write side broke")

// Write implements [mcp.Connection].
func (c *breakableConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if c.broken.Load() {
		return errBrokenWrite
	}
	return c.Connection.Write(ctx, msg)
}

// TestSDKCompatClosingCodes pins entry 1: the SDK's own closing errors
// carry codes -32003 (a notification sent on a closed session; a call sees
// ErrConnectionClosed) and -32004 (the cause given to a handler when its
// connection's write side broke).
func TestSDKCompatClosingCodes(t *testing.T) {
	t.Run("client closing", func(t *testing.T) {
		cs := connectSDK(t, sdkClient(nil), testserver.Lean(testserver.Options{}), nil)
		cs.Close()
		err := cs.NotifyProgress(t.Context(), &mcp.ProgressNotificationParams{ProgressToken: "p", Progress: 1})
		wantCode(t, "NotifyProgress after Close", err, codeClientClosing)
		if _, err := cs.ListTools(t.Context(), nil); !errors.Is(err, mcp.ErrConnectionClosed) || !strings.Contains(err.Error(), "client is closing") {
			t.Fatalf("ListTools after Close: error %v, want ErrConnectionClosed saying the client is closing", err)
		}
	})
	t.Run("server closing", func(t *testing.T) {
		var broken atomic.Bool
		cause := make(chan error, 1)
		server := mcp.NewServer(&mcp.Implementation{Name: "closing", Version: "1"}, nil)
		server.AddTool(&mcp.Tool{Name: "break", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			broken.Store(true)
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "p", Progress: 1}); !errors.Is(err, errBrokenWrite) {
				cause <- err
				return nil, err
			}
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return &mcp.CallToolResult{}, nil
		})
		st, ct := mcp.NewInMemoryTransports()
		ss, err := server.Connect(t.Context(), wrapTransport(st, func(c mcp.Connection) mcp.Connection {
			return &breakableConn{Connection: c, broken: &broken}
		}), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		cs, err := sdkClient(nil).Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel() // the answer cannot be written: the call ends here
		go cs.CallTool(ctx, &mcp.CallToolParams{Name: "break"})
		wantCode(t, "the handler's context cause", <-cause, codeServerClosing)
	})
}

// TestSDKCompatRejected pins entry 2: a Streamable HTTP request that got
// no answer (the server dropped the connection: an EOF) fails alone with
// an error of code -32005, and the session answers the next call.
func TestSDKCompatRejected(t *testing.T) {
	s := testserver.Lean(testserver.Options{})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, &mcp.StreamableHTTPOptions{Stateless: true})
	var drop atomic.Bool
	ts := testserver.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if receivesToolCall(r) && drop.CompareAndSwap(true, false) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	cs, err := sdkClient(nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	echo := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}
	drop.Store(true)
	_, err = cs.CallTool(t.Context(), echo)
	if !errors.Is(err, io.EOF) || !rejected(err) {
		t.Fatalf("a call whose connection was dropped: error %v, want io.EOF with code %d", err, codeRejected)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatalf("the call after: %v; want the session alive", err)
	}
}

// TestSDKCompatEraFallback pins entry 3: Connect sends server/discover,
// then initialize, through the sending middleware, and returns the
// middleware's refusal of initialize wrapped. A server that offers no
// modern version fails discover in the SDK, not in the middleware.
func TestSDKCompatEraFallback(t *testing.T) {
	errRefused := errors.New("test: initialize refused")
	for _, tc := range []struct {
		name     string
		opts     testserver.Options
		legacyAd bool  // the discover answer offers only a legacy version
		code     int64 // of the discover error the middleware sees; 0: none
	}{
		{name: "method not found", opts: testserver.Options{NoDiscover: true}, code: jsonrpc.CodeMethodNotFound},
		{name: "legacy go-sdk server", opts: testserver.Options{Legacy: true}, code: mcp.CodeUnsupportedProtocolVersion},
		{name: "no modern version offered", legacyAd: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testserver.New(tc.opts)
			if tc.legacyAd {
				s.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						res, err := next(ctx, method, req)
						if dr, ok := res.(*mcp.DiscoverResult); ok {
							dr.SupportedVersions = []string{legacyVersion}
						}
						return res, err
					}
				})
			}
			var seen []string
			var discoverErr error
			client := sdkClient(nil, func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					seen = append(seen, method)
					switch method {
					case "initialize":
						return nil, errRefused
					case "server/discover":
						res, err := next(ctx, method, req)
						discoverErr = err
						return res, err
					}
					return next(ctx, method, req)
				}
			})
			transport, err := s.Transport()(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			cs, err := client.Connect(t.Context(), transport, nil)
			if err == nil {
				cs.Close()
			}
			if !errors.Is(err, errRefused) {
				t.Fatalf("Connect error = %v, want the middleware's refusal wrapped", err)
			}
			if strings.Join(seen, " ") != "server/discover initialize" {
				t.Fatalf("the middleware saw %q, want server/discover then initialize", seen)
			}
			if tc.code == 0 {
				if discoverErr != nil {
					t.Fatalf("discover as the middleware saw it: %v, want a success", discoverErr)
				}
				return
			}
			wantCode(t, "discover as the middleware saw it", discoverErr, tc.code)
		})
	}
}

// TestSDKCompatListCache pins entry 4 over modern Streamable HTTP: a key
// never seen misses; the answer is stored under the key the params hold
// when the sending middleware returns, not the one sent; CallTool takes a
// tool's x-mcp-header bindings from the cache whatever its key; and a
// legacy session caches nothing.
func TestSDKCompatListCache(t *testing.T) {
	const slot = "test-slot"
	slotting := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			p, ok := req.GetParams().(*mcp.ListToolsParams)
			if !ok || !strings.HasPrefix(p.Cursor, "miss") {
				return next(ctx, method, req)
			}
			p.Cursor = ""
			res, err := next(ctx, method, req)
			p.Cursor = slot
			return res, err
		}
	}
	list := func(t *testing.T, cs *mcp.ClientSession, cursor string) {
		t.Helper()
		if _, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor}); err != nil {
			t.Fatalf("ListTools(%q): %v", cursor, err)
		}
	}
	s := testserver.New(testserver.Options{TTLMs: 60_000})
	headerTool(s)
	url := s.StreamableHTTP(t, true).URL
	connect := func(t *testing.T) *mcp.ClientSession {
		cs, err := sdkClient(nil, slotting).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if cs.InitializeResult().ProtocolVersion < modernVersion {
			t.Fatalf("negotiated %s, want a modern session", cs.InitializeResult().ProtocolVersion)
		}
		return cs
	}
	cs := connect(t)
	for i, step := range []struct {
		cursor string
		sent   int // tools/list requests the server has seen after it
	}{
		{"miss-1", 1},
		{"miss-2", 2}, // a key never seen misses
		{slot, 2},     // stored under the key as the middleware left it
		{"", 3},       // not under the key sent
	} {
		list(t, cs, step.cursor)
		if got := s.Count("tools/list"); got != step.sent {
			t.Fatalf("step %d, ListTools(%q): the server saw %d tools/list, want %d", i, step.cursor, got, step.sent)
		}
	}
	regional := &mcp.CallToolParams{Name: "regional", Arguments: map[string]any{"region": "eu"}}
	if _, err := cs.CallTool(t.Context(), regional); err != nil {
		t.Fatalf("a call of a tool listed under another key: %v; want its Mcp-Param header sent", err)
	}
	if _, err := connect(t).CallTool(t.Context(), regional); err == nil {
		t.Fatal("a call of a tool never listed on its session succeeded: CallTool no longer takes x-mcp-header bindings from the list cache")
	}

	legacy := testserver.New(testserver.Options{Legacy: true, TTLMs: 60_000})
	lcs := connectSDK(t, sdkClient(nil), legacy, nil)
	list(t, lcs, "")
	list(t, lcs, "")
	if got := legacy.Count("tools/list"); got != 2 {
		t.Fatalf("a legacy session sent %d tools/list for two listings, want 2 (no cache)", got)
	}
}

// TestSDKCompatUnwrappableStreamable pins entry 5: a Streamable HTTP
// connection hidden behind a wrapper loses the Mcp-Protocol-Version header
// of the requests after the handshake; the connection as the SDK made it
// keeps it.
func TestSDKCompatUnwrappableStreamable(t *testing.T) {
	s := testserver.Lean(testserver.Options{Legacy: true})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, nil)
	var (
		mu      sync.Mutex
		version string // of the last tools/list
	)
	ts := testserver.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(b)))
			if strings.Contains(string(b), `"tools/list"`) {
				mu.Lock()
				version = r.Header.Get("Mcp-Protocol-Version")
				mu.Unlock()
			}
		}
		h.ServeHTTP(w, r)
	}))
	for _, wrapped := range []bool{false, true} {
		var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: ts.URL}
		if wrapped {
			transport = wrapTransport(transport, func(c mcp.Connection) mcp.Connection { return struct{ mcp.Connection }{c} })
		}
		cs, err := sdkClient(nil).Connect(t.Context(), transport, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.ListTools(t.Context(), nil)
		cs.Close()
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := version
		mu.Unlock()
		switch {
		case !wrapped && got != legacyVersion:
			t.Fatalf("Mcp-Protocol-Version = %q, want %s", got, legacyVersion)
		case wrapped && got != "":
			t.Fatalf("a wrapped Streamable HTTP connection sent Mcp-Protocol-Version %q: go-sdk no longer needs its own connection type, and the adapter could wrap it (conn.own)", got)
		}
	}
}

// A bodyCheck records the POSTs it sends, and those whose body cannot be
// read again through GetBody as one JSON-RPC message. It signals on
// cancelled when it has sent notifications/cancelled.
type bodyCheck struct {
	cancelled chan struct{}

	mu      sync.Mutex
	methods []string
	bad     []string
}

// RoundTrip implements [http.RoundTripper].
func (b *bodyCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost {
		method, err := postedMethod(req)
		b.mu.Lock()
		if err != nil {
			b.bad = append(b.bad, err.Error())
		}
		b.methods = append(b.methods, method)
		b.mu.Unlock()
		if method == "notifications/cancelled" {
			defer func() {
				select {
				case b.cancelled <- struct{}{}:
				default:
				}
			}()
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

// postedMethod returns the method of the one message req posts, read
// through its GetBody (a response has none).
func postedMethod(req *http.Request) (string, error) {
	if req.GetBody == nil {
		return "", errors.New("a POST without GetBody")
	}
	body, err := req.GetBody()
	if err != nil {
		return "", err
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		return "", err
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return "", err
	}
	if r, ok := msg.(*jsonrpc.Request); ok {
		return r.Method, nil
	}
	return "", nil
}

// TestSDKCompatPostBodies pins entry 6: every POST of a Streamable HTTP
// session, the cancellation notice of a cut call included, has a GetBody
// holding one JSON-RPC message.
func TestSDKCompatPostBodies(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		s := testserver.Full(testserver.Options{Legacy: !stateless})
		check := &bodyCheck{cancelled: make(chan struct{}, 1)}
		cs, err := sdkClient(nil).Connect(t.Context(), &mcp.StreamableClientTransport{
			Endpoint: s.StreamableHTTP(t, stateless).URL, HTTPClient: &http.Client{Transport: check},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-s.SlowStarted()
			cancel()
		}()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}); !errors.Is(err, context.Canceled) {
			t.Fatalf("slow call: %v, want it cancelled", err)
		}
		select {
		case <-check.cancelled:
		case <-faultCtx(t).Done():
			t.Fatal("no notifications/cancelled was posted")
		}
		check.mu.Lock()
		methods, bad := strings.Join(check.methods, " "), check.bad
		check.mu.Unlock()
		if len(bad) > 0 || !strings.Contains(methods, "notifications/cancelled") {
			t.Fatalf("stateless %v: POSTs %q, unreadable: %q; want every body readable, the cancel notice among them", stateless, methods, bad)
		}
	}
}

// TestSDKCompatLegacyShimSecondRound pins entry 7: over a legacy session
// go-sdk's server shim answers the first round of a two-round tool with a
// live elicitation, then hands its second round to a client with
// multi-round-trip off as InputRequests with NeedsInput false.
func TestSDKCompatLegacyShimSecondRound(t *testing.T) {
	client := sdkClient(&mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"date": "2026-12-24", "time": "20:00"}}, nil
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs := connectSDK(t, client, testserver.Full(testserver.Options{Legacy: true}), nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "book_two_rounds", Arguments: map[string]any{"party": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.InputRequests) == 0 || res.NeedsInput() {
		t.Fatalf("second round: InputRequests %v, NeedsInput %v; want input requests with NeedsInput false (call.go may then drop its InputRequests clause)", res.InputRequests, res.NeedsInput())
	}
}

// TestSDKCompatForeignRequests pins entry 8: a request written with a
// string id on the connection a go-sdk client session runs on (in memory,
// and go-sdk's own Streamable HTTP connection, in both eras) reaches the
// server, whose answer comes back through the session's connection; the
// session's jsonrpc2, whose own ids are numbers, drops that answer and
// goes on working.
func TestSDKCompatForeignRequests(t *testing.T) {
	type target struct {
		name      string
		transport func(t *testing.T, answers *foreignAnswers) mcp.Transport
	}
	targets := []target{
		{"in memory", func(t *testing.T, answers *foreignAnswers) mcp.Transport {
			tr, err := testserver.Lean(testserver.Options{}).Transport()(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return wrapTransport(tr, func(c mcp.Connection) mcp.Connection { return &foreignReader{Connection: c, answers: answers} })
		}},
	}
	for _, stateless := range []bool{true, false} {
		targets = append(targets, target{fmt.Sprintf("streamable stateless=%v", stateless), func(t *testing.T, answers *foreignAnswers) mcp.Transport {
			s := testserver.Lean(testserver.Options{Legacy: !stateless})
			return &mcp.StreamableClientTransport{Endpoint: s.StreamableHTTP(t, stateless).URL, HTTPClient: &http.Client{Transport: answers}}
		}})
	}
	for _, tt := range targets {
		t.Run(tt.name, func(t *testing.T) {
			answers := &foreignAnswers{seen: make(chan struct{}, 1)}
			var conn mcp.Connection
			tr := wrapTransport(tt.transport(t, answers), func(c mcp.Connection) mcp.Connection { conn = c; return c })
			cs, err := sdkClient(nil).Connect(t.Context(), tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			id, _ := jsonrpc.MakeID(tasks.IDPrefix + "1")
			params := json.RawMessage(`{}`)
			if v := cs.InitializeResult().ProtocolVersion; v >= "2026-07-28" { // the modern era's per-request _meta
				params, _ = json.Marshal(map[string]any{"_meta": map[string]any{mcp.MetaKeyProtocolVersion: v, mcp.MetaKeyClientCapabilities: map[string]any{}}})
			}
			if err := conn.Write(t.Context(), &jsonrpc.Request{ID: id, Method: "tools/list", Params: params}); err != nil {
				t.Fatalf("Write of a foreign request: %v", err)
			}
			select {
			case <-answers.seen:
			case <-faultCtx(t).Done():
				t.Fatal("no answer to the foreign request came back through the connection")
			}
			if _, err := cs.ListTools(t.Context(), nil); err != nil {
				t.Fatalf("ListTools after a foreign answer: %v", err)
			}
			answers.mu.Lock()
			defer answers.mu.Unlock()
			if answers.bad != "" {
				t.Fatalf("go-sdk sent a request with id %s, want numbers only", answers.bad)
			}
		})
	}
}

// foreignAnswers notes an answer to the foreign request: in the messages
// a connection reads (foreignReader) or in HTTP answer bodies (as an
// http.RoundTripper).
type foreignAnswers struct {
	seen chan struct{}
	mu   sync.Mutex
	bad  string // a non-numeric id of go-sdk's (foreignReader)
}

func (f *foreignAnswers) note(b []byte) {
	if bytes.Contains(b, []byte(`"`+tasks.IDPrefix+`1"`)) {
		select {
		case f.seen <- struct{}{}:
		default:
		}
	}
}

// RoundTrip implements http.RoundTripper: it reads each answer whole.
func (f *foreignAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		return resp, err
	}
	resp.Body = &notingBody{ReadCloser: resp.Body, f: f}
	return resp, nil
}

// A notingBody shows what it reads to foreignAnswers.
type notingBody struct {
	io.ReadCloser
	f *foreignAnswers
}

func (b *notingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.f.note(p[:n])
	return n, err
}

// A foreignReader shows the responses it reads to foreignAnswers.
type foreignReader struct {
	mcp.Connection
	answers *foreignAnswers
}

// Write implements [mcp.Connection], and records the ids of go-sdk's own
// requests that are not numbers.
func (r *foreignReader) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if _, num := req.ID.Raw().(int64); !num && req.ID.Raw() != tasks.IDPrefix+"1" {
			r.answers.mu.Lock()
			r.answers.bad = fmt.Sprint(req.ID.Raw())
			r.answers.mu.Unlock()
		}
	}
	return r.Connection.Write(ctx, msg)
}

func (r *foreignReader) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := r.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if b, err := jsonrpc.EncodeMessage(resp); err == nil {
			r.answers.note(b)
		}
	}
	return msg, err
}

// methodCounter counts the HTTP requests it passes on, by HTTP method.
type methodCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (m *methodCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	m.mu.Lock()
	if m.n == nil {
		m.n = map[string]int{}
	}
	m.n[req.Method]++
	m.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (m *methodCounter) count(method string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n[method]
}

// TestSDKCompatTaskLine pins what a task line needs of go-sdk (sdkcompat.go,
// entry 8): a StreamableClientTransport connects without I/O; its
// connection, never initialized, carries requests on a session another
// connection opened when the adapter's transport gives them its id, and
// reads their answers (its kept DELETE: internal/httptransport's
// TestJoinAndKeep). A conn that
// handed out a task of its session keeps the session when it closes (no
// DELETE) until the task settles; a modern (stateless) session has no
// line.
func TestSDKCompatTaskLine(t *testing.T) {
	ctx := t.Context()
	open := func(legacy bool) (*Adapter, *Tool, *methodCounter) {
		counter := &methodCounter{}
		hs := testserver.Lean(testserver.Options{Legacy: legacy}).StreamableHTTP(t, !legacy)
		a, err := New(Config{Servers: map[string]Server{"s": {URL: hs.URL, HTTPClient: &http.Client{Transport: counter}}}})
		if err != nil {
			t.Fatal(err)
		}
		ts, err := a.ListTools(ctx)
		if err != nil || len(ts) == 0 {
			t.Fatalf("ListTools = %v, %v", ts, err)
		}
		return a, ts[0], counter
	}

	a, tool, counter := open(true)
	c := tool.conn
	tc := tool.newTask(&PendingTask{TaskID: "t1", session: c.session.ID()})
	if tc.route.LineSession() == "" {
		t.Fatal("a legacy Streamable HTTP session has no task line")
	}
	posts := counter.count(http.MethodPost)
	line, _, err := c.taskLine(ctx, tc.route.LineSession())
	if err != nil {
		t.Fatal(err)
	}
	if n := counter.count(http.MethodPost) - posts; n != 0 {
		t.Errorf("opening a line sent %d requests", n)
	}
	res, err := line.Call(ctx, ctx, line.Lost(), "tools/list", json.RawMessage(`{}`))
	if err != nil || !strings.Contains(string(res), `"tools"`) {
		t.Fatalf("tools/list on the line = %s, %v", res, err)
	}
	if err := line.Close(); err != nil {
		t.Fatal(err)
	}
	st := newStamp()
	tc.handOut(st, nil)
	if c.gen.kept.Session(st.id, c.server, tc.p.TaskID) == "" {
		t.Fatal("a conn that handed out a task of its session does not record it")
	}
	tc.settled()
	tc.handOut(newStamp(), nil)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := counter.count(http.MethodDelete); n != 0 {
		t.Errorf("Close sent %d DELETEs while a task was handed out, want none", n)
	}

	a, tool, counter = open(true)
	tc = tool.newTask(&PendingTask{TaskID: "t1", session: tool.conn.session.ID()})
	tc.handOut(newStamp(), nil)
	tc.settled()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := counter.count(http.MethodDelete); n != 1 {
		t.Errorf("Close sent %d DELETEs once the task settled, want 1", n)
	}

	a, tool, _ = open(false)
	defer a.Close()
	if s := tool.newTask(nil).route.LineSession(); s != "" {
		t.Errorf("a modern session's task line session = %q, want none", s)
	}
}

// A ctxProbe is the RoundTripper of TestSDKCompatRequestContext: it
// reports, for each POST, its JSON-RPC method and the probeKey value of
// its request's context.
type ctxProbe struct {
	base http.RoundTripper
	seen chan [2]string
}

// probeKey is the context key of ctxProbe.
type probeKey struct{}

// RoundTrip implements [http.RoundTripper].
func (p ctxProbe) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.GetBody != nil {
		body, _ := req.GetBody()
		var msg struct{ Method string }
		json.NewDecoder(body).Decode(&msg)
		v, _ := req.Context().Value(probeKey{}).(string)
		p.seen <- [2]string{msg.Method, v}
	}
	return p.base.RoundTrip(req)
}

// TestSDKCompatRequestContext pins entry 9: over Streamable HTTP the
// context of a request reaches the http.Request the transport sends it
// with, and so does the context of the notifications/cancelled the SDK
// sends for a cancelled call, with the values of the call's; the
// subscriptions/listen that Connect opens on a modern session has none of
// Connect's and passes the sending middleware, which may answer it: it is
// then never sent.
func TestSDKCompatRequestContext(t *testing.T) {
	s := testserver.New(testserver.Options{}).AddFeatures()
	url := s.StreamableHTTP(t, true).URL
	probe := ctxProbe{base: http.DefaultTransport, seen: make(chan [2]string, 64)}
	var listen atomic.Value // the probeKey value of the listen's context, "none" for none
	answered := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "subscriptions/listen" {
				v, ok := ctx.Value(probeKey{}).(string)
				if !ok {
					v = "none"
				}
				listen.Store(v)
				return &mcp.SubscriptionsListenResult{}, nil
			}
			return next(ctx, method, req)
		}
	}
	client := sdkClient(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}}, answered)
	ctx := context.WithValue(t.Context(), probeKey{}, "connect")
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: probe}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := <-probe.seen; got != [2]string{"server/discover", "connect"} {
		t.Errorf("the handshake's POST: %v, want server/discover with the context of Connect", got)
	}
	if v := listen.Load(); v != "none" {
		t.Errorf("subscriptions/listen: context value %v, want the middleware to see it with none of Connect's", v)
	}
	if n := s.Count("subscriptions/listen"); n != 0 {
		t.Errorf("the server got %d subscriptions/listen, want none: the middleware answered it", n)
	}

	if _, err := cs.ListTools(context.WithValue(t.Context(), probeKey{}, "list"), nil); err != nil {
		t.Fatal(err)
	}
	if got := <-probe.seen; got != [2]string{"tools/list", "list"} {
		t.Errorf("the listing's POST: %v, want tools/list with the listing's context", got)
	}

	callCtx, cancel := context.WithCancel(context.WithValue(t.Context(), probeKey{}, "call"))
	go func() {
		<-s.SlowStarted()
		cancel()
	}()
	if _, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "slow"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	want := [][2]string{{"tools/call", "call"}, {"notifications/cancelled", "call"}}
	for _, w := range want {
		if got := <-probe.seen; got != w {
			t.Errorf("POST %v, want %v", got, w)
		}
	}
}

// denyKey is the context key of how the test's RoundTripper answers a
// request (TestSDKCompatFailingStatus): "" sends it.
type denyKey struct{}

// A denyingTransport answers a request whose context carries denyKey
// "error" with an error, "plain" with a 401 and a text body, "rpc" with a
// 401 and a JSON-RPC error body; it sends the others.
type denyingTransport struct{ base http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (d denyingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	answer := func(body, ctype string) *http.Response {
		return &http.Response{StatusCode: http.StatusUnauthorized, Status: "401 Unauthorized", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {ctype}}, Body: io.NopCloser(strings.NewReader(body)), Request: req}
	}
	deny, _ := req.Context().Value(denyKey{}).(string)
	if deny != "" && req.Body != nil {
		req.Body.Close()
	}
	switch deny {
	case "error":
		return nil, errors.New("test: refused")
	case "plain":
		return answer("Unauthorized\n", "text/plain"), nil
	case "rpc":
		return answer(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"denied"}}`, "application/json"), nil
	}
	return d.base.RoundTrip(req)
}

// TestSDKCompatFailingStatus pins entry 10: over Streamable HTTP, a
// request whose RoundTrip fails, or whose 401 carries a JSON-RPC error,
// fails alone (ErrRejected, the session serves the next call); a 401 with
// a text body ends the session.
func TestSDKCompatFailingStatus(t *testing.T) {
	s := testserver.Lean(testserver.Options{})
	ts := testserver.Serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, &mcp.StreamableHTTPOptions{Stateless: true}))
	cs, err := sdkClient(nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL,
		HTTPClient: &http.Client{Transport: denyingTransport{base: http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, deny := range []string{"error", "rpc"} {
		if _, err := cs.ListTools(context.WithValue(t.Context(), denyKey{}, deny), nil); !rejected(err) {
			t.Fatalf("a request denied by %q: error %v, want code %d", deny, err, codeRejected)
		}
		if _, err := cs.ListTools(t.Context(), nil); err != nil {
			t.Fatalf("the request after one denied by %q: %v; want the session alive", deny, err)
		}
	}
	if _, err := cs.ListTools(context.WithValue(t.Context(), denyKey{}, "plain"), nil); err == nil || rejected(err) {
		t.Fatalf("a request answered 401 with a text body: error %v, want one that is not code %d", err, codeRejected)
	}
	if _, err := cs.ListTools(t.Context(), nil); err == nil {
		t.Fatal("the request after a 401 with a text body succeeded: want the session failed (else entry 10 is no longer needed)")
	}
}

// TestSDKCompatStandaloneRetry pins entry 15: Client.Connect opens the
// standalone event stream of a legacy session, and tries a GET that
// failed in the transport again after Connect's context has ended.
func TestSDKCompatStandaloneRetry(t *testing.T) {
	s := testserver.Full(testserver.Options{Legacy: true})
	next := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, nil)
	gets := make(chan int, 2)
	var n atomic.Int32
	srv := testserver.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		switch n.Add(1) {
		case 1: // fails in the transport
			drop(w)
			gets <- 1
		default: // no stream: Connect returns
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			gets <- 2
		}
	}))
	ctx, cancel := context.WithCancel(t.Context())
	connected := make(chan *mcp.ClientSession, 1)
	go func() {
		cs, _ := sdkClient(nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
		connected <- cs
	}()
	receive(t, gets, "the standalone stream's GET")
	cancel()
	if got := receive(t, gets, "a GET after Connect's context ended"); got != 2 {
		t.Fatalf("GET %d, want the second", got)
	}
	if cs := receive(t, connected, "Connect to return"); cs != nil {
		cs.Close()
	}
}
