package httptransport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
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
