// Package jsonvalue copies and rewrites decoded JSON values: map[string]any,
// []any and scalars, as encoding/json decodes into any, and escapes the
// tokens of the JSON pointers that name places in them. It is pure and knows
// nothing of the adapter.
package jsonvalue

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Copy copies the maps and slices of a decoded JSON value.
func Copy[T any](v T) T {
	out, _ := Map(v, func(v any) any { return v }).(T)
	return out
}

// Map copies the maps and slices of a decoded JSON value, with every other
// value replaced by f of it.
func Map(v any, f func(any) any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = Map(e, f)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = Map(e, f)
		}
		return s
	}
	return f(v)
}

// Object returns a deep copy of v as a map, or nil when v is not a JSON
// object. A value that was not decoded as a map (built in Go, a
// json.RawMessage) goes through JSON.
func Object(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return Copy(m)
	}
	var m map[string]any
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// SortedKeys returns the keys of m in order, in one allocation
// (slices.Sorted(maps.Keys(m)) takes several: the iterator's and the
// slice's growth).
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Compact returns a shallow copy of m with room for its entries alone (nil
// for nil). A decoder that makes every map it decodes with room to spare
// (segmentio/encoding, go-sdk's, makes 64 entries' worth: 4.75 KiB) leaves
// maps that a long-lived value should not keep.
func Compact[M ~map[string]V, V any](m M) M {
	if m == nil {
		return nil
	}
	c := make(M, len(m))
	maps.Copy(c, m)
	return c
}

// PointerToken escapes one token of a JSON pointer (RFC 6901): "~" as
// "~0", "/" as "~1".
func PointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
