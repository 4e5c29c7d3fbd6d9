package mcpadapter

// The notifier's registries of each connection (notify.go) and the
// resource subscriptions they hold (resources.go), moved from
// internal/deliver with their code.

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConnRegistry: subscriptions are made for an attached connection
// alone, and release drops them.
func TestConnRegistry(t *testing.T) {
	var r connRegistry
	c1, c2 := new(mcp.ClientSession), new(mcp.ClientSession)
	if r.subscriptions(c1, true) != nil {
		t.Error("subscriptions made for a connection not attached")
	}
	r.attach(c1)
	r.attach(c2)
	if r.subscriptions(c2, true) == nil {
		t.Fatal("no subscriptions made for an attached connection")
	}
	if r.subscriptions(c1, false) != nil {
		t.Error("subscriptions of another connection found")
	}
	r.release(c2)
	if r.subscriptions(c2, true) != nil {
		t.Error("subscriptions made for a released connection")
	}
}

// TestProgressTable: a sink is reached by its token on its connection's
// table alone, while its request is in flight; a lookup resets its idle
// timeout, never once the request ended.
func TestProgressTable(t *testing.T) {
	var t1, t2 progressTable
	touched := 0
	s := &progressSink{touch: func() { touched++ }}
	t1.add("tok", s)
	if got := t1.lookup("tok"); got != s || touched != 1 {
		t.Fatalf("lookup on its connection = %p, touched %d; want the sink, touched once", got, touched)
	}
	if got := t2.lookup("tok"); got != nil {
		t.Error("a token reached a sink of another connection")
	}
	t1.remove("tok")
	if got := t1.lookup("tok"); got != nil || touched != 1 {
		t.Errorf("lookup of an ended request = %p, touched %d; want none", got, touched)
	}
}

// TestConnSubscriptions: principals subscribe to a URI in order; the last
// one to leave is told; the turn is taken by one at a time.
func TestConnSubscriptions(t *testing.T) {
	var r connRegistry
	c := new(mcp.ClientSession)
	r.attach(c)
	if r.subscriptions(c, false) != nil {
		t.Error("subscriptions made without create")
	}
	s := r.subscriptions(c, true)
	if !s.add("u", "alice") || !s.add("u", "bob") || s.add("u", "alice") {
		t.Error("add: want true, true, then false for a principal already subscribed")
	}
	if got := r.subscribers(c, "u"); !slices.Equal(got, []string{"alice", "bob"}) {
		t.Errorf("subscribers = %q, want alice, bob", got)
	}
	if was, last := s.remove("u", "carol"); was || last {
		t.Error("remove of a principal not subscribed reported it was")
	}
	if was, last := s.remove("u", "alice"); !was || last {
		t.Errorf("remove(alice) = %v, %v; want true, false", was, last)
	}
	if was, last := s.remove("u", "bob"); !was || !last {
		t.Errorf("remove(bob) = %v, %v; want true, true", was, last)
	}
	if err := s.take(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.take(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("take while the turn is held = %v, want the context's end", err)
	}
	s.give()
	if err := s.take(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("take once given = %v", err)
	}
}

// TestHeldSubscriptions: what an ended connection held is taken once, by
// its key; a principal that unsubscribed meanwhile is dropped from it.
func TestHeldSubscriptions(t *testing.T) {
	var h heldSubscriptions
	k, other := connKey{"s", "k"}, connKey{"s", "other"}
	h.put(k, nil) // nothing held: nothing kept
	if got := h.take(k); got != nil {
		t.Fatalf("take after an empty put = %v", got)
	}
	h.put(k, map[string][]string{"a": {"alice", "bob"}, "b": {"bob"}})
	h.drop(k, "b", "bob")
	h.drop(k, "a", "alice")
	h.drop(other, "a", "bob")
	if got, want := h.take(k), map[string][]string{"a": {"bob"}}; !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("take = %v, want %v", got, want)
	}
	if got := h.take(k); got != nil {
		t.Fatalf("second take = %v, want nil", got)
	}
}

// TestRestoreSubscriptions: a restore subscribes each URI still wanted
// once, keeps its principals, and drops a URI the server refuses.
func TestRestoreSubscriptions(t *testing.T) {
	var r connRegistry
	c := new(mcp.ClientSession)
	r.attach(c)
	s := r.subscriptions(c, true)
	held := map[string][]string{"ok": {"alice", "bob"}, "refused": {"alice"}}
	var asked []string
	var failed []string
	s.restore(context.Background(), held, func(_ context.Context, uri string) error {
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
	if got, want := s.all(), map[string][]string{"ok": {"alice", "bob"}}; !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("after the restore: %v, want %v", got, want)
	}

	// An unsubscribe that comes before the restore's turn wins.
	synctest.Test(t, func(t *testing.T) {
		var r connRegistry // its channels made in the bubble
		c := new(mcp.ClientSession)
		r.attach(c)
		s := r.subscriptions(c, true)
		if err := s.take(context.Background()); err != nil {
			t.Fatal(err)
		}
		var asked []string
		go s.restore(context.Background(), map[string][]string{"gone": {"carol"}}, func(_ context.Context, uri string) error {
			asked = append(asked, uri)
			return nil
		}, func(string, error) {})
		synctest.Wait() // the restore added carol and waits for the turn
		if was, _ := s.remove("gone", "carol"); !was {
			t.Fatal("the restore did not add its principal before its turn")
		}
		s.give()
		synctest.Wait()
		if len(asked) != 0 {
			t.Errorf("a URI unsubscribed before the restore's turn was asked for: %v", asked)
		}
	})
}
