package mcpadapter

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// brokenServer is a server entry whose every dial fails, and the count of
// its dials.
func brokenServer() (Server, *atomic.Int64) {
	dials := new(atomic.Int64)
	return Server{Transport: func(context.Context) (mcp.Transport, error) {
		dials.Add(1)
		return nil, errors.New("connection refused")
	}}, dials
}

// TestService runs the service recipe: Service fills in what the defaults
// leave out (a retry policy per server, the required State.Key, a catalog
// TTL, dialing the selected servers alone) and leaves what cfg sets, and
// the caller's map, alone; an Adapter built from it serves a selection
// without its broken sibling, lists from its cache, and dials a dropped
// connection again, in both eras.
func TestService(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	own := &RetryPolicy{MaxAttempts: 5}
	in := Config{Servers: map[string]Server{
		"files": {Command: "mcp-server-files"},
		"web":   {URL: "https://example.com/mcp"},
		"own":   {URL: "https://example.com/mcp", Retry: own},
	}, CatalogTTL: time.Hour}
	cfg := Service(in)
	if s := cfg.Servers["files"]; s.Retry == nil || s.Retry.MaxAttempts != 3 || s.Retry.Delay != time.Second {
		t.Errorf("Service: stdio server's Retry %+v; want {3 1s}", s.Retry)
	}
	if s := cfg.Servers["web"]; s.Retry == nil || s.Retry.MaxAttempts != 3 || s.Retry.Delay != time.Second {
		t.Errorf("Service: HTTP server's Retry %+v; want {3 1s}", s.Retry)
	}
	if s := cfg.Servers["own"]; s.Retry != own {
		t.Errorf("Service replaced a server's own Retry with %+v", s.Retry)
	}
	if in.Servers["files"].Retry != nil {
		t.Error("Service changed the caller's map")
	}
	if !cfg.State.RequireKey || !cfg.DialSelectedOnly || cfg.CatalogTTL != time.Hour {
		t.Errorf("Service: State.RequireKey %v, DialSelectedOnly %v, CatalogTTL %v; want true, true, the caller's 1h",
			cfg.State.RequireKey, cfg.DialSelectedOnly, cfg.CatalogTTL)
	}
	if got := Service(Config{}).CatalogTTL; got != time.Minute {
		t.Errorf("Service(Config{}).CatalogTTL = %v, want 1m", got)
	}

	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: era.legacy}).AddWeather()
			broken, brokenDials := brokenServer()
			cfg := Service(Config{Servers: map[string]Server{"weather": memServer(s, ModeAuto), "broken": broken}})
			if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "State.RequireKey") {
				t.Fatalf("New(Service(cfg)) without a State.Key: %v, want an error naming State.RequireKey", err)
			}
			cfg.State.Key = key
			a := newAdapter(t, cfg)
			var ts Toolset
			for range 2 {
				var err error
				ts, err = a.ListTools(t.Context(), FromServers("weather"))
				if err != nil || !slices.Equal(toolNames(ts), []string{"weather__get_weather"}) {
					t.Fatalf("ListTools(FromServers(weather)) = %v, %v", toolNames(ts), err)
				}
			}
			checkEra(t, a, "weather", era.want)
			if n := brokenDials.Load(); n != 0 {
				t.Errorf("the broken sibling was dialed %d times", n)
			}
			if n := s.Count("tools/list"); n != 1 {
				t.Errorf("two discoveries sent %d tools/list, want 1 (CatalogTTL)", n)
			}

			s.KillSessions()
			<-ts[0].conn.done // the death is recorded
			ts, err := a.ListTools(t.Context(), FromServers("weather"))
			if err != nil {
				t.Fatalf("ListTools after the server dropped its connection: %v, want a new dial (Reconnect)", err)
			}
			if res, err := ts.Lookup("weather__get_weather").Invoke(t.Context(), map[string]any{"city": "Paris"}); err != nil || res.IsError {
				t.Fatalf("call after the new dial = %v, %v", res, err)
			}
			if n := s.Dials(); n != 2 {
				t.Errorf("%d dials, want 2", n)
			}
		})
	}
}

