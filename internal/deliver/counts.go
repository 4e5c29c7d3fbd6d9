package deliver

import "sync"

// Counts are counters C (a struct of int64 fields) by group, and by key
// for the limit keys counted most recently: past it, the key counted
// least recently is forgotten. Every key belongs to one group, and a count
// of a key is a count of its group too.
type Counts[K, G comparable, C any] struct {
	mu     sync.Mutex            // guards the fields below
	groups map[G]*C              // made by NewCounts, never changed
	keys   map[K]*keyCount[G, C] // at most limit
	limit  int
	tick   uint64 // counts the calls of Add
}

// A keyCount holds the counts of one key.
type keyCount[G comparable, C any] struct {
	c     C
	group G
	used  uint64 // the tick of the last count
}

// NewCounts returns the counts of groups (each group's counters, which
// Counts then owns) and of at most limit keys.
func NewCounts[K, G comparable, C any](groups map[G]*C, limit int) *Counts[K, G, C] {
	return &Counts[K, G, C]{groups: groups, limit: limit}
}

// Add adds one to the counter field selects, of key and of its group,
// and returns key's new count. group must be one of NewCounts's.
func (c *Counts[K, G, C]) Add(group G, key K, field func(*C) *int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	*field(c.groups[group])++
	k := c.keys[key]
	if k == nil {
		if len(c.keys) >= c.limit {
			c.forgetOldest()
		}
		if c.keys == nil {
			c.keys = map[K]*keyCount[G, C]{}
		}
		k = &keyCount[G, C]{group: group}
		c.keys[key] = k
	}
	k.used = c.tick
	*field(&k.c)++
	return *field(&k.c)
}

// forgetOldest drops the counts of the key counted least recently. c.mu
// is held.
func (c *Counts[K, G, C]) forgetOldest() {
	var oldest K
	var used uint64
	for key, k := range c.keys {
		if used == 0 || k.used < used {
			oldest, used = key, k.used
		}
	}
	delete(c.keys, oldest)
}

// Of returns the counts of group, and calls each with every key of group
// still counted and its counts.
func (c *Counts[K, G, C]) Of(group G, each func(K, C)) C {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, k := range c.keys {
		if k.group == group {
			each(key, k.c)
		}
	}
	return *c.groups[group]
}
