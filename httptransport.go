package mcpadapter

// The HTTP transport of one dial, Streamable HTTP or SSE, for a URL server
// and for a go-sdk HTTP client transport given as Server.Transport alike:
// a RoundTripper (serverTransport) that adds the server's headers and keeps
// its credentials on its origin, records failing statuses, counts the
// cancellation notices Close waits for, screens every answer body
// (internal/wire), sends again a request written to a pooled connection
// the server had closed (send), keeps each POST's stream alive past its
// caller until the server has answered (postLife), and learns from the
// exchanges that the session ended (endSignal).

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/connprobe"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// A serverTransport is the http.RoundTripper of one HTTP connection
// attempt: it adds the server's headers (and keeps every credential on the
// server's origin), records the first failing status (to tell auth
// failures and missing endpoints apart: the SDK's HTTP errors are
// strings), screens every answer, and rewrites content the SDK cannot
// decode.
type serverTransport struct {
	base      http.RoundTripper
	origin    *url.URL // the server's endpoint: its credentials go nowhere else
	headers   map[string]string
	principal string                                                                 // whom the connection acts for
	more      func(ctx context.Context, principal string) (map[string]string, error) // Server.HeadersFor
	oauth     auth.OAuthHandler                                                      // SSE only: go-sdk authorizes Streamable HTTP
	screen    *wire.Screen
	failure   atomic.Int32 // first HTTP status >= 400 (see answered)

	// missing is set when the server answers 404 to a request carrying
	// the session's id: it no longer knows the session (it restarted), and
	// the spec has the client start a new one (pool.renew).
	missing atomic.Bool

	// Once watching (conn.beginClose), POSTs of notifications/cancelled
	// are counted as they complete, and signalled on cancelSent.
	watching   atomic.Bool
	cancels    atomic.Int64
	cancelSent chan struct{}

	// end learns that a Streamable HTTP session ended. Whatever ends it,
	// the SDK closes its connection, which ends the standalone event
	// stream (answerBody), or sends a DELETE (a session with an ID). A
	// session of neither, stateless, ends on an answer the SDK fails it
	// for (answered), on a failed read of one (answerBody again: a
	// decoding failure is the screen's to prevent), or by the adapter's
	// close and giveUp, which sign it themselves.
	end endSignal
}

// newServerTransport returns the transport of a connection attempt of c
// to endpoint, over which screen reads.
func newServerTransport(c *conn, screen *wire.Screen, endpoint string) *serverTransport {
	s := c.cfg
	origin, _ := url.Parse(endpoint) // nil when invalid: no request is on its origin
	return &serverTransport{origin: origin, headers: s.Headers, principal: c.key.principal, more: s.HeadersFor, screen: screen,
		cancelSent: make(chan struct{}, 1), end: endSignal{c: c}}
}

// client returns a copy of hc (a zero Client when nil) that sends through t.
func (t *serverTransport) client(hc *http.Client) *http.Client {
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
func (t *serverTransport) RoundTrip(req *http.Request) (*http.Response, error) {
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
	var sent *sendRecord
	if req.Method == http.MethodPost {
		sent, _ = req.Context().Value(sendRecordKey{}).(*sendRecord)
		sent.post()
		life = newPostLife(req.Context())
		req = req.WithContext(life.ctx)
	}
	if req.Method == http.MethodDelete {
		t.end.sign()
	}
	resp, err := t.send(req)
	if err == nil && sameOrigin && t.oauth != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		req, resp, err = t.reauthorize(orig, req, resp)
	}
	if err != nil {
		if life != nil {
			life.end()
		}
		return nil, err
	}
	if t.answered(req, resp) {
		sent.refused()
	}
	var answered func()
	if life != nil {
		answered = life.answered
	}
	if t.screen != nil {
		t.screen.ResponseAnswered(req, resp, answered)
	}
	resp.Body = &answerBody{ReadCloser: resp.Body, life: life, end: &t.end}
	return resp, nil
}

