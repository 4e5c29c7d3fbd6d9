package mcpadapter

import (
	"cmp"

	"github.com/mcpadapter/mcpadapter/internal/stored"
)

// MarshalJSON implements [json.Marshaler] (see [Resolution]): everything a
// resume needs, with the server's request state. It never holds the answers
// of earlier rounds: a resume sends only the answers given to it.
func (i Interrupt) MarshalJSON() ([]byte, error) {
	return marshalState(i.a, stateInterrupt, i.seal, i.stamp, i.encode)
}

// encode returns the JSON of i, not sealed.
func (i Interrupt) encode() ([]byte, error) {
	w := stored.Interrupt{
		Kind:   cmp.Or(i.kind, stored.KindInputRequired), // a zero Interrupt's as before
		Server: i.Server, Tool: i.Tool, MCPName: i.MCPName, Round: i.round, Approved: i.approved, Principal: i.principal,
		ID: i.id, Issued: i.issued, RequestState: i.state,
	}
	if i.task != nil {
		w.TaskID = i.task.TaskID
		w.Session, w.SessionNotStored = i.task.storedSession(i.a)
	}
	b, err := w.Encode(i.requests, i.args)
	if err != nil {
		return nil, errorf("mcpadapter: encoding interrupt: %w", err)
	}
	return b, nil
}

// UnmarshalJSON implements [json.Unmarshaler] (see [Resolution]).
func (i *Interrupt) UnmarshalJSON(b []byte) error {
	return unmarshalState("interrupt", b, i, func(seal stateSeal) Interrupt { return Interrupt{seal: seal, stamp: seal.stamp()} })
}

// sealState returns the interrupt's seal and stamp (openState).
func (i *Interrupt) sealState() (stateSeal, stamp) { return i.seal, i.stamp }

// decode sets i from payload, with seal; with stamp st when it has an ID
// (an opened interrupt's, its envelope's), else the payload's.
func (i *Interrupt) decode(_ *states, payload []byte, seal stateSeal, st stamp) error {
	fail := func(err error) error {
		return errorf("mcpadapter: decoding interrupt: %w: %w", ErrInvalidState, err)
	}
	w, requests, err := stored.DecodeInterrupt(payload, maxRounds)
	if err != nil {
		return fail(err)
	}
	reqs, err := elicitationRequests(requests)
	if err != nil {
		return fail(err)
	}
	if st, err = decodeStamp(st, w.ID, w.Issued); err != nil {
		return fail(err)
	}
	args, err := stored.Arguments(w.Arguments)
	if err != nil {
		return fail(err)
	}
	*i = Interrupt{
		Server: w.Server, Tool: w.Tool, MCPName: w.MCPName, Requests: reqs,
		args: args, state: w.RequestState, round: w.Round, requests: requests,
		kind: w.Kind, approved: w.Approved, principal: w.Principal, seal: seal, stamp: st,
	}
	if w.TaskID != "" {
		i.task = &PendingTask{Server: w.Server, Tool: w.Tool, MCPName: w.MCPName, TaskID: w.TaskID, principal: w.Principal,
			session: w.Session, unstored: w.SessionNotStored}
	}
	return nil
}
