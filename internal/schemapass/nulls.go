package schemapass

import (
	"maps"
	"slices"
)

// maxNullDepth bounds how deep DropAbsentNulls follows objects and $refs,
// so that a recursive schema or a deep argument cannot make it loop.
const maxNullDepth = 32

// DropAbsentNulls returns args without the nulls that mean "absent": a
// property of an object whose value is null, that the object's schema does
// not require, and whose own schema does not accept null. A model in
// OpenAI's strict mode sends such nulls for the optional properties it
// leaves out ([OpenAIStrict] makes every property required and nullable),
// and servers refuse them ("expected number, received null") or read them
// as zero. A null that the property's schema accepts (type "null", a type
// list holding "null", an anyOf or oneOf branch that accepts null, an enum
// or const null, no type at all) is kept, as is a null for a required or an
// undeclared property: the server decides. Required means named by the
// "required" of the object's schema, of its one object branch or of any of
// its allOf branches, or by a dependentRequired (draft-07: dependencies)
// entry whose property is in args.
//
// It follows nested objects (properties, items, local $ref into $defs or
// definitions, the one object branch of anyOf, oneOf or allOf). schema is
// the tool's input schema; neither it nor args is modified: the result is
// args itself when nothing is dropped, else a copy (sharing what did not
// change).
func DropAbsentNulls(schema, args map[string]any) map[string]any {
	d := nullDropper{root: schema}
	out, _ := d.object(schema, args, 0)
	return out
}

// A nullDropper drops absent nulls under the schema root.
type nullDropper struct{ root map[string]any }

// object returns args without absent nulls under the object schema s, and
// whether anything was dropped.
func (d nullDropper) object(s, args map[string]any, depth int) (map[string]any, bool) {
	shape := d.objectSchema(s, depth)
	props, _ := shape["properties"].(map[string]any)
	if props == nil || depth > maxNullDepth {
		return args, false
	}
	var required []any // asked for at the first null: most arguments have none
	asked := false
	var out map[string]any
	for k, v := range args {
		ps, declared := props[k]
		if !declared {
			continue
		}
		var nv any
		changed := false
		switch {
		case v == nil:
			if !asked {
				required, asked = d.required(args, depth, s, shape), true
			}
			if slices.Contains(required, any(k)) || d.acceptsNull(ps, depth) {
				continue
			}
		default:
			if nv, changed = d.value(ps, v, depth+1); !changed {
				continue
			}
		}
		if out == nil {
			out = maps.Clone(args)
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = nv
		}
	}
	if out == nil {
		return args, false
	}
	return out, true
}

// value returns v without absent nulls under schema s, and whether
// anything changed: objects are followed through their properties, arrays
// through items.
func (d nullDropper) value(s any, v any, depth int) (any, bool) {
	m, _ := d.resolve(s, depth).(map[string]any)
	if m == nil {
		return v, false
	}
	switch v := v.(type) {
	case map[string]any:
		return d.object(m, v, depth)
	case []any:
		items := d.arrayItems(m, depth)
		if items == nil {
			return v, false
		}
		var out []any
		for i, e := range v {
			ne, changed := d.value(items, e, depth+1)
			if !changed {
				continue
			}
			if out == nil {
				out = slices.Clone(v)
			}
			out[i] = ne
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// required returns the properties that the object schemas given require
// of args: those their "required" lists name, those of their allOf
// branches (each applies to the object), and those their dependentRequired
// (draft-07: dependencies) ask for when the property they depend on is in
// args.
func (d nullDropper) required(args map[string]any, depth int, schemas ...map[string]any) []any {
	var names []any
	for _, s := range schemas {
		all := []map[string]any{s}
		branches, _ := s["allOf"].([]any)
		for _, b := range branches {
			if bm, ok := d.resolve(b, depth).(map[string]any); ok {
				all = append(all, bm)
			}
		}
		for _, m := range all {
			req, _ := m["required"].([]any)
			names = append(names, req...)
			for _, k := range []string{"dependentRequired", "dependencies"} {
				deps, _ := m[k].(map[string]any)
				for on, list := range deps {
					if _, ok := args[on]; ok {
						l, _ := list.([]any) // a list of names; dependencies also takes schemas
						names = append(names, l...)
					}
				}
			}
		}
	}
	return names
}

// objectSchema returns the schema of objects under s: s itself when it has
// properties, else its one branch of anyOf, oneOf or allOf that has.
func (d nullDropper) objectSchema(s map[string]any, depth int) map[string]any {
	if _, ok := s["properties"]; ok {
		return s
	}
	var found map[string]any
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		branches, _ := s[k].([]any)
		for _, b := range branches {
			bm, _ := d.resolve(b, depth).(map[string]any)
			if _, ok := bm["properties"]; !ok {
				continue
			}
			if found != nil {
				return nil // two object shapes: which one the value has is the server's call
			}
			found = bm
		}
	}
	return found
}

// arrayItems returns the items schema of the array schema s, or nil.
func (d nullDropper) arrayItems(s map[string]any, depth int) any {
	if _, ok := s["items"].(map[string]any); ok {
		return s["items"]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		branches, _ := s[k].([]any)
		for _, b := range branches {
			bm, _ := d.resolve(b, depth).(map[string]any)
			if items, ok := bm["items"].(map[string]any); ok {
				return items
			}
		}
	}
	return nil
}

// acceptsNull reports whether schema s accepts null. A schema it cannot
// read (a $ref it cannot resolve, a boolean true) accepts it.
func (d nullDropper) acceptsNull(s any, depth int) bool {
	if depth > maxNullDepth {
		return true
	}
	m, ok := d.resolve(s, depth).(map[string]any)
	if !ok {
		return s != false
	}
	if m["nullable"] == true { // OpenAPI 3.0's spelling
		return true
	}
	if c, ok := m["const"]; ok {
		return c == nil
	}
	if enum, ok := m["enum"].([]any); ok && !slices.Contains(enum, nil) {
		return false
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := m[k].([]any); ok {
			if !slices.ContainsFunc(branches, func(b any) bool { return d.acceptsNull(b, depth+1) }) {
				return false
			}
		}
	}
	if branches, ok := m["allOf"].([]any); ok {
		if slices.ContainsFunc(branches, func(b any) bool { return !d.acceptsNull(b, depth+1) }) {
			return false
		}
	}
	switch t := m["type"].(type) {
	case string:
		return t == "null"
	case []any:
		return slices.Contains(t, any("null"))
	}
	return true
}

// resolve follows the local $ref of s, if it has one, to its target.
func (d nullDropper) resolve(s any, depth int) any {
	for range maxNullDepth - depth {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		target, err := resolveRef(d.root, ref)
		if err != nil {
			return nil
		}
		s = target
	}
	return nil
}