// withHeaders returns req as it is sent: to the server's origin
// (sameOrigin), with an OAuth token (SSE: go-sdk authorizes Streamable HTTP
// itself), the server's headers, those of HeadersFor and the call's, each
// overriding the ones before; elsewhere, without Authorization. req itself
// is not changed.
func (t *serverTransport) withHeaders(req *http.Request, sameOrigin bool) (*http.Request, error) {
	call := t.callHeadersOf(req.Context())
	switch {
	case !sameOrigin:
		// A redirect, or an SSE endpoint, pointing at another origin: it
		// gets none of this server's credentials. net/http keeps the
		// Authorization of a redirect to the same host name on another
		// port (an OAuth token set by the SDK); drop it too.
		if req.Header.Get("Authorization") != "" {
			req = req.Clone(req.Context())
			req.Header.Del("Authorization")
		}
	case t.oauth != nil || len(t.headers) > 0 || t.more != nil || call != nil:
		req = req.Clone(req.Context())
		if err := t.setToken(req); err != nil {
			return nil, err
		}
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
		if t.more != nil {
			more, err := t.more(req.Context(), t.principal)
			if err != nil {
				return nil, errorf("mcpadapter: Server.HeadersFor: %w", err)
			}
			for k, v := range more {
				req.Header.Set(k, v)
			}
		}
		for k, v := range call {
			req.Header.Set(k, v)
		}
	}
	return req, nil
}