// TestDialSelectedOnly: by default a discovery of one server contacts
// every server, and a broken sibling fails it with an error naming
// Config.DialSelectedOnly; with the option, the sibling is not dialed.
func TestDialSelectedOnly(t *testing.T) {
	s := testserver.New(testserver.Options{}).AddWeather()
	for _, only := range []bool{false, true} {
		broken, dials := brokenServer()
		a := newAdapter(t, Config{Servers: map[string]Server{"weather": memServer(s, ModeAuto), "broken": broken}, DialSelectedOnly: only})
		_, err := a.ListTools(t.Context(), FromServers("weather"))
		sets, setsErr := a.ListToolsets(t.Context(), FromServers("weather"))
		if !only {
			se := checkServerErr(t, err, "broken")
			if !strings.Contains(err.Error(), "Config.DialSelectedOnly") || !strings.Contains(se.Err.Error(), "connection refused") {
				t.Errorf("ListTools(FromServers(weather)) with a broken sibling: %v, want its failure and a word on Config.DialSelectedOnly", err)
			}
			if setsErr == nil {
				t.Error("ListToolsets(FromServers(weather)) with a broken sibling succeeded")
			}
			continue
		}
		if err != nil || setsErr != nil || len(sets) != 1 {
			t.Errorf("DialSelectedOnly: ListTools = %v, ListToolsets = %v, %v", err, sets, setsErr)
		}
		if n := dials.Load(); n != 0 {
			t.Errorf("DialSelectedOnly: the broken sibling was dialed %d times", n)
		}
		if _, err := a.ListTools(t.Context()); err == nil {
			t.Error("DialSelectedOnly: a discovery of every server succeeded past the broken one")
		}
	}
}

// TestRequireStateKey: New refuses a missing or short StateKey when the
// option asks for one, naming both settings, and accepts 32 bytes.
func TestRequireStateKey(t *testing.T) {
	for _, n := range []int{0, 31, 32} {
		_, err := New(Config{State: StateOptions{RequireKey: true, Key: bytes.Repeat([]byte{1}, n)}})
		if n == 32 {
			if err != nil {
				t.Errorf("New with a 32-byte key: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "State.Key") || !strings.Contains(err.Error(), "State.RequireKey") {
			t.Errorf("New with a %d-byte key: %v, want an error naming State.Key and State.RequireKey", n, err)
		}
	}
}

// TestCatalogTTL: a server that sends no ttlMs is cached for
// Config.CatalogTTL, one that sends one for its own, in both eras.
func TestCatalogTTL(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				plain := testserver.New(testserver.Options{Legacy: era.legacy}).AddWeather()
				timed := testserver.New(testserver.Options{Legacy: era.legacy, TTLMs: 5000, Name: "timed"}).AddWeather()
				a := newAdapter(t, Config{CatalogTTL: time.Minute, Servers: map[string]Server{
					"plain": memServer(plain, ModeAuto), "timed": memServer(timed, ModeAuto),
				}})
				checkEra(t, a, "plain", era.want)
				steps := []struct {
					wait         time.Duration
					plain, timed int // tools/list after the step
				}{
					{0, 1, 1},
					{0, 1, 1},
					{6 * time.Second, 1, 2},  // the server's own ttlMs ended
					{53 * time.Second, 1, 3}, // 59 s: CatalogTTL holds
					{2 * time.Second, 2, 3},  // 61 s: past CatalogTTL
				}
				for i, step := range steps {
					time.Sleep(step.wait)
					mustList(t, a, CacheUse)
					if p, tm := plain.Count("tools/list"), timed.Count("tools/list"); p != step.plain || tm != step.timed {
						t.Fatalf("step %d: tools/list plain %d, timed %d; want %d, %d", i, p, tm, step.plain, step.timed)
					}
				}
			})
		})
	}
}
