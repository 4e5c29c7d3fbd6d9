package mcpadapter

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A hostileHTTP serves a go-sdk server's handler (next), but for the
// requests it spoils: the POSTs of method ("GET" for the standalone event
// stream's), which spoil answers its own way, as no go-sdk server would;
// id is the JSON-RPC id of the request.
type hostileHTTP struct {
	next   http.Handler
	method string
	spoil  func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
}

func (h *hostileHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(body, &msg)
	if r.Method == http.MethodPost && msg.Method == h.method || r.Method == http.MethodGet && h.method == http.MethodGet {
		h.spoil(w, r, msg.ID)
		return
	}
	h.next.ServeHTTP(w, r)
}

// hostileSecrets are the credentials of the hostile server's entry, which
// no error or log may show.
var hostileSecrets = []string{"pw-secret", "key-secret", "tok-secret", "query-secret"}

// hostileServer is the adapter's entry for the server at base: a URL with
// a password, a token in its query, a header and an OAuth token, all
// secret.
func hostileServer(t *testing.T, base string) Server {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("user", "pw-secret")
	u.RawQuery = "key=query-secret"
	return Server{URL: u.String(), Headers: map[string]string{"X-Key": "key-secret"}, OAuth: staticToken("tok-secret")}
}

// checkHostileText fails when text shows a secret of hostileServer, or is
// longer than a server's error text should make it.
func checkHostileText(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range hostileSecrets {
		if strings.Contains(text, s) {
			t.Errorf("%s shows the secret %q: %.2000s", what, s, text)
		}
	}
	if len(text) > 16<<10 {
		t.Errorf("%s is %d bytes long: %.500s…", what, len(text), text)
	}
	for _, m := range sessionQuery.FindAllStringSubmatch(text, -1) {
		if m[1] != "xxxxx" {
			t.Errorf("%s shows an SSE session's id: %q", what, m[0])
		}
	}
}

// sessionQuery matches the session id in the query of go-sdk's SSE
// message endpoint (a credential).
var sessionQuery = regexp.MustCompile(`(?i)sessionid=([^&"'\\\s]*)`)

// sseHead starts an event stream answer.
func sseHead(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
}

// events answers with an event stream of text, then ends it.
func events(text string) func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
	return func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
		sseHead(w)
		io.WriteString(w, text)
	}
}

// untilDone writes chunk to w, flushed, until the request ends.
func untilDone(w http.ResponseWriter, r *http.Request, chunk string) {
	rc := http.NewResponseController(w)
	for r.Context().Err() == nil {
		if _, err := io.WriteString(w, chunk); err != nil {
			return
		}
		rc.Flush()
	}
}

// hangUp sends what w holds (the headers at least), then drops the
// connection.
func hangUp(w http.ResponseWriter) {
	http.NewResponseController(w).Flush()
	drop(w)
}

// drop drops the connection of w without another byte.
func drop(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
	}
}

