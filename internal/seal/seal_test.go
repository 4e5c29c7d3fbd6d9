package seal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestSealOpen: a value sealed with the first key opens under any ring
// holding that key, as its own kind only, and encodes again to the very
// same envelope, which shows its ID and issue time and nothing of the
// payload; altered in any byte, or sealed with a key out of the ring, it
// is refused.
func TestSealOpen(t *testing.T) {
	old, cur := []byte("old"), []byte("current")
	payload := []byte(`{"session":"s-7f3a","x":1}`)
	issued := time.Date(2026, 12, 6, 18, 0, 0, 123, time.UTC)
	sealedOld := NewRing([][]byte{old}, 0, nil)
	b, err := sealedOld.Seal("interrupt", "0123456789abcdef0123456789abcdef", issued, payload)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("s-7f3a")) || bytes.Contains(b, []byte("session")) {
		t.Errorf("sealed state shows its payload: %s", b)
	}
	got, s, err := Unseal(b)
	if err != nil || s == nil || got != nil || s.ID() != "0123456789abcdef0123456789abcdef" || !s.Issued().Equal(issued) {
		t.Fatalf("Unseal = %s, %v, %v; want its envelope, ID and issue time", got, s, err)
	}
	if again, err := s.Marshal(); err != nil || string(again) != string(b) {
		t.Errorf("Marshal = %s, %v; want %s", again, err, b)
	}
	if again, _ := sealedOld.Seal("interrupt", "0123456789abcdef0123456789abcdef", issued, payload); !bytes.Equal(again, b) {
		t.Errorf("sealing again gave %s, want the same bytes %s", again, b)
	}
	other, _ := sealedOld.Seal("interrupt", "0123456789abcdef0123456789abcdef", issued, []byte(`{"session":"s-7f3b","x":1}`))
	_, o, _ := Unseal(other)
	if bytes.Equal(o.box[:12], s.box[:12]) {
		t.Error("two payloads sealed with the same nonce")
	}
	rotated := NewRing([][]byte{cur, old}, 0, nil)
	for _, tt := range []struct {
		name string
		r    Ring
		kind string
		want error
	}{
		{"the sealing ring", sealedOld, "interrupt", nil},
		{"an old key of the ring", rotated, "interrupt", nil},
		{"another kind", rotated, "approval", ErrTampered},
		{"a key out of the ring", NewRing([][]byte{cur}, 0, nil), "interrupt", ErrTampered},
		{"no key", Ring{}, "interrupt", ErrTampered},
	} {
		got, err := tt.r.Open(tt.kind, s)
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) || tt.want == nil && string(got) != string(payload) {
			t.Errorf("%s: Open = %s, %v, want %v", tt.name, got, err, tt.want)
		}
	}
	// Every byte of the envelope counts: an edited box, or an edited ID,
	// issue time or key id.
	for i := range s.box {
		edited := *s
		edited.box = bytes.Clone(s.box)
		edited.box[i] ^= 1
		if _, err := rotated.Open("interrupt", &edited); !errors.Is(err, ErrTampered) {
			t.Fatalf("box byte %d edited: Open = %v, want ErrTampered", i, err)
		}
	}
	for name, edit := range map[string]func(*Sealed){
		"id":     func(e *Sealed) { e.id = "1123456789abcdef0123456789abcdef" },
		"issued": func(e *Sealed) { e.issued = issued.Add(time.Hour).Format(time.RFC3339Nano) },
		"key":    func(e *Sealed) { e.key = append(bytes.Clone(e.key[:7]), e.key[7]^1) },
	} {
		edited := *s
		edit(&edited)
		if _, err := rotated.Open("interrupt", &edited); !errors.Is(err, ErrTampered) {
			t.Errorf("%s edited: Open = %v, want ErrTampered", name, err)
		}
	}
	if b, err := (&Ring{}).Seal("interrupt", "", time.Time{}, payload); err != nil || string(b) != string(payload) {
		t.Errorf("Seal without a key = %s, %v; want the payload itself", b, err)
	}
}

// TestUnseal: stored state that is too big, not an object, or a broken
// envelope is refused; one of format 1 with ErrOldFormat; an object
// without "sealed" is the payload itself.
func TestUnseal(t *testing.T) {
	for _, bad := range []string{
		"", "  ", "[]", `"x"`, "{", `{"sealed": 3, "key": "AA==", "box": "AA=="}`, `{"sealed": 2, "box": "AA=="}`,
		`{"sealed": 2, "key": "AA==", "box": "AA==", "issued": "yesterday"}`, `{"sealed": 2, "key": "AA==", "box": "AA==", "id": "not hex"}`,
		"{" + strings.Repeat(" ", MaxBytes) + "}",
	} {
		if _, _, err := Unseal([]byte(bad)); err == nil || errors.Is(err, ErrOldFormat) {
			t.Errorf("Unseal(%.20q) = %v, want an error", bad, err)
		}
	}
	for _, old := range []string{`{"sealed": "{\"x\": 1}", "mac": "AA=="}`, `{"sealed": "{}"}`} {
		if _, _, err := Unseal([]byte(old)); !errors.Is(err, ErrOldFormat) {
			t.Errorf("Unseal(%s) = %v, want ErrOldFormat", old, err)
		}
	}
	b := []byte(` {"x": 1}`)
	if got, s, err := Unseal(b); err != nil || s != nil || string(got) != string(b) {
		t.Errorf("Unseal of plain state = %s, %v, %v", got, s, err)
	}
}

