package mcpadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// followModes are the ways a held tool is set to follow its server, or
// not: the default (the seeds' rule), the option alone, and Service.
var followModes = []struct {
	name   string
	follow bool
	config func(Config) Config
}{
	{"default", false, func(cfg Config) Config { return cfg }},
	{"option", true, func(cfg Config) Config { cfg.ToolsFollowServer = true; return cfg }},
	{"Service", true, func(cfg Config) Config {
		cfg = Service(cfg)
		cfg.State.Key = bytes.Repeat([]byte{7}, 32)
		return cfg
	}},
}

// checkHeldLost wants err, the call of a tool held on a connection that
// died, to say what to do: list again, or set Config.ToolsFollowServer.
func checkHeldLost(t *testing.T, err error, server string) {
	t.Helper()
	checkServerErr(t, err, server)
	for _, want := range []string{"connection lost", "Adapter.ListTools", "Config.ToolsFollowServer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("call of a held tool after its connection died: %q, want it to say %q", err, want)
		}
	}
}

// TestHeldToolFollowsStdioRestart: a tool held across a SIGKILL of its
// stdio server (both eras). By default its next call fails, saying to
// list again or to set Config.ToolsFollowServer, and a new discovery
// gives a working tool (the seeds' rule). With the option, or under
// Service, the next call on the same value runs on a new process, dialed
// at once (the first attempt of the restart policy), and the following
// calls reuse that connection and its tool list.
func TestHeldToolFollowsStdioRestart(t *testing.T) {
	for _, kind := range []string{"modern", "legacy"} {
		for _, m := range followModes {
			t.Run(kind+"/"+m.name, func(t *testing.T) {
				srv := stdioServer(t, kind)
				srv.Retry = &RetryPolicy{MaxAttempts: 3, Delay: 5 * time.Second} // far more than a start takes: the call must not wait for it
				a := newAdapter(t, m.config(Config{Servers: map[string]Server{"p": srv}}))
				ts, err := a.ListTools(faultCtx(t))
				if err != nil {
					t.Fatal(err)
				}
				pid := serverPID(t, ts, "p__pid")
				held := lookup(t, ts, "p__pid")
				old := held.conn
				if err := killProcess(pid); err != nil {
					t.Fatal(err)
				}
				waitEnd(t, old)

				start := time.Now()
				res, err := held.Invoke(faultCtx(t), nil)
				if !m.follow {
					checkHeldLost(t, err, "p")
					ts, err = a.ListTools(faultCtx(t))
					if err != nil {
						t.Fatalf("ListTools after the restart: %v", err)
					}
					if got := serverPID(t, ts, "p__pid"); got == pid {
						t.Errorf("the new tool answered the killed process's pid %d", got)
					}
					return
				}
				if err != nil {
					t.Fatalf("held tool after SIGKILL = %v, want a call on a new process", err)
				}
				if took := time.Since(start); took >= srv.Retry.Delay {
					t.Errorf("the held tool's call took %v, want less than the restart policy's delay %v", took, srv.Retry.Delay)
				}
				newPID, err := strconv.Atoi(strings.TrimSpace(res.Text()))
				if err != nil || newPID == pid {
					t.Fatalf("held tool after SIGKILL answered %q, want the pid of a new process (the killed one was %d)", res.Text(), pid)
				}
				// The text API and the model's native loop follow too.
				if out, err := held.Call(faultCtx(t), ""); err != nil || strings.TrimSpace(out) != strings.TrimSpace(res.Text()) {
					t.Errorf("held.Call after the restart = %q, %v; want the new pid %q", out, err, res.Text())
				}
				dials := a.Status().Servers["p"].DialAttempts
				if dials != 2 {
					t.Errorf("%d dials, want 2: one discovery and one follow", dials)
				}
				ts2, err := a.ListTools(faultCtx(t))
				if err != nil {
					t.Fatal(err)
				}
				if now := lookup(t, ts2, "p__pid"); now.conn == old || now.conn != liveConn(t, a, "p") {
					t.Error("a discovery after the follow did not list the new connection")
				}
				if dials := a.Status().Servers["p"].DialAttempts; dials != 2 {
					t.Errorf("%d dials after a discovery, want 2: the follow's connection serves it", dials)
				}
			})
		}
	}
}

