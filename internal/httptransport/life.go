package httptransport

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// drainGrace bounds how long the rest of a POST's event stream may take
// once the server has answered the request: the SDK reads it to the end
// (to reuse the connection), whatever the caller does meanwhile.
const drainGrace = time.Second

// errDrainGrace ends a POST's stream that did not end within drainGrace
// of its answer.
var errDrainGrace = errors.New("mcpadapter: the server's stream went on after its answer")

// A postLife is the context of one POST to a server. Until the server has
// answered the request, it ends with the caller's context, as the
// request's own would; from then on the caller's end no longer cuts the
// stream, whose end (the last bytes of a chunked body) the SDK reads to
// return the connection to the pool. A request cut there, after its
// answer, cost a new TCP connection (and its goroutines) to the next.
type postLife struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	detach func() bool // stops the caller's end from cancelling ctx

	mu    sync.Mutex
	grace *time.Timer // from the answer on
	ended bool
}

// newPostLife returns the life of a POST made under caller.
func newPostLife(caller context.Context) *postLife {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(caller))
	l := &postLife{ctx: ctx, cancel: cancel}
	l.detach = context.AfterFunc(caller, func() { cancel(context.Cause(caller)) })
	return l
}

// answered records that the server has answered: the rest of the stream
// gets drainGrace to end.
func (l *postLife) answered() {
	if !l.detach() {
		return // the caller ended first: the request is being cut
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		l.grace = time.AfterFunc(drainGrace, func() { l.cancel(errDrainGrace) })
	}
}

// end releases the life once the body is closed.
func (l *postLife) end() {
	l.detach()
	l.mu.Lock()
	l.ended = true
	if l.grace != nil {
		l.grace.Stop()
	}
	l.mu.Unlock()
	l.cancel(context.Canceled)
}

// An answerBody is the body of an answer to a request of the session. A
// POST's ends the POST's life when closed. The end of any other (the
// standalone event stream, a resumed one), or an error reading a POST's,
// signs the end of the session.
type answerBody struct {
	io.ReadCloser
	life  *postLife // of a POST
	ended func()    // the session ended, or may have (Options.Ended)
}

// Read implements [io.Reader].
func (b *answerBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && (b.life == nil || err != io.EOF) {
		b.ended()
	}
	return n, err
}

// Close implements [io.Closer].
func (b *answerBody) Close() error {
	err := b.ReadCloser.Close()
	if b.life != nil {
		b.life.end()
	}
	return err
}
