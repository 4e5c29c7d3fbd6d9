package httptransport

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestJoinAndKeep: a transport joined to a session gives each request to
// the server's origin that carries none the session's id and protocol
// version, never replaces a request's own, and gives none to another
// origin; while Keep reports true a DELETE is answered 204 without being
// sent.
func TestJoinAndKeep(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Header.Get(SessionIDHeader)+" "+r.Header.Get(VersionHeader))
		mu.Unlock()
	}))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, "other "+r.Header.Get(SessionIDHeader))
		mu.Unlock()
	}))
	defer other.Close()

	keep := true
	tr := New(Options{Endpoint: srv.URL, Ended: func() {}, Failed: func() {}, Session: "s1", Version: "2025-11-25", Keep: func() bool { return keep }})
	hc := tr.Client(nil)
	do := func(method, url, session string) int {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		if session != "" {
			req.Header.Set(SessionIDHeader, session)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	do(http.MethodPost, srv.URL, "")
	do(http.MethodPost, srv.URL, "own")
	do(http.MethodPost, other.URL, "")
	if code := do(http.MethodDelete, srv.URL, ""); code != http.StatusNoContent {
		t.Errorf("kept DELETE answered %d, want 204", code)
	}
	keep = false
	do(http.MethodDelete, srv.URL, "")

	mu.Lock()
	defer mu.Unlock()
	want := []string{"POST s1 2025-11-25", "POST own ", "other ", "DELETE s1 2025-11-25"}
	if len(seen) != len(want) {
		t.Fatalf("the servers saw %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("request %d: %q, want %q", i, seen[i], want[i])
		}
	}
}