// TestID: NewID makes 32 hex digits, which CheckID takes, as it takes
// none (state stored before IDs).
func TestID(t *testing.T) {
	id := NewID()
	if len(id) != 32 || CheckID(id) != nil || CheckID("") != nil {
		t.Errorf("NewID = %q, CheckID = %v", id, CheckID(id))
	}
	for _, bad := range []string{"xyz", "abcd", strings.Repeat("0", 34)} {
		if CheckID(bad) == nil {
			t.Errorf("CheckID(%q) = nil", bad)
		}
	}
}

// claims is a claim store in memory; down makes it unable to tell.
type claims struct {
	seen    map[string]time.Time
	down    bool
	expires time.Time
}

func (c *claims) Claim(_ context.Context, id string, expires time.Time) error {
	if c.down {
		return errors.New("down")
	}
	if _, ok := c.seen[id]; ok {
		return ErrClaimed
	}
	c.seen[id], c.expires = expires, expires
	return nil
}

// TestCheckClaim: past the maximum age, or without an issue time under
// one, state expired; without an ID under a claim store, or issued more
// than MaxSkew in the future, it is invalid; a claim's record expires the
// maximum age and MaxSkew after the claim, on the claiming side's clock; a
// value is claimed once, and an ID once across values with a store,
// which, when it cannot tell, leaves the value unclaimed.
func TestCheckClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &claims{seen: map[string]time.Time{}}
		r := NewRing(nil, time.Hour, c)
		now := time.Now()
		for _, tt := range []struct {
			id     string
			issued time.Time
			want   error
		}{
			{"a", now, nil},
			{"a", now.Add(-2 * time.Hour), ErrExpired},
			{"a", time.Time{}, ErrExpired},
			{"", now, ErrInvalid},
			{"a", now.Add(MaxSkew), nil},                      // the clocks may differ
			{"a", now.Add(MaxSkew + time.Second), ErrInvalid}, // the issuer's clock cannot extend the age
		} {
			if err := r.Check(tt.id, tt.issued); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("Check(%q, %v) = %v, want %v", tt.id, tt.issued, err, tt.want)
			}
		}
		if err := (&Ring{}).Check("", time.Time{}); err != nil {
			t.Errorf("Check without age or store = %v", err)
		}
		used := new(atomic.Bool)
		c.down = true
		if err := r.Claim(t.Context(), "a", used); err == nil || errors.Is(err, ErrClaimed) || used.Load() {
			t.Errorf("Claim with the store down = %v, used %v; want a failure that leaves it unclaimed", err, used.Load())
		}
		c.down = false
		time.Sleep(10 * time.Minute) // checked later than issued: the record counts from the check
		if err := r.Claim(t.Context(), "a", used); err != nil || !c.expires.Equal(time.Now().Add(time.Hour+MaxSkew)) {
			t.Errorf("Claim = %v, expires %v; want nil, an hour and MaxSkew after the claim (%v)", err, c.expires, time.Now())
		}
		if err := r.Claim(t.Context(), "a", used); !errors.Is(err, ErrClaimed) {
			t.Errorf("Claim of the same value again = %v, want ErrClaimed", err)
		}
		if err := r.Claim(t.Context(), "a", new(atomic.Bool)); !errors.Is(err, ErrClaimed) {
			t.Errorf("Claim of the same ID, another value = %v, want ErrClaimed", err)
		}
		if err := (&Ring{}).Claim(t.Context(), "", nil); !errors.Is(err, ErrClaimed) {
			t.Errorf("Claim without a flag = %v, want ErrClaimed", err)
		}
		both, keyOnly, storeOnly := NewRing([][]byte{{1}}, 0, c), NewRing([][]byte{{1}}, 0, nil), NewRing(nil, 0, c)
		if !both.Trusted() || keyOnly.Trusted() || storeOnly.Trusted() {
			t.Error("Trusted: want a key and a claim store")
		}
	})
}

// BenchmarkRing: sealing and opening a payload of 1 KiB and 32 KiB.
func BenchmarkRing(b *testing.B) {
	r := NewRing([][]byte{[]byte("0123456789abcdef0123456789abcdef")}, 0, nil)
	for _, n := range []int{1 << 10, 32 << 10} {
		payload := []byte(`{"x":"` + strings.Repeat("y", n-8) + `"}`)
		sealed, err := r.Seal("interrupt", NewID(), time.Now(), payload)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("seal/%dKiB", n>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for b.Loop() {
				r.Seal("interrupt", "0123456789abcdef0123456789abcdef", time.Time{}, payload)
			}
		})
		b.Run(fmt.Sprintf("open/%dKiB", n>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for b.Loop() {
				_, s, err := Unseal(sealed)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.Open("interrupt", s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
