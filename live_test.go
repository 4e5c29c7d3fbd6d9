package mcpadapter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// liveAnswer answers a live interrupt's one request.
func liveAnswer(action Action, content map[string]any) Resolution {
	return Answered(answer(liveKey, action, content))
}

// TestLiveInterrupt: without an ElicitationHandler, a legacy server's live
// elicitation/create during a call makes the call return a live
// *Interrupt while the server waits; Resume on the same Adapter (the
// interrupt itself, or a copy through JSON) answers the server's request,
// and the call's result reflects the answer. In memory and over stdio
// (the test binary as the server).
func TestLiveInterrupt(t *testing.T) {
	servers := map[string]func(t *testing.T) Server{
		"memory": func(*testing.T) Server { return memServer(bookingServer(true), ModeAuto) },
		"stdio":  func(t *testing.T) Server { return stdioServer(t, "legacy:key="+stateKey) },
	}
	for name, server := range servers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := newAdapter(t, Config{Servers: map[string]Server{"b": server(t)}})
			for _, tt := range []struct {
				tool, json string
				args       map[string]any
				resolve    Resolution
				want       string
			}{
				{"b__ask_live", "", nil, liveAnswer(Accept, date("2026-09-18")), "live elicitation accepted: 2026-09-18"},
				{"b__ask_live", "json", nil, liveAnswer(Decline, nil), "live elicitation decline"},
				// The SDK's legacy shim asks book_table's date live.
				{"b__book_table", "", map[string]any{"party": 4}, liveAnswer(Accept, date("2026-09-18")), "Booked a table for 4 on 2026-09-18"},
			} {
				intr := must(t).interrupt(lookupTool(t, a, tt.tool).Invoke(t.Context(), tt.args))
				if !intr.Live() || len(intr.Requests) != 1 || intr.Requests[0].Key != liveKey || intr.Requests[0].Message != "Which date?" || intr.Tool != tt.tool {
					t.Fatalf("%s: interrupt live %t, requests %+v, tool %q; want a live one asking \"Which date?\" under %q", tt.tool, intr.Live(), intr.Requests, intr.Tool, liveKey)
				}
				if tt.json != "" {
					intr = roundTrip(t, intr)
					if !intr.Live() {
						t.Fatal("the interrupt's JSON does not record that it is live")
					}
				}
				res := must(t).result(a.Resume(t.Context(), intr, tt.resolve))
				if res.Text() != tt.want {
					t.Errorf("%s: Resume() = %s, want %q", tt.tool, resultText(res), tt.want)
				}
			}
		})
	}
}

// TestLiveInterruptDeclineSetting: a negative StateOptions.LiveMaxAge keeps
// the decline of earlier versions.
func TestLiveInterruptDeclineSetting(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(bookingServer(true), ModeAuto)}, State: StateOptions{LiveMaxAge: -1}})
	res := must(t).result(lookupTool(t, a, "b__ask_live").Invoke(t.Context(), nil))
	if res.Text() != "live elicitation decline" {
		t.Errorf("Invoke() = %s, want the server's decline", resultText(res))
	}
}