// TestHeldToolFollowsHTTPReconnect: a tool held across the end of its
// Streamable HTTP session (the standalone stream lost for good: no 404,
// so no session recovery) fails by default, saying what to do, and with
// the option (or under Service) calls the server on a new session.
func TestHeldToolFollowsHTTPReconnect(t *testing.T) {
	for _, m := range followModes {
		t.Run(m.name, func(t *testing.T) {
			s := testserver.Lean(testserver.Options{Legacy: true})
			f := &endFault{fault: "stream", h: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, nil)}
			srv := Server{URL: testserver.Serve(t, f).URL, Retry: &RetryPolicy{MaxAttempts: 2, Delay: time.Second}}
			a := newAdapter(t, m.config(Config{Servers: map[string]Server{"h": srv}}))
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			held := lookup(t, ts, "h__echo")
			f.breakNow()
			waitEnd(t, held.conn)
			f.mu.Lock()
			f.broken = false
			f.mu.Unlock()
			res, err := held.Invoke(faultCtx(t), map[string]any{"text": "again"})
			if !m.follow {
				checkHeldLost(t, err, "h")
				return
			}
			if err != nil || res.Text() != "again" {
				t.Fatalf("held tool after the session ended = %v, %v; want a call on a new session", res, err)
			}
			if c := liveConn(t, a, "h"); c == held.conn || !c.alive() {
				t.Error("the follow did not dial a new session")
			}
			// The set listed before, in a model's native loop, follows too.
			msgs, err := ts.HandleToolCalls(faultCtx(t), &llms.ContentChoice{ToolCalls: []llms.ToolCall{
				{ID: "1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "h__echo", Arguments: `{"text":"native"}`}},
			}})
			if err != nil || len(msgs) != 2 {
				t.Fatalf("HandleToolCalls with the held set = %v, %v", msgs, err)
			}
			if resp, _ := msgs[1].Parts[0].(llms.ToolCallResponse); resp.Content != "native" {
				t.Errorf("HandleToolCalls with the held set answered %+v, want the tool's answer", msgs[1].Parts[0])
			}
		})
	}
}

// TestHeldToolGone: with Config.ToolsFollowServer, a held tool that its
// server no longer lists once its connection was dialed again fails,
// saying so, and sends nothing; a held tool still listed is called there.
// In-memory go-sdk servers of both eras.
func TestHeldToolGone(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: era.legacy})
			s.AddTool("extra")
			s.AddTool("other")
			srv := memServer(s, ModeAuto)
			srv.Retry = &RetryPolicy{MaxAttempts: 2}
			a := newAdapter(t, Config{Servers: map[string]Server{"m": srv}, ToolsFollowServer: true})
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			extra, other := lookup(t, ts, "m__extra"), lookup(t, ts, "m__other")
			s.KillSessions()
			waitEnd(t, extra.conn)
			s.RemoveTool("extra")
			_, err = extra.Invoke(faultCtx(t), nil)
			checkServerErr(t, err, "m")
			if want := `tool no longer offered by server "m"`; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("held tool the server dropped = %v, want an error saying %q", err, want)
			}
			if n := s.Count("tools/call"); n != 0 {
				t.Errorf("%d tools/call sent, want none", n)
			}
			if res, err := other.Invoke(faultCtx(t), nil); err != nil || res.Text() != "other ok" {
				t.Fatalf("held tool still listed = %v, %v", res, err)
			}
			if n := s.Count("tools/list"); n != 2 {
				t.Errorf("%d tools/list, want 2: the discovery's and one on the new connection", n)
			}
		})
	}
}

// TestHeldToolFollowsPrincipal: a held tool of a per-principal server
// follows its own principal's connection, and only under that principal:
// another's context still fails it (ErrWrongPrincipal) before anything
// is dialed, and no other principal's connection is dialed for it.
func TestHeldToolFollowsPrincipal(t *testing.T) {
	s := testserver.Lean(testserver.Options{Legacy: true})
	f := &endFault{fault: "stream", h: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, nil)}
	srv := Server{URL: testserver.Serve(t, f).URL, HeadersFor: bearer, Retry: &RetryPolicy{MaxAttempts: 2}}
	var seen []string
	a := newAdapter(t, Config{Servers: map[string]Server{"h": srv}, ToolsFollowServer: true,
		Middleware: []Middleware{func(next CallHandler) CallHandler {
			return func(ctx context.Context, req *CallRequest) (*Result, error) {
				seen = append(seen, req.Principal)
				return next(ctx, req)
			}
		}}})
	alice, bob := WithPrincipal(faultCtx(t), "alice"), WithPrincipal(faultCtx(t), "bob")
	held := map[string]*Tool{}
	for p, ctx := range map[string]context.Context{"alice": alice, "bob": bob} {
		ts, err := a.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held[p] = lookup(t, ts, "h__echo")
	}
	f.breakNow()
	waitEnd(t, held["alice"].conn)
	waitEnd(t, held["bob"].conn)
	f.mu.Lock()
	f.broken = false
	f.mu.Unlock()
	if _, err := held["alice"].Invoke(bob, map[string]any{"text": "x"}); !errors.Is(err, ErrWrongPrincipal) {
		t.Fatalf("alice's held tool under bob = %v, want ErrWrongPrincipal", err)
	}
	if res, err := held["alice"].Invoke(alice, map[string]any{"text": "x"}); err != nil || res.Text() != "x" {
		t.Fatalf("alice's held tool after the session ended = %v, %v", res, err)
	}
	a.pool.mu.Lock()
	aliceConn, bobConn := a.pool.gen.conns[connKey{"h", "alice"}], a.pool.gen.conns[connKey{"h", "bob"}]
	a.pool.mu.Unlock()
	if aliceConn == held["alice"].conn || !aliceConn.alive() {
		t.Error("alice's held tool did not follow to a new connection of hers")
	}
	if bobConn != held["bob"].conn {
		t.Error("alice's call dialed a connection for bob")
	}
	if len(seen) != 1 || seen[0] != "alice" {
		t.Errorf("the middleware saw calls for %v, want one for alice", seen)
	}
}

