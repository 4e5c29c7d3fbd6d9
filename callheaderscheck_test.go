package mcpadapter

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

// TestCallHeadersInvalid: a header name that is not a token, or a value
// with CR, LF, NUL or another control character, fails the call with
// errCallHeaders before the approval gate and the server: nothing is
// asked, nothing is sent, and the value is not in the error. A value with
// a tab goes through, and the session serves the next call.
func TestCallHeadersInvalid(t *testing.T) {
	s := testserver.Full(testserver.Options{})
	var headers atomic.Pointer[map[string]string]
	set := func(next CallHandler) CallHandler {
		return func(ctx context.Context, req *CallRequest) (*Result, error) {
			req.Headers = *headers.Load()
			return next(ctx, req)
		}
	}
	var asked atomic.Int32
	a := newAdapter(t, Config{
		Servers:    map[string]Server{"web": {URL: s.StreamableHTTP(t, true).URL}},
		Middleware: []Middleware{set},
		Approval:   func(ToolCall) bool { asked.Add(1); return false },
	})
	echo := lookupTool(t, a, "web__echo")
	for _, h := range []map[string]string{
		{"X-Tenant": "t1\r\nX-Injected: yes"},
		{"X-Tenant": "t1\nsecret"},
		{"X-Tenant": "secret\x00"},
		{"X-Tenant": "secret\x7f"},
		{"X-Tenant": "secret\x01"},
		{"X-Bad\r\nName": "v"},
		{"X Space": "v"},
		{"X:Colon": "v"},
		{"": "v"},
		{"X-Ünicode": "v"},
	} {
		headers.Store(&h)
		_, err := echo.Invoke(t.Context(), map[string]any{"text": "x"})
		if !errors.Is(err, errCallHeaders) || strings.Contains(err.Error(), "secret") {
			t.Errorf("headers %q: error = %v, want errCallHeaders without the value", h, err)
		}
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the approval gate was asked %d times, want 0", n)
	}
	if n := s.Runs("echo"); n != 0 {
		t.Errorf("echo ran %d times, want 0", n)
	}
	ok := map[string]string{"X-Tenant": "t1\tt2", "X-Odd!#$%&'*+-.^_`|~": "v"}
	headers.Store(&ok)
	if res, err := echo.Invoke(t.Context(), map[string]any{"text": "x"}); err != nil || res.IsError {
		t.Errorf("valid headers: %v, %v; want the call run", res, err)
	}
}