// setToken sets the Authorization of req to the bearer token of t's OAuth
// handler, if any, as go-sdk's Streamable HTTP transport does: a token
// source without a token, or whose refresh grant is no longer valid,
// leaves it unset, for the server's 401 to start the handler's Authorize
// flow (reauthorize).
func (t *serverTransport) setToken(req *http.Request) error {
	if t.oauth == nil {
		return nil
	}
	ts, err := t.oauth.TokenSource(req.Context())
	if err != nil || ts == nil {
		return oauthError(err)
	}
	tok, err := ts.Token()
	var invalid *oauth2.RetrieveError
	switch {
	case errors.As(err, &invalid) && invalid.ErrorCode == "invalid_grant":
		return nil
	case err != nil:
		return oauthError(err)
	case tok != nil && tok.AccessToken != "":
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return nil
}

// oauthError wraps a failure of the OAuth handler; nil for nil.
func oauthError(err error) error {
	if err == nil {
		return nil
	}
	return errorf("mcpadapter: Server.OAuth: %w", err)
}

// reauthorize answers resp, a 401 or 403 to sent (orig as it was sent),
// as go-sdk does on Streamable HTTP: it runs the OAuth handler's Authorize
// flow (which closes resp's body), then sends orig again, once, with the
// new token. A request whose body cannot be read again gets resp.
func (t *serverTransport) reauthorize(orig, sent *http.Request, resp *http.Response) (*http.Request, *http.Response, error) {
	if orig.Body != nil && orig.Body != http.NoBody && orig.GetBody == nil {
		return sent, resp, nil
	}
	if err := t.oauth.Authorize(sent.Context(), sent, resp); err != nil {
		return nil, nil, oauthError(err)
	}
	again := orig.Clone(sent.Context())
	if orig.GetBody != nil {
		body, err := orig.GetBody()
		if err != nil {
			return nil, nil, err
		}
		again.Body = body
	}
	again, err := t.withHeaders(again, true)
	if err != nil {
		return nil, nil, err
	}
	resp, err = t.send(again)
	return again, resp, err
}

// send sends req over the base transport. A request that failed on a
// pooled connection the server had closed before reading it (it
// restarted, or its idle timeout passed: internal/connprobe) is sent again
// on another connection, if its body can be had again: net/http resends
// only idempotent requests, which a POST of the protocol is not, but this
// one was never seen. A connection that failed is not pooled again, so the
// pool runs out of stale ones; maxUnread bounds it all the same.
func (t *serverTransport) send(req *http.Request) (*http.Response, error) {
	ctx, probe := connprobe.Trace(req.Context())
	req = req.WithContext(ctx)
	for tries := 1; ; tries++ {
		resp, err := t.base.RoundTrip(req)
		if err == nil || tries == maxUnread || ctx.Err() != nil || !probe.Unread() ||
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

// callHeadersOf returns the CallRequest.Headers that ctx carries for the
// connection of t (the same Adapter, server and principal), or nil: the
// headers of one server's call never go to another's.
func (t *serverTransport) callHeadersOf(ctx context.Context) map[string]string {
	ch, _ := ctx.Value(callHeadersKey{}).(*callHeaders)
	if ch == nil || ch.a != t.end.c.a || ch.key != t.end.c.key {
		return nil
	}
	return ch.h
}

// callHeaders are the CallRequest.Headers of one call (hooks.go), for the
// connection key of an Adapter; the context of the call's requests carries
// them (callHeadersKey).
type callHeaders struct {
	a   *Adapter
	key connKey
	h   map[string]string
}

// callHeadersKey is the context key of a call's *callHeaders.
type callHeadersKey struct{}

// checkCallHeaders returns why h cannot be sent with a call on c: c does
// not go over HTTP, or a header is the transport's own.
func (c *conn) checkCallHeaders(h map[string]string) error {
	if !c.overHTTP {
		return errorf("%w: the server is not reached over HTTP", ErrCallHeaders)
	}
	for name := range h {
		if transportHeader(name) {
			return errorf("%w: %s is set by the transport", ErrCallHeaders, http.CanonicalHeaderKey(name))
		}
	}
	return nil
}

// transportHeader reports whether the header name is one that the HTTP
// transports (go-sdk's, net/http) set for the protocol: a call may not
// replace it.
func transportHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Accept", "Connection", "Content-Length", "Content-Type", "Host", "Last-Event-Id", "Te", "Transfer-Encoding", "Upgrade":
		return true
	}
	return len(name) >= 4 && strings.EqualFold(name[:4], "mcp-")
}

// sameOrigin reports whether u is on the server's origin: the same host
// and port, over the same scheme or upgraded from http to https. A redirect
// or an SSE message endpoint elsewhere is another server.
func (t *serverTransport) sameOrigin(u *url.URL) bool {
	if t.origin == nil || u == nil || !strings.EqualFold(t.origin.Hostname(), u.Hostname()) {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	switch {
	case strings.EqualFold(t.origin.Scheme, u.Scheme):
		return port(t.origin) == port(u)
	case strings.EqualFold(t.origin.Scheme, "http") && strings.EqualFold(u.Scheme, "https"):
		return t.origin.Port() == "" && u.Port() == "" // the standard upgrade
	}
	return false
}

// answered records the status of resp, the answer to req: the first
// failing one (failure; a 401 or 403 gives way to a later one, which
// answers the request sent again after an OAuth Authorize flow), a 404 for the session (missing), and a sign
// of the session's end for any failing status but a 4xx to the first GET
// of a standalone stream, which says only that there is none. The SDK
// fails a session on a 4xx it cannot read as a JSON-RPC error, and on a
// 404 for its session; it fails that request alone on most others, but
// for the sign a status it survives costs only a goroutine until the
// session ends. It reports whether resp is a 404 for the session: the
// server did not execute req.
func (t *serverTransport) answered(req *http.Request, resp *http.Response) (missing bool) {
	if resp.StatusCode < 400 {
		return false
	}
	if first := t.failure.Load(); first == 0 || first == http.StatusUnauthorized || first == http.StatusForbidden {
		t.failure.Store(int32(resp.StatusCode))
	}
	if resp.StatusCode == http.StatusNotFound && req.Header.Get(sessionIDHeader) != "" {
		t.missing.Store(true)
		missing = true
	}
	if req.Method != http.MethodGet || resp.StatusCode >= 500 || req.Header.Get("Last-Event-ID") != "" {
		t.end.signAttached()
	}
	return missing
}

// sessionIDHeader carries a Streamable HTTP session's id.
const sessionIDHeader = "Mcp-Session-Id"

// A sendRecord follows the POSTs of one request of the adapter's on a
// Streamable HTTP session (a tools/call, with its context: sendRecordKey):
// how many were made, and how many the server answered 404 for their
// session. A request whose every POST was so answered, or that made
// none, was never executed, and may be sent again on a new session
// (conn.callError). The methods of a nil record do nothing.
type sendRecord struct {
	posts, refusals atomic.Int32
}

// sendRecordKey is the context key of a request's *sendRecord.
type sendRecordKey struct{}

// post records a POST of the request.
func (r *sendRecord) post() {
	if r != nil {
		r.posts.Add(1)
	}
}

// refused records a POST the server answered 404 for its session.
func (r *sendRecord) refused() {
	if r != nil {
		r.refusals.Add(1)
	}
}

// unexecuted reports whether the server executed none of the request's
// POSTs; false for a nil record, which knows nothing.
func (r *sendRecord) unexecuted() bool {
	return r != nil && r.posts.Load() == r.refusals.Load()
}

// statusOf returns err, the failure of a connection attempt over t, as an
// *httpStatusError when an HTTP exchange of the attempt got a failing
// status; nil for nil.
func (t *serverTransport) statusOf(err error) error {
	if code := t.failure.Load(); err != nil && code != 0 {
		return &httpStatusError{code: int(code), err: err}
	}
	return err
}

// httpStatus returns the HTTP status of the *httpStatusError in err's
// chain (statusOf), or 0.
func httpStatus(err error) int {
	var se *httpStatusError
	if errors.As(err, &se) {
		return se.code
	}
	return 0
}

// watchCancels starts counting the cancellation notices sent.
func (t *serverTransport) watchCancels() { t.watching.Store(true) }

// cancelsSent returns how many cancellation notices were sent since
// watchCancels.
func (t *serverTransport) cancelsSent() int64 { return t.cancels.Load() }

// cancelNotice reports whether req, sent while watching, posts
// notifications/cancelled. The SDK posts one small message per request,
// with a GetBody (sdkcompat.go, entry 6): reading it costs nothing to the
// request.
func (t *serverTransport) cancelNotice(req *http.Request) bool {
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

// drainGrace bounds how long the rest of a POST's event stream may take
// once the server has answered the request: the SDK reads it to the end
// (to reuse the connection), whatever the caller does meanwhile.
const drainGrace = time.Second

// errDrainGrace ends a POST's stream that did not end within drainGrace
// of its answer.
var errDrainGrace = errors.New("mcpadapter: the server's stream went on after its answer")

// A postLife is the context of one POST to a server. Until the server has
// answered the request, it ends with the caller's context, as the
// request's own would; from then on the caller's end no longer cuts the
// stream, whose end (the last bytes of a chunked body) the SDK reads to
// return the connection to the pool. A request cut there, after its
// answer, cost a new TCP connection (and its goroutines) to the next.
type postLife struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	detach func() bool // stops the caller's end from cancelling ctx

	mu    sync.Mutex
	grace *time.Timer // from the answer on
	ended bool
}

// newPostLife returns the life of a POST made under caller.
func newPostLife(caller context.Context) *postLife {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(caller))
	l := &postLife{ctx: ctx, cancel: cancel}
	l.detach = context.AfterFunc(caller, func() { cancel(context.Cause(caller)) })
	return l
}

// answered records that the server has answered: the rest of the stream
// gets drainGrace to end.
func (l *postLife) answered() {
	if !l.detach() {
		return // the caller ended first: the request is being cut
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		l.grace = time.AfterFunc(drainGrace, func() { l.cancel(errDrainGrace) })
	}
}

// end releases the life once the body is closed.
func (l *postLife) end() {
	l.detach()
	l.mu.Lock()
	l.ended = true
	if l.grace != nil {
		l.grace.Stop()
	}
	l.mu.Unlock()
	l.cancel(context.Canceled)
}

// An answerBody is the body of an answer to a request of the session. A
// POST's ends the POST's life when closed. The end of any other (the
// standalone event stream, a resumed one), or an error reading a POST's,
// signs the end of the session (see serverTransport.end).
type answerBody struct {
	io.ReadCloser
	life *postLife // of a POST
	end  *endSignal
}

// Read implements [io.Reader].
func (b *answerBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && (b.life == nil || err != io.EOF) {
		b.end.sign()
	}
	return n, err
}

// Close implements [io.Closer].
func (b *answerBody) Close() error {
	err := b.ReadCloser.Close()
	if b.life != nil {
		b.life.end()
	}
	return err
}
