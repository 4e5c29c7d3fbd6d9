package mcpadapter

// Kept sessions: the legacy Streamable HTTP sessions a generation's
// connections kept open when they closed, for the tasks handed out on
// them (a PendingTask, a task's Interrupt) that are awaited elsewhere.
// The record is internal/tasks' Kept; this file ends what it drops, with
// a DELETE of the adapter's own, and ends kept sessions that aged.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/httptransport"
	"github.com/mcpadapter/mcpadapter/internal/redact"
	"github.com/mcpadapter/mcpadapter/internal/tasks"
)

// defaultKeptSessionMaxAge is the default of [StateOptions.KeptSessionMaxAge]:
// four times the time to live the adapter asks a legacy server to keep a
// task for (one hour).
const defaultKeptSessionMaxAge = 4 * time.Hour

// maxKeptSessions bounds the sessions a generation keeps: past it, the
// oldest is ended.
const maxKeptSessions = 1024

// keptEndTimeout bounds the DELETE that ends a kept session, as go-sdk
// bounds its own.
const keptEndTimeout = 5 * time.Second

// keptSessions is a generation's record of the sessions its connections
// kept (tasks.Kept), and the httptransport.Tasks of each of their own
// connections: a connection keeps its session when it closes while the
// record holds tasks handed out on it. What the record drops is ended in
// the background of the generation (Close waits for it), and told to the
// Logger there, without a lock held; a timer ends the sessions that aged.
type keptSessions struct {
	tasks.Kept
	g      *generation
	logger *slog.Logger
	noted  atomic.Bool // the Logger was told that sessions are not stored

	timerMu sync.Mutex // taken alone
	timer   *time.Timer
	stopped bool
}

// init sets up k for g, of cfg, logging to logger.
func (k *keptSessions) init(g *generation, cfg *Config, logger *slog.Logger) {
	k.g, k.logger = g, logger
	k.Max, k.MaxAge = maxKeptSessions, orDefault(cfg.State.KeptSessionMaxAge, defaultKeptSessionMaxAge)
}

// Join implements httptransport.Tasks: an own connection joins no other
// session.
func (k *keptSessions) Join() (session, version string) { return "", "" }

// Keep implements httptransport.Tasks: the connection of session, which
// closes, keeps it while tasks handed out on it are not seen to end.
// Sessions past the bound or the age are ended.
func (k *keptSessions) Keep(session string) bool {
	now := time.Now()
	server, ended := k.Kept.Keep(session, now)
	aged, next := k.Expired(now)
	if server != "" {
		k.logger.Debug("mcpadapter: session kept for the tasks handed out on it", "server", server)
	}
	k.end(append(ended, aged...))
	k.arm(next)
	return server != ""
}

// handOut records the state of id handed out for task, which lives on
// c's own session, for the Adapter to end the session once the task
// settled. Without a State.Key the Logger is told once that such state can
// be followed only here.
func (k *keptSessions) handOut(c *conn, task, id string) {
	k.HandOut(c.session.ID(), c.server, task, id, c.sessionEnd())
	if !c.a.states.ring.Sealing() && k.noted.CompareAndSwap(false, true) {
		k.logger.Info("mcpadapter: a task handed out lives on its server's session, whose id is stored only sealed: without Config.State.Key only this Adapter can follow it, until it is closed", "server", c.server)
	}
}

// settle records that task, which lives on session, ended; a kept
// session with nothing left is ended.
func (k *keptSessions) settle(session, task string) {
	if e := k.Settle(session, task); e != nil {
		k.end([]tasks.Ending{*e})
	}
}

// expire ends the kept sessions that aged, on the timer's goroutine,
// entered in the generation.
func (k *keptSessions) expire() {
	if !k.g.enter() {
		return
	}
	defer k.g.wg.Done()
	ended, next := k.Expired(time.Now())
	k.endNow(ended)
	k.arm(next)
}

// arm sets the timer of expire to next (zero: none is kept).
func (k *keptSessions) arm(next time.Time) {
	if next.IsZero() {
		return
	}
	k.timerMu.Lock()
	defer k.timerMu.Unlock()
	switch {
	case k.stopped:
	case k.timer == nil:
		k.timer = time.AfterFunc(time.Until(next), k.expire)
	default:
		k.timer.Reset(time.Until(next))
	}
}

// stop stops the timer for good, at the generation's end.
func (k *keptSessions) stop() {
	k.timerMu.Lock()
	defer k.timerMu.Unlock()
	k.stopped = true
	if k.timer != nil {
		k.timer.Stop()
	}
}

// end ends the sessions in the background of the generation.
func (k *keptSessions) end(ended []tasks.Ending) {
	if len(ended) > 0 {
		k.g.background(func() { k.endNow(ended) })
	}
}

// endNow ends the sessions, and tells the Logger: a session ended before
// its tasks settled at Info, for whoever awaits them. The session's id
// and the credentials of its requests are never logged.
func (k *keptSessions) endNow(ended []tasks.Ending) {
	for _, e := range ended {
		level := slog.LevelInfo
		if e.Why == tasks.WhySettled {
			level = slog.LevelDebug
		}
		k.logger.Log(context.Background(), level, "mcpadapter: kept session ended", "server", e.Server, "reason", e.Why)
		ctx, cancel := context.WithTimeout(context.Background(), keptEndTimeout)
		if err := e.End(ctx); err != nil {
			k.logger.Debug("mcpadapter: ending a kept session failed", "server", e.Server, "error", err)
		}
		cancel()
	}
}

// sessionEnd returns the func that ends c's session once c is gone: a
// DELETE of the adapter's own, with c's settings (the server's headers,
// the principal's, its OAuth token, its HTTP client) through the
// adapter's transport, which keeps them on the server's origin. It holds
// what it needs of c, not c; its errors name no credential of the URL.
func (c *conn) sessionEnd() func(context.Context) error {
	session, version, st := c.session.ID(), c.info.ProtocolVersion, c.tasks.streamable
	opts := c.httpOptions(nil, st.Endpoint, c.oauth)
	opts.Call, opts.Ended, opts.Failed = nil, func() {}, func() {}
	return func(ctx context.Context) error {
		hc := httptransport.New(opts).Client(st.HTTPClient)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, st.Endpoint, nil)
		if err != nil {
			return redact.Error(err, st.Endpoint)
		}
		req.Header.Set(httptransport.SessionIDHeader, session)
		req.Header.Set(httptransport.VersionHeader, version)
		resp, err := hc.Do(req)
		if err != nil {
			return redact.Error(err, st.Endpoint)
		}
		resp.Body.Close()
		switch code := resp.StatusCode; {
		case code < 300, code == http.StatusNotFound, code == http.StatusMethodNotAllowed:
			return nil // ended, ended already, or the server ends none
		default:
			return fmt.Errorf("DELETE answered %s", resp.Status)
		}
	}
}
