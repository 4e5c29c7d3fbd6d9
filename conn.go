package mcpadapter

// The live connection: one session with a server, its calls in flight, its
// death and its close. Dialing is in dial.go, era negotiation in eras.go.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/httptransport"
	"github.com/mcpadapter/mcpadapter/internal/redact"
	"github.com/mcpadapter/mcpadapter/internal/sdkcache"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A conn is a server's connection as one principal (or everyone, for a
// shared server) uses it: its tools are bound to it, its catalog and its
// use are its own. Its session (link) is its own too, but for the
// principals of a stateless server, whose conns share one (join, share.go).
// Tools move to another conn only when the server forgot its session
// (next), or, under Config.ToolsFollowServer, once it ended (follow.go).
type conn struct {
	*link // the session: shared with the other principals of a stateless server

	server string
	key    connKey // server and principal (principal.go)
	cfg    *Server
	a      *Adapter
	gen    *generation
	life   context.Context // the generation's context: Close cancels it
	info   ServerInfo

	since   time.Time   // when the conn became its key's current one
	closing atomic.Bool // set when the adapter closes the conn

	// next is the conn that replaced c after its server forgot c's session
	// (sessionMissing): the spec's new session, on which the calls of c's
	// tools go on (current). Set once, by pool.open.
	next atomic.Pointer[conn]

	// The tools/call requests in flight, to which the server's own
	// requests are attributed (serverreq.go).
	openMu sync.Mutex
	open   map[*openCall]struct{} // guarded by openMu
	asking int                    // live elicitations being answered; guarded by openMu

	// oauth is the OAuth handler of a URL server's dial (Server.OAuth, or
	// OAuthFor's for c's principal), called once per dial; on a shared
	// session, the principal's, which its requests carry (share.go).
	oauth auth.OAuthHandler

	// carrier is the conn that owns the shared session of a principal's
	// conn (share.go); nil when c owns its session.
	carrier *conn
	left    atomic.Bool // a conn on a carrier has been uncounted (leave)
	// shookFor is, on a carrier, the principal whose credentials its
	// handshake carried, whose ServerInfo it is (join).
	shookFor string

	cat *catalog // the cached lists of the conn, guarded by catalogs.mu (catalog.go)

	use usage // requests in flight and last use, of a per-principal conn
}

// A link is one live session with a server: its end, its transport and
// what the session keeps. Each conn owns one, but the conns of the
// principals of a stateless server, which share their carrier's.
type link struct {
	session *mcp.ClientSession
	stop    func()       // ends what the transport started and waits for it (a stdio server)
	screen  *wire.Screen // screens what the session reads

	done   chan struct{} // closed (by markDead) when the session has ended
	err    error         // why it ended; written before done is closed
	diedAt time.Time     // when it ended; written before done is closed
	dead   sync.Once     // guards err and the closing of done

	// progress holds the progress sinks of the requests in flight on the
	// session, which the progress notifications its screen reads reach
	// (notify.go); on a shared session, every principal's, by random token.
	progress progressTable

	// wire is the transport connection of the session, for every transport
	// but Streamable HTTP: close ends the requests in flight by closing it
	// (the SDK's ClientSession.Close waits for them), and it tells when the
	// session ends (endConn, connend.go).
	wire *endConn

	// The requests in flight on a Streamable HTTP session (wire == nil),
	// which the end of the generation cancels. A context per request
	// costs a call about a microsecond and a few allocations
	// (bench_test.go, BenchmarkOverhead), noise next to an HTTP round trip
	// but not next to an in-memory or stdio one: those are ended through
	// wire instead.
	inflight httptransport.Inflight

	// http is the transport of a Streamable HTTP session, which tells
	// close when the SDK has told the server about a cancelled request;
	// notices counts the requests cancelled by Close, each of which the
	// SDK follows with notifications/cancelled.
	http    *httpConn
	notices atomic.Int64

	// overHTTP is set when the session's requests go through the
	// adapter's HTTP transport (Streamable HTTP or SSE): CallRequest.Headers reach
	// them.
	overHTTP bool

	slots [3]sdkcache.Slots // pages of the SDK's list caches (sdkcache.go)

	tasks taskConn // what the session keeps for tasks (tasks.go)

	descs descIntern // the tool descriptors of a shared session's principals (share.go)
}

// refuseInputRequests is a receiving middleware that refuses a legacy
// server's live sampling and roots requests: the adapter has no model to
// sample and no roots to show. The call that caused them then fails with
// ErrUnsupportedInputRequest (see blame). It also screens live elicitation
// requests (liveElicitation).
func (c *conn) refuseInputRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "sampling/createMessage", "roots/list":
			c.blame(method)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpadapter: client does not support " + method}
		case "elicitation/create":
			return c.liveElicitation(ctx, method, req, next)
		}
		return next(ctx, method, req)
	}
}

