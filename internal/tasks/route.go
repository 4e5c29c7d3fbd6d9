package tasks

import "context"

// A Route says where the requests of one task call go: on the session's
// own connection, or on a task line (line.go) joined to the session the
// task lives on, a legacy Streamable HTTP session's, opened by the first
// request that needs it. Close closes the line. A Route is used by one
// goroutine at a time.
type Route struct {
	// Own is the id of the session of the call's connection; "" when its
	// requests never go on lines (not Streamable HTTP, no session, or the
	// modern era, whose tasks no session holds).
	Own string
	// Session is the session the task lives on; "" (or Own) for Own.
	Session string
	// Open opens a task line to session. gone reports, after a request on
	// it failed, whether the server refused the session as unknown.
	Open func(ctx context.Context, session string) (line *Line, gone func() bool, err error)
	line *Line
	gone func() bool
}

// LineSession returns the session whose line carries the call's requests,
// or "" when they go on the connection.
func (r *Route) LineSession() string {
	if r.Own == "" {
		return ""
	}
	if r.Session != "" {
		return r.Session
	}
	return r.Own
}

// OnOwn reports whether the task lives on the connection's own session.
func (r *Route) OnOwn() bool { return r.Own != "" && r.LineSession() == r.Own }

// Line returns the line a request of method goes on, opened now if need
// be, or nil when it goes on the connection. The task-augmented tools/call
// always goes on the connection: a server that answers it at once (a
// legacy one that ignores the task) may ask or report progress on its
// stream, which go-sdk takes as for any call.
func (r *Route) Line(ctx context.Context, method string) (*Line, error) {
	session := r.LineSession()
	if session == "" || method == "tools/call" {
		return nil, nil
	}
	if r.line == nil {
		line, gone, err := r.Open(ctx, session)
		if err != nil {
			return nil, err
		}
		r.line, r.gone = line, gone
	}
	return r.line, nil
}

// FallBack reports whether a request that failed on a line to another
// session than Own may be sent again on Own: the server refused the
// session as unknown (it forgot it; a durable task store may still have
// the task). The route then goes to Own.
func (r *Route) FallBack() bool {
	if r.line == nil || r.Session == "" || r.Session == r.Own || !r.gone() {
		return false
	}
	r.Close()
	r.Session = r.Own
	return true
}

// Close closes the route's line, if it opened one.
func (r *Route) Close() {
	if r.line != nil {
		r.line.Close()
		r.line, r.gone = nil, nil
	}
}