// echoAnswer is a well-formed answer to the echo call id.
func echoAnswer(id json.RawMessage) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"x"}]}}`, id)
}

// hostileAnswers are the ways a server may answer a tools/call POST that
// no go-sdk server answers: each must end the call by its deadline, with
// no secret in its error or the log, and leave nothing behind after Close.
var hostileAnswers = []struct {
	name  string
	spoil func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
}{
	{"no content type", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		w.Header()["Content-Type"] = nil
		io.WriteString(w, echoAnswer(id))
	}},
	{"html", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>"+strings.Repeat("x", 1<<20))
	}},
	{"event without data", events("event: message\n\n")},
	{"huge event, no newline", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		sseHead(w)
		io.WriteString(w, "data: ")
		untilDone(w, r, strings.Repeat("x", 64<<10))
	}},
	{"retry abuse", events("id: 1\nretry: 9223372036854775807\ndata:\n\n")},
	{"retry of an hour", events("id: 1\nretry: 3600000\ndata:\n\n")},
	{"retry negative", events("id: 1\nretry: -5\ndata:\n\n")},
	{"endless comments", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		sseHead(w)
		untilDone(w, r, ": keepalive\n")
	}},
	{"endless empty events", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		sseHead(w)
		untilDone(w, r, "id: 1\n\n")
	}},
	{"huge event id", events("id: " + strings.Repeat("i", 1<<20) + "\ndata:\n\n")},
	{"event id with control characters", events("id: a\x00b\x01c\x7f\ndata:\n\n")},
	{"endless JSON", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"`)
		untilDone(w, r, strings.Repeat("x", 64<<10))
	}},
	{"stalled JSON", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`)
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}},
	{"headers then nothing", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		sseHead(w)
		<-r.Context().Done()
	}},
	{"nothing", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		<-r.Context().Done()
	}},
	{"cut mid-event", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		sseHead(w)
		io.WriteString(w, `data: {"jsonrpc":"2.0","id":`+string(id)+`,"res`)
		hangUp(w)
	}},
	{"cut before the answer", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) { drop(w) }},
	{"cut after the headers", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) { hangUp(w) }},
	{"redirect loop", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect)
	}},
	{"gzip bomb, JSON", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		gzipBomb(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"`)
	}},
	{"gzip bomb, event", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "text/event-stream")
		gzipBomb(w, `data: {"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"`)
	}},
}

// gzipBomb writes prefix then 64 MiB of one letter, gzipped (two gzip
// members: net/http's client asks for gzip and inflates them unasked).
func gzipBomb(w http.ResponseWriter, prefix string) {
	w.Header().Set("Content-Encoding", "gzip")
	zw := gzip.NewWriter(w)
	io.WriteString(zw, prefix)
	zw.Close()
	w.Write(bomb())
}

// bomb is 64 MiB of one letter, gzipped once for every test.
var bomb = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 64 {
		zw.Write(chunk)
	}
	zw.Close()
	return b.Bytes()
})

// hostileStatuses are failing statuses, each answered with a huge body
// that echoes the request's credentials.
var hostileStatuses = []int{400, 401, 403, 404, 405, 429, 500, 502, 503}

// echoBody is a failing answer's body: the request's headers, then a
// megabyte of text.
func echoBody(w http.ResponseWriter, r *http.Request, code int) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(code)
	var b strings.Builder
	r.Header.Write(&b)
	io.WriteString(w, b.String()+strings.Repeat("y", 1<<20))
}

// The transports runHostile runs over.
const (
	overStreamable = iota // a stateful go-sdk server over Streamable HTTP
	overSSE               // the same over HTTP+SSE
	overShared            // a stateless one, whose session principals share
)

