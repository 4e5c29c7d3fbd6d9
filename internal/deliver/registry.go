package deliver

import (
	"context"
	"crypto/rand"
	"slices"
	"sync"
)

// A Registry holds what the requests and principals of each live
// connection C registered: the progress sinks S of the requests in flight
// on it, by progress token, and its resource subscriptions. A
// notification counts only when it comes on the connection its request
// went out on: a server cannot reach the requests made on another
// connection with a token it learnt. Tokens are random, 128 bits: they
// cannot be guessed either.
//
// A connection's entry lives from Attach to Release: a released
// connection is unreachable from the registry, whatever requests on it
// were still finishing.
//
// A connection may hand notifications to their handler apart from
// responses (go-sdk does), so that the progress a server sent just before
// its answer is handled just after the request returned. The registry
// therefore keeps the sinks of the last LateSinks finished requests too:
// memory stays bounded by the requests in flight plus that many.
//
// The zero Registry is empty.
type Registry[C comparable, S any] struct {
	mu    sync.Mutex             // guards the fields below, and the tokens of every entry
	conns map[C]*entry[S]        // of the attached connections
	late  [LateSinks]lateSink[S] // the sinks of finished requests, oldest at lateN
	lateN int
}

// LateSinks is how many finished requests still get their late progress.
const LateSinks = 64

// An entry is the registry of one connection.
type entry[S any] struct {
	byToken map[string]*sink[S]
	subs    *Subscriptions // nil until a principal subscribes
}

// A sink is a registered request: its sink, and the func that resets its
// idle timeout (nil once it finished).
type sink[S any] struct {
	s     S
	touch func()
}

// A lateSink is a finished request: its token in the entry of its
// connection.
type lateSink[S any] struct {
	e     *entry[S]
	token string
}

// Attach starts the registry of c.
func (r *Registry[C, S]) Attach(c C) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = make(map[C]*entry[S])
	}
	r.conns[c] = &entry[S]{byToken: make(map[string]*sink[S])}
}

// Release drops the registry of c: its sinks, late ones included, and its
// subscriptions.
func (r *Registry[C, S]) Release(c C) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.conns[c]
	delete(r.conns, c)
	for i, l := range r.late {
		if l.e == e {
			r.late[i] = lateSink[S]{}
		}
	}
}

// Register registers s, the sink of a request on c whose idle timeout
// touch resets (nil: none), under a new token, and returns the token and
// the func that marks the request finished. When c is not attached, or
// released, no notification can reach s: it is not kept.
func (r *Registry[C, S]) Register(c C, s S, touch func()) (string, func()) {
	token := rand.Text()
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.conns[c]
	if e == nil {
		return token, func() {}
	}
	k := &sink[S]{s: s, touch: touch}
	e.byToken[token] = k
	return token, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		k.touch = nil // the request's timer is gone
		if r.conns[c] != e {
			return // released: nothing can reach s any more
		}
		i := r.lateN % LateSinks
		if old := r.late[i]; old.e != nil {
			delete(old.e.byToken, old.token)
		}
		r.late[i] = lateSink[S]{e: e, token: token}
		r.lateN++
	}
}

// Lookup returns the sink of token for a notification that came on c, and
// the func that resets its request's idle timeout while it runs (nil:
// none); ok is false when there is no such sink.
func (r *Registry[C, S]) Lookup(c C, token any) (s S, touch func(), ok bool) {
	t, isString := token.(string)
	if !isString {
		return s, nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.conns[c]
	if e == nil {
		return s, nil, false
	}
	k := e.byToken[t]
	if k == nil {
		return s, nil, false
	}
	return k.s, k.touch, true
}

// Subscriptions returns the subscriptions of c, made if create is set, or
// nil: c is released, or, without create, has none.
func (r *Registry[C, S]) Subscriptions(c C, create bool) *Subscriptions {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.conns[c]
	if e == nil {
		return nil
	}
	if e.subs == nil && create {
		e.subs = &Subscriptions{turn: make(chan struct{}, 1), byURI: map[string][]string{}}
	}
	return e.subs
}

// Subscribers returns the principals subscribed to uri on c.
func (r *Registry[C, S]) Subscribers(c C, uri string) []string {
	s := r.Subscriptions(c, false)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.byURI[uri])
}

