//go:build unix

package httptransport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// post sends a POST with the probe's trace on client and reports the
// probe's answer and the error.
func post(t *testing.T, client *http.Client, url string) (bool, error) {
	t.Helper()
	ctx, p := traceProbe(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return p.unread(), err
}

// TestUnread: a POST given a pooled connection the server closed is unread
// (and fails: net/http does not resend a POST); one given a live pooled
// connection, or a new one, is not. Over TLS the server's close_notify
// comes before its end of stream.
func TestUnread(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcp", true: "tls"}[secure], func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })
			ts := httptest.NewUnstartedServer(h)
			if secure {
				ts.StartTLS()
			} else {
				ts.Start()
			}
			defer ts.Close()
			client := ts.Client()
			if unread, err := post(t, client, ts.URL); unread || err != nil {
				t.Fatalf("first POST, new connection: unread %v, %v", unread, err)
			}
			if unread, err := post(t, client, ts.URL); unread || err != nil {
				t.Fatalf("second POST, live pooled connection: unread %v, %v", unread, err)
			}
			ts.CloseClientConnections()
			unread, err := post(t, client, ts.URL)
			if err == nil {
				// net/http's reader saw the close first and did not pool
				// the connection: the race this probe is for did not happen.
				if unread {
					t.Fatal("a POST that succeeded was unread")
				}
				return
			}
			if !unread {
				t.Fatalf("POST on the closed pooled connection failed (%v) but was not unread", err)
			}
		})
	}
}