// runHostile runs one hostile answer to the requests of method (a POST's,
// or "GET" for the standalone event stream) over a transport (overSSE…):
// discovery and a call each end by their deadline, with a *ServerError
// that shows no secret, and Close leaves nothing behind.
func runHostile(t *testing.T, over int, method string, spoil func(w http.ResponseWriter, r *http.Request, id json.RawMessage)) {
	before := goroutines()
	srv := testserver.Full(testserver.Options{})
	getServer := func(*http.Request) *mcp.Server { return srv.Server }
	h := &hostileHTTP{next: mcp.NewStreamableHTTPHandler(getServer, nil), method: method, spoil: spoil}
	hs, open := connCounting(h)
	t.Cleanup(hs.Close) // also closed below, before the leak check
	var logs syncBuffer
	cfg := Config{Servers: map[string]Server{"h": hostileServer(t, hs.URL)}, Logger: logsTo(&logs)}
	switch entry := cfg.Servers["h"]; over {
	case overSSE:
		h.next = mcp.NewSSEHandler(getServer, nil)
		entry.Mode = ModeLegacy // falls back to SSE on the 400 of go-sdk's SSE handler
		cfg.Servers["h"] = entry
	case overShared:
		h.next = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true})
		entry.HeadersFor = func(context.Context, string) (map[string]string, error) {
			return map[string]string{"X-User-Key": "key-secret-of-user"}, nil
		}
		entry.OAuth, entry.Mode = nil, ModeModern // shared from the first dial on
		cfg.Servers["h"], cfg.ShareStatelessSessions = entry, true
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	const deadline = time.Second
	check := func(what string, run func(ctx context.Context) error) {
		t.Helper()
		start := time.Now()
		err := run(WithPrincipal(faultCtxWithin(t, deadline), "user"))
		if took := time.Since(start); took > deadline+hangSlack {
			t.Errorf("%s took %v with a %v deadline", what, took, deadline)
		}
		t.Logf("%s error: %.300v", what, err)
		if err == nil {
			return
		}
		checkHostileText(t, what+"'s error", err.Error())
		if se := (*ServerError)(nil); !errors.As(err, &se) {
			t.Errorf("%s error = %v (%T), want a *ServerError", what, err, err)
		}
	}
	var ts Toolset
	check("ListTools", func(ctx context.Context) (err error) {
		ts, err = a.ListTools(ctx)
		return err
	})
	if tool := ts.Lookup("h__echo"); tool != nil {
		check("Invoke", func(ctx context.Context) error {
			_, err := tool.Invoke(ctx, map[string]any{"text": "x"})
			return err
		})
	} else if method == "tools/call" {
		t.Fatalf("ListTools() = %v, want h__echo", toolNames(ts))
	}
	start := time.Now()
	a.Close()
	if took := time.Since(start); took > 2*hangSlack { // a dial go-sdk retried held Close 17–21 s
		t.Errorf("Close took %v", took)
	}
	checkHostileText(t, "the log", logs.String())
	checkConnsClosed(t, open)
	hs.CloseClientConnections()
	hs.Close()
	srv.KillSessions()
	checkNoLeaks(t, before)
}

// hangSlack is what a call or Close may take past its bound before the
// hostile tests call it hung: room for a loaded machine under -race (the
// tests assert no speed, only that nothing waits for the server).
const hangSlack = 5 * time.Second

// connCounting starts an httptest server for h that counts its open
// connections.
func connCounting(h http.Handler) (*httptest.Server, *atomic.Int32) {
	var open atomic.Int32
	hs := httptest.NewUnstartedServer(h)
	hs.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		switch state {
		case http.StateNew:
			open.Add(1)
		case http.StateHijacked, http.StateClosed:
			open.Add(-1)
		}
	}
	hs.Start()
	return hs, &open
}

// checkConnsClosed fails when the client keeps a connection to the server
// open, but idle ones in http.DefaultTransport's pool (which the
// adapter's clients share): an answer's body nobody closed, a request
// still running. Connections close asynchronously, so it polls for a
// bounded time, as checkNoLeaks does.
func checkConnsClosed(t *testing.T, open *atomic.Int32) {
	t.Helper()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	for deadline := time.Now().Add(3 * hangSlack); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if open.Load() == 0 {
			return
		}
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	}
	t.Errorf("%d connections to the server left open after Close", open.Load())
}

// TestHostileHTTPAnswers: a Streamable HTTP server that answers a call in
// ways no go-sdk server does costs that call its deadline at most, shows
// no secret of its entry in an error or the log, and leaves nothing
// running after Close; on a session of its own, and on one that
// principals share (whose failing statuses fail their request alone).
func TestHostileHTTPAnswers(t *testing.T) {
	bomb() // made once, before any call is timed
	for over, name := range map[int]string{overStreamable: "session", overShared: "shared"} {
		t.Run(name, func(t *testing.T) {
			for _, tt := range hostileAnswers {
				t.Run(tt.name, func(t *testing.T) { runHostile(t, over, "tools/call", tt.spoil) })
			}
			for _, code := range hostileStatuses {
				t.Run(fmt.Sprint(code), func(t *testing.T) {
					runHostile(t, over, "tools/call", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) { echoBody(w, r, code) })
				})
			}
		})
	}
}