// asker is a legacy server's tool that elicits live n times, recording
// each answer (or failure) on answers, then answers with them.
func asker(s *testserver.Server, name string, n int, answers chan<- string) {
	addRawTool(s, name, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var got []string
		for range n {
			res, err := req.Session.Elicit(ctx, testserver.DateRequest())
			a := "error: " + errString(err)
			if err == nil {
				a = res.Action
				if d, ok := res.Content["date"].(string); ok {
					a += " " + d
				}
			}
			answers <- a
			got = append(got, a)
		}
		return textResult1(strings.Join(got, "; ")), nil
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestLiveInterruptTwice: a server that elicits twice in one call gives
// two live interrupts in turn, then the result.
func TestLiveInterruptTwice(t *testing.T) {
	s := testserver.New(testserver.Options{Legacy: true})
	answers := make(chan string, 2)
	asker(s, "twice", 2, answers)
	a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}})
	first := must(t).interrupt(lookupTool(t, a, "b__twice").Invoke(t.Context(), nil))
	second := must(t).interrupt(a.Resume(t.Context(), first, liveAnswer(Accept, date("2026-09-18"))))
	if !second.Live() || second.ID() == first.ID() {
		t.Fatalf("second interrupt live %t, id %q (first %q); want a new live one", second.Live(), second.ID(), first.ID())
	}
	res := must(t).result(a.Resume(t.Context(), second, liveAnswer(Cancel, nil)))
	if want := "accept 2026-09-18; cancel"; res.Text() != want {
		t.Errorf("result = %s, want %q", resultText(res), want)
	}
	// Each is resumed once.
	_, err := a.Resume(t.Context(), roundTrip(t, first), liveAnswer(Accept, date("2026-09-19")))
	if !errors.Is(err, ErrClaimedState) || !strings.Contains(err.Error(), "resumed already") {
		t.Errorf("second resume = %v, want ErrClaimedState", err)
	}
}

// onceServer is a legacy server whose tool "once" elicits live once and
// records the answer (or failure) on the returned channel.
func onceServer() (*testserver.Server, chan string) {
	s := testserver.New(testserver.Options{Legacy: true})
	answers := make(chan string, 2)
	asker(s, "once", 1, answers)
	return s, answers
}

// nothingReached fails t when the server recorded an answer.
func nothingReached(t *testing.T, answers chan string) {
	t.Helper()
	synctest.Wait()
	select {
	case a := <-answers:
		t.Errorf("the server got %q, want nothing", a)
	default:
	}
}

// TestLiveInterruptElsewhere: a live interrupt resumes on the Adapter that
// made it only. On another one (the interrupt itself, or a copy through
// JSON) the resume fails at once with ErrInvalidState, saying so, and
// sends nothing: the interrupt stays held, and its Adapter resumes it
// (after refusing answers that do not fit the server's request).
func TestLiveInterruptElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, answers := onceServer()
		cfg := Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}}
		a1, a2 := newAdapter(t, cfg), newAdapter(t, cfg)
		lookupTool(t, a2, "b__once")
		intr := must(t).interrupt(lookupTool(t, a1, "b__once").Invoke(t.Context(), nil))
		for _, tt := range []struct {
			in   *Interrupt
			want string
		}{
			{intr, "made by another Adapter"},
			{roundTrip(t, intr), "holds no live interrupt of this ID"},
		} {
			_, err := a2.Resume(t.Context(), tt.in, liveAnswer(Accept, date("2026-09-18")))
			if !errors.Is(err, ErrInvalidState) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "nothing was sent") {
				t.Errorf("Resume on another Adapter = %v, want ErrInvalidState saying %q", err, tt.want)
			}
		}
		nothingReached(t, answers)
		// Answers are checked, against the server's request, before
		// anything is sent; a refused resume can be made again.
		for _, bad := range []Resolution{liveAnswer(Accept, nil), Answered(answer("date", Accept, date("2026-09-18")))} {
			if _, err := a1.Resume(t.Context(), intr, bad); err == nil || errors.Is(err, ErrInvalidState) {
				t.Errorf("Resume with a bad answer = %v, want the answer refused", err)
			}
		}
		nothingReached(t, answers)
		res := must(t).result(a1.Resume(t.Context(), intr, liveAnswer(Accept, date("2026-09-18"))))
		if res.Text() != "accept 2026-09-18" {
			t.Errorf("Resume on its Adapter = %s", resultText(res))
		}
	})
}

