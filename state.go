package mcpadapter

// Stored state: interrupts, approval requests and paused batches (an
// agent run's among them, package agent) that an application keeps as
// JSON between a pause and its resume.
// Stored state is untrusted input. Decoding never panics and refuses
// oversized state; resuming re-checks what the state names against this
// Adapter (its configuration and the server's catalog) and the Approval
// gate; with Config.StateKey, state is sealed with an HMAC and state that
// is not sealed, or sealed with a key not in the ring (StateKey and
// OldStateKeys), or altered, is refused.
//
// Every kind carries a stamp (an ID and an issue time) and goes through
// the same two steps of states: open (seal, age, owner) before anything
// else is checked, claim (once per value, and once across replicas with
// Config.StateClaims) right before anything is sent, so that a resume or
// decision refused for invalid answers or an unreachable server can be
// made again.
//
// A sealed value is the envelope {"sealed": "<the state's JSON, as a
// string>", "mac": "<base64 HMAC-SHA256>"}: the payload is a string, so
// that storage which re-encodes JSON (reordering keys, changing escapes)
// cannot change the bytes the MAC covers.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
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

	// ErrClaimedState is returned when stored state was already resumed
	// or decided: by this value, or, with [Config.StateClaims], by any
	// value of the same ID on any Adapter that shares the store. A
	// [ClaimStore] returns it for an ID claimed before. Nothing is sent.
	ErrClaimedState = errors.New("mcpadapter: stored state was already resumed or decided")

	// ErrExpiredState is returned when [Config.StateMaxAge] is set and
	// stored state was issued longer ago, or records no issue time (state
	// stored by an earlier version). Nothing is sent.
	ErrExpiredState = errors.New("mcpadapter: stored state expired")
)

// A ClaimStore records the IDs of stored state that was applied (resumed,
// approved or rejected), so that each is applied at most once across the
// Adapters, in any process, that share it ([Config.StateClaims]).
// Implement it over a store every replica reaches with a unique key: an
// INSERT that fails on a duplicate key, a Redis SET NX with an expiry.
type ClaimStore interface {
	// Claim records id. It returns nil when id was not recorded before,
	// [ErrClaimedState] (or an error wrapping it) when it was, and any
	// other error when it cannot tell; the resume then fails, sends
	// nothing, and can be tried again. The record must be kept until
	// expires, after which state of that id is refused as expired
	// anyway; the zero time (no [Config.StateMaxAge]) means for ever.
	Claim(ctx context.Context, id string, expires time.Time) error
}

// A stamp identifies one stored state, of any kind: every kind carries
// one, and states checks it (open) and claims it (claim).
type stamp struct {
	id     string       // 32 hex digits; empty in state stored before ids
	issued time.Time    // when the state was made (UTC); zero in state stored before
	used   *atomic.Bool // set when the state is applied; shared by copies of one value
}

// newStamp returns the stamp of state made now.
func newStamp() stamp {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand)
	return stamp{id: hex.EncodeToString(b), issued: time.Now().UTC(), used: new(atomic.Bool)}
}

// decodeStamp returns the stamp of decoded state, refusing an id that this
// package would not have made.
func decodeStamp(id string, issued time.Time) (stamp, error) {
	if _, err := hex.DecodeString(id); err != nil || id != "" && len(id) != 32 {
		return stamp{}, fmt.Errorf("id %.40q is not 32 hex digits", id)
	}
	return stamp{id: id, issued: issued, used: new(atomic.Bool)}, nil
}

// ID returns the state's ID: 32 hex digits, random, made with the state
// (empty for state stored before IDs were recorded). [Config.StateClaims]
// claims it when the state is applied.
func (s stamp) ID() string { return s.id }

// Issued returns when the state was made (the zero time for state stored
// before issue times were recorded); [Config.StateMaxAge] counts from it.
func (s stamp) Issued() time.Time { return s.issued }

// maxStateBytes bounds the JSON of one stored value.
const maxStateBytes = 32 << 20

