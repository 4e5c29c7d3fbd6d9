// Package httptransport is the HTTP side of one connection attempt to a
// Streamable HTTP or SSE server: an http.RoundTripper that adds the
// server's headers and keeps its credentials on its origin, authorizes
// SSE requests with an OAuth handler (and each request with its own, where
// the handler depends on the request: Options.OAuthOf), records failing statuses
// (and makes them the failure of their request alone: Options.PerRequest), counts the
// cancellation notices sent, screens every answer body (internal/wire),
// sends again a request the server closed its pooled connection under
// before reading it (probe.go), keeps each POST's stream alive
// past its caller until the server has answered, and tells its owner the
// signs that the session ended.
//
// It knows nothing of the adapter: what it needs of its connection comes
// in [Options] as values and funcs.
package httptransport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Options are what a [Transport] needs of its connection.
type Options struct {
	// Endpoint is the server's URL: its credentials go to its origin only.
	Endpoint string
	// Headers are the server's headers, on every request to its origin.
	Headers map[string]string
	// More returns more headers for a request (the principal's), which
	// override Headers; nil for none. Its error fails the request as it is.
	More func(ctx context.Context) (map[string]string, error)
	// Call returns the headers of the call a request belongs to, which
	// override the others; nil for none.
	Call func(ctx context.Context) map[string]string
	// OAuth, when set, authorizes every request to the origin with its
	// token and runs its Authorize flow on a 401 or 403 (go-sdk does this
	// itself for Streamable HTTP, not for SSE).
	OAuth auth.OAuthHandler
	// OAuthOf, when set, returns the OAuth handler of a request (that of
	// the principal it acts for, on a session principals share), used as
	// OAuth is; nil for none. It replaces OAuth.
	OAuthOf func(ctx context.Context) auth.OAuthHandler
	// Screen reads every answer body; nil for none.
	Screen *wire.Screen
	// Ended is told, once or more, that the session ended or may have: the
	// standalone event stream or a resumed one ended, an answer's read
	// failed, or a DELETE was sent.
	Ended func()
	// Failed is told of a failing status that ends the session once it is
	// established (before, a failing exchange of the handshake fails only
	// the handshake).
	Failed func()
	// PerRequest, when set (a session whose requests act for different
	// principals), has a failing status fail its request alone: an answer
	// outside 2xx (but a redirect the http.Client follows) whose body is
	// not a JSON-RPC error response is returned
	// as a *StatusError from RoundTrip, which go-sdk fails that request
	// alone with (the root's sdkcompat.go, entry 10), and Failed is never
	// told.
	PerRequest bool

	// Tasks, when set, is the say of the tasks that live on the session
	// over the connection: the session it joins, and whether it keeps it.
	Tasks Tasks
}

// Tasks is what the owner of the tasks of a session asks of the HTTP
// transport of a connection to it (Options.Tasks).
type Tasks interface {
	// Join returns the session the connection joins, one another
	// connection opened (a task line), or "": every request that carries
	// no Mcp-Session-Id carries session, and version as its
	// MCP-Protocol-Version when it sets none.
	Join() (session, version string)
	// Keep reports whether session (the id the DELETE carries) is kept
	// when the connection closes: its DELETE is not sent (it is answered
	// 204 here), for the tasks that live on the session are awaited
	// elsewhere.
	Keep(session string) bool
}

// A Transport is the http.RoundTripper of one connection attempt. Its
// methods are safe for concurrent use.
type Transport struct {
	opts    Options
	base    http.RoundTripper
	origin  *url.URL     // nil when the endpoint is invalid: no request is on its origin
	failure atomic.Int32 // first HTTP status >= 400 (see answered)

	// missing is set when the server answers 404 to a request carrying
	// the session's id: it no longer knows the session (it restarted), and
	// the spec has the client start a new one.
	missing atomic.Bool

	// Once watching, POSTs of notifications/cancelled are counted as they
	// complete, and signalled on cancelSent.
	watching   atomic.Bool
	cancels    atomic.Int64
	cancelSent chan struct{}
}

// New returns the Transport of a connection attempt.
func New(opts Options) *Transport {
	origin, _ := url.Parse(opts.Endpoint)
	return &Transport{opts: opts, origin: origin, cancelSent: make(chan struct{}, 1)}
}

