// Package deliver is the notifier's machinery (the root package's
// notify.go): fair, bounded queues of calls of user code by key, served by
// one goroutine while any waits, and the idle timeout that progress
// resets. It knows nothing of MCP or of the adapter: its keys are plain
// values.
//
// The queues: each key has a queue of its own, bounded in items and in
// the bytes of their payload, and one goroutine, running while a queue is
// not empty (idle queues keep none), serves the items one at a time,
// taking the non-empty queues in turn. A key's items are served in the
// order they came, and a flood of one key fills its own queue only: past
// its bound an item is dropped, and the caller counts it, while a quiet
// key's next item waits behind one of the flood's at most. All the queues
// together hold at most Bounds.Queues times one queue's bound, every
// waiting item counted, a key's first among them (an item finding its
// queue empty is taken past the key's bound, and an item finding every
// queue empty is always taken), so slow user code cannot grow memory
// whatever the servers send, however many keys they use. Stopping drops
// what waits.
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
}

// A queue holds the items of one key not yet served, in order.
type queue struct {
	waiting []Item
	keys    map[any]bool // of the waiting items that have one
	bytes   int          // of the waiting items' payload
}

// Queues are items not yet served, by the key they are for (the
// notifier's: a [Key]). The zero value is empty and idle.
type Queues[K comparable] struct {
	mu      sync.Mutex // guards the fields below
	queues  map[K]*queue
	turns   []K  // the keys of the queues, each once, the next to serve first
	waiting int  // items in every queue
	bytes   int  // of their payload
	running bool // a goroutine serves
}

// Push queues it for key within b. It never blocks on user code. It
// reports dropped when it is past the bounds, and start when no goroutine
// serves the queues: the caller then starts one, which calls Serve, or,
// when it cannot, calls Stop. An item made redundant by a waiting one is
// neither queued nor dropped.
func (qs *Queues[K]) Push(key K, it Item, b Bounds) (start, dropped bool) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.queues[key]
	if q != nil && it.Key != nil && q.keys[it.Key] {
		return false, false
	}
	if q != nil && (len(q.waiting) >= b.Size || q.bytes+it.Size > b.Bytes) ||
		qs.waiting > 0 && (qs.waiting >= b.Queues*b.Size || qs.bytes+it.Size > b.Queues*b.Bytes) {
		return false, true
	}
	if q == nil {
		if qs.queues == nil {
			qs.queues = map[K]*queue{}
		}
		q = &queue{}
		qs.queues[key] = q
		qs.turns = append(qs.turns, key)
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
	start = !qs.running
	qs.running = true
	return start, false
}

// Serve runs the waiting items, one at a time, the queues in turn, until
// none waits or stop reports true; served is called with each item's key
// before it runs. qs is then empty and idle.
func (qs *Queues[K]) Serve(stop func() bool, served func(K)) {
	for {
		key, it, ok := qs.next(stop())
		if !ok {
			return
		}
		served(key)
		it.Run()
	}
}

// Stop drops what waits, for a goroutine that Push asked for and that
// could not start: qs is then empty and idle.
func (qs *Queues[K]) Stop() { qs.next(true) }

// next takes the first waiting item of the queue whose turn it is, and
// passes the turn on. When there is none, or on stop, it reports false,
// and qs is left empty and idle.
func (qs *Queues[K]) next(stop bool) (K, Item, bool) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if stop || len(qs.turns) == 0 {
		qs.queues, qs.turns, qs.waiting, qs.bytes, qs.running = nil, nil, 0, 0, false
		var zero K
		return zero, Item{}, false
	}
	key := qs.turns[0]
	qs.turns = qs.turns[1:]
	q := qs.queues[key]
	it := q.waiting[0]
	q.waiting[0] = Item{}
	q.waiting = q.waiting[1:]
	q.bytes -= it.Size
	qs.waiting--
	qs.bytes -= it.Size
	if it.Key != nil {
		delete(q.keys, it.Key)
	}
	if len(q.waiting) == 0 {
		delete(qs.queues, key)
	} else {
		qs.turns = append(qs.turns, key)
	}
	return key, it, true
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
