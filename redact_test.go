package mcpadapter

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/elicit"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

// secretURL puts a password and a token into the URL of an httptest
// server.
func secretURL(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("svc", "hunter2-pw")
	u.Path = "/"
	u.RawQuery = "token=t0ken-secret"
	return u.String()
}

func wantNoSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, secret := range []string{"hunter2-pw", "t0ken-secret"} {
		if strings.Contains(text, secret) {
			t.Errorf("%s shows %q: %s", what, secret, text)
		}
	}
}

// TestURLSecretsRedacted: a password or a query token in a server URL
// shows neither in the debug log of an SSE fallback nor in the error of a
// failed dial (Streamable HTTP, then SSE), nor in New's validation errors.
func TestURLSecretsRedacted(t *testing.T) {
	t.Run("fallback log", func(t *testing.T) {
		s := testserver.New(testserver.Options{Legacy: true}).AddFeatures()
		var log syncBuffer
		a := newAdapter(t, Config{
			Servers: map[string]Server{"srv": {URL: secretURL(t, s.SSEOnly(t).URL)}},
			Logger:  slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		})
		lookupTool(t, a, "srv__echo")
		if !strings.Contains(log.String(), "fell back to SSE") {
			t.Fatalf("log = %s, want the fallback", log.String())
		}
		wantNoSecret(t, "the log", log.String())
	})
	t.Run("dial error", func(t *testing.T) {
		hs := testserver.Serve(t, http.NotFoundHandler())
		var log syncBuffer
		a := newAdapter(t, Config{
			Servers: map[string]Server{"srv": {URL: secretURL(t, hs.URL)}},
			Logger:  slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		})
		_, err := a.ListTools(t.Context())
		var se *ServerError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "SSE") {
			t.Fatalf("ListTools() = %v, want a *ServerError after the SSE fallback", err)
		}
		wantNoSecret(t, "the error", err.Error())
		wantNoSecret(t, "the log", log.String())
	})
	t.Run("call error", func(t *testing.T) {
		s := testserver.New(testserver.Options{}).AddFeatures()
		hs := s.StreamableHTTP(t, true)
		a := newAdapter(t, Config{Servers: map[string]Server{"srv": {URL: secretURL(t, hs.URL)}}})
		tool := lookupTool(t, a, "srv__echo")
		hs.CloseClientConnections()
		hs.Close()
		_, err := tool.Invoke(t.Context(), map[string]any{"text": "hi"})
		if err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Fatalf("Invoke() on a closed server = %v, want an error naming its address", err)
		}
		wantNoSecret(t, "the error", err.Error())
	})
	t.Run("validation", func(t *testing.T) {
		for _, raw := range []string{"ftp://svc:hunter2-pw@example.com/?token=t0ken-secret", "http://svc:hunter2-pw@exa mple.com/%zz?token=t0ken-secret"} {
			_, err := New(Config{Servers: map[string]Server{"srv": {URL: raw}}})
			if err == nil {
				t.Fatalf("New(%q) succeeded", raw)
			}
			wantNoSecret(t, "New's error", err.Error())
		}
	})
}

// TestAnswerValuesHidden: an answer that does not match the requested
// schema is refused with an error naming the property, never its value
// (the user's answer, which a live request's error even sends to the
// server).
func TestAnswerValuesHidden(t *testing.T) {
	r := elicitationRequest("date", testserver.DateRequest())
	_, err := elicit.Check(r.Mode, r.RequestedSchema, string(Accept), map[string]any{"date": 4242424242})
	if err == nil || !strings.Contains(err.Error(), `"date"`) || strings.Contains(err.Error(), "4242424242") {
		t.Errorf("elicit.Check() = %v, want an error naming \"date\" without the answer", err)
	}
	_, err = elicit.Check(r.Mode, r.RequestedSchema, string(Accept), map[string]any{"other": "s3cret-answer"})
	if err == nil || !strings.Contains(err.Error(), `missing "date"`) || strings.Contains(err.Error(), "s3cret-answer") {
		t.Errorf("elicit.Check() = %v, want an error naming the missing \"date\" without the answer", err)
	}
}
