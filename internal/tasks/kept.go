package tasks

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// maxHanded bounds the states a session of a [Kept] remembers as handed
// out; past it, the session is kept until it ages (Kept.MaxAge).
const maxHanded = 1024

// Kept is an Adapter's record of the legacy Streamable HTTP sessions of
// its own connections on which it handed out tasks (a pending task, a
// task's question): session id → the tasks handed out on it and not seen
// to end since, each with the ids of the states that carry it, and how to
// end the session once its connection is gone. While a session holds
// any, its connection keeps it when it closes (Keep), for the tasks are
// awaited elsewhere; a task settled through any connection of the Adapter
// (Settle) leaves the record, and a kept session with nothing left is
// ended. Kept sessions are bounded: past Max, the oldest is ended; past
// MaxAge, one is ended whatever it holds. The methods return the sessions
// to end, with why: the caller ends them (End) and says so, without the
// record's lock, which is taken alone.
//
// It also answers which session the state of an id lives on (Session),
// for state stored without it (without a key, a session id is not
// stored: it acts as a credential).
type Kept struct {
	Max    int           // the kept sessions at most; set before use
	MaxAge time.Duration // the age past which a kept session ends; set before use

	mu       sync.Mutex
	sessions map[string]*keptSession
}

// A keptSession is what a Kept records of one session.
type keptSession struct {
	server string
	end    func(context.Context) error
	tasks  map[string][]string // task id → the ids of the states handed out for it
	n      int                 // the states recorded, at most maxHanded
	over   bool                // more were handed out than recorded: kept until it ages
	kept   time.Time           // when its connection closed and kept it; zero while open
}

// Why a session is ended (Ending.Why).
const (
	WhySettled = "its tasks settled"
	WhyBound   = "over the bound of kept sessions"
	WhyAged    = "kept past Config.State.KeptSessionMaxAge"
)

// An Ending is a session the record dropped, for its caller to end.
type Ending struct {
	Session, Server string
	End             func(context.Context) error // sends its DELETE
	Why             string
}

// HandOut records that state (an id) of task, of server, was handed out
// on session, which end ends once its connection is gone (the first
// end given for a session is kept).
func (k *Kept) HandOut(session, server, task, state string, end func(context.Context) error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.sessions == nil {
		k.sessions = map[string]*keptSession{}
	}
	s := k.sessions[session]
	if s == nil {
		s = &keptSession{server: server, end: end, tasks: map[string][]string{}}
		k.sessions[session] = s
	}
	s.add(task, state)
}

// Also records that state of task was handed out on session, which the
// record keeps already (a task followed on a task line, pending again or
// asking again), and reports whether it knew the session.
func (k *Kept) Also(session, task, state string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.sessions[session]
	if s == nil {
		return false
	}
	s.add(task, state)
	return true
}

// add adds state of task to s, within its bound. The record's lock is
// held.
func (s *keptSession) add(task, state string) {
	if s.n >= maxHanded {
		s.over = true
		return
	}
	s.tasks[task] = append(s.tasks[task], state)
	s.n++
}

// Session returns the session that state, of task of server, was handed
// out on, or "" when the record does not know it.
func (k *Kept) Session(state, server, task string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	for id, s := range k.sessions {
		if s.server == server && slices.Contains(s.tasks[task], state) {
			return id
		}
	}
	return ""
}

// Settle records that task, which lives on session, ended (its outcome
// collected, or cancelled), through whichever connection. It returns the
// session when it is kept and holds nothing more: the caller ends it.
func (k *Kept) Settle(session, task string) *Ending {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.sessions[session]
	if s == nil {
		return nil
	}
	s.n -= len(s.tasks[task])
	delete(s.tasks, task)
	switch {
	case len(s.tasks) > 0 || s.over:
		return nil
	case s.kept.IsZero():
		delete(k.sessions, session) // its connection ends it
		return nil
	}
	return k.dropLocked(session, WhySettled)
}

// Keep reports whether the connection of session, closing at now, keeps
// it (its DELETE is not sent): tasks handed out on it are not seen to end.
// It returns the server of a kept session ("": not kept), and the kept
// sessions to end now, past Max: the oldest first.
func (k *Kept) Keep(session string, now time.Time) (server string, ended []Ending) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if s := k.sessions[session]; s != nil && s.kept.IsZero() {
		if len(s.tasks) == 0 && !s.over {
			delete(k.sessions, session)
		} else {
			s.kept = now
		}
	}
	for {
		var oldest string
		var n int
		for id, s := range k.sessions {
			if s.kept.IsZero() {
				continue
			}
			n++
			if oldest == "" || s.kept.Before(k.sessions[oldest].kept) {
				oldest = id
			}
		}
		if n <= k.Max {
			break
		}
		ended = append(ended, *k.dropLocked(oldest, WhyBound))
	}
	if s := k.sessions[session]; s != nil {
		server = s.server
	}
	return server, ended
}

// Expired drops and returns the kept sessions older than MaxAge at now,
// and when the next of the others will be (zero: none is kept).
func (k *Kept) Expired(now time.Time) (ended []Ending, next time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(k.sessions)) {
		s := k.sessions[id]
		switch at := s.kept.Add(k.MaxAge); {
		case s.kept.IsZero():
		case !now.Before(at):
			ended = append(ended, *k.dropLocked(id, WhyAged))
		case next.IsZero() || at.Before(next):
			next = at
		}
	}
	return ended, next
}

// dropLocked forgets session and returns it to end, for why. k.mu must be
// held.
func (k *Kept) dropLocked(session, why string) *Ending {
	s := k.sessions[session]
	delete(k.sessions, session)
	return &Ending{Session: session, Server: s.server, End: s.end, Why: why}
}

// Counts returns the kept sessions per server (none: nil).
func (k *Kept) Counts() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	var n map[string]int
	for _, s := range k.sessions {
		if !s.kept.IsZero() {
			if n == nil {
				n = map[string]int{}
			}
			n[s.server]++
		}
	}
	return n
}