// Client returns a copy of hc (a zero Client when nil) that sends through
// t, which sends through hc's transport (http.DefaultTransport when nil).
func (t *Transport) Client(hc *http.Client) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	}
	t.base = c.Transport
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	c.Transport = t
	return &c
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	orig, sameOrigin := req, t.sameOrigin(req.URL)
	req, err := t.withHeaders(req, sameOrigin)
	if err != nil {
		if orig.Body != nil {
			orig.Body.Close() // a RoundTripper closes it, even on error
		}
		return nil, err
	}
	if t.cancelNotice(req) {
		defer func() {
			t.cancels.Add(1)
			select {
			case t.cancelSent <- struct{}{}:
			default:
			}
		}()
	}
	var life *postLife
	var sent *SendRecord
	if req.Method == http.MethodPost {
		if sent, _ = req.Context().Value(sendRecordKey{}).(*SendRecord); sent != nil {
			sent.posts.Add(1)
		}
		life = newPostLife(req.Context())
		req = req.WithContext(life.ctx)
	}
	if req.Method == http.MethodDelete {
		t.opts.Ended()
		if t.opts.Tasks != nil && t.opts.Tasks.Keep(req.Header.Get(SessionIDHeader)) {
			return kept(req), nil
		}
	}
	resp, err := t.send(req)
	if err == nil && sameOrigin && t.oauth(req.Context()) != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		req, resp, err = t.reauthorize(orig, req, resp)
	}
	if err != nil {
		if life != nil {
			life.end()
		}
		return nil, err
	}
	// The reason phrase is the server's text, of any length (go-sdk's SSE
	// transport puts it in its errors): the status's own name replaces it.
	if text := http.StatusText(resp.StatusCode); !ownStatus(resp.Status, resp.StatusCode, text) {
		resp.Status = strconv.Itoa(resp.StatusCode) + " " + text
	}
	if t.answered(req, resp) && sent != nil {
		sent.refusals.Add(1)
	}
	if t.opts.PerRequest && failing(resp) && !errorAnswer(resp) {
		if life != nil {
			life.end()
		}
		return nil, &StatusError{Code: resp.StatusCode}
	}
	var answered func()
	if life != nil {
		answered = life.answered
	}
	if t.opts.Screen != nil {
		t.opts.Screen.ResponseAnswered(req, resp, answered)
	}
	resp.Body = &answerBody{ReadCloser: resp.Body, life: life, ended: t.opts.Ended}
	return resp, nil
}

// oauth returns the OAuth handler of a request made under ctx, or nil.
func (t *Transport) oauth(ctx context.Context) auth.OAuthHandler {
	if t.opts.OAuthOf != nil {
		return t.opts.OAuthOf(ctx)
	}
	return t.opts.OAuth
}

// kept returns the answer to req, a DELETE of a session the connection
// keeps (Tasks.Keep), which is not sent.
func kept(req *http.Request) *http.Response {
	return &http.Response{Status: "204 No Content", StatusCode: http.StatusNoContent, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: http.NoBody, Request: req}
}

// send sends req over the base transport. A request that failed on a
// pooled connection the server had closed before reading it (it
// restarted, or its idle timeout passed: probe.go) is sent again
// on another connection, if its body can be had again: net/http resends
// only idempotent requests, which a POST of the protocol is not, but this
// one was never seen. A connection that failed is not pooled again, so the
// pool runs out of stale ones; maxUnread bounds it all the same.
func (t *Transport) send(req *http.Request) (*http.Response, error) {
	ctx, probe := traceProbe(req.Context())
	req = req.WithContext(ctx)
	for tries := 1; ; tries++ {
		resp, err := t.base.RoundTrip(req)
		if err == nil || tries == maxUnread || ctx.Err() != nil || !probe.unread() ||
			req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
			return resp, err
		}
		again := req.Clone(ctx)
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			again.Body = body
		}
		req = again
	}
}

// maxUnread bounds the attempts of one request that the server closed
// pooled connections under before reading it.
const maxUnread = 4

// answered records the status of resp, the answer to req: the first
// failing one (failure; a 401 or 403 gives way to a later one, which
// answers the request sent again after an OAuth Authorize flow), a 404
// for the session (missing), and a sign of the session's end for any
// failing status but a 4xx to the first GET of a standalone stream, which
// says only that there is none. The SDK fails a session on a 4xx it
// cannot read as a JSON-RPC error, and on a 404 for its session; it fails
// that request alone on most others, but for the sign a status it
// survives costs only a goroutine until the session ends. It reports
// whether resp is a 404 for the session: the server did not execute req.
func (t *Transport) answered(req *http.Request, resp *http.Response) (missing bool) {
	if resp.StatusCode < 400 {
		return false
	}
	if first := t.failure.Load(); first == 0 || first == http.StatusUnauthorized || first == http.StatusForbidden {
		t.failure.Store(int32(resp.StatusCode))
	}
	if resp.StatusCode == http.StatusNotFound && req.Header.Get(SessionIDHeader) != "" {
		t.missing.Store(true)
		missing = true
	}
	if !t.opts.PerRequest && (req.Method != http.MethodGet || resp.StatusCode >= 500 || req.Header.Get("Last-Event-ID") != "") {
		t.opts.Failed()
	}
	return missing
}

