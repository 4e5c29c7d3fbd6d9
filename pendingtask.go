package mcpadapter

// PendingTask: a task a call stopped waiting for, as stored state.

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/stored"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A PendingTask is returned (as an error) by a tool call that runs as a
// task on the server (see [TaskMode]) when the call stopped waiting before
// the task ended: its context's deadline or [Config.TaskWait] passed, or
// [WithPendingTask] asked for it at once. The task goes on on the server.
// Find it with [errors.As], store its JSON, and settle it later, anywhere:
//
//	var pt *mcpadapter.PendingTask
//	if errors.As(err, &pt) {
//		b, _ := json.Marshal(pt) // store it; later, on any Adapter:
//		res, err = a.Resume(ctx, decoded, mcpadapter.Collected())
//	}
//
// It is durable like an [Interrupt]; more in docs/reference.md,
// "PendingTask".
type PendingTask struct {
	Server  string // the server's name in [Config.Servers]
	Tool    string // the adapter's tool name ([Tool.Name])
	MCPName string // the server's tool name ([Tool.MCPName])
	TaskID  string // the server's id of the task
	// Status and StatusMessage are the task's as last seen.
	Status        string
	StatusMessage string

	// ID and Issued (state.go). A collection checks the stamp but does
	// not claim it: polling a task again, or cancelling it again, is
	// harmless, and a task still pending comes back with a new stamp.
	stamp

	a         *Adapter    // the adapter that made it; nil after JSON decoding
	gen       *generation // the adapter generation it was made in
	tool      *Tool       // the tool that made it; nil after JSON decoding
	principal string      // whom the call acted for
	session   string      // the legacy Streamable HTTP session the task lives on, or ""
	waited    string      // the deadline that ended the call's wait ("": WithPendingTask, or decoded)
	unstored  bool        // decoded state: it lives on a session whose id was not stored
	seal      stateSeal
}

// Error implements error.
func (p *PendingTask) Error() string {
	why := ""
	if p.waited != "" {
		why = " (" + p.waited + ")"
	}
	return fmt.Sprintf("mcpadapter: server %q: tool %q: task %s still %s%s: collect it later", p.Server, p.Tool, p.TaskID, p.Status, why)
}

// errNeedsStateKey is returned, wrapped in a [*ServerError], when a
// [*PendingTask] or a task's [*Interrupt] stored without [StateOptions.Key]
// is collected, cancelled or resumed on another Adapter than the one that
// made it (or on that one after its Close), and its task lives on its
// server's session: a legacy Streamable HTTP server binds a task to the
// session that made it, and a session's id, which lets whoever holds it
// act on the session, is stored only sealed. Without a key the Adapter
// that made the state keeps the id in memory, and follows the task
// there. It is an [ErrInvalidState]: the state does not match this
// Adapter. Nothing is sent.
var errNeedsStateKey = fmt.Errorf("%w: the task's session was not stored (no Config.State.Key): only the Adapter that made the state can follow the task", ErrInvalidState)

// sessionOf returns the session p's task lives on, for a follow by t of
// the state of id state: p's own, or, for state stored without it, the one
// t's Adapter recorded when it handed that state out (keptSessions), else
// [errNeedsStateKey].
func (p *PendingTask) sessionOf(t *Tool, state string) (string, error) {
	if p.session != "" || !p.unstored {
		return p.session, nil
	}
	if s := t.conn.gen.kept.Session(state, p.Server, p.TaskID); s != "" {
		return s, nil
	}
	return "", serverError(t.server, callToolOp(t.desc.Name), errNeedsStateKey)
}

// rebind returns a copy of p, the task of the state of id state, for a
// follow by t under principal, which reports the task's status afresh
// (sessionOf).
func (p *PendingTask) rebind(t *Tool, principal, state string) (*PendingTask, error) {
	session, err := p.sessionOf(t, state)
	if err != nil {
		return nil, err
	}
	return &PendingTask{Server: p.Server, Tool: p.Tool, MCPName: p.MCPName, TaskID: p.TaskID, stamp: newStamp(),
		a: t.a, gen: t.conn.gen, tool: t, principal: principal, session: session}, nil
}

// collectTask polls the task of p on the current connection of p.Server
// (dialing it if needed) until it ends, within ctx and [Config.TaskWait],
// and returns its result, its failure ([ErrTaskFailed]), an [*Interrupt]
// when the server asks for input (a modern one, or a legacy one over
// Streamable HTTP), or a *PendingTask again when a deadline passed first.
// Cancelling ctx cancels the task. p is checked first, as [Adapter.Resume]
// documents (its seal, its principal, its server and tool).
func (a *Adapter) collectTask(ctx context.Context, p *PendingTask) (*Result, error) {
	t, p, err := a.openTask(ctx, p, "collect")
	if err != nil {
		return nil, err
	}
	started := p
	p, err = p.rebind(t, principalFrom(ctx), p.id)
	if err != nil {
		return nil, err
	}
	info := t.newCall(ctx)
	tc, forget := t.newTaskCall(ctx, &info, p)
	defer forget()
	res, err := tc.follow(ctx)
	return res, started.elsewhere(t, err)
}