// A refusingConn is a connection whose writes fail without sending
// anything once refuse is set, as a stdio connection does after a write
// tore (internal/stdio): its session ends at a call, before the adapter
// saw it end.
type refusingConn struct {
	mcp.Connection
	refuse *atomic.Bool
}

func (c refusingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if c.refuse.Load() {
		return fmt.Errorf("%w: refused", mcp.ErrConnectionClosed)
	}
	return c.Connection.Write(ctx, msg)
}

// refusingFirst returns an in-memory Server of s with a retry policy whose
// first connection refuses to send once refuse is set (refusingConn), and
// the count of its dials.
func refusingFirst(s *testserver.Server) (srv Server, refuse *atomic.Bool, dials *atomic.Int64) {
	refuse, dials = new(atomic.Bool), new(atomic.Int64)
	srv = Server{Retry: &RetryPolicy{MaxAttempts: 2}, Transport: func(ctx context.Context) (mcp.Transport, error) {
		base, err := s.Transport()(ctx)
		r := new(atomic.Bool)
		if dials.Add(1) == 1 {
			r = refuse
		}
		return wrapTransport(base, func(c mcp.Connection) mcp.Connection { return refusingConn{c, r} }), err
	}}
	return srv, refuse, dials
}

// TestHeldToolSessionEndedUnseen: a call of a held tool whose session
// ended before its request left, unseen until then (the session refuses
// to send), fails by default saying to list again or to set
// Config.ToolsFollowServer; with the option it is sent, once, to the
// same tool on a new connection. Both eras, in memory.
func TestHeldToolSessionEndedUnseen(t *testing.T) {
	for _, era := range cacheEras {
		for _, follow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/follow=%v", era.name, follow), func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy})
				s.AddTool("extra")
				srv, first, dials := refusingFirst(s)
				a := newAdapter(t, Config{Servers: map[string]Server{"m": srv}, ToolsFollowServer: follow})
				ts, err := a.ListTools(faultCtx(t))
				if err != nil {
					t.Fatal(err)
				}
				held := lookup(t, ts, "m__extra")
				first.Store(true)
				res, err := held.Invoke(faultCtx(t), nil)
				if !follow {
					checkHeldLost(t, err, "m")
					return
				}
				if err != nil || res.Text() != "extra ok" {
					t.Fatalf("held tool whose session ended unseen = %v, %v; want a call on a new connection", res, err)
				}
				if n := s.Count("tools/call"); n != 1 {
					t.Errorf("%d tools/call, want 1", n)
				}
				if n := dials.Load(); n != 2 {
					t.Errorf("%d dials, want 2", n)
				}
			})
		}
	}
}

// TestHeldToolFollowsEviction: with Config.ToolsFollowServer, a tool held
// on a per-principal connection closed for idleness calls its
// principal's new connection (by default it fails with ErrClosed:
// TestPrincipalIdleEviction).
func TestHeldToolFollowsEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTokenServers()
		a := newAdapter(t, Config{Servers: map[string]Server{"users": inProcessServer(ts)}, PrincipalIdleTimeout: time.Minute, ToolsFollowServer: true})
		alice := WithPrincipal(t.Context(), "alice")
		held, err := a.ListTools(alice)
		if err != nil {
			t.Fatal(err)
		}
		old := held.Lookup("users__whoami").conn
		time.Sleep(61 * time.Second)
		synctest.Wait()
		if !old.use.wasEvicted() {
			t.Fatal("alice's connection was not evicted: the test proves nothing")
		}
		if got, err := whoami(alice, t, held); err != nil || !strings.Contains(got, "alice") {
			t.Errorf("alice's held tool after eviction = %q, %v; want a call on her new connection", got, err)
		}
	})
}
