package sdkcache

// The keys with which the adapter gets past go-sdk's list cache. A key is
// the prefix, a slot number, then "\x00" and the real key (a lookup,
// always a miss in the SDK's cache), or "\x01" (a purge, never sent). The
// SDK stores the answer under the prefix and the slot number alone.

import (
	"strconv"
	"strings"
)

// prefix starts every key of [Lookup] and [Purge]; no server's cursor or
// URI starts with a NUL.
const prefix = "\x00mcpadapter-uncached\x00"

// Lookup is the key of a lookup of key whose answer the SDK is to store in
// slot n.
func Lookup(n int, key string) string {
	return prefix + strconv.Itoa(n) + "\x00" + key
}

// Purge is the key that makes the SDK store an empty page in slot n.
func Purge(n int) string { return prefix + strconv.Itoa(n) + "\x01" }

// parseKey reads a key of [Lookup] or [Purge]: the slot the SDK is to store
// the answer under, and the real key of a lookup or purge true. ok is
// false for any other string.
func parseKey(s string) (slot, key string, purge, ok bool) {
	rest, found := strings.CutPrefix(s, prefix)
	if !found {
		return "", "", false, false
	}
	digits := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if digits <= 0 {
		return "", "", false, false
	}
	slot = prefix + rest[:digits]
	switch rest[digits] {
	case '\x00':
		return slot, rest[digits+1:], false, true
	case '\x01':
		return slot, "", true, true
	}
	return "", "", false, false
}