// CancelTask asks the server to cancel the task of p (tasks/cancel), after
// the checks of [Adapter.Resume]. Cancellation is the server's to
// honour.
func (a *Adapter) CancelTask(ctx context.Context, p *PendingTask) error {
	t, p, err := a.openTask(ctx, p, "cancel")
	if err != nil {
		return err
	}
	started := p
	if p, err = p.rebind(t, principalFrom(ctx), p.id); err != nil {
		return err
	}
	tc := t.newTask(p)
	defer tc.route.Close()
	if err := tc.f.Cancel(ctx); err != nil {
		return started.elsewhere(t, tc.callErr(err))
	}
	tc.settled()
	return nil
}

// openTask opens and checks stored p before op, and returns its tool and
// p as opened.
func (a *Adapter) openTask(ctx context.Context, p *PendingTask, op string) (*Tool, *PendingTask, error) {
	if p != nil {
		var err error
		if p, err = openState(&a.states, stateTask, p); err != nil {
			return nil, nil, fmt.Errorf("mcpadapter: %s task: %w", op, err)
		}
	}
	if p == nil || p.TaskID == "" || p.MCPName == "" {
		return nil, nil, fmt.Errorf("mcpadapter: %s: not a pending task returned by a tool call", op)
	}
	fail := func(err error) error {
		return fmt.Errorf("mcpadapter: server %q: tool %q: %s task: %w", p.Server, p.Tool, op, err)
	}
	if err := a.states.open(ctx, stateTask, p.seal, p.stamp, p.Server, p.principal); err != nil {
		return nil, nil, fail(err)
	}
	if !a.policy.allows(p.MCPName) {
		return nil, nil, fail(errFiltered)
	}
	t, err := a.catalogs.storedTool(ctx, p.Server, p.Tool, p.MCPName)
	if err != nil {
		return nil, nil, fail(err)
	}
	if err := t.conn.checkPrincipal(ctx, t.desc.Name); err != nil {
		return nil, nil, err
	}
	if !t.conn.tasksOn() {
		return nil, nil, serverError(t.server, callToolOp(t.desc.Name), ErrTaskRequired)
	}
	return t, p, nil
}

// elsewhere adds to err, the failure of a request about p's task sent by
// t on its current connection, why the server may not know the task,
// when its server runs on stdio, answered with an error of its own and
// is not the process the task was started on: a stdio server's tasks end
// with its process, which the Adapter that started the task runs (the
// seeds' rule: a task lives as long as the server's process or
// connection does). Tasks of servers with a durable store are collected
// anywhere: nothing is refused before the server answers.
func (p *PendingTask) elsewhere(t *Tool, err error) error {
	var we *jsonrpc.Error
	var se *ServerError
	if t.conn.cfg.Command == "" || !errors.As(err, &we) || !serverSent(we) || !errors.As(err, &se) ||
		p.tool != nil && p.tool.a == t.a && p.tool.conn.current() == t.conn {
		return err
	}
	return &ServerError{Server: se.Server, Op: se.Op, Err: fmt.Errorf("%w (a stdio server's tasks end with its process, which the Adapter that started the task runs: "+
		"collect or cancel the task on that Adapter, before it closes or the server restarts)", se.Err)}
}

// MarshalJSON implements [json.Marshaler] (see [Resolution]).
func (p PendingTask) MarshalJSON() ([]byte, error) {
	return marshalState(p.a, stateTask, p.seal, p.stamp, p.encode)
}

// encode returns the JSON of p, not sealed.
func (p PendingTask) encode() ([]byte, error) {
	w := stored.Task{Server: p.Server, Tool: p.Tool, MCPName: p.MCPName, TaskID: p.TaskID,
		Status: p.Status, StatusMessage: p.StatusMessage, Principal: p.principal, ID: p.id, Issued: p.issued}
	w.Session, w.SessionNotStored = p.storedSession(p.a)
	return w.Encode()
}

// storedSession returns what the state of p's task, made by a (nil for
// decoded state), stores of its session: the id when a seals it (with
// [StateOptions.Key]); else none, and whether the task lives on one. A
// session id lets whoever holds it act on the session: it is never
// stored in clear.
func (p *PendingTask) storedSession(a *Adapter) (session string, notStored bool) {
	if a != nil && a.states.ring.Sealing() {
		return p.session, false
	}
	return "", p.session != "" || p.unstored
}

// UnmarshalJSON implements [json.Unmarshaler] (see [Resolution]).
func (p *PendingTask) UnmarshalJSON(b []byte) error {
	return unmarshalState("pending task", b, p, func(seal stateSeal) PendingTask { return PendingTask{seal: seal, stamp: seal.stamp()} })
}

// sealState returns the task's seal and stamp (openState).
func (p *PendingTask) sealState() (stateSeal, stamp) { return p.seal, p.stamp }

// decode sets p from payload, with seal; with stamp st when it has an ID
// (an opened task's, its envelope's), else the payload's.
func (p *PendingTask) decode(_ *states, payload []byte, seal stateSeal, st stamp) error {
	fail := func(err error) error {
		return fmt.Errorf("mcpadapter: decoding pending task: %w: %w", ErrInvalidState, err)
	}
	w, err := stored.DecodeTask(payload)
	if err != nil {
		return fail(err)
	}
	if st, err = decodeStamp(st, w.ID, w.Issued); err != nil {
		return fail(err)
	}
	*p = PendingTask{Server: w.Server, Tool: w.Tool, MCPName: w.MCPName, TaskID: w.TaskID,
		Status: w.Status, StatusMessage: w.StatusMessage, principal: w.Principal, session: w.Session, unstored: w.SessionNotStored,
		seal: seal, stamp: st}
	return nil
}
