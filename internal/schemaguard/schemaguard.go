// Package schemaguard is the one gate a server's JSON schema passes before
// anything resolves, validates, inlines or indexes it. [Check] bounds the
// schema's nesting and size, follows its references, and refuses what a
// resolver or validator cannot take safely: references it cannot follow
// with certainty, and reference cycles that never leave the value being
// validated (jsonschema-go follows {"$ref":"#"} until the goroutine's stack
// passes 1 GB, a fatal error that no recover stops).
//
// It is pure: a decoded JSON schema in (map[string]any, []any and scalars,
// as encoding/json decodes into any), an [*Error] or nil out. It never
// changes its input. The callers name the tool or the request in their
// errors.
package schemaguard

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
)

// The bounds of a schema that [Check] accepts.
const (
	// MaxDepth bounds the nesting of the schema as JSON, counting objects
	// and arrays. The validator's time grows with the square of the
	// depth; real tool schemas stay under 20.
	MaxDepth = 128
	// MaxNodes bounds the JSON values in the schema, and what its
	// in-place subschemas (allOf, anyOf, oneOf, not, if/then/else,
	// dependentSchemas, $ref) expand to once references are followed: a
	// chain of definitions that each use the next twice doubles the work
	// of validating one value at every step.
	MaxNodes = 100_000
)

// maxPath bounds the path an Error's text shows, and the cycle it lists;
// maxQuoted a reference or a name it quotes; in bytes: a server writes
// them.
const (
	maxPath   = 200
	maxQuoted = 100
)

// An Error says why [Check] refused a schema.
type Error struct {
	Path   string // the JSON pointer of the place ("" for the root)
	Reason string
}

// Error implements error.
func (e *Error) Error() string {
	at := e.Path
	switch {
	case at == "":
		at = "the root"
	default:
		at = cut(at, maxPath)
	}
	return fmt.Sprintf("at %s: %s", at, e.Reason)
}

