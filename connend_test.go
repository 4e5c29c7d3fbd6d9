package mcpadapter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEndSignal: the watch starts on the second of the two events, once,
// whichever comes first; a sign before the attach counts only through
// Sign, not SignAttached.
func TestEndSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		runs := 0
		s := newEndSignal(func() { runs++ })
		s.SignAttached() // before the attach: not a sign
		s.Sign()
		s.Sign()
		synctest.Wait()
		if runs != 0 {
			t.Fatalf("watch ran %d times before the attach", runs)
		}
		s.Attach()
		synctest.Wait()
		if runs != 1 {
			t.Fatalf("watch ran %d times, want 1", runs)
		}

		runs = 0
		s = newEndSignal(func() { runs++ })
		s.SignAttached()
		s.Attach()
		synctest.Wait()
		if runs != 0 {
			t.Fatal("a sign before the attach through SignAttached counted")
		}
		s.SignAttached()
		synctest.Wait()
		if runs != 1 {
			t.Fatalf("watch ran %d times, want 1", runs)
		}
	})
}

// failingRead is a connection whose Read fails with err.
type failingRead struct {
	mcp.Connection
	err error
}

func (f failingRead) Read(context.Context) (jsonrpc.Message, error) { return nil, f.err }

// TestEndConn: the first failed Read is the sign, and its error is kept.
func TestEndConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		runs := 0
		first := errors.New("first")
		c := &endConn{Connection: failingRead{err: first}, End: newEndSignal(func() { runs++ })}
		c.End.Attach()
		c.Read(t.Context())
		c.Connection = failingRead{err: errors.New("second")}
		c.Read(t.Context())
		synctest.Wait()
		if runs != 1 || c.ReadErr() != first {
			t.Fatalf("watch ran %d times, ReadErr %v; want once, the first error", runs, c.ReadErr())
		}
	})
}
