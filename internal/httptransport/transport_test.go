package httptransport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// joined joins session s1 in version 2025-11-25, and keeps it while keep.
type joined struct{ keep *bool }

func (j joined) Join() (session, version string) { return "s1", "2025-11-25" }
func (j joined) Keep(string) bool                { return *j.keep }

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
	tr := New(Options{Endpoint: srv.URL, Ended: func() {}, Failed: func() {}, Tasks: joined{keep: &keep}})
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

// TestInflight: the requests tracked are cancelled when their life ends,
// and any tracked later at once; Drain waits until they returned and the
// notices came, or its timeout; Release unregisters from life.
func TestInflight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		life, end := context.WithCancel(context.Background())
		var f Inflight
		ctx, cancel := context.WithCancel(context.Background())
		if !f.Track(life, &cancel) {
			t.Fatal("Track refused a request while life lasts")
		}
		end()
		synctest.Wait()
		if ctx.Err() == nil {
			t.Fatal("the end of life did not cancel the request")
		}
		_, late := context.WithCancel(context.Background())
		if f.Track(life, &late) {
			t.Error("Track took a request after life ended")
		}
		noticed := false
		sent := make(chan struct{}, 1)
		drained := make(chan bool)
		go func() { drained <- f.Drain(time.Minute, func() bool { return noticed }, sent) }()
		synctest.Wait()
		f.Untrack(&cancel)
		synctest.Wait()
		noticed = true
		sent <- struct{}{}
		if !<-drained {
			t.Error("Drain gave up although the request returned and was noticed")
		}
		if f.Drain(time.Second, func() bool { return false }, nil) {
			t.Error("Drain reported a notice that never came")
		}

		var g Inflight
		life2, end2 := context.WithCancel(context.Background())
		ctx2, cancel2 := context.WithCancel(context.Background())
		g.Track(life2, &cancel2)
		g.Release()
		end2()
		synctest.Wait()
		if ctx2.Err() != nil {
			t.Error("a released Inflight still cancelled at the end of life")
		}
		cancel2()
	})
}

// TestPerRequest: with Options.PerRequest, a failing answer whose body is
// not a JSON-RPC error fails its request with a *StatusError holding the
// status only, one whose body is a JSON-RPC error is passed on with its
// body whole, and Failed is never told.
func TestPerRequest(t *testing.T) {
	const rpcError = `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"denied"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/proxy":
			http.Error(w, "Unauthorized: token tok-secret", http.StatusUnauthorized)
		case "/rpc":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(rpcError))
		}
	}))
	defer srv.Close()
	var failed atomic.Int32
	tr := New(Options{Endpoint: srv.URL, Ended: func() {}, Failed: func() { failed.Add(1) }, PerRequest: true})
	hc := tr.Client(nil)
	post := func(path string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader("{}"))
		return hc.Do(req)
	}
	_, err := post("/proxy")
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusUnauthorized || strings.Contains(err.Error(), "tok-secret") {
		t.Errorf("a 401 with a text body: error %v, want a *StatusError of 401 without the body", err)
	}
	resp, err := post("/rpc")
	if err != nil {
		t.Fatalf("a 403 with a JSON-RPC error: %v, want the answer", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || string(body) != rpcError {
		t.Errorf("a 403 with a JSON-RPC error: %d %q, want it whole", resp.StatusCode, body)
	}
	if n := failed.Load(); n != 0 || tr.Failure() != http.StatusForbidden {
		t.Errorf("Failed told %d times, Failure %d; want 0, and the 403 recorded (a 401 gives way)", n, tr.Failure())
	}
}

// TestOwnStatus: a status line is kept only when it is its code's own
// ("200 OK"); any other reason phrase, or a line of another code, is not.
func TestOwnStatus(t *testing.T) {
	for _, tt := range []struct {
		status string
		code   int
		want   bool
	}{
		{"200 OK", 200, true},
		{"500 Internal Server Error", 500, true},
		{"500 Authorization: Bearer secret", 500, false},
		{"500 Internal Server Errors", 500, false},
		{"501 Internal Server Error", 500, false},
		{"500", 500, false},
		{"", 200, false},
	} {
		if got := ownStatus(tt.status, tt.code, http.StatusText(tt.code)); got != tt.want {
			t.Errorf("ownStatus(%q, %d) = %v, want %v", tt.status, tt.code, got, tt.want)
		}
	}
}
