package httptransport

import (
	"context"
	"sync"
	"time"
)

// Inflight is the requests in flight on one Streamable HTTP session, which
// the end of its life (the adapter's generation: Close) cancels. It
// registers with life once, by the first request, until Release: life
// outlives the session, and must not keep it. The zero value is ready; it
// is safe for concurrent use.
type Inflight struct {
	once sync.Once
	stop func() bool // unregisters Cancel from life; set by once

	mu       sync.Mutex
	calls    map[*context.CancelFunc]struct{} // guarded by mu
	ended    bool                             // guarded by mu: life is done
	n        int                              // guarded by mu: tracked requests not yet returned
	returned chan struct{}                    // signalled when a tracked request returns
}

// Track registers cancel, the cancel func of a request in flight, to be
// called when life ends, unless it has ended already (false: the request
// fails at once).
func (f *Inflight) Track(life context.Context, cancel *context.CancelFunc) bool {
	f.once.Do(func() { f.stop = context.AfterFunc(life, f.Cancel) })
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return false
	}
	if f.calls == nil {
		f.calls = make(map[*context.CancelFunc]struct{})
		f.returned = make(chan struct{}, 1)
	}
	f.calls[cancel] = struct{}{}
	f.n++
	return true
}

// Untrack forgets a request that has returned.
func (f *Inflight) Untrack(cancel *context.CancelFunc) {
	f.mu.Lock()
	delete(f.calls, cancel)
	f.n--
	returned := f.returned
	f.mu.Unlock()
	select {
	case returned <- struct{}{}:
	default:
	}
}

// Cancel cancels every request in flight, and every later one at once:
// the session's life has ended.
func (f *Inflight) Cancel() {
	f.mu.Lock()
	calls := f.calls
	f.calls, f.ended = nil, true
	f.mu.Unlock()
	for cancel := range calls {
		(*cancel)()
	}
}

// Release unregisters f from the life it registered with; no later Track
// registers again.
func (f *Inflight) Release() {
	f.once.Do(func() {})
	if f.stop != nil {
		f.stop()
	}
}

// Drain cancels the requests in flight (Cancel) and waits, at most
// timeout, until they have returned and noticed reports that the server
// was told of each one cut short (go-sdk sends notifications/cancelled in
// the background; sent signals each: Transport.CancelSent). It reports
// whether both happened in time.
func (f *Inflight) Drain(timeout time.Duration, noticed func() bool, sent <-chan struct{}) bool {
	f.Cancel()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		busy, returned := f.n > 0, f.returned
		f.mu.Unlock()
		if !busy && noticed() {
			return true
		}
		select {
		case <-returned: // nil (blocks) when nothing was ever tracked
		case <-sent:
		case <-deadline.C:
			return false
		}
	}
}
