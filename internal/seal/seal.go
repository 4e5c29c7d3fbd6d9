// Package seal seals the state the adapter stores (the root package's
// state.go): encrypted and authenticated, under a ring of keys (the first
// seals, each opens), each value sealed under its kind so that one kind is
// never accepted as another; the decoding bound; and the checks of a
// value's stamp, its ID and issue time, against a maximum age and a claim
// store. It knows nothing of the adapter.
//
// The envelope (format 2) is
//
//	{"sealed":2,"key":"<key id>","id":"<state id>","issued":"<RFC 3339>","box":"<base64>"}
//
// where box is the state's JSON under AES-256-GCM (the standard library's:
// no dependency, and AES is in hardware where servers run), its 96-bit
// nonce prepended, under a key derived with HKDF-SHA256 from the ring's
// key for this purpose only; key is a short id derived the same way, so
// that opening tries one key, not each. The nonce is synthetic, as in SIV
// (RFC 5297): an HMAC-SHA256, under a third derived key, of the additional
// data and the payload. So sealing is deterministic: a value marshals to
// the same bytes each time (a checkpoint holding it by value included),
// and equal bytes tell only that the payloads are equal, which two values
// never are (each has its random ID). The kind, the key id, the ID and
// the issue time are the additional data: authenticated, and readable
// without the key, because a decoded value reports its ID and issue time
// (claims and the maximum age use them) before an Adapter opens it. They
// are random or a time, never a credential; everything else (the session
// a task lives on, the questions and their JSON-RPC ids, the arguments) is
// inside the box. Nonces that are pseudo-random bound a key to 2^32 seals
// of distinct payloads, as random ones do (NIST SP 800-38D); stored state
// is made at human pace, far below, and rotating the key (StateOptions.OldKeys)
// starts a new count.
//
// Format 1, {"sealed":"<the JSON in clear>","mac":"<HMAC-SHA256>"}, was
// authenticated, not encrypted; it is refused with ErrOldFormat.
package seal

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
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
	ErrTampered = errors.New("mcpadapter: stored state is not sealed with Config.State.Key or was altered")
	// ErrInvalid is the root's ErrInvalidState: malformed, oversized, or naming what cannot be resumed.
	ErrInvalid = errors.New("mcpadapter: invalid stored state")
	// ErrClaimed is the root's ErrClaimedState: applied before.
	ErrClaimed = errors.New("mcpadapter: stored state was already resumed or decided")
	// ErrExpired is an ErrInvalid: older than the maximum age, or without an issue time.
	ErrExpired = fmt.Errorf("%w: expired", ErrInvalid)
	// ErrOldFormat is the root's errOldStateFormat (an ErrInvalidState once wrapped): sealed in format 1.
	ErrOldFormat = errors.New("mcpadapter: stored state sealed in format 1 (signed, not encrypted), which this version refuses: make it again")
)

// MaxBytes bounds the JSON of one stored value.
const MaxBytes = 32 << 20

// format is the version of the envelope that Seal writes, as its JSON.
const format = "2"

// A Claimer records the IDs of the state applied, so that each is applied
// once across the replicas sharing it: Claim returns nil for an id not
// claimed before, [ErrClaimed] (or an error wrapping it) for one that was,
// and any other error when it cannot tell.
type Claimer interface {
	Claim(ctx context.Context, id string, expires time.Time) error
}

// A Ring seals and opens stored state, and checks and claims its stamps.
// Its zero value seals nothing, opens nothing, and claims once per value.
type Ring struct {
	keys   []key         // the first seals, each opens; none: nothing is sealed
	maxAge time.Duration // 0: no limit
	claims Claimer       // nil: once per value only
}

// A key is a key of the ring, as the envelope uses it.
type key struct {
	id    []byte      // the key id of the envelope
	aead  cipher.AEAD // AES-256-GCM under the derived key
	nonce []byte      // the key of the synthetic nonces' HMAC
}

// newKey derives the sealing key and the key id of secret.
func newKey(secret []byte) key {
	derive := func(info string, n int) []byte {
		b, err := hkdf.Key(sha256.New, secret, nil, info, n)
		if err != nil { // only for a length past 255 hashes
			panic(err)
		}
		return b
	}
	block, err := aes.NewCipher(derive("mcpadapter stored state, format 2: AES-256-GCM key", 32))
	if err != nil { // only for a key not 16, 24 or 32 bytes long
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil { // only for a block of another size
		panic(err)
	}
	return key{id: derive("mcpadapter stored state, format 2: key id", 8), aead: aead,
		nonce: derive("mcpadapter stored state, format 2: nonce key", 32)}
}

// seal returns the box of payload with additional data ad: the synthetic
// nonce, then the ciphertext and its tag.
func (k key) seal(payload, ad []byte) []byte {
	m := hmac.New(sha256.New, k.nonce)
	fmt.Fprintf(m, "%d:", len(ad))
	m.Write(ad)
	m.Write(payload)
	nonce := m.Sum(nil)[:k.aead.NonceSize()]
	return k.aead.Seal(nonce, nonce, payload, ad)
}

// open returns the payload of box with additional data ad.
func (k key) open(box, ad []byte) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(box) < n+k.aead.Overhead() {
		return nil, errors.New("box too short")
	}
	return k.aead.Open(nil, box[:n], box[n:], ad)
}