// TestLiveInterruptBound: a live interrupt waits StateOptions.LiveMaxAge;
// when it passes, the server's question is answered cancel, and a resume
// fails at once with ErrInvalidState saying so, sending nothing. The
// caller's context ended meanwhile: the call's request does not depend on
// it once the interrupt is returned.
func TestLiveInterruptBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, answers := onceServer()
		a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}, State: StateOptions{LiveMaxAge: time.Minute}})
		tool := lookupTool(t, a, "b__once")
		ctx, cancel := context.WithCancel(t.Context())
		intr := must(t).interrupt(tool.Invoke(ctx, nil))
		cancel()
		time.Sleep(59 * time.Second)
		nothingReached(t, answers)
		time.Sleep(2 * time.Second)
		if got := <-answers; got != "cancel" {
			t.Errorf("the server got %q when the bound passed, want cancel", got)
		}
		for _, in := range []*Interrupt{intr, roundTrip(t, intr)} {
			_, err := a.Resume(t.Context(), in, liveAnswer(Accept, date("2026-09-18")))
			if !errors.Is(err, ErrInvalidState) || !strings.Contains(err.Error(), "StateOptions.LiveMaxAge, 1m0s") {
				t.Errorf("Resume after the bound = %v, want ErrInvalidState naming StateOptions.LiveMaxAge", err)
			}
		}
		nothingReached(t, answers)
	})
}

// TestLiveInterruptClose: Close ends a held live interrupt, answering the
// server's question cancel, and the call's request (nothing outlives it, or
// synctest would fail); a resume then fails with ErrClosed and sends
// nothing.
func TestLiveInterruptClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, answers := onceServer()
		a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}})
		intr := must(t).interrupt(lookupTool(t, a, "b__once").Invoke(t.Context(), nil))
		stored := roundTrip(t, intr)
		a.Close()
		if got := <-answers; got != "cancel" {
			t.Errorf("the server got %q at Close, want cancel", got)
		}
		for _, in := range []*Interrupt{intr, stored} {
			_, err := a.Resume(t.Context(), in, liveAnswer(Accept, date("2026-09-18")))
			if !errors.Is(err, ErrClosed) {
				t.Errorf("Resume after Close = %v, want ErrClosed", err)
			}
		}
		nothingReached(t, answers)
	})
}

// TestLiveInterruptDeadline: the tool timeout bounds the call's time with
// the server, not the time its question waits for the user: a server that
// never answers after the elicitation fails the resumed call when the
// timeout passes again from the resume (the error names the setting), or
// at the resume's own deadline, and its handler sees the call cancelled.
func TestLiveInterruptDeadline(t *testing.T) {
	for _, tt := range []struct {
		name     string
		deadline time.Duration // of the resume's context; 0: none
		want     string
	}{
		{"tool timeout", 0, "within 10s (Config.DefaultToolTimeout)"},
		{"caller deadline", 3 * time.Second, "the caller's context deadline"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: true})
				ended := make(chan error, 1)
				addRawTool(s, "hang", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					if _, err := req.Session.Elicit(ctx, testserver.DateRequest()); err != nil {
						return nil, err
					}
					<-ctx.Done() // never answers
					ended <- ctx.Err()
					return nil, ctx.Err()
				})
				a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}, DefaultToolTimeout: 10 * time.Second})
				intr := must(t).interrupt(lookupTool(t, a, "b__hang").Invoke(t.Context(), nil))
				time.Sleep(time.Minute) // the user takes longer than the tool timeout
				ctx := t.Context()
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				start := time.Now()
				_, err := a.Resume(ctx, intr, liveAnswer(Accept, date("2026-09-18")))
				if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Resume() = %v, want a timeout naming %q", err, tt.want)
				}
				if d, want := time.Since(start), min(10*time.Second, cmp.Or(tt.deadline, time.Hour)); d != want {
					t.Errorf("Resume() returned after %v, want %v", d, want)
				}
				if err := <-ended; !errors.Is(err, context.Canceled) {
					t.Errorf("the server's handler ended with %v, want its call cancelled", err)
				}
			})
		})
	}
}