// Kinds of stored state: each is sealed under its own name, so that a
// sealed value of one kind is never accepted as another.
const (
	stateInterrupt = "interrupt"
	stateApproval  = "approval"
	stateCalls     = "calls"
	stateTask      = "task"
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
// encodes with [Config.StateKey], checks state given back to it (its seal,
// its age, then whose it is) before anything is resumed or decided, and
// claims it before anything is sent. It is built once, in New, from the
// validated configuration.
type states struct {
	keys         [][]byte        // Config.StateKey, then Config.OldStateKeys: the first seals, each opens; none: nothing is sealed
	maxAge       time.Duration   // Config.StateMaxAge; 0: no limit
	claims       ClaimStore      // Config.StateClaims; nil: once per value only
	perPrincipal map[string]bool // the servers whose connections are per principal
}

// newStates returns the guard of the state stored by an adapter of the
// validated configuration cfg.
func newStates(cfg *Config) states {
	s := states{maxAge: cfg.StateMaxAge, claims: cfg.StateClaims, perPrincipal: make(map[string]bool)}
	if len(cfg.StateKey) > 0 {
		s.keys = append([][]byte{cfg.StateKey}, cfg.OldStateKeys...)
	}
	for name, srv := range cfg.Servers {
		if srv.perPrincipal() {
			s.perPrincipal[name] = true
		}
	}
	return s
}

// seal returns payload sealed as state of kind with the current key, or
// payload itself when there is no key.
func (s *states) seal(kind string, payload []byte) ([]byte, error) {
	if len(s.keys) == 0 {
		return payload, nil
	}
	p := string(payload)
	return json.Marshal(sealedJSON{Sealed: &p, MAC: stateMAC(s.keys[0], kind, payload)})
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
		return errorf("mcpadapter: decoding %s: %w: %s", what, ErrInvalidState, fmt.Sprintf(format, args...))
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

// open checks stored state of kind, with seal and stamp st, that a call of
// server made for principal owner left, before it is resumed or decided
// under ctx: the seal (checkSeal), the stamp (checkStamp), then the
// principal (checkOwner).
func (s *states) open(ctx context.Context, kind string, seal stateSeal, st stamp, server, owner string) error {
	if err := s.checkSeal(kind, seal); err != nil {
		return err
	}
	if err := s.checkStamp(st); err != nil {
		return err
	}
	return s.checkOwner(ctx, server, owner)
}

// checkSeal verifies the seal of stored state when there is a
// [Config.StateKey]: state made in this process needs none; decoded state
// must be sealed with a key of the ring.
func (s *states) checkSeal(kind string, seal stateSeal) error {
	if !seal.decoded || len(s.keys) == 0 {
		return nil
	}
	for _, k := range s.keys {
		if seal.mac != nil && hmac.Equal(seal.mac, stateMAC(k, kind, seal.payload)) {
			return nil
		}
	}
	return ErrTamperedState
}

// checkStamp refuses state that [Config.StateMaxAge] rules out, and state
// without an ID when there is a claim store, which could not claim it.
func (s *states) checkStamp(st stamp) error {
	switch {
	case s.claims != nil && st.id == "":
		return fmt.Errorf("%w: no id (stored by an earlier version), so it cannot be claimed", ErrInvalidState)
	case s.maxAge > 0 && st.issued.IsZero():
		return fmt.Errorf("%w: no issue time (stored by an earlier version)", ErrExpiredState)
	case s.maxAge > 0 && time.Since(st.issued) > s.maxAge:
		return fmt.Errorf("%w: issued %s ago, StateMaxAge is %s", ErrExpiredState, time.Since(st.issued).Round(time.Second), s.maxAge)
	}
	return nil
}

// claim marks the state of stamp st applied, right before it is: once per
// value, and with a claim store once per ID across the Adapters sharing
// it. A store that cannot tell leaves the value unclaimed.
func (s *states) claim(ctx context.Context, st stamp) error {
	if st.used == nil || !st.used.CompareAndSwap(false, true) {
		return ErrClaimedState
	}
	if s.claims == nil {
		return nil
	}
	var expires time.Time
	if s.maxAge > 0 {
		expires = st.issued.Add(s.maxAge)
	}
	switch err := s.claims.Claim(ctx, st.id, expires); {
	case err == nil:
		return nil
	case errors.Is(err, ErrClaimedState):
		return ErrClaimedState
	default:
		st.used.Store(false)
		return fmt.Errorf("StateClaims: %w", err)
	}
}

// trusted reports whether what stored state says about itself (that its
// call was approved) can be believed: it was made in this process, or it
// is sealed (checkSeal passed with a key) and can be applied only once
// (a claim store), so that an approval is not replayed.
func (s *states) trusted(seal stateSeal) bool {
	return !seal.decoded || len(s.keys) > 0 && s.claims != nil
}

// storedTool returns the tool that stored state names, from the server's
// catalog: the server must be configured, the tool name must be the one
// the adapter gives the server's tool mcpName, and the server must list
// that tool.
func (cs *catalogs) storedTool(ctx context.Context, server, tool, mcpName string) (*Tool, error) {
	a := cs.a
	if _, err := a.server(server); err != nil {
		return nil, errorf("%w: %w", ErrInvalidState, err)
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
