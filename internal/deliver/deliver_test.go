package deliver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestQueuesApart: each key's items are served in the order they came, by
// a goroutine of the key's own: an item that blocks holds up its own key
// alone; an item waiting with an equal Key makes a new one redundant.
func TestQueuesApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var qs Queues[string]
		got := map[string][]string{}
		var mu sync.Mutex
		release := make(chan struct{})
		b := Bounds{Size: 10, Bytes: 1 << 10, Queues: 4}
		served := map[string]int{}
		push := func(key, name string, k any) (bool, bool) {
			start, dropped := qs.Push(key, Item{Run: func() {
				if name == "a1" {
					<-release
				}
				mu.Lock()
				got[key] = append(got[key], name)
				mu.Unlock()
			}, Key: k}, b)
			if start {
				go qs.Serve(key, func() bool { return false }, func() {
					mu.Lock()
					served[key]++
					mu.Unlock()
				})
			}
			return start, dropped
		}
		if start, dropped := push("a", "a1", nil); !start || dropped {
			t.Fatalf("first Push: start %v, dropped %v; want a start", start, dropped)
		}
		synctest.Wait() // a1 blocks
		push("a", "a2", nil)
		push("a", "a3", "same")
		if start, dropped := push("a", "a4", "same"); start || dropped {
			t.Errorf("redundant Push: start %v, dropped %v; want neither", start, dropped)
		}
		if start, _ := push("b", "b1", nil); !start {
			t.Error("first Push of another key: no start asked for")
		}
		push("b", "b2", nil)
		synctest.Wait()
		if want := []string{"b1", "b2"}; !slices.Equal(got["b"], want) || len(got["a"]) != 0 {
			t.Errorf("while a1 blocks, served %q, want b's %q alone", got, want)
		}
		close(release)
		synctest.Wait()
		if want := []string{"a1", "a2", "a3"}; !slices.Equal(got["a"], want) {
			t.Errorf("served %q of a, want %q", got["a"], want)
		}
		if served["a"] != 3 || served["b"] != 2 {
			t.Errorf("served counted %v, want a:3 b:2", served)
		}
		if start, _ := push("a", "a5", "same"); !start {
			t.Error("Push after Serve returned: no start asked for")
		}
		synctest.Wait()
		if qs.waiting != 0 || qs.bytes != 0 || len(qs.queues) != 0 {
			t.Errorf("idle queues hold %d items, %d bytes, %d keys", qs.waiting, qs.bytes, len(qs.queues))
		}
	})
}

// TestQueuesDrop: Drop takes the waiting items of one owner out of its
// key's queue, the others served in order, and frees their room.
func TestQueuesDrop(t *testing.T) {
	var qs Queues[string]
	b := Bounds{Size: 3, Bytes: 1 << 10, Queues: 1}
	var got []string
	mine, other := new(int), new(int)
	for i, owner := range []*int{mine, other, mine} {
		name := fmt.Sprint(i)
		qs.Push("a", Item{Run: func() { got = append(got, name) }, Size: 10, Owner: owner, Key: name}, b)
	}
	if _, dropped := qs.Push("a", Item{Run: func() {}}, b); !dropped {
		t.Fatal("a Push past the bound was taken")
	}
	if n := qs.Drop("a", mine); n != 2 {
		t.Errorf("Drop = %d, want 2", n)
	}
	if n := qs.Drop("b", mine); n != 0 {
		t.Errorf("Drop of a key without a queue = %d, want 0", n)
	}
	if qs.waiting != 1 || qs.bytes != 10 {
		t.Errorf("%d items of %d bytes wait, want 1 of 10", qs.waiting, qs.bytes)
	}
	if _, dropped := qs.Push("a", Item{Run: func() { got = append(got, "3") }, Key: "0"}, b); dropped {
		t.Error("a Push after Drop freed room was dropped")
	}
	qs.Serve("a", func() bool { return false }, func() {})
	if want := []string{"1", "3"}; !slices.Equal(got, want) {
		t.Errorf("served %q, want %q", got, want)
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
	stopAll(&qs, 1, 2, 3)
	pushAll(t, &qs, b, []pushCase{
		{1, 150, false},
		{2, 40, false},
		{2, 20, true}, // all queues would hold more than Queues*Bytes bytes
	})
	stopAll(&qs, 1, 2)
	ran := false
	qs.Serve(1, func() bool { return false }, func() { ran = true })
	if ran {
		t.Error("an item ran after Stop")
	}
	if start, dropped := qs.Push(1, Item{Run: run, Size: 1}, b); !start || dropped {
		t.Errorf("Push after Stop: start %v, dropped %v; want a start", start, dropped)
	}
	qs.Push(1, Item{Run: run, Size: 1}, b)
	n := 0
	qs.Serve(1, func() bool { return n > 0 }, func() { n++ })
	if n != 1 {
		t.Errorf("%d items served, want 1", n)
	}
	if qs.waiting != 0 || qs.bytes != 0 {
		t.Errorf("after a stopped Serve, %d items of %d bytes counted, want none", qs.waiting, qs.bytes)
	}
}

// stopAll stops keys of qs.
func stopAll(qs *Queues[int], keys ...int) {
	for _, k := range keys {
		qs.Stop(k)
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
	stopAll(&qs, 1)
	cases := []pushCase{{1, 100, false}, {2, 100, false}} // bytes
	for key := 3; key < 8; key++ {
		cases = append(cases, pushCase{key, 1, true})
	}
	pushAll(t, &qs, b, cases)
	stopAll(&qs, 1, 2)
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