// A StatusError is the failure of a request whose answer had a failing
// HTTP status and no JSON-RPC error in its body (Options.PerRequest). Its
// text holds the status only: not the body, nor a header.
type StatusError struct {
	Code int // the HTTP status
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.Code, http.StatusText(e.Code))
}

// ownStatus reports whether status is the status line of code with its
// own name, text ("200 OK", as most servers send it): then it stays, and
// a response costs no new string.
func ownStatus(status string, code int, text string) bool {
	return len(status) == 4+len(text) && status[3] == ' ' && status[4:] == text &&
		int(status[0]-'0')*100+int(status[1]-'0')*10+int(status[2]-'0') == code
}

// failing reports whether go-sdk takes resp for a failure (outside 2xx),
// but for a redirect, which the http.Client follows before go-sdk sees it.
func failing(resp *http.Response) bool {
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		return false
	}
	return resp.StatusCode < 200 || resp.StatusCode >= 300
}

// maxErrorAnswer bounds the body of a failing answer read to find a
// JSON-RPC error in it.
const maxErrorAnswer = 64 << 10

// errorAnswer reports whether resp, a failing answer, carries a JSON-RPC
// error response in its body, which go-sdk fails its request alone with
// (streamable.go:2589-2596): the body is read (up to maxErrorAnswer) and
// put back then. It closes the body otherwise.
func errorAnswer(resp *http.Response) bool {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorAnswer+1))
	if err == nil && len(body) <= maxErrorAnswer {
		if msg, derr := jsonrpc.DecodeMessage(body); derr == nil {
			if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil {
				resp.Body = readBack{Reader: bytes.NewReader(body), Closer: resp.Body}
				return true
			}
		}
	}
	resp.Body.Close()
	return false
}

// readBack is a body read already, held in Reader, closing its source.
type readBack struct {
	io.Reader
	io.Closer
}

// SessionIDHeader carries a Streamable HTTP session's id; VersionHeader,
// the protocol version of its requests.
const (
	SessionIDHeader = "Mcp-Session-Id"
	VersionHeader   = "Mcp-Protocol-Version"
)

// Missing reports whether the server answered 404 for the session: it no
// longer knows it.
func (t *Transport) Missing() bool { return t.missing.Load() }

// Failure returns the first failing HTTP status of an exchange (a 401 or
// 403 gives way to a later one), or 0.
func (t *Transport) Failure() int { return int(t.failure.Load()) }

// WatchCancels starts counting the cancellation notices sent.
func (t *Transport) WatchCancels() { t.watching.Store(true) }

// CancelsSent returns how many cancellation notices were sent since
// WatchCancels.
func (t *Transport) CancelsSent() int64 { return t.cancels.Load() }

// CancelSent receives a value when a cancellation notice was sent since
// WatchCancels (one value may stand for several).
func (t *Transport) CancelSent() <-chan struct{} { return t.cancelSent }

// cancelNotice reports whether req, sent while watching, posts
// notifications/cancelled. The SDK posts one small message per request,
// with a GetBody (the root's sdkcompat.go, entry 6): reading it costs
// nothing to the request.
func (t *Transport) cancelNotice(req *http.Request) bool {
	if !t.watching.Load() || req.Method != http.MethodPost || req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	b, _ := io.ReadAll(io.LimitReader(body, 4<<10))
	return bytes.Contains(b, []byte(`"notifications/cancelled"`))
}

// A SendRecord follows the POSTs of one request on a Streamable HTTP
// session (with its context: [WithSendRecord]): how many were made, and
// how many the server answered 404 for their session. A request whose
// every POST was so answered, or that made none, was never executed, and
// may be sent again on a new session. The 404 is trusted as the spec
// defines it (the session is unknown, so nothing ran): a server or
// failover proxy that ran the request and then answered 404 gets it
// twice (the root's Server.Retry says what such a server can do).
type SendRecord struct {
	posts, refusals atomic.Int32
}

// sendRecordKey is the context key of a request's *SendRecord.
type sendRecordKey struct{}

// WithSendRecord returns ctx carrying r: the POSTs of requests sent with
// it are recorded there.
func WithSendRecord(ctx context.Context, r *SendRecord) context.Context {
	return context.WithValue(ctx, sendRecordKey{}, r)
}

// Unexecuted reports whether the server executed none of the request's
// POSTs; false for a nil record, which knows nothing.
func (r *SendRecord) Unexecuted() bool {
	return r != nil && r.posts.Load() == r.refusals.Load()
}