// markDead records that the session ended, and why. The first cause wins:
// it reports whether err was it.
func (c *conn) markDead(err error) (first bool) {
	c.dead.Do(func() {
		c.err, c.diedAt = err, time.Now()
		close(c.done)
		first = true
	})
	return first
}

// giveUp marks the session dead while it may still be open (a response the
// SDK could not use, a request torn mid-write, a session the HTTP server
// forgot) and closes it, so that watch releases it: the next discovery
// dials a new one, and nothing else would end this one.
// It closes in a goroutine of its own: the caller may be a call that the
// SDK's Close would wait for.
func (c *conn) giveUp(err error) {
	if !c.markDead(err) {
		return
	}
	if c.http != nil {
		c.http.end.Sign() // the SDK's Close may send nothing the transport sees
	}
	go func() {
		if c.wire != nil {
			c.wire.Close() // ends the requests in flight and the session
		} else {
			c.session.Close()
		}
	}()
}

func (c *conn) modern() bool { return c.info.Era == EraModern }

// sessionMissing reports whether c's Streamable HTTP server answered 404
// to a request carrying c's session id: it no longer knows the session
// (it restarted, or dropped it), and the spec has the client start a new
// session, with or without a retry policy (pool.connect).
func (c *conn) sessionMissing() bool { return c.http != nil && c.http.Missing() }

// attach makes c's generation wait for the release of c's session
// (watch), which runs once the session has ended: at once for a session
// that ended already, and registers c's progress sinks with the notifier.
// pool.mu must be held, with the generation open. It calls no user code:
// it reports whether it dropped the subscriptions held for c's key, and
// the caller tells user code (attached) once pool.mu is released.
//
// No goroutine waits for the end of a session while it lives
// (connend.go). On a connection of the adapter's own (c.wire) the
// SDK's reader learns of the end first: its Read fails (endConn).
// Streamable HTTP, which the adapter cannot wrap (see own), shows it in
// the session's HTTP exchanges (httpConn.end), and close and giveUp sign
// it themselves.
// A client of the user's (Server.Client) may end a session unseen (its
// KeepAlive closes one whose pings fail): its sessions keep a watch
// goroutine.
func (c *conn) attach() (subsDropped bool) {
	subsDropped = c.a.notify.attach(c)
	c.gen.wg.Add(1)
	switch {
	case c.wire != nil:
		c.wire.End.Attach()
	case c.http != nil && c.cfg.Client == nil:
		c.http.end.Attach()
	default:
		go c.watch()
	}
	return subsDropped
}

// attached tells user code of c's attach, without pool.mu: the meter
// counts the connection (release uncounts it, maybe first: the sum is
// what a meter keeps), and the Logger hears of the subscriptions attach
// dropped.
func (c *conn) attached(subsDropped bool) {
	c.a.metrics.Connection(c.server, c.key.principal != "", 1)
	if subsDropped {
		c.a.logger.Warn("mcpadapter: resource subscriptions dropped: the new session does not support them", "server", c.server)
	}
}

// watch waits for the ended session to finish, records why it ended and
// releases it. The generation owns it (attach); it returns when the peer
// goes away or the session is closed (by close, or by giveUp).
func (c *conn) watch() {
	defer c.gen.wg.Done()
	if w := c.wire; w != nil && w.ReadErr() != io.EOF {
		// What Wait returns when the read failed for a reason (a stdio
		// server's exit, naming its status and last stderr lines): say
		// so now, not once the calls in flight have returned.
		c.markDead(w.ReadErr())
	}
	err := c.session.Wait()
	if err == nil {
		err = mcp.ErrConnectionClosed
	}
	c.markDead(err)
	// Release what the SDK keeps for the session (a modern session's
	// subscriptions/listen goroutine waits for Close): a dead conn that a
	// re-dial replaces is never closed otherwise.
	c.session.Close()
	if c.stop != nil {
		c.stop()
	}
	c.release()
}

// release unregisters what c registered with longer-lived owners, so that
// nothing reaches c once its session is released: the cancellation of its
// requests at the generation's end, and its progress sinks. A request made
// after it is neither tracked nor reported; the session has ended, so it
// fails at once anyway.
func (c *conn) release() {
	c.inflight.Release()
	c.a.notify.release(c)
	c.a.metrics.Connection(c.server, c.key.principal != "", -1)
}

// beginClose marks c as closing, before Close cancels its requests: on
// Streamable HTTP the transport then looks out for the cancellation
// notices that follow (see close).
func (c *conn) beginClose() {
	c.closing.Store(true)
	if c.http != nil && c.carrier == nil {
		c.http.WatchCancels()
	}
}