// echoStatus answers with a failing status whose reason phrase is the
// request's header values, then 100 KiB of text.
func echoStatus(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
	conn, bw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	var values []string
	for _, vs := range r.Header {
		values = append(values, vs...)
	}
	fmt.Fprintf(bw, "HTTP/1.1 500 %s %s\r\nContent-Length: 0\r\n\r\n", strings.Join(values, " "), strings.Repeat("z", 100<<10))
	bw.Flush()
}

// TestHostileSSEAnswers is TestHostileHTTPAnswers over HTTP+SSE, whose
// POSTs are answered 202 and whose answers come on the event stream: a
// message POST answered in ways no go-sdk server does.
func TestHostileSSEAnswers(t *testing.T) {
	spoils := map[string]func(w http.ResponseWriter, r *http.Request, id json.RawMessage){
		"reason phrase": echoStatus,
		"nothing":       func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) { <-r.Context().Done() },
		"redirect loop": func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect)
		},
		"cut": func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) { drop(w) },
	}
	for _, code := range hostileStatuses {
		spoils[fmt.Sprint(code)] = func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) { echoBody(w, r, code) }
	}
	for name, spoil := range spoils {
		t.Run(name, func(t *testing.T) { runHostile(t, overSSE, "tools/call", spoil) })
	}
}

// An idRewriter stands between the adapter and a stateful go-sdk server,
// and gives the adapter the session id fake(real) for the server's real
// one; at changeAt (a JSON-RPC method), it answers with another id still.
type idRewriter struct {
	next     http.Handler
	fake     func(real string) string
	changeAt string

	mu   sync.Mutex
	real map[string]string // by fake id
}

func (h *idRewriter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	h.mu.Lock()
	if real, ok := h.real[r.Header.Get("Mcp-Session-Id")]; ok {
		r.Header.Set("Mcp-Session-Id", real)
	}
	h.mu.Unlock()
	var msg struct {
		Method string `json:"method"`
	}
	json.Unmarshal(body, &msg)
	h.next.ServeHTTP(&idWriter{ResponseWriter: w, h: h, change: h.changeAt != "" && msg.Method == h.changeAt}, r)
}

// idWriter rewrites the session id of an answer.
type idWriter struct {
	http.ResponseWriter
	h      *idRewriter
	change bool
	done   bool
}

func (w *idWriter) WriteHeader(code int) {
	if !w.done {
		w.done = true
		if real := w.Header().Get("Mcp-Session-Id"); real != "" || w.change {
			fake := w.h.fake(real)
			if w.change {
				fake = "changed-" + fake
			}
			w.h.mu.Lock()
			if w.h.real == nil {
				w.h.real = map[string]string{}
			}
			w.h.real[fake] = real
			w.h.mu.Unlock()
			w.Header()["Mcp-Session-Id"] = []string{fake}
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *idWriter) Write(p []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *idWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestHostileHTTPSessionIDs: a session id that is huge, holds characters
// HTTP cannot carry back, or changes mid-session costs the calls an error
// by their deadline at most, shows the session's id in no error or log,
// and leaves nothing running after Close.
func TestHostileHTTPSessionIDs(t *testing.T) {
	tests := []struct {
		name     string
		fake     func(string) string
		changeAt string
	}{
		{"huge", func(real string) string { return real + strings.Repeat("s", 200<<10) }, ""},
		{"control characters", func(real string) string { return real + "\x01\x7f" }, ""},
		{"non-ASCII", func(real string) string { return real + "\xff\xfe" }, ""},
		{"changes", func(real string) string { return real }, "tools/call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := goroutines()
			srv := testserver.Full(testserver.Options{})
			h := &idRewriter{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server }, nil), fake: tt.fake, changeAt: tt.changeAt}
			hs, open := connCounting(h)
			t.Cleanup(hs.Close) // also closed below, before the leak check
			var logs syncBuffer
			a, err := New(Config{Servers: map[string]Server{"h": hostileServer(t, hs.URL)}, Logger: logsTo(&logs)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close() })
			var texts []string
			ctx := faultCtxWithin(t, 2*time.Second)
			start := time.Now()
			ts, err := a.ListTools(ctx)
			if err != nil {
				texts = append(texts, err.Error())
			} else if _, err := lookup(t, ts, "h__echo").Invoke(ctx, map[string]any{"text": "x"}); err != nil {
				texts = append(texts, err.Error())
			}
			if took := time.Since(start); took > 2*time.Second+hangSlack {
				t.Errorf("the calls took %v with a 2s deadline", took)
			}
			t.Logf("errors: %.300q", texts)
			a.Close()
			texts = append(texts, logs.String())
			for _, text := range texts {
				checkHostileText(t, "an error or the log", text)
				h.mu.Lock()
				for fake := range h.real {
					// The session's id is a credential: the SDK's errors
					// name it ("session ID: …", "mismatching session IDs").
					// (A changed id is the server's claim, never sent.)
					if !strings.HasPrefix(fake, "changed-") && strings.Contains(text, fake) {
						t.Errorf("an error or the log shows the session id %.40q…: %.300q", fake, text)
					}
				}
				h.mu.Unlock()
			}
			checkConnsClosed(t, open)
			hs.CloseClientConnections()
			hs.Close()
			srv.KillSessions()
			checkNoLeaks(t, before)
		})
	}
}

