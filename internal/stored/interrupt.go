package stored

// A stored interrupt: the JSON the root package's Interrupt marshals to,
// before sealing, and the checks its decoding makes.

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/elicit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Interrupt is the wire form of the root package's Interrupt.
type Interrupt struct {
	Version int    `json:"version"` // interruptVersion
	Kind    string `json:"kind"`    // KindInputRequired, KindURLRequired or KindLive
	Server  string `json:"server"`
	Tool    string `json:"tool"`
	MCPName string `json:"mcpName"`
	Round   int    `json:"round"`
	// Approved: the call was approved (the root package's
	// ApprovalRequired); believed only from a live interrupt or sealed
	// state.
	Approved bool `json:"approved,omitempty"`
	// Principal: whom the call acted for; absent in state stored before
	// it was recorded, which then records none.
	Principal string `json:"principal,omitempty"`
	// ID and Issued: the stamp; absent in state stored before they were
	// recorded.
	ID     string    `json:"id,omitempty"`
	Issued time.Time `json:"issued,omitzero"`

	// TaskID: the task whose questions these are; Session: the legacy
	// Streamable HTTP session the task lives on, stored sealed only;
	// SessionNotStored: it lives on one whose id was not stored (Task).
	TaskID           string `json:"taskId,omitempty"`
	Session          string `json:"session,omitempty"`
	SessionNotStored bool   `json:"sessionNotStored,omitempty"`

	Arguments     json.RawMessage `json:"arguments,omitempty"`
	RequestState  string          `json:"requestState,omitempty"`
	InputRequests json.RawMessage `json:"inputRequests"`
	// InputResponses is never written: answers come only from a resume.
	// It is read to refuse state that carries some.
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
}

// interruptVersion is the version of [Interrupt] that [Interrupt.Encode]
// writes and [DecodeInterrupt] reads.
const interruptVersion = 1

// The kinds of a stored interrupt: what the server answered the call with.
const (
	KindInputRequired = "inputRequired"          // an input_required result (SEP-2322)
	KindURLRequired   = "urlElicitationRequired" // a -32042 error
	KindLive          = "liveElicitation"        // a legacy server's elicitation/create request during the call
)

// Encode returns the JSON of w, of the current version, with the server's
// requests and the call's arguments (nil: none).
func (w Interrupt) Encode(requests mcp.InputRequestMap, args map[string]any) ([]byte, error) {
	reqs, err := json.Marshal(requests)
	if err != nil {
		return nil, fmt.Errorf("requests: %w", err)
	}
	w.Version, w.InputRequests = interruptVersion, reqs
	if w.Arguments, err = EncodeArguments(args); err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// DecodeInterrupt decodes payload, a stored interrupt, and checks it: its
// version and kind, no stored answers, its requests
// ([elicit.DecodeRequests]), a server, a tool and requests present, and a
// round between 1 and maxRounds. Its arguments are [Arguments]' to decode.
func DecodeInterrupt(payload []byte, maxRounds int) (Interrupt, mcp.InputRequestMap, error) {
	var w Interrupt
	if err := json.Unmarshal(payload, &w); err != nil {
		return w, nil, err
	}
	if w.Version != interruptVersion {
		return w, nil, fmt.Errorf("unsupported version %d", w.Version)
	}
	if w.Kind != KindInputRequired && w.Kind != KindURLRequired && w.Kind != KindLive {
		return w, nil, fmt.Errorf("unknown kind %q", w.Kind)
	}
	if len(w.InputResponses) > 0 && string(w.InputResponses) != "null" {
		return w, nil, errors.New("stored input responses are not accepted: answers come only from Resume")
	}
	requests, err := elicit.DecodeRequests(w.InputRequests)
	if err != nil {
		return w, nil, err
	}
	if w.Server == "" || w.MCPName == "" || len(requests) == 0 {
		return w, nil, errors.New("missing server, tool or requests")
	}
	if w.Round < 1 || w.Round > maxRounds {
		return w, nil, fmt.Errorf("invalid round %d", w.Round)
	}
	return w, requests, nil
}
