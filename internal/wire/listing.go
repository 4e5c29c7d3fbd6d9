package wire

import (
	"bytes"
	"context"
	"net/http"
	"sync"
)

// A Listing holds the tools and prompts listed by the answers to the
// requests made with one context ([WithListing]) over HTTP, byte for byte
// as the server sent them ([Screen.Listed] tells what they hold): the
// listing of one caller, kept apart from the others' on a connection
// whose requests act for different callers. Its methods are safe for
// concurrent use; those of a nil Listing hold nothing.
type Listing struct {
	mu    sync.Mutex
	items map[listed][]byte
}

// listingKey is the context key of a request's *Listing.
type listingKey struct{}

// WithListing returns ctx carrying l: the items that the answers to the
// HTTP requests made with it list are kept in l, not in the screen.
func WithListing(ctx context.Context, l *Listing) context.Context {
	return context.WithValue(ctx, listingKey{}, l)
}

// listingOf returns the *Listing the context of req carries, or nil (and
// for a nil req).
func listingOf(req *http.Request) *Listing {
	if req == nil {
		return nil
	}
	l, _ := req.Context().Value(listingKey{}).(*Listing)
	return l
}

// Take returns the JSON of the item called name of list ("tools" or
// "prompts") as the last answer that listed it had it, and forgets it; nil
// when none did since the last Take of it.
func (l *Listing) Take(list, name string) []byte {
	if l == nil {
		return nil
	}
	k := listed{list, name}
	l.mu.Lock()
	defer l.mu.Unlock()
	raw := l.items[k]
	delete(l.items, k)
	return raw
}

// keep records the items of a list of msg in l (see Take): a copy of
// each, since a slice of msg would keep the whole message.
func (l *Listing) keep(list string, msg []byte, items []descriptor) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.items == nil {
		l.items = map[listed][]byte{}
	}
	for _, d := range items {
		if name, ok := stringValue(d.name.raw(msg)); d.name.ok && ok {
			l.items[listed{list, name}] = bytes.Clone(d.raw(msg))
		}
	}
}