// TestHostileHTTPRedirectElsewhere: a stateful server that redirects a
// call to another origin hands it none of its entry's credentials, nor
// the session's id.
func TestHostileHTTPRedirectElsewhere(t *testing.T) {
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			sink := &faultserver.Recorder{Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { echoBody(w, r, http.StatusBadRequest) })}
			other := testserver.Serve(t, sink)
			srv := testserver.Full(testserver.Options{})
			var session string
			h := &hostileHTTP{
				next:   mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server }, nil),
				method: "tools/call",
				spoil: func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
					session = r.Header.Get("Mcp-Session-Id")
					http.Redirect(w, r, other.URL+"/elsewhere", code)
				},
			}
			hs := testserver.Serve(t, h)
			var logs syncBuffer
			a := newAdapter(t, Config{Servers: map[string]Server{"h": hostileServer(t, hs.URL)}, Logger: logsTo(&logs)})
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			_, err = lookup(t, ts, "h__echo").Invoke(faultCtxWithin(t, 2*time.Second), map[string]any{"text": "x"})
			t.Logf("Invoke error: %.300v", err)
			if len(sink.Requests()) == 0 {
				t.Fatal("the redirect was not followed")
			}
			if session == "" {
				t.Fatal("the session has no id")
			}
			for _, s := range append([]string{session}, hostileSecrets...) {
				if sink.SawHeaderValue(s) {
					t.Errorf("the other origin got %q: %v", s, sink.Headers())
				}
			}
			if err != nil {
				checkHostileText(t, "the error", err.Error())
			}
			checkHostileText(t, "the log", logs.String())
		})
	}
}

