package mcpadapter

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// interruptJSON is the wire form of an Interrupt.
type interruptJSON struct {
	Version int    `json:"version"` // interruptVersion
	Kind    string `json:"kind"`    // kindInputRequired or kindURLRequired
	Server  string `json:"server"`
	Tool    string `json:"tool"`
	MCPName string `json:"mcpName"`
	Round   int    `json:"round"`

	Arguments      json.RawMessage      `json:"arguments,omitempty"`
	RequestState   string               `json:"requestState,omitempty"`
	InputRequests  mcp.InputRequestMap  `json:"inputRequests"`
	InputResponses mcp.InputResponseMap `json:"inputResponses,omitempty"` // kindURLRequired: the failed request's
}

const (
	interruptVersion  = 1
	kindInputRequired = "inputRequired"          // an input_required result (SEP-2322)
	kindURLRequired   = "urlElicitationRequired" // a -32042 error
)

// MarshalJSON implements [json.Marshaler]: the interrupt with everything
// needed to resume it in another process, including the call's arguments
// and the server's request state. Store it where the arguments may be
// stored; do not show it to the model. (A value receiver: an Interrupt
// held by value in a checkpoint struct marshals whole too.)
func (i Interrupt) MarshalJSON() ([]byte, error) {
	w := interruptJSON{
		Version: interruptVersion, Kind: kindInputRequired,
		Server: i.Server, Tool: i.Tool, MCPName: i.MCPName, Round: i.round,
		RequestState: i.state, InputRequests: i.requests,
	}
	if i.args != nil {
		b, err := json.Marshal(i.args)
		if err != nil {
			return nil, fmt.Errorf("mcpadapter: encoding interrupt: arguments: %w", err)
		}
		w.Arguments = b
	}
	if i.retry {
		w.Kind, w.InputResponses = kindURLRequired, i.responses
	}
	return json.Marshal(w)
}

// UnmarshalJSON implements [json.Unmarshaler]. The decoded interrupt
// belongs to no adapter: resume it with [Adapter.Resume].
func (i *Interrupt) UnmarshalJSON(b []byte) error {
	var w interruptJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcpadapter: decoding interrupt: %w", err)
	}
	if w.Version != interruptVersion {
		return fmt.Errorf("mcpadapter: decoding interrupt: unsupported version %d", w.Version)
	}
	if w.Kind != kindInputRequired && w.Kind != kindURLRequired {
		return fmt.Errorf("mcpadapter: decoding interrupt: unknown kind %q", w.Kind)
	}
	if w.Server == "" || w.MCPName == "" || len(w.InputRequests) == 0 {
		return errors.New("mcpadapter: decoding interrupt: missing server, tool or requests")
	}
	if w.Round < 1 || w.Round > maxRounds {
		return fmt.Errorf("mcpadapter: decoding interrupt: invalid round %d", w.Round)
	}
	reqs, err := elicitationRequests(w.InputRequests)
	if err != nil {
		return fmt.Errorf("mcpadapter: decoding interrupt: %w", err)
	}
	var args map[string]any
	if len(w.Arguments) > 0 && string(w.Arguments) != "null" {
		// decodeObject keeps numbers exact.
		if args, err = decodeObject(string(w.Arguments)); err != nil {
			return fmt.Errorf("mcpadapter: decoding interrupt: arguments: %w", err)
		}
	}
	*i = Interrupt{
		Server: w.Server, Tool: w.Tool, MCPName: w.MCPName, Requests: reqs,
		args: args, state: w.RequestState, round: w.Round, requests: w.InputRequests,
		retry: w.Kind == kindURLRequired, responses: w.InputResponses,
	}
	return nil
}
