package mcpadapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/callinput"
	"github.com/mcpadapter/mcpadapter/internal/elicit"
)

// interruptJSON is the wire form of an Interrupt.
type interruptJSON struct {
	Version int    `json:"version"` // interruptVersion
	Kind    string `json:"kind"`    // kindInputRequired or kindURLRequired
	Server  string `json:"server"`
	Tool    string `json:"tool"`
	MCPName string `json:"mcpName"`
	Round   int    `json:"round"`
	// Approved: the call was approved ([ApprovalRequired]); believed only
	// from a live interrupt or sealed state.
	Approved bool `json:"approved,omitempty"`
	// Principal: whom the call acted for ([WithPrincipal]); absent in
	// state stored before it was recorded, which then records none.
	Principal string `json:"principal,omitempty"`
	// ID and Issued: the stamp (state.go); absent in state stored before
	// they were recorded.
	ID     string    `json:"id,omitempty"`
	Issued time.Time `json:"issued,omitzero"`

	// TaskID: the task whose questions these are (tasks.go).
	TaskID string `json:"taskId,omitempty"`

	Arguments     json.RawMessage `json:"arguments,omitempty"`
	RequestState  string          `json:"requestState,omitempty"`
	InputRequests json.RawMessage `json:"inputRequests"`
	// InputResponses is never written: answers come only from Resume. It
	// is read to refuse state that carries some.
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
}

const (
	interruptVersion  = 1
	kindInputRequired = "inputRequired"          // an input_required result (SEP-2322)
	kindURLRequired   = "urlElicitationRequired" // a -32042 error
)

// MarshalJSON implements [json.Marshaler]: the interrupt with everything
// needed to resume it in another process, including the call's arguments,
// the server's request state and the principal the call acted for, sealed with [Config.StateKey] when the
// adapter that made it has one. Never the answers of earlier rounds: a
// resume sends only the answers given to it. Store it where the arguments
// may be stored; do not show it to the model. (A value receiver: an
// Interrupt held by value in a checkpoint struct marshals whole too.)
func (i Interrupt) MarshalJSON() ([]byte, error) {
	return marshalState(i.a, stateInterrupt, i.seal, func() ([]byte, error) {
		reqs, err := json.Marshal(i.requests)
		if err != nil {
			return nil, errorf("mcpadapter: encoding interrupt: requests: %w", err)
		}
		w := interruptJSON{
			Version: interruptVersion, Kind: kindInputRequired,
			Server: i.Server, Tool: i.Tool, MCPName: i.MCPName, Round: i.round, Approved: i.approved, Principal: i.principal,
			ID: i.id, Issued: i.issued,
			RequestState: i.state, InputRequests: reqs,
		}
		if i.args != nil {
			b, err := json.Marshal(i.args)
			if err != nil {
				return nil, errorf("mcpadapter: encoding interrupt: arguments: %w", err)
			}
			w.Arguments = b
		}
		if i.retry {
			w.Kind = kindURLRequired
		}
		if i.task != nil {
			w.TaskID = i.task.TaskID
		}
		return json.Marshal(w)
	})
}

// UnmarshalJSON implements [json.Unmarshaler]. The decoded interrupt
// belongs to no adapter: resume it with [Adapter.Resume], which checks it
// against that Adapter. Malformed or oversized JSON is an error wrapping
// [ErrInvalidState], never a panic.
func (i *Interrupt) UnmarshalJSON(b []byte) error {
	payload, seal, err := unsealState("interrupt", b)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		return errorf("mcpadapter: decoding interrupt: %w: %w", ErrInvalidState, err)
	}
	var w interruptJSON
	if err := json.Unmarshal(payload, &w); err != nil {
		return fail(err)
	}
	if w.Version != interruptVersion {
		return fail(fmt.Errorf("unsupported version %d", w.Version))
	}
	if w.Kind != kindInputRequired && w.Kind != kindURLRequired {
		return fail(fmt.Errorf("unknown kind %q", w.Kind))
	}
	if len(w.InputResponses) > 0 && string(w.InputResponses) != "null" {
		return fail(errors.New("stored input responses are not accepted: answers come only from Resume"))
	}
	requests, err := elicit.DecodeRequests(w.InputRequests)
	if err != nil {
		return fail(err)
	}
	if w.Server == "" || w.MCPName == "" || len(requests) == 0 {
		return fail(errors.New("missing server, tool or requests"))
	}
	if w.Round < 1 || w.Round > maxRounds {
		return fail(fmt.Errorf("invalid round %d", w.Round))
	}
	reqs, err := elicitationRequests(requests)
	if err != nil {
		return fail(err)
	}
	st, err := decodeStamp(w.ID, w.Issued)
	if err != nil {
		return fail(err)
	}
	var args map[string]any
	if len(w.Arguments) > 0 && string(w.Arguments) != "null" {
		// decodeObject keeps numbers exact.
		if args, err = callinput.Object(string(w.Arguments)); err != nil {
			return fail(fmt.Errorf("arguments: %w", err))
		}
	}
	*i = Interrupt{
		Server: w.Server, Tool: w.Tool, MCPName: w.MCPName, Requests: reqs,
		args: args, state: w.RequestState, round: w.Round, requests: requests,
		retry: w.Kind == kindURLRequired, approved: w.Approved, principal: w.Principal, seal: seal, stamp: st,
	}
	if w.TaskID != "" {
		i.task = &PendingTask{Server: w.Server, Tool: w.Tool, MCPName: w.MCPName, TaskID: w.TaskID, principal: w.Principal}
	}
	return nil
}
