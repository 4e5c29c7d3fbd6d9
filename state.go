package mcpadapter

// Stored state: interrupts, approval requests and paused batches (an
// agent run's among them, package agent) that an application keeps as
// JSON between a pause and its resume.
// Stored state is untrusted input. Decoding never panics and refuses
// oversized state; resuming re-checks what the state names against this
// Adapter (its configuration and the server's catalog) and the Approval
// gate; with Config.State.Key, state is sealed (encrypted and
// authenticated) and state that is not sealed, or sealed with a key not
// in the ring (State.Key and State.OldKeys), or altered, is refused.
//
// A value decoded from sealed JSON holds its seal, ID and issue time
// only until the Adapter it is given to opens it (openState): a copy,
// decoded from the seal's payload, goes on.
//
// Every kind carries a stamp (an ID and an issue time) and goes through
// the same two steps of states: open (seal, age, owner) before anything
// else is checked, claim (once per value, and once across replicas with
// Config.State.Claims) right before anything is sent, so that a resume or
// decision refused for invalid answers or an unreachable server can be
// made again.
//
// The envelope of a sealed value, the key ring, the age and claim checks
// are internal/seal's.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/seal"
)

var (
	// errExpiredState (an ErrInvalidState) is state issued longer ago
	// than [StateOptions.MaxAge], or without an issue time.
	errExpiredState = seal.ErrExpired

	// errOldStateFormat (an ErrInvalidState) is state sealed in the format
	// of earlier versions.
	errOldStateFormat = seal.ErrOldFormat
)

// A ClaimStore records the IDs of stored state that was applied (resumed,
// approved or rejected), so that each is applied at most once across the
// Adapters, in any process, that share it ([StateOptions.Claims]).
// Implement it over a store every replica reaches with a unique key: an
// INSERT that fails on a duplicate key, a Redis SET NX with an expiry.
type ClaimStore interface {
	// Claim records id. It returns nil when id was not recorded before,
	// [ErrClaimedState] (or an error wrapping it) when it was, and any
	// other error when it cannot tell; the resume then fails, sends
	// nothing, and can be tried again. The record must be kept until
	// expires, after which state of that id is refused as expired
	// anyway; the zero time (no [StateOptions.MaxAge]) means for ever.
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
	return stamp{id: seal.NewID(), issued: time.Now().UTC(), used: new(atomic.Bool)}
}

// decodeStamp returns the stamp of decoded state: st when it has a flag
// (an opened value's, its envelope's), else that of id and issued, the
// payload's, refusing an id that this package would not have made.
func decodeStamp(st stamp, id string, issued time.Time) (stamp, error) {
	if st.used != nil {
		return st, nil
	}
	if err := seal.CheckID(id); err != nil {
		return stamp{}, err
	}
	return stamp{id: id, issued: issued, used: new(atomic.Bool)}, nil
}

// ID returns the state's ID: 32 random hex digits, made with the state
// (empty for state stored before IDs were recorded), which a resume claims
// (see [Resolution]).
func (s stamp) ID() string { return s.id }

// Issued returns when the state was made (the zero time for state stored
// before issue times were recorded); [StateOptions.MaxAge] counts from it.
func (s stamp) Issued() time.Time { return s.issued }

// maxStateBytes bounds the JSON of one stored value.
const maxStateBytes = seal.MaxBytes

// Kinds of stored state: each is sealed under its own name, so that a
// sealed value of one kind is never accepted as another.
const (
	stateInterrupt = "interrupt"
	stateApproval  = "approval"
	stateCalls     = "calls"
	stateTask      = "task"
)

// A stateSeal records where a value came from: made by an Adapter in this
// process (decoded false), or decoded from JSON, with its envelope when it
// was sealed, and the guard that opened it (a copy decoded from the
// envelope's payload).
type stateSeal struct {
	decoded bool
	sealed  *seal.Sealed // nil: not sealed
	opened  *states      // nil: not opened
}

// stamp returns the stamp of a value sealed as s, before it is opened:
// the ID and issue time its envelope shows.
func (s stateSeal) stamp() stamp {
	return stamp{id: s.sealed.ID(), issued: s.sealed.Issued(), used: new(atomic.Bool)}
}

