package deliver

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestQueuesFair: the queues are served in turn, each key's items in the
// order they came, and an item waiting with an equal Key makes a new one
// redundant.
func TestQueuesFair(t *testing.T) {
	var qs Queues[string]
	var got []string
	b := Bounds{Size: 10, Bytes: 1 << 10, Queues: 4}
	push := func(key, name string, k any) (bool, bool) {
		return qs.Push(key, Item{Run: func() { got = append(got, name) }, Key: k}, b)
	}
	if start, dropped := push("a", "a1", nil); !start || dropped {
		t.Fatalf("first Push: start %v, dropped %v; want a start", start, dropped)
	}
	push("a", "a2", nil)
	push("a", "a3", "same")
	if start, dropped := push("a", "a4", "same"); start || dropped {
		t.Errorf("redundant Push: start %v, dropped %v; want neither", start, dropped)
	}
	push("b", "b1", nil)
	push("b", "b2", nil)
	var served []string
	qs.Serve(func() bool { return false }, func(k string) { served = append(served, k) })
	if want := []string{"a1", "b1", "a2", "b2", "a3"}; !slices.Equal(got, want) {
		t.Errorf("served %q, want %q", got, want)
	}
	if want := []string{"a", "b", "a", "b", "a"}; !slices.Equal(served, want) {
		t.Errorf("keys %q, want %q", served, want)
	}
	if start, _ := push("a", "a5", "same"); !start {
		t.Error("Push after Serve returned: no start asked for")
	}
}

// TestQueuesBounds: past a key's bound of items or bytes, or the bound of
// all queues, an item is dropped; an item finding its queue empty is
// always taken; Stop drops what waits.
func TestQueuesBounds(t *testing.T) {
	var qs Queues[int]
	b := Bounds{Size: 2, Bytes: 100, Queues: 2}
	run := func() {}
	pushAll(t, &qs, b, []pushCase{
		{1, 150, false}, // empty queue: taken whatever its size
		{1, 1, true},    // the bytes of key 1 are past its bound
		{2, 10, false},
		{2, 10, false},
		{2, 10, true}, // key 2 holds Size items
		{3, 10, false},
		{3, 10, true}, // all queues hold Queues*Size items
	})
	qs.Stop()
	pushAll(t, &qs, b, []pushCase{
		{1, 150, false},
		{2, 40, false},
		{2, 20, true}, // all queues would hold more than Queues*Bytes bytes
	})
	qs.Stop()
	ran := false
	qs.Serve(func() bool { return false }, func(int) { ran = true })
	if ran {
		t.Error("an item ran after Stop")
	}
	if start, dropped := qs.Push(1, Item{Run: run, Size: 1}, b); !start || dropped {
		t.Errorf("Push after Stop: start %v, dropped %v; want a start", start, dropped)
	}
	n := 0
	qs.Serve(func() bool { return n > 0 }, func(int) { n++ })
	if n != 1 {
		t.Errorf("%d items served, want 1", n)
	}
}

// TestQueuesBoundFirstItems: the bound of all the queues counts each key's
// first item too: while nothing is served (a callback blocks), items of
// ever new keys are dropped once all the queues hold Queues*Size items or
// Queues*Bytes bytes, and an item finding every queue empty is taken
// whatever its size.
func TestQueuesBoundFirstItems(t *testing.T) {
	var qs Queues[int]
	b := Bounds{Size: 2, Bytes: 100, Queues: 2}
	pushAll(t, &qs, b, []pushCase{
		{1, 250, false}, // every queue empty: taken whatever its size
		{2, 10, true},   // all queues would hold more than Queues*Bytes bytes
	})
	qs.Stop()
	cases := []pushCase{{1, 100, false}, {2, 100, false}} // bytes
	for key := 3; key < 8; key++ {
		cases = append(cases, pushCase{key, 1, true})
	}
	pushAll(t, &qs, b, cases)
	qs.Stop()
	cases = nil // items
	for key := range 100 {
		cases = append(cases, pushCase{key, 1, key >= b.Queues*b.Size})
	}
	pushAll(t, &qs, b, cases)
	if qs.waiting != b.Queues*b.Size || qs.bytes != b.Queues*b.Size {
		t.Errorf("%d items of %d bytes wait, want %d of %d", qs.waiting, qs.bytes, b.Queues*b.Size, b.Queues*b.Size)
	}
}

// A pushCase is an item of key and size pushed, and whether it is to be
// dropped.
type pushCase struct {
	key     int
	size    int
	dropped bool
}

// pushAll pushes the items of cases into qs within b.
func pushAll(t *testing.T, qs *Queues[int], b Bounds, cases []pushCase) {
	t.Helper()
	for i, tt := range cases {
		if _, dropped := qs.Push(tt.key, Item{Run: func() {}, Size: tt.size}, b); dropped != tt.dropped {
			t.Errorf("push %d (key %d, %d bytes): dropped %v, want %v", i, tt.key, tt.size, dropped, tt.dropped)
		}
	}
}

// TestSize: the payload estimate of decoded JSON.
func TestSize(t *testing.T) {
	if got, want := Size(map[string]any{"ab": []any{"xyz", 1.0}}), 16+2+16+16+3+16; got != want {
		t.Errorf("Size = %d, want %d", got, want)
	}
}

// TestIdleContext: the context ends when idle passes without a touch,
// with a *NoProgress cause, and at max whatever the touches.
func TestIdleContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ctx, touch, release := IdleContext(t.Context(), 2*time.Second, 0)
		defer release()
		for range 3 {
			time.Sleep(time.Second) // fake time in the bubble
			touch()
		}
		<-ctx.Done()
		var np *NoProgress
		if !errors.As(context.Cause(ctx), &np) || !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			t.Errorf("cause %v, want a *NoProgress that is a deadline", context.Cause(ctx))
		}
		if got := time.Since(start); got != 5*time.Second {
			t.Errorf("ended after %v, want 5s (the last touch at 3s, then 2s idle)", got)
		}
		start = time.Now()
		ctx, touch, release = IdleContext(t.Context(), 2*time.Second, 3*time.Second)
		defer release()
		for range 2 {
			time.Sleep(time.Second)
			touch()
		}
		<-ctx.Done()
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) || time.Since(start) != 3*time.Second {
			t.Errorf("with max 3s: %v after %v", ctx.Err(), time.Since(start))
		}
	})
}