// TestLiveInterruptWithdrawn: a server that stops waiting for its answer
// (its request cancelled) ends the live interrupt and the call; a resume
// says so and sends nothing.
func TestLiveInterruptWithdrawn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testserver.New(testserver.Options{Legacy: true})
		ended := make(chan error, 1)
		addRawTool(s, "impatient", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			_, err := req.Session.Elicit(ectx, testserver.DateRequest())
			<-ctx.Done()
			ended <- err
			return nil, ctx.Err()
		})
		a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}})
		intr := must(t).interrupt(lookupTool(t, a, "b__impatient").Invoke(t.Context(), nil))
		time.Sleep(31 * time.Second)
		if err := <-ended; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the server's Elicit = %v, want its own timeout", err)
		}
		_, err := a.Resume(t.Context(), intr, liveAnswer(Accept, date("2026-09-18")))
		if !errors.Is(err, ErrInvalidState) || !strings.Contains(err.Error(), "the server withdrew its question") {
			t.Errorf("Resume() = %v, want ErrInvalidState saying the server withdrew", err)
		}
	})
}

// TestLiveInterruptUnattributed: with another call open on the connection,
// MCP does not say which call asks: the question is declined (and logged),
// as under the decline setting.
func TestLiveInterruptUnattributed(t *testing.T) {
	s, _ := onceServer()
	started, release := make(chan struct{}), make(chan struct{})
	addRawTool(s, "hold", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(started)
		<-release
		return textResult1("held"), nil
	})
	var logs syncBuffer
	a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}, Logger: logsTo(&logs)})
	held := asyncInvoke(t.Context(), lookupTool(t, a, "b__hold"), nil)
	receive(t, started, "the held call to start")
	res := must(t).result(lookupTool(t, a, "b__once").Invoke(t.Context(), nil))
	if res.Text() != "decline" {
		t.Errorf("Invoke() with another call open = %s, want the server's decline", resultText(res))
	}
	if !strings.Contains(logs.String(), "2 calls are open: MCP does not say which one asks") {
		t.Errorf("logs = %s, want the decline explained", logs.String())
	}
	close(release)
	must(t).result(receive(t, held, "the held call to end").unpack())
}

// TestLiveInterruptModernUnaffected: a modern server asks through
// input-required results: its interrupt is not live, and resumes on
// another Adapter.
func TestLiveInterruptModernUnaffected(t *testing.T) {
	s := bookingServer(false)
	cfg := Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}}
	intr := must(t).interrupt(lookupTool(t, newAdapter(t, cfg), "b__book_table").Invoke(t.Context(), map[string]any{"party": 2}))
	if intr.Live() || intr.Requests[0].Key != "date" {
		t.Fatalf("modern interrupt: live %t, requests %+v; want a durable one keyed date", intr.Live(), intr.Requests)
	}
	res := must(t).result(newAdapter(t, cfg).Resume(t.Context(), roundTrip(t, intr), Answered(answer("date", Accept, date("2026-09-18")))))
	if res.Text() != "Booked a table for 2 on 2026-09-18" {
		t.Errorf("Resume on another Adapter = %s", resultText(res))
	}
}

// TestLiveInterruptTransports: over stdio, Streamable HTTP and SSE, a live
// interrupt resumes with the answer; and Close ends a held one (the server
// process ends, or the call's request is cancelled): its resume fails with
// ErrClosed.
func TestLiveInterruptTransports(t *testing.T) {
	servers := map[string]func(t *testing.T) Server{
		"stdio":          func(t *testing.T) Server { return stdioServer(t, "legacy") },
		"streamableHTTP": func(t *testing.T) Server { return Server{URL: bookingServer(true).StreamableHTTP(t, false).URL} },
		"sse":            func(t *testing.T) Server { return Server{URL: bookingServer(true).SSE(t).URL, Mode: ModeLegacy} },
	}
	for name, server := range servers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := newAdapter(t, Config{Servers: map[string]Server{"b": server(t)}})
			tool := lookupTool(t, a, "b__ask_live")
			intr := must(t).interrupt(tool.Invoke(t.Context(), nil))
			res := must(t).result(a.Resume(t.Context(), intr, liveAnswer(Accept, date("2026-09-18"))))
			if res.Text() != "live elicitation accepted: 2026-09-18" {
				t.Errorf("Resume() = %s, want the accepted date", resultText(res))
			}
			intr = must(t).interrupt(tool.Invoke(t.Context(), nil))
			stored := roundTrip(t, intr)
			a.Close()
			for _, in := range []*Interrupt{intr, stored} {
				if _, err := a.Resume(t.Context(), in, liveAnswer(Accept, date("2026-09-18"))); !errors.Is(err, ErrClosed) {
					t.Errorf("Resume after Close = %v, want ErrClosed", err)
				}
			}
		})
	}
}