// TestHostileHTTPStream: a standalone event stream (the GET of a
// Streamable HTTP session) that no go-sdk server would send costs
// discovery and calls their deadline at most, shows no secret, and
// leaves nothing running after Close.
func TestHostileHTTPStream(t *testing.T) {
	spoils := map[string]func(w http.ResponseWriter, r *http.Request, id json.RawMessage){
		"endless comments": func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			sseHead(w)
			untilDone(w, r, ": keepalive\n")
		},
		"huge event, no newline": func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			sseHead(w)
			io.WriteString(w, "data: ")
			untilDone(w, r, strings.Repeat("x", 64<<10))
		},
		"stray answers": func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			sseHead(w)
			for i := range 1000 {
				fmt.Fprintf(w, "data: %s\n\n", echoAnswer(json.RawMessage(fmt.Sprint(i))))
			}
			<-r.Context().Done()
		},
		"headers then nothing": func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			sseHead(w)
			<-r.Context().Done()
		},
		"cut mid-event": func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			sseHead(w)
			io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed","par`)
			hangUp(w)
		},
		"redirect loop": func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect)
		},
		"reason phrase": echoStatus,
	}
	for _, code := range hostileStatuses {
		spoils[fmt.Sprint(code)] = func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) { echoBody(w, r, code) }
	}
	for name, spoil := range spoils {
		t.Run(name, func(t *testing.T) { runHostile(t, overStreamable, http.MethodGet, spoil) })
	}
}

// TestHostileHTTPDrops: many calls at once while the server drops their
// connections, before answering or halfway through: each call ends by its
// deadline, with its answer or a *ServerError, and Close leaves nothing
// running.
func TestHostileHTTPDrops(t *testing.T) {
	before := goroutines()
	srv := testserver.Full(testserver.Options{})
	next := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server }, nil)
	var mu sync.Mutex
	n := 0
	h := &hostileHTTP{next: next, method: "tools/call", spoil: func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		switch k % 3 {
		case 0:
			drop(w)
		case 1:
			sseHead(w)
			io.WriteString(w, `data: {"jsonrpc":"2.0","id":`+string(id)+`,"res`)
			hangUp(w) // halfway
		default:
			next.ServeHTTP(w, r)
		}
	}}
	hs, open := connCounting(h)
	t.Cleanup(hs.Close) // also closed below, before the leak check
	a, err := New(Config{Servers: map[string]Server{"h": {URL: hs.URL, Retry: &RetryPolicy{MaxAttempts: 2, Delay: time.Millisecond}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	const deadline = 5 * time.Second
	var wg sync.WaitGroup
	start := time.Now()
	for range 100 {
		wg.Go(func() {
			_, err := lookup(t, ts, "h__echo").Invoke(faultCtxWithin(t, deadline), map[string]any{"text": "x"})
			if se := (*ServerError)(nil); err != nil && !errors.As(err, &se) {
				t.Errorf("Invoke error = %v (%T), want a *ServerError", err, err)
			}
		})
	}
	wg.Wait()
	if took := time.Since(start); took > deadline+hangSlack {
		t.Errorf("the calls took %v with a %v deadline", took, deadline)
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	checkConnsClosed(t, open)
	hs.CloseClientConnections()
	hs.Close()
	srv.KillSessions()
	checkNoLeaks(t, before)
}

// TestHostileHTTPClose: Close ends a call without a deadline whose server
// never finishes its answer, and leaves nothing running.
func TestHostileHTTPClose(t *testing.T) {
	for _, name := range []string{"nothing", "headers then nothing", "stalled JSON", "endless comments", "huge event, no newline"} {
		t.Run(name, func(t *testing.T) {
			var spoil func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
			for _, tt := range hostileAnswers {
				if tt.name == name {
					spoil = tt.spoil
				}
			}
			before := goroutines()
			srv := testserver.Full(testserver.Options{})
			entered := make(chan struct{}, 1)
			h := &hostileHTTP{
				next:   mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server }, nil),
				method: "tools/call",
				spoil: func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
					entered <- struct{}{}
					spoil(w, r, id)
				},
			}
			hs, open := connCounting(h)
			t.Cleanup(hs.Close) // also closed below, before the leak check
			a, err := New(Config{Servers: map[string]Server{"h": hostileServer(t, hs.URL)}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close() })
			tool := lookupTool(t, a, "h__echo")
			done := asyncInvoke(context.Background(), tool, map[string]any{"text": "x"})
			receive(t, entered, "the call to reach the server")
			closed := make(chan error, 1)
			go func() { closed <- a.Close() }()
			receive(t, closed, "Close to return")
			if out := receive(t, done, "the call to end"); !errors.Is(out.err, ErrClosed) {
				t.Errorf("Invoke error = %v, want ErrClosed", out.err)
			}
			checkConnsClosed(t, open)
			hs.CloseClientConnections()
			hs.Close()
			srv.KillSessions()
			checkNoLeaks(t, before)
		})
	}
}