// A sealedKind is a kind of stored state, as openState opens it.
type sealedKind[T any] interface {
	*T
	// sealState returns the value's seal and stamp.
	sealState() (stateSeal, stamp)
	// decode sets the value from payload, opened by s; its seal is sl and
	// its stamp st, the envelope's (the payload's is the same).
	decode(s *states, payload []byte, sl stateSeal, st stamp) error
}

// openState returns v, decoded from JSON as state of kind, opened by s: v
// itself when it is not sealed or s opened it, else a copy decoded from
// the payload of its seal, which must be sealed with a key of s
// ([ErrTamperedState]). v is not changed, so that one value may be given
// to several resumes at once; the copy shares its stamp, so that it is
// applied once.
func openState[T any, P sealedKind[T]](s *states, kind string, v P) (P, error) {
	sl, st := v.sealState()
	if sl.sealed == nil || sl.opened == s {
		return v, nil
	}
	payload, err := s.ring.Open(kind, sl.sealed)
	if err != nil {
		return nil, err
	}
	o := P(new(T))
	sl.opened = s
	if err := o.decode(s, payload, sl, st); err != nil {
		return nil, err
	}
	return o, nil
}

// A states guards the state an Adapter stores: it seals what the Adapter
// encodes with [StateOptions.Key], checks state given back to it (its seal,
// its age, then whose it is) before anything is resumed or decided, and
// claims it before anything is sent. It is built once, in New, from the
// validated configuration.
type states struct {
	ring         seal.Ring       // Config.State.Key, then Config.State.OldKeys; Config.State.MaxAge; Config.State.Claims
	perPrincipal map[string]bool // the servers whose connections are per principal
}

// newStates returns the guard of the state stored by an adapter of the
// validated configuration cfg.
func newStates(cfg *Config) states {
	var keys [][]byte
	if len(cfg.State.Key) > 0 {
		keys = append([][]byte{cfg.State.Key}, cfg.State.OldKeys...)
	}
	s := states{ring: seal.NewRing(keys, cfg.State.MaxAge, cfg.State.Claims), perPrincipal: make(map[string]bool)}
	for name, srv := range cfg.Servers {
		if srv.perPrincipal() {
			s.perPrincipal[name] = true
		}
	}
	return s
}

// marshalState encodes state of stamp st made by adapter a (nil for
// decoded state, which keeps its original envelope) through encode.
func marshalState(a *Adapter, kind string, s stateSeal, st stamp, encode func() ([]byte, error)) ([]byte, error) {
	if s.sealed != nil {
		return s.sealed.Marshal()
	}
	b, err := encode()
	if err != nil || a == nil {
		return b, err
	}
	return a.states.ring.Seal(kind, st.id, st.issued, b)
}

// unsealState returns the payload of stored state b and its seal: when
// it is sealed, no payload, until an Adapter opens it (openState). It
// bounds the size and refuses anything that is not a JSON object, and
// state sealed in the old format (errOldStateFormat).
func unsealState(what string, b []byte) ([]byte, stateSeal, error) {
	payload, sealed, err := seal.Unseal(b)
	if errors.Is(err, seal.ErrOldFormat) {
		return nil, stateSeal{}, errorf("mcpadapter: decoding %s: %w: %w", what, ErrInvalidState, err)
	}
	if err != nil {
		return nil, stateSeal{}, errorf("mcpadapter: decoding %s: %w: %s", what, ErrInvalidState, err.Error())
	}
	return payload, stateSeal{decoded: true, sealed: sealed}, nil
}

// unmarshalState sets v, stored state (what, for messages) decoded from
// its JSON b: from the payload when b is not sealed; else to sealedOnly of
// the seal, a value that shows the seal's stamp only, until an Adapter
// opens it (openState).
func unmarshalState[T any, P sealedKind[T]](what string, b []byte, v P, sealedOnly func(stateSeal) T) error {
	payload, seal, err := unsealState(what, b)
	if err != nil {
		return err
	}
	if seal.sealed != nil {
		*v = sealedOnly(seal)
		return nil
	}
	return v.decode(nil, payload, seal, stamp{})
}

