// Package stored is the one home of the JSON wire forms of the root
// package's stored state (an interrupt, an approval request, a pending
// task, a paused batch of tool calls), and of the checks their decoding
// makes. Stored JSON is a promise across processes and versions: each form
// carries its version, and a change to one is read here. The root package
// seals and unseals them (internal/seal) and wraps their errors.
package stored

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/callinput"
)

// Approval is the wire form of the root package's ApprovalRequired.
type Approval struct {
	Version   int             `json:"version"` // approvalVersion
	Kind      string          `json:"kind"`    // kindApproval
	ID        string          `json:"id"`
	Issued    time.Time       `json:"issued,omitzero"` // absent in state stored before it was recorded
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	MCPName   string          `json:"mcpName"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Principal string          `json:"principal,omitempty"` // absent in state stored before it was recorded
}

const (
	approvalVersion = 1
	kindApproval    = "approvalRequired"
)

// Encode returns the JSON of w, of the current version and kind, with the
// call's arguments (nil: none).
func (w Approval) Encode(args map[string]any) ([]byte, error) {
	w.Version, w.Kind = approvalVersion, kindApproval
	var err error
	if w.Arguments, err = EncodeArguments(args); err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// EncodeArguments returns the JSON of a call's arguments for storing (an
// approval request's, an interrupt's), or nil for nil: none.
func EncodeArguments(args map[string]any) (json.RawMessage, error) {
	if args == nil {
		return nil, nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	return b, nil
}

// DecodeApproval decodes payload, a stored approval request, and checks
// it: its version and kind, a server and a tool present, and its
// arguments ([Arguments]). The stamp (ID, Issued) is the caller's to
// check.
func DecodeApproval(payload []byte) (Approval, map[string]any, error) {
	var w Approval
	if err := json.Unmarshal(payload, &w); err != nil {
		return w, nil, err
	}
	if w.Version != approvalVersion {
		return w, nil, fmt.Errorf("unsupported version %d", w.Version)
	}
	if w.Kind != kindApproval {
		return w, nil, fmt.Errorf("kind %q, want %q", w.Kind, kindApproval)
	}
	if w.Server == "" || w.MCPName == "" {
		return w, nil, errors.New("missing server or tool")
	}
	args, err := Arguments(w.Arguments)
	if err != nil {
		return w, nil, err
	}
	return w, args, nil
}

// Arguments decodes the stored arguments of a call (an approval request's,
// an interrupt's): a JSON object, decoded by [callinput.Object], which
// keeps numbers exact; nil when raw is absent or null.
func Arguments(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	args, err := callinput.Object(string(raw))
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	return args, nil
}