// Subscriptions holds the resource subscriptions of one connection: the
// principals subscribed to each URI. A URI's subscription at the server
// lasts while a principal holds it.
type Subscriptions struct {
	// turn is held, by a send into it, while the subscriptions change and
	// their request is sent: the requests of one connection go one at a
	// time, so that the server's subscription follows the principals'.
	turn  chan struct{}
	mu    sync.Mutex          // guards byURI
	byURI map[string][]string // the principals subscribed to each URI, in the order they subscribed
}

// Take waits for the turn to change s, up to ctx's end.
func (s *Subscriptions) Take(ctx context.Context) error {
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Give ends the turn that Take began.
func (s *Subscriptions) Give() { <-s.turn }

// Add subscribes principal to uri, and reports whether it was not yet.
func (s *Subscriptions) Add(uri, principal string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.byURI[uri], principal) {
		return false
	}
	s.byURI[uri] = append(s.byURI[uri], principal)
	return true
}

// Remove unsubscribes principal from uri. It reports whether principal was
// subscribed, and whether the last subscriber of uri went.
func (s *Subscriptions) Remove(uri, principal string) (was, last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.byURI[uri]
	i := slices.Index(ps, principal)
	if i < 0 {
		return false, false
	}
	if ps = slices.Delete(ps, i, i+1); len(ps) == 0 {
		delete(s.byURI, uri)
		return true, true
	}
	s.byURI[uri] = ps
	return true, false
}

// All returns the principals subscribed to each URI: a copy.
func (s *Subscriptions) All() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make(map[string][]string, len(s.byURI))
	for uri, ps := range s.byURI {
		all[uri] = slices.Clone(ps)
	}
	return all
}

// Restore subscribes again, on a new connection, what the principals held
// on the connection before it (All): it adds them at once, so that an
// unsubscribe that comes first finds them, then, in its turn, asks the
// server for each URI still wanted with subscribe. A URI the server
// refuses is dropped; failed is told of it.
func (s *Subscriptions) Restore(ctx context.Context, held map[string][]string, subscribe func(context.Context, string) error, failed func(uri string, err error)) {
	for uri, ps := range held {
		for _, p := range ps {
			s.Add(uri, p)
		}
	}
	if err := s.Take(ctx); err != nil {
		return
	}
	defer s.Give()
	for uri, ps := range held {
		s.mu.Lock()
		wanted := len(s.byURI[uri]) > 0
		s.mu.Unlock()
		if !wanted {
			continue // unsubscribed meanwhile
		}
		if err := subscribe(ctx, uri); err != nil {
			for _, p := range ps {
				s.Remove(uri, p)
			}
			failed(uri, err)
		}
	}
}

// Held keeps, by key K (a server and principal), the subscriptions of
// connections that ended without being closed, for the next connection of
// the key to restore: a subscription belongs to its principal and server,
// not to one session. The zero Held is empty.
type Held[K comparable] struct {
	mu    sync.Mutex
	byKey map[K]map[string][]string
}

// Put keeps subs, the subscriptions (All) of key's connection that ended.
func (h *Held[K]) Put(key K, subs map[string][]string) {
	if len(subs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byKey == nil {
		h.byKey = map[K]map[string][]string{}
	}
	h.byKey[key] = subs
}

// Take returns and forgets what key's ended connection held, or nil.
func (h *Held[K]) Take(key K) map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.byKey[key]
	delete(h.byKey, key)
	return subs
}

// Drop forgets principal's subscription to uri kept for key: it
// unsubscribed while no connection of the key was live.
func (h *Held[K]) Drop(key K, uri, principal string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.byKey[key]
	if subs == nil {
		return
	}
	if subs[uri] = slices.DeleteFunc(subs[uri], func(p string) bool { return p == principal }); len(subs[uri]) == 0 {
		delete(subs, uri)
	}
	if len(subs) == 0 {
		delete(h.byKey, key)
	}
}
