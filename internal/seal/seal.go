// Package seal seals the state the adapter stores (the root package's
// state.go): the envelope {"sealed": "<the state's JSON, as a string>",
// "mac": "<base64 HMAC-SHA256>"} under a ring of keys (the first seals,
// each opens), each value sealed under its kind so that one kind is never
// accepted as another; the decoding bound; and the checks of a value's
// stamp, its ID and issue time, against a maximum age and a claim store.
// The payload is a string, so that storage which re-encodes JSON
// (reordering keys, changing escapes) cannot change the bytes the MAC
// covers. It knows nothing of the adapter.
package seal

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

// The errors of stored state; the root package exports them under its own
// names, whose comments document them.
var (
	// ErrTampered is the root's ErrTamperedState: not sealed with a key of the ring, or altered.
	ErrTampered = errors.New("mcpadapter: stored state is not sealed with Config.StateKey or was altered")
	// ErrInvalid is the root's ErrInvalidState: malformed, oversized, or naming what cannot be resumed.
	ErrInvalid = errors.New("mcpadapter: invalid stored state")
	// ErrClaimed is the root's ErrClaimedState: applied before.
	ErrClaimed = errors.New("mcpadapter: stored state was already resumed or decided")
	// ErrExpired is the root's ErrExpiredState: older than the maximum age, or without an issue time.
	ErrExpired = errors.New("mcpadapter: stored state expired")
)

// MaxBytes bounds the JSON of one stored value.
const MaxBytes = 32 << 20

// A Claimer records the IDs of the state applied, so that each is applied
// once across the replicas sharing it: Claim returns nil for an id not
// claimed before, [ErrClaimed] (or an error wrapping it) for one that was,
// and any other error when it cannot tell.
type Claimer interface {
	Claim(ctx context.Context, id string, expires time.Time) error
}

// A Ring seals and opens stored state, and checks and claims its stamps.
// Its zero value seals nothing, opens anything, and claims once per value.
type Ring struct {
	keys   [][]byte      // the first seals, each opens; none: nothing is sealed
	maxAge time.Duration // 0: no limit
	claims Claimer       // nil: once per value only
}

// NewRing returns the ring of keys (the first seals), with state older
// than maxAge (when positive) expired, and claims (when not nil) claiming
// each ID once across the replicas.
func NewRing(keys [][]byte, maxAge time.Duration, claims Claimer) Ring {
	return Ring{keys: keys, maxAge: maxAge, claims: claims}
}

// A Sealed is the envelope of a decoded sealed value: its payload and its
// MAC, kept so that the value encodes again to the very same envelope.
type Sealed struct {
	payload []byte
	mac     []byte
}

// envelope is the JSON of a sealed value.
type envelope struct {
	Sealed *string `json:"sealed"`
	MAC    []byte  `json:"mac"`
}

// mac is the MAC of payload as state of the given kind.
func mac(key []byte, kind string, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mcpadapter/" + kind + "\x00"))
	m.Write(payload)
	return m.Sum(nil)
}

// Seal returns payload sealed as state of kind with the first key, or
// payload itself when there is no key.
func (r *Ring) Seal(kind string, payload []byte) ([]byte, error) {
	if len(r.keys) == 0 {
		return payload, nil
	}
	return marshal(payload, mac(r.keys[0], kind, payload))
}

// Marshal returns the envelope s was decoded from.
func (s *Sealed) Marshal() ([]byte, error) { return marshal(s.payload, s.mac) }

// marshal returns the envelope of payload and its MAC.
func marshal(payload, mac []byte) ([]byte, error) {
	p := string(payload)
	return json.Marshal(envelope{Sealed: &p, MAC: mac})
}