// open checks stored state of kind, with seal and stamp st, that a call of
// server made for principal owner left, before it is resumed or decided
// under ctx: the seal (checkSeal), the stamp (its age, its id), then the
// principal (checkOwner).
func (s *states) open(ctx context.Context, kind string, seal stateSeal, st stamp, server, owner string) error {
	if err := s.checkSeal(kind, seal); err != nil {
		return err
	}
	if err := s.ring.Check(st.id, st.issued); err != nil {
		return err
	}
	return s.checkOwner(ctx, server, owner)
}

// checkSeal verifies the seal of stored state: state made in this
// process needs none; decoded sealed state must have been opened by s
// (openState); decoded state not sealed is refused when there is a
// [StateOptions.Key]. kind is the state's, for the message.
func (s *states) checkSeal(kind string, seal stateSeal) error {
	switch {
	case !seal.decoded || seal.opened == s:
		return nil
	case seal.sealed != nil:
		return fmt.Errorf("%w: %s not opened by this Adapter", ErrTamperedState, kind)
	case s.ring.Sealing():
		return fmt.Errorf("%w: %s not sealed", ErrTamperedState, kind)
	}
	return nil
}

// claim marks the state of stamp st applied, right before it is: once per
// value, and with a claim store once per ID across the Adapters sharing
// it. A store that cannot tell leaves the value unclaimed.
func (s *states) claim(ctx context.Context, st stamp) error {
	return s.ring.Claim(ctx, st.id, st.used)
}

// trusted reports whether what stored state says about itself (that its
// call was approved) can be believed: it was made in this process, or it
// is sealed (checkSeal passed with a key) and can be applied only once
// (a claim store), so that an approval is not replayed.
func (s *states) trusted(seal stateSeal) bool {
	return !seal.decoded || s.ring.Trusted()
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

// Unseal opens v, stored state decoded from JSON sealed with
// [StateOptions.Key], in place, so that it can be read before it is
// settled: the questions of an [*Interrupt], the call of an
// [*ApprovalRequired] (to show a reviewer, who may edit its arguments),
// the task of a [*PendingTask], the batch of a [*PausedCalls]. Until then
// a decoded sealed value shows only its ID and Issued: its JSON holds
// nothing else in clear. Unseal checks the seal only: a key of this
// Adapter ([StateOptions.Key], [StateOptions.OldKeys]) must have sealed it,
// else [ErrTamperedState]. The entry points that settle state open it
// themselves (docs/reference.md, "Pausing and resuming"). v is an
// *Interrupt, an *ApprovalRequired, a *PendingTask or a *PausedCalls.
func (a *Adapter) Unseal(v any) error {
	var err error
	switch v := v.(type) {
	case *Interrupt:
		err = unsealInto(&a.states, stateInterrupt, v)
	case *ApprovalRequired:
		err = unsealInto(&a.states, stateApproval, v)
	case *PendingTask:
		err = unsealInto(&a.states, stateTask, v)
	case *PausedCalls:
		err = unsealInto(&a.states, stateCalls, v)
	default:
		return fmt.Errorf("mcpadapter: unseal: %T is not stored state", v)
	}
	if err != nil {
		return errorf("mcpadapter: unseal: %w", err)
	}
	return nil
}

// unsealInto opens v (openState) in place.
func unsealInto[T any, P sealedKind[T]](s *states, kind string, v P) error {
	if v == nil {
		return fmt.Errorf("a nil %T", v)
	}
	o, err := openState(s, kind, v)
	if err == nil {
		*v = *o
	}
	return err
}

// Unseal opens p, a batch decoded from sealed JSON, in place, as
// [Adapter.Unseal] does, with the Adapter of the tools of s whose key
// sealed it. An agent that stores its runs in a batch's State (package
// agent) reads them so before it resumes them.
func (s Toolset) Unseal(p *PausedCalls) error {
	o, err := s.openCalls(p)
	if err != nil {
		return errorf("mcpadapter: unseal: %w", err)
	}
	if o != nil {
		*p = *o
	}
	return nil
}
