// Package deliver is the notifier's machinery (the root package's
// notify.go): fair, bounded queues of calls of user code by key, served by
// one goroutine while any waits, and the idle timeout that progress
// resets. It knows nothing of MCP or of the adapter: its keys are plain
// values.
//
// The queues: each key has a queue of its own, bounded in items and in
// the bytes of their payload, and, while its queue is not empty, a
// goroutine of its own (idle keys keep none), which runs the key's items
// one at a time, in the order they came. A slow item holds up its own key
// alone, and a flood of one key fills its own queue only: past its bound
// an item is dropped, and the caller counts it. All the queues together
// hold at most Bounds.Queues times one queue's bound, every waiting item
// counted, a key's first among them (an item finding its queue empty is
// taken past the key's bound, and an item finding every queue empty is
// always taken), so slow user code cannot grow memory whatever the
// servers send, however many keys they use. Stopping drops what waits.
package deliver

import "sync"

// A Key is whom a queue's items are for: a server, and a principal of it
// ("" for a shared server).
type Key struct{ Server, Principal string }

// Bounds are the bounds of one key's queue, the items waiting and the
// bytes of their payload, and how many such bounds all the queues share.
type Bounds struct {
	Size   int // items waiting in one key's queue
	Bytes  int // bytes of their payload
	Queues int // how many queues' bounds all the queues together hold
}

// An Item is one call of user code, waiting in a queue.
type Item struct {
	Run  func()
	Size int // bytes of payload it holds
	Key  any // when not nil, a waiting item with an equal Key makes this one redundant
	// Owner, when not nil, is whom the item is for, which Drop names: a
	// comparable value, a pointer say.
	Owner any
}

// A queue holds the items of one key not yet served, in order, while a
// goroutine serves the key.
type queue struct {
	waiting []Item
	keys    map[any]bool // of the waiting items that have one
	bytes   int          // of the waiting items' payload
}

// Queues are items not yet served, by the key they are for (the
// notifier's: a [Key]). The zero value is empty and idle.
type Queues[K comparable] struct {
	mu      sync.Mutex   // guards the fields below
	queues  map[K]*queue // of the keys a goroutine serves
	waiting int          // items in every queue
	bytes   int          // of their payload
}

// Push queues it for key within b. It never blocks on user code. It
// reports dropped when it is past the bounds, and start when no goroutine
// serves key: the caller then starts one, which calls Serve with key, or,
// when it cannot, calls Stop with key. An item made redundant by a
// waiting one is neither queued nor dropped.
func (qs *Queues[K]) Push(key K, it Item, b Bounds) (start, dropped bool) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.queues[key]
	if q != nil && it.Key != nil && q.keys[it.Key] {
		return false, false
	}
	if q != nil && len(q.waiting) > 0 && (len(q.waiting) >= b.Size || q.bytes+it.Size > b.Bytes) ||
		qs.waiting > 0 && (qs.waiting >= b.Queues*b.Size || qs.bytes+it.Size > b.Queues*b.Bytes) {
		return false, true
	}
	if q == nil {
		if qs.queues == nil {
			qs.queues = map[K]*queue{}
		}
		q = &queue{}
		qs.queues[key] = q
		start = true
	}
	q.waiting = append(q.waiting, it)
	q.bytes += it.Size
	qs.waiting++
	qs.bytes += it.Size
	if it.Key != nil {
		if q.keys == nil {
			q.keys = map[any]bool{}
		}
		q.keys[it.Key] = true
	}
	return start, false
}

// Serve runs the waiting items of key, one at a time, in order, until none
// waits or stop reports true; served is called before each runs. key is
// then idle, and what waited for it dropped.
func (qs *Queues[K]) Serve(key K, stop func() bool, served func()) {
	for {
		it, ok := qs.next(key, stop())
		if !ok {
			return
		}
		served()
		it.Run()
	}
}

// Drop drops the items waiting for key whose Owner is owner, and returns
// how many it dropped.
func (qs *Queues[K]) Drop(key K, owner any) int {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.queues[key]
	if q == nil {
		return 0
	}
	kept := q.waiting[:0]
	for _, it := range q.waiting {
		if it.Owner == nil || it.Owner != owner {
			kept = append(kept, it)
			continue
		}
		qs.took(q, it)
	}
	n := len(q.waiting) - len(kept)
	clear(q.waiting[len(kept):])
	q.waiting = kept
	return n
}

// Stop drops what waits for key, for a goroutine that Push asked for and
// that could not start: key is then idle.
func (qs *Queues[K]) Stop(key K) { qs.next(key, true) }

// next takes the first waiting item of key. When there is none, or on
// stop, it reports false, and key is left idle, its items dropped.
func (qs *Queues[K]) next(key K, stop bool) (Item, bool) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.queues[key]
	if q == nil {
		return Item{}, false
	}
	if stop || len(q.waiting) == 0 {
		qs.waiting -= len(q.waiting)
		qs.bytes -= q.bytes
		delete(qs.queues, key)
		return Item{}, false
	}
	it := q.waiting[0]
	q.waiting[0] = Item{}
	q.waiting = q.waiting[1:]
	qs.took(q, it)
	return it, true
}

// took uncounts it, an item taken out of q's waiting items. qs.mu is held.
func (qs *Queues[K]) took(q *queue, it Item) {
	q.bytes -= it.Size
	qs.waiting--
	qs.bytes -= it.Size
	if it.Key != nil {
		delete(q.keys, it.Key)
	}
}

// Size estimates the bytes a decoded JSON value holds, as the payload of
// an item.
func Size(v any) int {
	n := 16
	switch v := v.(type) {
	case string:
		n += len(v)
	case []any:
		for _, e := range v {
			n += Size(e)
		}
	case map[string]any:
		for k, e := range v {
			n += len(k) + Size(e)
		}
	}
	return n
}