// TestLiveInterruptsBounded: an Adapter holds at most maxLiveHeld live
// interrupts, and at most maxLiveHeldPerUser of one server and principal
// (a question past that is declined: liveInterrupt), and keeps the reasons
// of at most as many that ended.
func TestLiveInterruptsBounded(t *testing.T) {
	var l liveInterrupts
	holdAs := func(server, principal string) (*heldLive, error) {
		in := &Interrupt{Server: server, principal: principal, stamp: newStamp()}
		err := l.hold(in, nil, &liveExchange{}, &question{ctx: context.Background()}, time.Hour)
		return l.held[in.id], err
	}
	var held []*heldLive
	for i := range maxLiveHeldPerUser {
		h, err := holdAs("s", "alice")
		if err != nil {
			t.Fatalf("hold #%d of alice: %v", i+1, err)
		}
		held = append(held, h)
	}
	if _, err := holdAs("s", "alice"); !errors.Is(err, errLiveUserFull) {
		t.Fatalf("hold past alice's bound = %v, want errLiveUserFull", err)
	}
	for len(held) < maxLiveHeld { // the others still may ask
		h, err := holdAs("s", fmt.Sprint("user", len(held)))
		if err != nil {
			t.Fatalf("hold #%d: %v", len(held)+1, err)
		}
		held = append(held, h)
	}
	hold := func() (*heldLive, error) { return holdAs("t", "") }
	if _, err := hold(); !errors.Is(err, errLiveFull) {
		t.Fatalf("hold past the bound = %v, want errLiveFull", err)
	}
	l.drop(held[0], errLiveCallEnded)
	if h, err := holdAs("s", "alice"); err != nil { // one of alice's ended: she may hold one again
		t.Fatalf("hold of alice after a drop: %v", err)
	} else {
		held[0] = h
	}
	for _, h := range held {
		l.drop(h, errLiveCallEnded)
	}
	for range 10 {
		h, err := hold()
		if err != nil {
			t.Fatal(err)
		}
		l.drop(h, errLiveCallEnded)
	}
	if len(l.held) != 0 || len(l.ended) != maxLiveHeld || len(l.order) != maxLiveHeld || l.ended[held[0].in.id] != nil {
		t.Errorf("held %d, reasons %d (order %d); want 0 and the last %d", len(l.held), len(l.ended), len(l.order), maxLiveHeld)
	}
}

// TestLiveInterruptProgress: the progress a server reports after its live
// question was answered reaches the resume's WithProgress, before Resume
// returns; the interrupted call's listener hears nothing after the call
// returned.
func TestLiveInterruptProgress(t *testing.T) {
	s := testserver.New(testserver.Options{Legacy: true})
	addRawTool(s, "ask_then_work", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if _, err := req.Session.Elicit(ctx, testserver.DateRequest()); err != nil {
			return nil, err
		}
		for i := range 2 {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 2}); err != nil {
				return nil, err
			}
		}
		return textResult1("worked"), nil
	})
	a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}})
	var before, after atomic.Int32
	var returned atomic.Bool
	ctx := WithProgress(t.Context(), func(Progress) { before.Add(1) })
	intr := must(t).interrupt(lookupTool(t, a, "b__ask_then_work").Invoke(ctx, nil))
	ctx = WithProgress(t.Context(), func(p Progress) {
		if returned.Load() {
			t.Errorf("progress %v after Resume returned", p.Progress)
		}
		after.Add(1)
	})
	res := must(t).result(a.Resume(ctx, intr, liveAnswer(Accept, date("2026-09-18"))))
	returned.Store(true)
	if res.Text() != "worked" || after.Load() != 2 || before.Load() != 0 {
		t.Errorf("Resume() = %s with %d progress notifications heard by the resume, %d by the call; want worked, 2 and 0", resultText(res), after.Load(), before.Load())
	}
}

