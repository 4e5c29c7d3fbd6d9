package httptransport

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
)

// withHeaders returns req as it is sent: to the server's origin
// (sameOrigin), with an OAuth token (SSE, or a handler per request:
// go-sdk authorizes Streamable HTTP itself otherwise), the server's
// headers, those of More and the call's, each
// overriding the ones before; elsewhere, without Authorization. req itself
// is not changed.
func (t *Transport) withHeaders(req *http.Request, sameOrigin bool) (*http.Request, error) {
	if t.opts.Tasks != nil && sameOrigin && req.Header.Get(SessionIDHeader) == "" {
		if session, version := t.opts.Tasks.Join(); session != "" {
			req = req.Clone(req.Context())
			req.Header.Set(SessionIDHeader, session)
			if version != "" && req.Header.Get(VersionHeader) == "" {
				req.Header.Set(VersionHeader, version)
			}
		}
	}
	var call map[string]string
	if t.opts.Call != nil {
		call = t.opts.Call(req.Context())
	}
	switch {
	case !sameOrigin:
		// A redirect, or an SSE endpoint, pointing at another origin: it
		// gets none of this server's credentials. net/http keeps the
		// Authorization of a redirect to the same host name on another
		// port (an OAuth token set by the SDK), the headers the SDK set
		// (the session's id, a credential) and adds a Referer (the
		// endpoint's URL, with the tokens of its query): drop them too.
		if req.Header.Get("Authorization") != "" || req.Header.Get(SessionIDHeader) != "" || req.Header.Get("Referer") != "" {
			req = req.Clone(req.Context())
			req.Header.Del("Authorization")
			req.Header.Del(SessionIDHeader)
			req.Header.Del("Referer")
		}
	case t.opts.OAuth != nil || t.opts.OAuthOf != nil || len(t.opts.Headers) > 0 || t.opts.More != nil || call != nil:
		req = req.Clone(req.Context())
		if err := t.setToken(req); err != nil {
			return nil, err
		}
		for k, v := range t.opts.Headers {
			req.Header.Set(k, v)
		}
		if t.opts.More != nil {
			more, err := t.opts.More(req.Context())
			if err != nil {
				return nil, err
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
func (t *Transport) setToken(req *http.Request) error {
	oauth := t.oauth(req.Context())
	if oauth == nil {
		return nil
	}
	ts, err := oauth.TokenSource(req.Context())
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
	return fmt.Errorf("mcpadapter: Server.OAuth: %w", err)
}

// reauthorize answers resp, a 401 or 403 to sent (orig as it was sent),
// as go-sdk does on Streamable HTTP: it runs the OAuth handler's Authorize
// flow (which closes resp's body), then sends orig again, once, with the
// new token. A request whose body cannot be read again gets resp.
func (t *Transport) reauthorize(orig, sent *http.Request, resp *http.Response) (*http.Request, *http.Response, error) {
	if orig.Body != nil && orig.Body != http.NoBody && orig.GetBody == nil {
		return sent, resp, nil
	}
	if err := t.oauth(sent.Context()).Authorize(sent.Context(), sent, resp); err != nil {
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

// TransportHeader reports whether the header name is one that the HTTP
// transports (go-sdk's, net/http) set for the protocol: a call may not
// replace it.
func TransportHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Accept", "Connection", "Content-Length", "Content-Type", "Host", "Last-Event-Id", "Te", "Transfer-Encoding", "Upgrade":
		return true
	}
	return len(name) >= 4 && strings.EqualFold(name[:4], "mcp-")
}

// sameOrigin reports whether u is on the server's origin: the same host
// and port, over the same scheme or upgraded from http to https. A redirect
// or an SSE message endpoint elsewhere is another server.
func (t *Transport) sameOrigin(u *url.URL) bool {
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