// cut returns s, cut to n bytes.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// refuse is an *Error at path.
func refuse(path, format string, args ...any) *Error {
	return &Error{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// The keywords whose values are subschemas, as jsonschema-go reads them,
// by the shape of their value: one subschema, a list, or a map of names to
// subschemas ("items" takes one or, in draft-07's tuple form, a list;
// draft-07's "dependencies" maps names to subschemas or to name lists).
// Those of inPlace apply to the value being validated itself; the others
// apply to a part of it (a property, an item, a name) or to nothing
// ($defs), so a cycle through them ends with the value.
var (
	oneKeys = set("not", "if", "then", "else", "items", "additionalItems", "contains", "unevaluatedItems",
		"additionalProperties", "propertyNames", "unevaluatedProperties", "contentSchema")
	listKeys    = set("allOf", "anyOf", "oneOf", "prefixItems", "items")
	mapKeys     = set("dependentSchemas", "dependencies", "properties", "patternProperties", "$defs", "definitions")
	inPlaceKeys = set("not", "if", "then", "else", "allOf", "anyOf", "oneOf", "dependentSchemas", "dependencies")
)

// set is a set of keys.
func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// keywords maps the keywords Check reads, folded as [keywordOf] folds, to
// their spelling. jsonschema-go decodes a schema with encoding/json, which
// matches an object's keys to keywords without regard to case: it reads
// "$REF" or "allof" as "$ref" or "allOf", so Check must too.
var keywords = func() map[string]string {
	m := map[string]string{}
	for _, keys := range []map[string]bool{oneKeys, listKeys, mapKeys, set("$ref", "$dynamicRef", "$recursiveRef", "$id", "$anchor", "$dynamicAnchor")} {
		for k := range keys {
			m[strings.ToUpper(k)] = k
		}
	}
	return m
}()

// maxKeyword is the length of the longest keyword, unevaluatedProperties.
const maxKeyword = 21

// keywordOf returns the keyword that jsonschema-go reads the member key as,
// if it is one Check reads. It folds key as encoding/json does to match a
// field's name (each rune to the upper case of its lower case, so that
// the Kelvin sign is a K), on the stack: it runs for every member.
func keywordOf(key string) (string, bool) {
	var buf [maxKeyword + utf8.UTFMax]byte
	b := buf[:0]
	for _, r := range key {
		if len(b) > maxKeyword {
			return "", false
		}
		b = utf8.AppendRune(b, unicode.ToUpper(unicode.ToLower(r)))
	}
	name, ok := keywords[string(b)]
	return name, ok
}

// keywordsOf returns the members of the subschema m at path with the
// keywords Check reads spelled as such (m itself when they all are), or an
// error when two members are read as one keyword: which of them the
// validator keeps depends on their order, which a decoded map has lost.
func keywordsOf(m map[string]any, path string) (map[string]any, error) {
	odd := false
	for key := range m {
		if name, ok := keywordOf(key); ok && name != key {
			odd = true
			break
		}
	}
	if !odd {
		return m, nil
	}
	out := make(map[string]any, len(m))
	spelled := map[string]string{}
	for _, key := range jsonvalue.SortedKeys(m) {
		name, ok := keywordOf(key)
		if !ok {
			out[key] = m[key]
			continue
		}
		if other, dup := spelled[name]; dup {
			return nil, refuse(path, "%q and %q are both read as %s", cut(other, maxQuoted), cut(key, maxQuoted), name)
		}
		spelled[name] = key
		out[name] = m[key]
	}
	return out, nil
}

// A node is one subschema.
type node struct {
	path    string
	inPlace []*node // its in-place subschemas, then what its $ref points to
	ref     string  // its $ref, "" for none
	state   int8    // 0 unvisited, 1 on the path, 2 done
	weight  int     // the subschemas it expands to in place, itself included
}

// A walk is the state of one Check.
type walk struct {
	values   int
	nodes    map[string]*node // by JSON pointer
	anchors  map[string]*node // $anchor and $dynamicAnchor names
	refs     []*node          // the nodes with a $ref
	nestedID string           // the path of a $id below the root, if any
}

// Check returns nil when schema can be handed to a resolver, validator,
// inliner or indexer, or an [*Error] saying where and why not:
//
//   - it nests deeper than [MaxDepth] or holds more than [MaxNodes] values;
//   - it holds $dynamicRef or $recursiveRef (resolved at validation time,
//     out of reach of a static check);
//   - a $ref is not a string, not local ("#", "#/json/pointer" or
//     "#anchor"), or points to no subschema; or the schema mixes
//     references with a $id below its root (which moves their base);
//   - references form a cycle through in-place keywords only ($ref, allOf,
//     anyOf, oneOf, not, if/then/else, dependentSchemas), such as
//     {"$ref":"#"}, a property whose $ref is itself, or $defs x → y → x;
//   - followed, its in-place subschemas expand past [MaxNodes].
//
// Recursion through a keyword that descends into the value (properties,
// items, ...: a tree of nodes) is accepted: validation follows it only as
// deep as the value goes.
func Check(schema map[string]any) error {
	w := &walk{nodes: map[string]*node{}, anchors: map[string]*node{}}
	if err := w.schema(schema, "", 0); err != nil {
		return err
	}
	if len(w.refs) == 0 {
		return nil // no cycle, and in place it expands to no more than it holds
	}
	if w.nestedID != "" {
		return refuse(w.nestedID, "$id below the root moves the base of the references; they are not followed")
	}
	for _, n := range w.refs {
		target, err := w.target(n)
		if err != nil {
			return err
		}
		n.inPlace = append(n.inPlace, target)
	}
	return w.expand()
}

// count counts one JSON value at depth, refusing past the bounds.
func (w *walk) count(path string, depth int) error {
	if depth > MaxDepth {
		return refuse(path, "it nests deeper than %d levels", MaxDepth)
	}
	if w.values++; w.values > MaxNodes {
		return refuse(path, "it holds more than %d values", MaxNodes)
	}
	return nil
}

// schema records the subschema v at path and walks what it holds.
func (w *walk) schema(v any, path string, depth int) error {
	m, ok := v.(map[string]any)
	if !ok {
		if _, ok := v.(bool); ok {
			w.nodes[path] = &node{path: path}
		}
		return w.data(v, path, depth) // a boolean schema, or a value jsonschema-go refuses to decode
	}
	if err := w.count(path, depth); err != nil {
		return err
	}
	m, err := keywordsOf(m, path)
	if err != nil {
		return err
	}
	n := &node{path: path}
	w.nodes[path] = n
	for _, key := range []string{"$dynamicRef", "$recursiveRef"} {
		if _, ok := m[key]; ok {
			return refuse(path, "%s is resolved while validating; it is not followed", key)
		}
	}
	if ref, ok := m["$ref"]; ok {
		s, ok := ref.(string)
		if !ok {
			return refuse(path, "$ref is a %T, not a string", ref)
		}
		if s != "" {
			n.ref = s
			w.refs = append(w.refs, n)
		}
	}
	if _, ok := m["$id"]; ok && path != "" && w.nestedID == "" {
		w.nestedID = path
	}
	for _, key := range []string{"$anchor", "$dynamicAnchor"} {
		if name, ok := m[key].(string); ok && name != "" {
			if _, dup := w.anchors[name]; dup {
				return refuse(path, "anchor %q is defined twice", cut(name, maxQuoted))
			}
			w.anchors[name] = n
		}
	}
	for _, key := range jsonvalue.SortedKeys(m) {
		at := path + "/" + jsonvalue.PointerToken(key)
		if err := w.keyword(n, key, m[key], at, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// keyword walks the value v of key in the subschema n, at path.
func (w *walk) keyword(n *node, key string, v any, path string, depth int) error {
	switch v := v.(type) {
	case map[string]any:
		switch {
		case oneKeys[key]:
			return w.sub(n, key, v, path, depth)
		case mapKeys[key]:
			if err := w.count(path, depth); err != nil {
				return err
			}
			for _, name := range jsonvalue.SortedKeys(v) {
				if err := w.sub(n, key, v[name], path+"/"+jsonvalue.PointerToken(name), depth+1); err != nil {
					return err
				}
			}
			return nil
		}
	case bool:
		if oneKeys[key] {
			return w.sub(n, key, v, path, depth)
		}
	case []any:
		if listKeys[key] {
			if err := w.count(path, depth); err != nil {
				return err
			}
			for i, e := range v {
				if err := w.sub(n, key, e, path+"/"+strconv.Itoa(i), depth+1); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return w.data(v, path, depth)
}

// sub walks v, a subschema under key of n at path, and records it as one
// of n's in-place subschemas when key applies in place.
func (w *walk) sub(n *node, key string, v any, path string, depth int) error {
	if err := w.schema(v, path, depth); err != nil {
		return err
	}
	if c := w.nodes[path]; c != nil && inPlaceKeys[key] {
		n.inPlace = append(n.inPlace, c)
	}
	return nil
}

// data counts v, a value that is no subschema (an enum, a default, a
// keyword jsonschema-go does not know), and what it holds.
func (w *walk) data(v any, path string, depth int) error {
	if err := w.count(path, depth); err != nil {
		return err
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range jsonvalue.SortedKeys(v) {
			if err := w.data(v[k], path+"/"+jsonvalue.PointerToken(k), depth+1); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := w.data(e, path+"/"+strconv.Itoa(i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// target returns the subschema that the $ref of n points to.
func (w *walk) target(n *node) (*node, error) {
	u, err := url.Parse(n.ref)
	if err != nil || u.Scheme != "" || u.Opaque != "" || u.Host != "" || u.Path != "" || u.RawQuery != "" {
		return nil, refuse(n.path, "$ref %q does not point into this schema (#, #/pointer or #anchor)", cut(n.ref, maxQuoted))
	}
	frag := u.Fragment
	if frag != "" && !strings.HasPrefix(frag, "/") {
		if t := w.anchors[frag]; t != nil {
			return t, nil
		}
		return nil, refuse(n.path, "$ref %q names no anchor of this schema", cut(n.ref, maxQuoted))
	}
	var path strings.Builder
	for i, tok := range strings.Split(frag, "/") {
		if i == 0 {
			continue // before the first "/"
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		path.WriteString("/" + jsonvalue.PointerToken(tok))
	}
	if t := w.nodes[path.String()]; t != nil {
		return t, nil
	}
	return nil, refuse(n.path, "$ref %q points to no subschema", cut(n.ref, maxQuoted))
}

// expand refuses a cycle of in-place subschemas, and in-place expansions
// past MaxNodes, visiting each node once (the in-place graph is then a
// DAG, and a node's weight is computed from its subschemas').
func (w *walk) expand() error {
	for _, path := range jsonvalue.SortedKeys(w.nodes) {
		if err := w.visit(w.nodes[path], nil); err != nil {
			return err
		}
	}
	return nil
}

// visit computes the weight of n, whose in-place ancestors on the way
// from the walk's start are on.
func (w *walk) visit(n *node, on []*node) error {
	switch n.state {
	case 2:
		return nil
	case 1:
		i := slices.Index(on, n)
		var loop []string
		for _, c := range on[i:] {
			loop = append(loop, pointer(c.path))
		}
		loop = append(loop, pointer(n.path))
		return refuse(n.path, "the references form a cycle that never leaves the value: %s", cut(strings.Join(loop, " → "), maxPath))
	}
	n.state = 1
	on = append(on, n)
	n.weight = 1
	for _, c := range n.inPlace {
		if err := w.visit(c, on); err != nil {
			return err
		}
		if n.weight += c.weight; n.weight > MaxNodes {
			return refuse(n.path, "its references expand it past %d subschemas", MaxNodes)
		}
	}
	n.state = 2
	return nil
}

// pointer is path as a reference: "#" and a JSON pointer.
func pointer(path string) string { return "#" + path }