// nagServer is a legacy server whose tool "nag" asks a question the adapter
// declines (an unknown elicitation mode) again and again, every pause,
// until its request ends; asked counts the questions. The returned channel
// is closed when the tool's handler returned.
func nagServer(pause time.Duration, asked *atomic.Int32) (*testserver.Server, chan struct{}) {
	s := testserver.New(testserver.Options{Legacy: true})
	ended := make(chan struct{})
	addRawTool(s, "nag", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		defer close(ended)
		for ctx.Err() == nil {
			time.Sleep(pause)
			asked.Add(1)
			if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "bogus", Message: "?"}); err != nil {
				return nil, err
			}
		}
		return nil, ctx.Err()
	})
	return s, ended
}

// TestLiveInterruptDeclinedKeepsDeadline: a live question the adapter
// declines does not restart the tool timeout: a server that keeps asking
// such questions fails the call at the timeout, counted from the call's
// start; the declines are logged at Warn once per call.
func TestLiveInterruptDeclinedKeepsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked atomic.Int32
		var logs syncBuffer
		s, ended := nagServer(50*time.Millisecond, &asked)
		a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)},
			DefaultToolTimeout: 300 * time.Millisecond, Logger: logsTo(&logs)})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, err := lookupTool(t, a, "b__nag").Invoke(ctx, nil)
		if took := time.Since(start); took != 300*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "Config.DefaultToolTimeout") {
			t.Errorf("Invoke() after %v and %d questions = %v, want the tool timeout at 300ms", took, asked.Load(), err)
		}
		<-ended // the server saw the call's request cancelled
		if n := strings.Count(logs.String(), `level=WARN msg="mcpadapter: declined live elicitation" server=b reason="mcpadapter: unsupported input request`); n != 1 {
			t.Errorf("%d Warn logs of declines (%d questions), want 1", n, asked.Load())
		}
	})
}

// TestLiveInterruptDeclinedRounds: each live question the adapter declines
// counts a round, so a server that keeps asking them fails the call past
// maxRounds (as a task's questions do), and its request is cancelled.
func TestLiveInterruptDeclinedRounds(t *testing.T) {
	var asked atomic.Int32
	s, ended := nagServer(0, &asked)
	a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := lookupTool(t, a, "b__nag").Invoke(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("asked for input more than %d times", maxRounds)) {
		t.Errorf("Invoke() after %d questions = %v, want it ended past maxRounds", asked.Load(), err)
	}
	<-ended // the call's request was cancelled
}

// TestLiveInterruptHeldNotCounted: a call whose live question waits for its
// user does not count as an open call on the connection: another user's
// call on the same (shared) connection may still ask, and gets its own live
// interrupt (it was declined, "2 calls are open"); each resumes with its
// own answer.
func TestLiveInterruptHeldNotCounted(t *testing.T) {
	var logs syncBuffer
	s := testserver.New(testserver.Options{Legacy: true})
	addRawTool(s, "ask", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, err := req.Session.Elicit(ctx, testserver.DateRequest())
		if err != nil {
			return nil, err
		}
		return textResult1(fmt.Sprint(r.Action, " ", r.Content["date"])), nil
	})
	a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeAuto)}, Logger: logsTo(&logs)})
	tool := lookupTool(t, a, "b__ask")
	alice, bob := WithPrincipal(t.Context(), "alice"), WithPrincipal(t.Context(), "bob")
	first := must(t).interrupt(tool.Invoke(alice, nil))
	second := must(t).interrupt(tool.Invoke(bob, nil))
	if strings.Contains(logs.String(), "declined live elicitation") {
		t.Errorf("logs = %s, want no decline", logs.String())
	}
	if res := must(t).result(a.Resume(bob, second, liveAnswer(Accept, date("2026-09-19")))); res.Text() != "accept 2026-09-19" {
		t.Errorf("bob's Resume() = %s, want his answer", resultText(res))
	}
	if res := must(t).result(a.Resume(alice, first, liveAnswer(Accept, date("2026-09-18")))); res.Text() != "accept 2026-09-18" {
		t.Errorf("alice's Resume() = %s, want her answer", resultText(res))
	}
}