// close ends the session (and a stdio server process). Errors of a server
// that exits on request are not failures of Close: they are logged. A
// principal's conn on a shared session only leaves it: its carrier ends
// the session.
func (c *conn) close() {
	c.closing.Store(true)
	if c.carrier != nil { // the session is the carrier's, which closes it
		c.leave()
		return
	}
	if c.http != nil {
		// Cancel the requests in flight and wait until they returned and
		// the SDK told the server of each one cut short: it does so in the
		// background, and drops them once the session is closing, so that
		// closing at once would leave the server's handlers running.
		noticed := func() bool { return c.http.CancelsSent() >= c.notices.Load() }
		if !c.inflight.Drain(cancelNoticeTimeout, noticed, c.http.CancelSent()) {
			c.a.logger.Debug("mcpadapter: closing with cancellations not confirmed", "server", c.server)
		}
		c.http.end.Sign() // the SDK's Close may send nothing the transport sees
	}
	if c.wire != nil {
		// Ends the requests in flight: the SDK retires them when its
		// reader fails, and its Close then has nothing to wait for.
		c.wire.Close()
	}
	if err := c.session.Close(); err != nil {
		c.a.logger.Debug("mcpadapter: session closed", "server", c.server, "error", err)
	}
	if c.stop != nil {
		c.stop()
	}
}

// untilClose returns ctx, cancelled also when the generation ends (Close),
// for the adapter's own waits between requests, which no closed connection
// ends. The returned func releases it.
func (c *conn) untilClose(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.life, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// cancelNoticeTimeout bounds how long Close waits for the requests it
// cancelled on a Streamable HTTP session to return and for the server to
// be told, before it closes the session.
const cancelNoticeTimeout = 2 * time.Second

// callError classifies the failure of a request on c and wraps it.
func (c *conn) callError(op string, err error) error {
	if c.closing.Load() || c.life.Err() != nil {
		// The SDK tells the server (see close); a principal's conn on a
		// shared session closes alone, not the session, but with Close.
		if c.http != nil && errors.Is(err, context.Canceled) && (c.carrier == nil || c.life.Err() != nil) {
			c.notices.Add(1)
		}
		return serverError(c.server, op, c.closedErr())
	}
	switch {
	case errors.Is(err, mcp.ErrSessionMissing), c.sessionMissing():
		// The HTTP server forgot the session: this conn is dead for good,
		// and the next use starts a new session (pool.connect). giveUp
		// closes the session in the background: its Close waits for the
		// requests in flight.
		c.giveUp(err)
	case errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, io.EOF) && !rejected(err):
		// The peer is gone. Say so now rather than when watch notices,
		// so that the next discovery re-dials instead of reusing c.
		c.giveUp(err)
		err = c.staysDown(err)
	}
	return serverError(c.server, op, c.redacted(classifyFault(err), c.cfg.URL))
}

// redacted returns err with the credentials of c's server hidden in its
// text: the password and query of its URL rawURL, and its session's id
// (a credential, which go-sdk's errors name).
func (c *conn) redacted(err error, rawURL string) error {
	var id string
	if c.session != nil {
		id = c.session.ID()
	}
	return redact.Values(redact.Error(err, rawURL), id)
}

// staysDown wraps err, the end of c's connection, with the setting that
// would have the next discovery dial c's server again, when c's server has
// none and c's session is not shared: the connection stays down until
// Close otherwise.
func (c *conn) staysDown(err error) error {
	if c.cfg.Retry != nil || c.carrier != nil || c.carries() { // a shared session is dialed again (pool.connectKey)
		return err
	}
	return fmt.Errorf("%w (it stays down until Close: set Server.Retry to dial it again)", err)
}

// closedErr is why a closing c serves no more requests: ErrClosed, saying
// so when the conn was a per-principal one closed for idleness or the cap.
func (c *conn) closedErr() error {
	if c.use.wasEvicted() {
		return errEvicted
	}
	return ErrClosed
}

// diedRedialable reports whether a request on c failed because c's session
// ended (callError marks the conn dead as it sees that), not because of
// Close, and c's server is dialed again: it has a policy for that, or it
// forgot the session (sessionMissing).
func (c *conn) diedRedialable() bool {
	return (c.cfg.Retry != nil || c.sessionMissing()) && !c.alive() && !c.closing.Load() && c.life.Err() == nil
}

// own returns t, recording the connection it makes as c.wire. It is given
// every transport but Streamable HTTP, whose connection no wrapper may
// hide (sdkcompat.go, entry 5): its requests are ended through their
// contexts instead (c.http).
func (c *conn) own(t mcp.Transport) mcp.Transport {
	return wrapTransport(t, func(conn mcp.Connection) mcp.Connection {
		c.wire = &endConn{Connection: conn, End: newEndSignal(c.watch)}
		c.tasks.calls.Record(c.wire)
		return c.wire
	})
}
