package deliver

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"testing/synctest"
)

// TestHeld: what an ended connection held is taken once, by its key; a
// principal that unsubscribed meanwhile is dropped from it.
func TestHeld(t *testing.T) {
	var h Held[string]
	h.Put("k", nil) // nothing held: nothing kept
	if got := h.Take("k"); got != nil {
		t.Fatalf("Take after an empty Put = %v", got)
	}
	h.Put("k", map[string][]string{"a": {"alice", "bob"}, "b": {"bob"}})
	h.Drop("k", "b", "bob")
	h.Drop("k", "a", "alice")
	h.Drop("other", "a", "bob")
	if got, want := h.Take("k"), map[string][]string{"a": {"bob"}}; !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("Take = %v, want %v", got, want)
	}
	if got := h.Take("k"); got != nil {
		t.Fatalf("second Take = %v, want nil", got)
	}
}

// TestRestore: a restore subscribes each URI still wanted once, keeps its
// principals, and drops a URI the server refuses.
func TestRestore(t *testing.T) {
	var r Registry[string, int]
	r.Attach("c")
	s := r.Subscriptions("c", true)
	held := map[string][]string{"ok": {"alice", "bob"}, "refused": {"alice"}}
	var asked []string
	var failed []string
	s.Restore(context.Background(), held, func(_ context.Context, uri string) error {
		asked = append(asked, uri)
		if uri == "refused" {
			return errors.New("no")
		}
		return nil
	}, func(uri string, err error) { failed = append(failed, uri) })
	slices.Sort(asked)
	if !slices.Equal(asked, []string{"ok", "refused"}) || !slices.Equal(failed, []string{"refused"}) {
		t.Fatalf("asked %v, failed %v", asked, failed)
	}
	if got, want := s.All(), map[string][]string{"ok": {"alice", "bob"}}; !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("after the restore: %v, want %v", got, want)
	}

	// An unsubscribe that comes before the restore's turn wins.
	synctest.Test(t, func(t *testing.T) {
		var r Registry[string, int] // its channels made in the bubble
		r.Attach("c")
		s := r.Subscriptions("c", true)
		if err := s.Take(context.Background()); err != nil {
			t.Fatal(err)
		}
		var asked []string
		go s.Restore(context.Background(), map[string][]string{"gone": {"carol"}}, func(_ context.Context, uri string) error {
			asked = append(asked, uri)
			return nil
		}, func(string, error) {})
		synctest.Wait() // the restore added carol and waits for the turn
		if was, _ := s.Remove("gone", "carol"); !was {
			t.Fatal("the restore did not add its principal before its turn")
		}
		s.Give()
		synctest.Wait()
		if len(asked) != 0 {
			t.Errorf("a URI unsubscribed before the restore's turn was asked for: %v", asked)
		}
	})
}
