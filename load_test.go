package mcpadapter

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

// TestLoadWithServerRestart runs 1000 goroutines calling tools of four
// servers (in memory, Streamable HTTP, and two stdio processes) while one
// stdio server is killed and then restarted by the next discovery (Restart
// policy). Every call on the healthy servers succeeds; a call on the victim
// succeeds or fails with a *ServerError naming it, and calls made after the
// restart on the new tools succeed; nothing deadlocks; Close leaves no
// goroutine and no process behind.
func TestLoadWithServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a load test (1,000 goroutines); go test without -short runs it")
	}
	const (
		workers  = 1000
		maxCalls = 50 // calls per worker at most: a bound, not a target
	)
	mem := testserver.Full(testserver.Options{})
	url := testserver.Full(testserver.Options{}).StreamableHTTP(t, true).URL
	before := goroutines()
	victim := stdioServer(t, "modern")
	victim.Retry = &RetryPolicy{MaxAttempts: 3}
	a, err := New(Config{Servers: map[string]Server{
		"mem":    memServer(mem, ModeAuto),
		"http":   {URL: url},
		"stdio":  stdioServer(t, "legacy"),
		"victim": victim,
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := faultCtx(t)
	ts, err := a.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := serverPID(t, ts, "victim__pid")
	session, err := a.Session(ctx, "victim")
	if err != nil {
		t.Fatal(err)
	}
	var victimTool atomic.Pointer[Tool]
	victimTool.Store(lookup(t, ts, "victim__echo"))
	healthy := []*Tool{lookup(t, ts, "mem__echo"), lookup(t, ts, "http__echo"), lookup(t, ts, "stdio__echo")}

	var (
		restarted   atomic.Bool  // the victim's new tools are in victimTool
		calls       atomic.Int64 // calls finished
		victimFails atomic.Int64
		errMu       sync.Mutex
		errs        []error
	)
	fail := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if len(errs) < 10 {
			errs = append(errs, err)
		}
	}
	killAt := make(chan struct{}) // closed once a fifth as many calls as workers finished
	var killOnce sync.Once
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for round := 0; round < maxCalls; round++ {
				onVictim := i%4 == 3
				after := restarted.Load()
				tool := victimTool.Load()
				if !onVictim {
					tool = healthy[i%4]
				}
				text := fmt.Sprintf("g%d-r%d", i, round)
				res, err := tool.Invoke(ctx, map[string]any{"text": text})
				if n := calls.Add(1); n >= workers/5 {
					killOnce.Do(func() { close(killAt) })
				}
				switch {
				case err == nil && res.Text() != text:
					fail(fmt.Errorf("%s answered %q to %q", tool.Name(), res.Text(), text))
				case err == nil:
				case !onVictim:
					fail(fmt.Errorf("healthy %s: %w", tool.Name(), err))
				default:
					var se *ServerError
					if !errors.As(err, &se) || se.Server != "victim" {
						fail(fmt.Errorf("victim call failed without a *ServerError naming it: %w", err))
					} else if after {
						fail(fmt.Errorf("a call on the restarted victim failed: %w", err))
					}
					victimFails.Add(1)
				}
				if after && round > 0 {
					return
				}
				runtime.Gosched()
			}
		})
	}

	// The controller: kill the victim mid-load, then discover it again.
	restartErr := make(chan error, 1)
	go func() {
		<-killAt
		if err := killProcess(pid); err != nil {
			restartErr <- err
			return
		}
		session.Wait()
		fresh, err := a.ListTools(ctx)
		if err != nil {
			restartErr <- fmt.Errorf("ListTools() after the kill: %w", err)
			return
		}
		tool := fresh.Lookup("victim__echo")
		if tool == nil || tool == victimTool.Load() {
			restartErr <- errors.New("ListTools() after the kill returned the dead server's tools")
			return
		}
		victimTool.Store(tool)
		restarted.Store(true)
		restartErr <- nil
	}()

	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(faultWait):
		buf := make([]byte, 1<<20)
		t.Fatalf("deadlock: the calls did not finish within %v\n%s", faultWait, buf[:runtime.Stack(buf, true)])
	}
	if err := <-restartErr; err != nil {
		t.Fatal(err)
	}
	for _, err := range errs {
		t.Error(err)
	}
	if victimFails.Load() == 0 {
		t.Log("no call reached the victim while it was dead")
	}
	t.Logf("%d calls, %d failed on the victim", calls.Load(), victimFails.Load())

	if err := a.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	mem.KillSessions()
	checkNoLeaks(t, before)
	waitEnded(t, pid, "the killed victim")
}
