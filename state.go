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

// A states guards the state an Adapter stores: it seals what the Adapter
// encodes with [Config.StateKey], and checks state given back to it (its
// seal, then whose it is) before anything is resumed or decided. It is
// built once, in New, from the validated configuration.
type states struct {
	key          []byte          // Config.StateKey; empty: nothing is sealed
	perPrincipal map[string]bool // the servers whose connections are per principal
}

// newStates returns the guard of state stored under key by an adapter of
// servers.
func newStates(key []byte, servers map[string]Server) states {
	s := states{key: key, perPrincipal: make(map[string]bool)}
	for name, srv := range servers {
		if srv.perPrincipal() {
			s.perPrincipal[name] = true
		}
	}
	return s
}

// seal returns payload sealed as state of kind, or payload itself when
// there is no key.
func (s *states) seal(kind string, payload []byte) ([]byte, error) {
	if len(s.key) == 0 {
		return payload, nil
	}
	p := string(payload)
	return json.Marshal(sealedJSON{Sealed: &p, MAC: stateMAC(s.key, kind, payload)})
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
	return a.states.seal(kind, b)
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

// open checks stored state of kind, with seal, that a call of server made
// for principal owner left, before it is resumed or decided under ctx:
// the seal (checkSeal), then the principal (checkOwner).
func (s *states) open(ctx context.Context, kind string, seal stateSeal, server, owner string) error {
	if err := s.checkSeal(kind, seal); err != nil {
		return err
	}
	return s.checkOwner(ctx, server, owner)
}

// checkSeal verifies the seal of stored state when there is a
// [Config.StateKey]: state made in this process needs none; decoded state
// must be sealed with the key.
func (s *states) checkSeal(kind string, seal stateSeal) error {
	if !seal.decoded || len(s.key) == 0 {
		return nil
	}
	if seal.mac == nil || !hmac.Equal(seal.mac, stateMAC(s.key, kind, seal.payload)) {
		return ErrTamperedState
	}
	return nil
}

// trusted reports whether what stored state says about itself (that its
// call was approved) can be believed: it was made in this process, or it is
// sealed (checkSeal passed with a key).
func (s *states) trusted(seal stateSeal) bool {
	return !seal.decoded || len(s.key) > 0
}

// storedTool returns the tool that stored state names, from the server's
// catalog: the server must be configured, the tool name must be the one
// the adapter gives the server's tool mcpName, and the server must list
// that tool.
func (cs *catalogs) storedTool(ctx context.Context, server, tool, mcpName string) (*Tool, error) {
	a := cs.a
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
	ts, err := cs.tools(ctx, c, CacheUse)
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
