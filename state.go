package mcpadapter

// Stored state: interrupts, approval requests and paused batches (an
// agent run's among them, package agent) that an application keeps as
// JSON between a pause and its resume.
// Stored state is untrusted input. Decoding never panics and refuses
// oversized state; resuming re-checks what the state names against this
// Adapter (its configuration and the server's catalog) and the Approval
// gate; with Config.StateKey, state is sealed with an HMAC and state that
// is not sealed, or sealed with another key, or altered, is refused.
//
// A sealed value is the envelope {"sealed": "<the state's JSON, as a
// string>", "mac": "<base64 HMAC-SHA256>"}: the payload is a string, so
// that storage which re-encodes JSON (reordering keys, changing escapes)
// cannot change the bytes the MAC covers.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
)

var (
	// ErrTamperedState is returned when [Config.StateKey] is set and stored
	// state (an [*Interrupt], [*ApprovalRequired] or [*PausedCalls], an
	// agent run's included, decoded from JSON) is not sealed with that key, or was
	// altered after it was sealed. Nothing is sent.
	ErrTamperedState = errors.New("mcpadapter: stored state is not sealed with Config.StateKey or was altered")

	// ErrInvalidState is returned when stored state names something this
	// Adapter cannot resume: a server not in [Config.Servers], a tool not in
	// that server's catalog, a tool name that does not match its server and
	// MCP name under this Adapter's naming, or state that is malformed or
	// exceeds the size bound. Nothing is sent.
	ErrInvalidState = errors.New("mcpadapter: invalid stored state")
)

// maxStateBytes bounds the JSON of one stored value.
const maxStateBytes = 32 << 20

// Kinds of stored state: each is sealed under its own name, so that a
// sealed value of one kind is never accepted as another.
const (
	stateInterrupt = "interrupt"
	stateApproval  = "approval"
	stateCalls     = "calls"
)

// A stateSeal records where a value came from: made by an Adapter in this
// process (decoded false), or decoded from JSON, with the payload and the
// MAC of its envelope when it was sealed.
type stateSeal struct {
	decoded bool
	payload []byte // the sealed JSON, when mac is set
	mac     []byte
}

// sealedJSON is the envelope of sealed state.
type sealedJSON struct {
	Sealed *string `json:"sealed"`
	MAC    []byte  `json:"mac"`
}

// stateMAC is the MAC of payload as state of the given kind.
func stateMAC(key []byte, kind string, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mcpadapter/" + kind + "\x00"))
	m.Write(payload)
	return m.Sum(nil)
}

// sealState returns payload sealed with key, or payload itself when key is
// empty.
func sealState(key []byte, kind string, payload []byte) ([]byte, error) {
	if len(key) == 0 {
		return payload, nil
	}
	s := string(payload)
	return json.Marshal(sealedJSON{Sealed: &s, MAC: stateMAC(key, kind, payload)})
}

// marshalState encodes state made by adapter a (nil for decoded state, which
// keeps its original envelope) through encode.
func marshalState(a *Adapter, kind string, s stateSeal, encode func() ([]byte, error)) ([]byte, error) {
	if s.mac != nil {
		p := string(s.payload)
		return json.Marshal(sealedJSON{Sealed: &p, MAC: s.mac})
	}
	b, err := encode()
	if err != nil || a == nil {
		return b, err
	}
	return sealState(a.cfg.StateKey, kind, b)
}

// unsealState returns the payload of stored state b (the envelope's, when
// it is sealed) and its seal. It bounds the size and refuses anything that
// is not a JSON object.
func unsealState(what string, b []byte) ([]byte, stateSeal, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("mcpadapter: decoding %s: %w: %s", what, ErrInvalidState, fmt.Sprintf(format, args...))
	}
	if len(b) > maxStateBytes {
		return nil, stateSeal{}, fail("%d bytes, more than the bound of %d", len(b), maxStateBytes)
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return nil, stateSeal{}, fail("not a JSON object")
	}
	var env sealedJSON
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, stateSeal{}, fail("%v", err)
	}
	if env.Sealed == nil {
		return b, stateSeal{decoded: true}, nil
	}
	if len(env.MAC) == 0 {
		return nil, stateSeal{}, fail("sealed state without a mac")
	}
	payload := []byte(*env.Sealed)
	if t := bytes.TrimSpace(payload); len(t) == 0 || t[0] != '{' {
		return nil, stateSeal{}, fail("sealed payload is not a JSON object")
	}
	return payload, stateSeal{decoded: true, payload: payload, mac: env.MAC}, nil
}

// checkSeal verifies the seal of stored state when the Adapter has a
// [Config.StateKey]: state made in this process needs none; decoded state
// must be sealed with the key.
func (a *Adapter) checkSeal(kind string, s stateSeal) error {
	if !s.decoded || len(a.cfg.StateKey) == 0 {
		return nil
	}
	if s.mac == nil || !hmac.Equal(s.mac, stateMAC(a.cfg.StateKey, kind, s.payload)) {
		return ErrTamperedState
	}
	return nil
}

// trusted reports whether what stored state says about itself (that its
// call was approved) can be believed: it was made in this process, or it is
// sealed (checkSeal passed with a key).
func (a *Adapter) trusted(s stateSeal) bool {
	return !s.decoded || len(a.cfg.StateKey) > 0
}

// storedTool returns the tool that stored state names, from the server's
// catalog: the server must be configured, the tool name must be the one
// this Adapter gives the server's tool mcpName, and the server must list
// that tool.
func (a *Adapter) storedTool(ctx context.Context, server, tool, mcpName string) (*Tool, error) {
	if _, err := a.server(server); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidState, err)
	}
	if mcpName == "" || tool != a.policy.name(server, mcpName) {
		return nil, fmt.Errorf("%w: tool name %q does not match server %q and MCP name %q", ErrInvalidState, tool, server, mcpName)
	}
	c, err := a.connect(ctx, server)
	if err != nil {
		return nil, err
	}
	ts, err := a.catalogs.tools(ctx, c, CacheUse)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if t.MCPName() == mcpName {
			return t, nil
		}
	}
	return nil, fmt.Errorf("%w: server %q lists no tool %q", ErrInvalidState, server, mcpName)
}
