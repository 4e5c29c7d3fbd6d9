package mcpadapter

// The adapter's side of the HTTP transport of one dial, Streamable HTTP or
// SSE, for a URL server and for a go-sdk HTTP client transport given as
// Server.Transport alike: internal/httptransport's RoundTripper, given the
// connection's headers, the principal's and the call's, and the signal of
// the session's end; the statuses it records, told apart for the dial.

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/httptransport"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// An httpConn is the HTTP transport of one connection attempt and the
// signal its exchanges give of the session's end.
type httpConn struct {
	*httptransport.Transport
	end *endSignal
}

// newHTTPConn returns the transport of a connection attempt of c to
// endpoint, over which screen reads; oauth authorizes its requests (SSE:
// go-sdk authorizes Streamable HTTP itself), when not nil. The session
// is kept when c closes while tasks handed out live there (taskConn.handed).
func newHTTPConn(c *conn, screen *wire.Screen, endpoint string, oauth auth.OAuthHandler) *httpConn {
	end := newEndSignal(c.watch)
	opts := c.httpOptions(screen, endpoint, oauth)
	opts.Ended, opts.Failed, opts.Tasks = end.Sign, end.SignAttached, &c.gen.kept
	return &httpConn{Transport: httptransport.New(opts), end: end}
}

// httpOptions returns the options of an HTTP transport of c to endpoint,
// over which screen reads: its server's headers and the principal's, the
// call's, and oauth (when not nil).
func (c *conn) httpOptions(screen *wire.Screen, endpoint string, oauth auth.OAuthHandler) httptransport.Options {
	s := c.cfg
	opts := httptransport.Options{
		Endpoint: endpoint,
		Headers:  s.Headers,
		Call:     func(ctx context.Context) map[string]string { return callHeadersOf(ctx, c) },
		OAuth:    oauth,
		Screen:   screen,
	}
	if c.carries() {
		// A shared session (share.go): each request carries the
		// credentials of the principal it acts for, none without one,
		// and its failing status fails it alone, not the session.
		opts.PerRequest = true
		opts.Call = func(ctx context.Context) map[string]string { return callHeadersOf(ctx, c.requesterOf(ctx)) }
		opts.OAuthOf = func(ctx context.Context) auth.OAuthHandler {
			if v := c.requesterOf(ctx); v != nil {
				return v.oauth
			}
			return nil
		}
		if s.HeadersFor != nil {
			opts.More = func(ctx context.Context) (map[string]string, error) {
				if v := c.requesterOf(ctx); v != nil {
					return headersFor(ctx, s, v.key.principal)
				}
				return nil, nil
			}
		}
		return opts
	}
	if s.HeadersFor != nil {
		principal := c.key.principal
		opts.More = func(ctx context.Context) (map[string]string, error) { return headersFor(ctx, s, principal) }
	}
	return opts
}

// headersFor returns the headers of principal for server s (HeadersFor).
func headersFor(ctx context.Context, s *Server, principal string) (map[string]string, error) {
	h, err := s.HeadersFor(ctx, principal)
	if err != nil {
		return nil, errorf("mcpadapter: Server.HeadersFor: %w", err)
	}
	return h, nil
}

// statusOf returns err, the failure of a connection attempt over h, as an
// *httpStatusError when an HTTP exchange of the attempt got a failing
// status; nil for nil.
func (h *httpConn) statusOf(err error) error {
	if code := h.Failure(); err != nil && code != 0 {
		return &httpStatusError{code: code, err: err}
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

// withCallHeaders returns ctx carrying h, the headers of a call on c.
func withCallHeaders(ctx context.Context, c *conn, h map[string]string) context.Context {
	return context.WithValue(ctx, callHeadersKey{}, &callHeaders{a: c.a, key: c.key, h: maps.Clone(h)})
}

// callHeadersOf returns the CallRequest.Headers that ctx carries for the
// connection of c (the same Adapter, server and principal), or nil: the
// headers of one server's call never go to another's.
func callHeadersOf(ctx context.Context, c *conn) map[string]string {
	ch, _ := ctx.Value(callHeadersKey{}).(*callHeaders)
	if ch == nil || c == nil || ch.a != c.a || ch.key != c.key {
		return nil
	}
	return ch.h
}

// checkCallHeaders returns why h cannot be sent with a call on c: c does
// not go over HTTP, a header is the transport's own, or a name or a value
// is not one HTTP can carry (validHeader). Its errors never hold a value.
func (c *conn) checkCallHeaders(h map[string]string) error {
	if !c.overHTTP {
		return errorf("%w: the server is not reached over HTTP", errCallHeaders)
	}
	for name, value := range h {
		if !validHeaderName(name) {
			return errorf("%w: %q is not a valid header name", errCallHeaders, name)
		}
		if !validHeaderValue(value) {
			return errorf("%w: the value of %s holds a control character", errCallHeaders, http.CanonicalHeaderKey(name))
		}
		if httptransport.TransportHeader(name) {
			return errorf("%w: %s is set by the transport", errCallHeaders, http.CanonicalHeaderKey(name))
		}
	}
	return nil
}

// validHeaderName reports whether name is a token (RFC 9110 §5.1): one or
// more of the letters, digits and !#$%&'*+-.^_`|~, the rule net/http
// applies when it sends a request.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := range len(name) {
		b := name[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether value holds no control character other
// than a horizontal tab (RFC 9110 §5.5: no CR, LF or NUL), the rule
// net/http applies when it sends a request.
func validHeaderValue(value string) bool {
	for i := range len(value) {
		if b := value[i]; b < ' ' && b != '\t' || b == 0x7f {
			return false
		}
	}
	return true
}
