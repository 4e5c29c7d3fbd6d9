package mcpadapter

// Fault tests of stdio servers and of connections the adapter gives up on:
// a response the SDK cannot use, a server that stops reading its stdin, a
// server whose process exits while a child holds its stdout, a handshake
// that never ends, start-up failures, and the environment a server gets.

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/faultserver"
)

// closeWithin closes a and fails the test if Close does not return within
// faultWait.
func closeWithin(t *testing.T, a *Adapter) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- a.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close() = %v", err)
		}
	case <-faultCtx(t).Done():
		t.Fatal("Close() did not return")
	}
}

// TestFaultNullErrorClosesSession: a response with "error": null fails the
// call and costs the connection; the adapter closes that connection (the
// stdio server exits) before it dials a new one, so that Close returns and
// nothing of the old session is left, over a pipe and over stdio.
func TestFaultNullErrorClosesSession(t *testing.T) {
	for _, target := range peerTargets[:2] { // pipe, stdio
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			p := faultserver.NewPeer(faultserver.PeerOptions{Tools: faultserver.BasicCatalog()})
			a, err := New(Config{Servers: map[string]Server{"f": target.server(t, p, faultserver.KindRaw+":basic")}})
			if err != nil {
				t.Fatal(err)
			}
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			pid := serverPID(t, ts, "f__"+faultserver.ToolPID)
			_, err = lookup(t, ts, "f__"+faultserver.ToolNullError).Invoke(faultCtx(t), nil)
			checkServerErr(t, err, "f")
			checkUsable(t, a, ts, "f", "f__ok", nil, "ok", true)
			closeWithin(t, a)
			if target.name == "stdio" {
				waitEnded(t, pid, "the first stdio server")
				return
			}
			ended := make(chan struct{})
			go func() { p.Wait(); close(ended) }()
			select {
			case <-ended:
			case <-faultCtx(t).Done():
				t.Fatal("a pipe connection outlived Close")
			}
		})
	}
}

var _ = errors.Is
var _ = context.Background
var _ = strconv.Itoa