// Unseal returns the payload of stored state b (the envelope's, when it is
// sealed, with the envelope; nil when it is not). It bounds the size and
// refuses anything that is not a JSON object; its errors say why, for a
// message that wraps [ErrInvalid].
func Unseal(b []byte) ([]byte, *Sealed, error) {
	if len(b) > MaxBytes {
		return nil, nil, fmt.Errorf("%d bytes, more than the bound of %d", len(b), MaxBytes)
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, nil, err
	}
	if env.Sealed == nil {
		return b, nil, nil
	}
	if len(env.MAC) == 0 {
		return nil, nil, errors.New("sealed state without a mac")
	}
	payload := []byte(*env.Sealed)
	if t := bytes.TrimSpace(payload); len(t) == 0 || t[0] != '{' {
		return nil, nil, errors.New("sealed payload is not a JSON object")
	}
	return payload, &Sealed{payload: payload, mac: env.MAC}, nil
}

// Open verifies decoded state of kind, sealed as s (nil: not sealed),
// when r has keys: it must be sealed with one of them, else [ErrTampered].
func (r *Ring) Open(kind string, s *Sealed) error {
	if len(r.keys) == 0 {
		return nil
	}
	for _, k := range r.keys {
		if s != nil && hmac.Equal(s.mac, mac(k, kind, s.payload)) {
			return nil
		}
	}
	return ErrTampered
}

// Trusted reports whether what decoded state says about itself can be
// believed: it is sealed (Open passed with a key) and can be applied only
// once (a claim store), so that it is not replayed.
func (r *Ring) Trusted() bool { return len(r.keys) > 0 && r.claims != nil }

// NewID returns the ID of state made now: 32 hex digits, random.
func NewID() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// CheckID refuses a decoded id that NewID would not have made (empty is
// state stored before IDs).
func CheckID(id string) error {
	if _, err := hex.DecodeString(id); err != nil || id != "" && len(id) != 32 {
		return fmt.Errorf("id %.40q is not 32 hex digits", id)
	}
	return nil
}

// MaxSkew is how far in the future, by the clock of the Adapter that
// checks it, state may say it was issued: the clocks of the replicas that
// share state differ a little. State issued later than that is refused,
// so that it cannot outlive the maximum age.
const MaxSkew = time.Minute

// Check refuses state of id (empty in state stored before IDs), issued
// then (zero in state stored before issue times), that the maximum age
// rules out, state issued more than MaxSkew in the future, and state
// without an ID when there is a claim store, which could not claim it.
func (r *Ring) Check(id string, issued time.Time) error {
	switch {
	case time.Until(issued) > MaxSkew:
		return fmt.Errorf("%w: issued %s in the future, more than the %s the clocks may differ", ErrInvalid, time.Until(issued).Round(time.Second), MaxSkew)
	case r.claims != nil && id == "":
		return fmt.Errorf("%w: no id (stored by an earlier version), so it cannot be claimed", ErrInvalid)
	case r.maxAge > 0 && issued.IsZero():
		return fmt.Errorf("%w: no issue time (stored by an earlier version)", ErrExpired)
	case r.maxAge > 0 && time.Since(issued) > r.maxAge:
		return fmt.Errorf("%w: issued %s ago, StateMaxAge is %s", ErrExpired, time.Since(issued).Round(time.Second), r.maxAge)
	}
	return nil
}

// Claim marks the state of id applied, right before it is: once per
// value (used, shared by the copies of one value, is set), and with a
// claim store once per ID across the replicas sharing it. A store that
// cannot tell leaves the value unclaimed. The record's expiry is counted
// on this side's clock, not from the issue time the state gives: the
// maximum age and MaxSkew from now, past which Check refuses the state
// whatever it says.
func (r *Ring) Claim(ctx context.Context, id string, used *atomic.Bool) error {
	if used == nil || !used.CompareAndSwap(false, true) {
		return ErrClaimed
	}
	if r.claims == nil {
		return nil
	}
	var expires time.Time
	if r.maxAge > 0 {
		expires = time.Now().Add(r.maxAge + MaxSkew)
	}
	switch err := r.claims.Claim(ctx, id, expires); {
	case err == nil:
		return nil
	case errors.Is(err, ErrClaimed):
		return ErrClaimed
	default:
		used.Store(false)
		return fmt.Errorf("StateClaims: %w", err)
	}
}
