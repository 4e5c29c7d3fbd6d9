package mcpadapter

// PendingTask: a task a call stopped waiting for, as stored state.

import (
	"context"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/stored"
)

// A PendingTask is returned (as an error) by a tool call that runs as a
// task on the server (see [TaskMode]) when the call stopped waiting before
// the task ended: its context's deadline or [Config.TaskWait] passed, or
// [WithPendingTask] asked for it at once. The task goes on on the server.
// Find it with [errors.As]:
//
//	var pt *mcpadapter.PendingTask  if errors.As(err, &pt) {
//
// b, _ := json.Marshal(pt) // store it; later, anywhere:          res,
// err = a.Resume(ctx, decoded, mcpadapter.Collected())       } More in
// docs/reference.md, "PendingTask".
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
	seal      stateSeal
}

// Error implements error.
func (p *PendingTask) Error() string {
	return fmt.Sprintf("mcpadapter: server %q: tool %q: task %s still %s: collect it later", p.Server, p.Tool, p.TaskID, p.Status)
}

// rebind returns a copy of p for a follow by t under principal, which
// reports the task's status afresh.
func (p *PendingTask) rebind(t *Tool, principal string) *PendingTask {
	return &PendingTask{Server: p.Server, Tool: p.Tool, MCPName: p.MCPName, TaskID: p.TaskID, stamp: newStamp(),
		a: t.a, gen: t.conn.gen, tool: t, principal: principal, session: p.session}
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
	info := t.newCall(ctx)
	tc, forget := t.newTaskCall(ctx, &info, p.rebind(t, principalFrom(ctx)))
	defer forget()
	return tc.follow(ctx)
}

// CancelTask asks the server to cancel the task of p (tasks/cancel), after
// the checks of [Adapter.Resume]. Cancellation is the server's to
// honour.
func (a *Adapter) CancelTask(ctx context.Context, p *PendingTask) error {
	t, p, err := a.openTask(ctx, p, "cancel")
	if err != nil {
		return err
	}
	tc := t.newTask(p.rebind(t, principalFrom(ctx)))
	defer tc.route.Close()
	if err := tc.f.Cancel(ctx); err != nil {
		return tc.callErr(err)
	}
	tc.route.Settled(tc.p.TaskID)
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

// MarshalJSON implements [json.Marshaler] (see [Resolution]).
func (p PendingTask) MarshalJSON() ([]byte, error) {
	return marshalState(p.a, stateTask, p.seal, p.stamp, p.encode)
}

// encode returns the JSON of p, not sealed.
func (p PendingTask) encode() ([]byte, error) {
	return stored.Task{Server: p.Server, Tool: p.Tool, MCPName: p.MCPName, TaskID: p.TaskID,
		Status: p.Status, StatusMessage: p.StatusMessage, Principal: p.principal, Session: p.session, ID: p.id, Issued: p.issued}.Encode()
}

// UnmarshalJSON implements [json.Unmarshaler] (see [Resolution]).
func (p *PendingTask) UnmarshalJSON(b []byte) error {
	payload, seal, err := unsealState("pending task", b)
	if err != nil {
		return err
	}
	if seal.sealed != nil {
		*p = PendingTask{seal: seal, stamp: seal.stamp()}
		return nil
	}
	return p.decode(nil, payload, seal, stamp{})
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
	if st.used == nil {
		if st, err = decodeStamp(w.ID, w.Issued); err != nil {
			return fail(err)
		}
	}
	*p = PendingTask{Server: w.Server, Tool: w.Tool, MCPName: w.MCPName, TaskID: w.TaskID,
		Status: w.Status, StatusMessage: w.StatusMessage, principal: w.Principal, session: w.Session, seal: seal, stamp: st}
	return nil
}