// TestLiveQuestionAtDeadline: when a live exchange's wait ends (the tool
// timeout) while its server's question is ready too, the question is not
// lost, whichever the wait takes: it is answered (cancel, or decline once
// the exchange ended) and the exchange is stopped, so that neither the
// request nor the server's question stays open. The wait's select picks
// at random; 64 tries make a lost question all but certain to show.
func TestLiveQuestionAtDeadline(t *testing.T) {
	for range 64 {
		synctest.Test(t, func(t *testing.T) {
			x := &liveExchange{asks: make(chan *question), done: make(chan liveOutcome, 1), quit: make(chan struct{})}
			var stopCtx context.Context
			stopCtx, x.stop = context.WithCancel(t.Context())
			go func() { // the request, which ends when stopped
				<-stopCtx.Done()
				x.done <- liveOutcome{err: stopCtx.Err()}
				close(x.quit)
			}()
			answered := make(chan string, 1)
			go func() { // the server's question
				r, err := x.ask(t.Context(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "?"}})
				if err != nil {
					answered <- err.Error()
					return
				}
				answered <- r.(*mcp.ElicitResult).Action
			}()
			synctest.Wait() // the question waits to be taken
			ctx, cancel := context.WithCancel(t.Context())
			cancel() // the deadline
			o := x.next(ctx)
			if asked, ok := o.err.(*liveAsked); ok {
				t.Errorf("next at the deadline = a question, want the request's end: the question is lost")
				asked.q.reply(&mcp.ElicitResult{Action: string(Cancel)})
				x.stop()
				return
			}
			synctest.Wait()
			select {
			case <-x.quit:
			default:
				t.Error("the exchange was not stopped")
			}
			select {
			case got := <-answered:
				if got != string(Cancel) && got != string(Decline) {
					t.Errorf("the question was answered %q, want cancel or decline", got)
				}
			default:
				t.Error("the question was not answered")
			}
		})
	}
}

// TestLiveInterruptFollowedTool: a call of a held tool sent again on a new
// connection (Config.ToolsFollowServer) whose server then asks makes a live
// interrupt of the tool it was sent to, on the new connection, which
// resumes there.
func TestLiveInterruptFollowedTool(t *testing.T) {
	s, answers := onceServer()
	srv, first, _ := refusingFirst(s)
	a := newAdapter(t, Config{Servers: map[string]Server{"m": srv}, ToolsFollowServer: true})
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	held := lookup(t, ts, "m__once")
	first.Store(true)
	intr := must(t).interrupt(held.Invoke(faultCtx(t), nil))
	a.live.mu.Lock()
	h := a.live.held[intr.id]
	a.live.mu.Unlock()
	if h == nil || h.tool == held || h.tool.conn == held.conn || h.tool.conn != h.x.c {
		t.Errorf("the live interrupt is bound to the held tool (on its ended connection), want the tool the call was sent to")
	}
	if res := must(t).result(a.Resume(faultCtx(t), intr, liveAnswer(Accept, date("2026-09-18")))); !strings.Contains(res.Text(), "2026-09-18") {
		t.Errorf("Resume() = %s, want the answer", resultText(res))
	}
	if got := <-answers; got != "accept 2026-09-18" {
		t.Errorf("the server got %q, want the answer", got)
	}
}