// NewRing returns the ring of keys (the first seals), with state older
// than maxAge (when positive) expired, and claims (when not nil) claiming
// each ID once across the replicas.
func NewRing(keys [][]byte, maxAge time.Duration, claims Claimer) Ring {
	r := Ring{maxAge: maxAge, claims: claims}
	for _, k := range keys {
		r.keys = append(r.keys, newKey(k))
	}
	return r
}

// Sealing reports whether r has keys: it seals what it is given, and
// refuses state that is not sealed.
func (r *Ring) Sealing() bool { return len(r.keys) > 0 }

// A Sealed is the envelope of a decoded sealed value, kept so that the
// value encodes again to the same envelope, and opened by a ring with its
// key.
type Sealed struct {
	key    []byte
	id     string
	issued string // as the envelope has it: the bytes authenticated
	box    []byte
}

// ID returns the ID of the sealed state ("" for state made without one).
func (s *Sealed) ID() string { return s.id }

// Issued returns when the sealed state was made (the zero time for state
// made without an issue time).
func (s *Sealed) Issued() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s.issued) // checked by Unseal
	return t
}

// envelope is the JSON of a sealed value; Sealed is the format, a string
// in format 1 (with MAC).
type envelope struct {
	Sealed json.RawMessage `json:"sealed"`
	Key    []byte          `json:"key,omitempty"`
	ID     string          `json:"id,omitempty"`
	Issued string          `json:"issued,omitempty"`
	Box    []byte          `json:"box,omitempty"`
	MAC    json.RawMessage `json:"mac,omitempty"`
}

// aad is the additional data of a box of kind in s: what the envelope
// says in clear, each part's length first so that none can shift.
func aad(kind string, s *Sealed) []byte {
	b := []byte("mcpadapter stored state, format 2")
	for _, part := range []string{kind, string(s.key), s.id, s.issued} {
		b = fmt.Appendf(b, "\x00%d:%s", len(part), part)
	}
	return b
}

// Seal returns payload, the JSON of state of kind with id issued then,
// sealed with the first key, or payload itself when there is no key.
func (r *Ring) Seal(kind, id string, issued time.Time, payload []byte) ([]byte, error) {
	if len(r.keys) == 0 {
		return payload, nil
	}
	k := r.keys[0]
	s := &Sealed{key: k.id, id: id}
	if !issued.IsZero() {
		s.issued = issued.UTC().Format(time.RFC3339Nano)
	}
	s.box = k.seal(payload, aad(kind, s))
	return s.Marshal()
}

// Marshal returns the envelope s was decoded from.
func (s *Sealed) Marshal() ([]byte, error) {
	return json.Marshal(envelope{Sealed: json.RawMessage(format), Key: s.key, ID: s.id, Issued: s.issued, Box: s.box})
}

// Unseal decodes stored state b: when it is sealed, its envelope (the
// payload is nil until a ring opens it); else the payload, b itself. It
// bounds the size, refuses anything that is not a JSON object, and
// refuses an envelope of format 1 with [ErrOldFormat]; its other errors
// say why, for a message that wraps [ErrInvalid].
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
	switch t := bytes.TrimSpace(env.Sealed); {
	case env.Sealed == nil:
		return b, nil, nil
	case len(t) > 0 && t[0] == '"' || env.MAC != nil:
		return nil, nil, ErrOldFormat
	case string(t) != format:
		return nil, nil, fmt.Errorf("sealed in format %.20s, which this version does not know", t)
	case len(env.Key) == 0 || len(env.Box) == 0:
		return nil, nil, errors.New("sealed state without its key id or its box")
	}
	s := &Sealed{key: env.Key, id: env.ID, issued: env.Issued, box: env.Box}
	if err := CheckID(s.id); err != nil {
		return nil, nil, err
	}
	if s.issued != "" {
		if _, err := time.Parse(time.RFC3339Nano, s.issued); err != nil {
			return nil, nil, fmt.Errorf("issue time: %w", err)
		}
	}
	return nil, s, nil
}

// Open returns the payload of state of kind sealed as s, when the key
// that sealed it is in r and nothing was altered; else [ErrTampered].
func (r *Ring) Open(kind string, s *Sealed) ([]byte, error) {
	if len(r.keys) == 0 {
		return nil, fmt.Errorf("%w: it is sealed, and there is no Config.State.Key to open it", ErrTampered)
	}
	for _, k := range r.keys {
		if !bytes.Equal(k.id, s.key) {
			continue
		}
		payload, err := k.open(s.box, aad(kind, s))
		if err != nil {
			return nil, ErrTampered
		}
		if t := bytes.TrimSpace(payload); len(t) == 0 || t[0] != '{' {
			return nil, fmt.Errorf("%w: sealed payload is not a JSON object", ErrInvalid)
		}
		return payload, nil
	}
	return nil, ErrTampered
}

// Trusted reports whether what decoded state says about itself can be
// believed: it is sealed (Open passed with a key) and can be applied only
// once (a claim store), so that it is not replayed.
func (r *Ring) Trusted() bool { return r.Sealing() && r.claims != nil }

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
		return fmt.Errorf("%w: issued %s ago, Config.State.MaxAge is %s", ErrExpired, time.Since(issued).Round(time.Second), r.maxAge)
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
		return fmt.Errorf("Config.State.Claims: %w", err)
	}
}
