package schemaguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// decode decodes the JSON object s.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

// nested returns an object schema whose property nests depth objects deep.
func nested(depth int) map[string]any {
	var inner any = map[string]any{"type": "string"}
	for range depth {
		inner = map[string]any{"properties": map[string]any{"x": inner}}
	}
	return map[string]any{"properties": map[string]any{"deep": inner}}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		path   string // "" with reason "" when accepted
		reason string
	}{
		{"plain", `{"type":"object","properties":{"n":{"type":"integer"}}}`, "", ""},
		{"defs", `{"$defs":{"addr":{"type":"object"}},"properties":{"home":{"$ref":"#/$defs/addr"},"work":{"$ref":"#/$defs/addr"}}}`, "", ""},
		{"draft-07 definitions", `{"definitions":{"u":{"type":"string"}},"properties":{"id":{"$ref":"#/definitions/u"}}}`, "", ""},
		{"tree", `{"$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"properties":{"root":{"$ref":"#/$defs/node"}}}`, "", ""},
		{"root ref in a property", `{"type":"object","properties":{"self":{"$ref":"#"}}}`, "", ""},
		{"anchor", `{"$defs":{"a":{"$anchor":"addr","type":"object"}},"properties":{"x":{"$ref":"#addr"}}}`, "", ""},
		{"escaped pointer", `{"$defs":{"a/b":{"type":"string"},"c~d":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a~1b"},"y":{"$ref":"#/$defs/c~0d"},"z":{"$ref":"#/$defs/a%7E1b"}}}`, "", ""},
		{"ref to a boolean schema", `{"$defs":{"f":false},"properties":{"x":{"$ref":"#/$defs/f"}}}`, "", ""},
		{"enum holding $ref data", `{"enum":[{"$ref":"#"}],"default":{"$ref":"#"}}`, "", ""},
		{"property named $ref", `{"properties":{"$ref":{"type":"string"}}}`, "", ""},
		{"root $id", `{"$id":"https://example.com/s.json","$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, "", ""},
		{"nested $id without references", `{"properties":{"x":{"$id":"https://example.com/x.json"}}}`, "", ""},

		{"root cycle", `{"$ref":"#","type":"object"}`, "", "cycle that never leaves the value: # → #"},
		{"property refers to itself", `{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`, "/properties/a", "#/properties/a → #/properties/a"},
		{"defs x → y → x", `{"$defs":{"x":{"$ref":"#/$defs/y"},"y":{"$ref":"#/$defs/x"}},"$ref":"#/$defs/x"}`, "/$defs/x", "#/$defs/x → #/$defs/y → #/$defs/x"},
		{"cycle through allOf", `{"$defs":{"x":{"allOf":[{"$ref":"#/$defs/x"}]}},"properties":{"a":{"$ref":"#/$defs/x"}}}`, "/$defs/x", "cycle"},
		{"cycle through if", `{"$defs":{"x":{"if":{"$ref":"#/$defs/x"}}}}`, "/$defs/x", "cycle"},
		{"cycle through dependentSchemas", `{"dependentSchemas":{"a":{"$ref":"#"}}}`, "", "cycle"},
		{"cycle through an anchor", `{"$anchor":"me","not":{"$ref":"#me"}}`, "", "cycle"},
		{"cycle in unused defs", `{"$defs":{"x":{"$ref":"#/$defs/x"}}}`, "/$defs/x", "cycle"},
		{"remote ref", `{"properties":{"x":{"$ref":"https://example.com/s.json"}}}`, "/properties/x", "does not point into this schema"},
		{"relative ref", `{"properties":{"x":{"$ref":"other.json#/a"}}}`, "/properties/x", "does not point into this schema"},
		{"dangling ref", `{"properties":{"x":{"$ref":"#/$defs/none"}}}`, "/properties/x", "points to no subschema"},
		{"ref into data", `{"enum":[{}],"properties":{"x":{"$ref":"#/enum/0"}}}`, "/properties/x", "points to no subschema"},
		{"unknown anchor", `{"properties":{"x":{"$ref":"#nowhere"}}}`, "/properties/x", "names no anchor"},
		{"duplicate anchor", `{"$defs":{"a":{"$anchor":"n"},"b":{"$anchor":"n"}}}`, "/$defs/b", "defined twice"},
		{"ref not a string", `{"properties":{"x":{"$ref":5}}}`, "/properties/x", "not a string"},
		{"dynamic ref", `{"properties":{"x":{"$dynamicRef":"#meta"}}}`, "/properties/x", "$dynamicRef"},
		{"recursive ref", `{"$recursiveRef":"#"}`, "", "$recursiveRef"},
		{"nested $id with references", `{"properties":{"x":{"$id":"https://example.com/x.json","$ref":"#/a"}}}`, "/properties/x", "$id below the root"},

		// jsonschema-go decodes keywords without regard to case (encoding/json).
		{"root cycle spelled $rEf", `{"$rEf":"#"}`, "", "cycle that never leaves the value: # → #"},
		{"cycle through ALLOF", `{"$defs":{"x":{"ALLOF":[{"$REF":"#/$defs/x"}]}}}`, "/$defs/x", "cycle"},
		{"cycle through a folded long s", `{"dependentSchema\u017f":{"a":{"$ref":"#"}}}`, "", "cycle"},
		{"pointer by the keyword's name", `{"Properties":{"a":{"$ref":"#/properties/a"}}}`, "/properties/a", "cycle"},
		{"pointer by the key's spelling", `{"Properties":{"a":{"type":"string"}},"$defs":{"b":{"$ref":"#/Properties/a"}}}`, "/$defs/b", "points to no subschema"},
		{"keyword spelled twice", `{"$ref":"#/$defs/a","$REF":"#","$defs":{"a":true}}`, "", `"$REF" and "$ref" are both read as $ref`},
		{"dynamic ref spelled otherwise", `{"$DynamicRef":"#meta"}`, "", "$dynamicRef"},
		{"spelled otherwise, no cycle", `{"TYPE":"object","Properties":{"a":{"Type":"string"}},"$Defs":{"d":{"type":"integer"}},"AllOf":[{"$Ref":"#/$defs/d"}]}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(decode(t, tt.schema))
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Check() = %v, want nil", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Check() = %v, want an *Error", err)
			}
			if e.Path != tt.path || !strings.Contains(e.Reason, tt.reason) {
				t.Errorf("Check() = %+v, want path %q and a reason with %q", e, tt.path, tt.reason)
			}
		})
	}
}

// TestCheckBounds: depth and size are bounded, and so is what references
// expand to in place.
func TestCheckBounds(t *testing.T) {
	// Each level is two: the schema, and its properties.
	if err := Check(nested(MaxDepth/2 - 2)); err != nil {
		t.Errorf("Check(depth %d) = %v, want nil", MaxDepth/2-2, err)
	}
	if err := Check(nested(MaxDepth)); err == nil || !strings.Contains(err.Error(), "nests deeper than") {
		t.Errorf("Check(depth %d) = %v, want a depth refusal", MaxDepth, err)
	}
	props := map[string]any{}
	for i := range MaxNodes {
		props[fmt.Sprintf("p%d", i)] = true
	}
	if err := Check(map[string]any{"properties": props}); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("Check(%d properties) = %v, want a size refusal", len(props), err)
	}
	// d0 uses d1 twice, d1 uses d2 twice, ...: 2^30 subschemas in place.
	defs := map[string]any{}
	for i := range 30 {
		next := map[string]any{"$ref": "#/$defs/d" + string(rune('a'+i+1))}
		defs["d"+string(rune('a'+i))] = map[string]any{"allOf": []any{next, next}}
	}
	defs["d"+string(rune('a'+30))] = map[string]any{"type": "string"}
	err := Check(map[string]any{"$defs": defs, "$ref": "#/$defs/da"})
	if err == nil || !strings.Contains(err.Error(), "expand it past") {
		t.Errorf("Check(doubling chain) = %v, want an expansion refusal", err)
	}
}

// TestCheckErrorBounded: the error's text is bounded, whatever the server
// wrote: a long reference, a long cycle, a deep path.
func TestCheckErrorBounded(t *testing.T) {
	long := strings.Repeat("x", 10_000)
	defs := map[string]any{}
	for i := range 1000 {
		defs[fmt.Sprintf("%s%04d", long[:50], i)] = map[string]any{"$ref": fmt.Sprintf("#/$defs/%s%04d", long[:50], (i+1)%1000)}
	}
	for name, schema := range map[string]map[string]any{
		"long ref":   {"properties": map[string]any{"x": map[string]any{"$ref": "https://example.com/" + long}}},
		"long cycle": {"$defs": defs},
		"deep path":  nested(MaxDepth),
	} {
		if err := Check(schema); err == nil || len(err.Error()) > 1000 {
			t.Errorf("%s: Check() = %d bytes of error, want an error of at most 1000", name, len(fmt.Sprint(err)))
		}
	}
}

// TestCheckedSchemasValidate: the recursive schemas Check accepts resolve
// and validate with jsonschema-go, which follows them as deep as the value.
func TestCheckedSchemasValidate(t *testing.T) {
	for _, tt := range []struct{ schema, valid, invalid string }{
		{`{"$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`,
			`{"children":[{"children":[{}]}]}`, `{"children":[{"children":[5]}]}`},
		{`{"type":"object","properties":{"self":{"$ref":"#"},"n":{"type":"integer"}}}`,
			`{"self":{"self":{"n":1}}}`, `{"self":{"self":{"n":"x"}}}`},
		// The premise of Check's folding: jsonschema-go reads "PROPERTIES" and "$Ref" as keywords.
		{`{"$Defs":{"n":{"TYPE":"integer"}},"PROPERTIES":{"n":{"$Ref":"#/$defs/n"}}}`,
			`{"n":1}`, `{"n":"x"}`},
	} {
		m := decode(t, tt.schema)
		if err := Check(m); err != nil {
			t.Fatalf("Check(%s) = %v", tt.schema, err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
			t.Fatal(err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("Resolve(%s): %v", tt.schema, err)
		}
		var valid, invalid any
		json.Unmarshal([]byte(tt.valid), &valid)
		json.Unmarshal([]byte(tt.invalid), &invalid)
		if err := r.Validate(valid); err != nil {
			t.Errorf("Validate(%s) = %v, want nil", tt.valid, err)
		}
		if err := r.Validate(invalid); err == nil {
			t.Errorf("Validate(%s) = nil, want an error", tt.invalid)
		}
	}
}

// TestCheckLeavesInput: Check does not change the schema.
func TestCheckLeavesInput(t *testing.T) {
	const in = `{"$defs":{"x":{"$ref":"#/$defs/y"},"y":{"$ref":"#/$defs/x"}},"properties":{"a":{"$ref":"#/$defs/x"}}}`
	m := decode(t, in)
	Check(m)
	out, _ := json.Marshal(m)
	if want, _ := json.Marshal(decode(t, in)); string(out) != string(want) {
		t.Errorf("schema after Check = %s, want %s", out, want)
	}
}

// BenchmarkCheck: the guard over a tool schema of ordinary size, with
// references (what a call with rewritten arguments, an index entry or an
// inlining pays once per tool).
func BenchmarkCheck(b *testing.B) {
	var m map[string]any
	json.Unmarshal([]byte(`{"type":"object","$defs":{"addr":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city"]}},
		"properties":{"home":{"$ref":"#/$defs/addr"},"work":{"$ref":"#/$defs/addr"},"name":{"type":"string","description":"Full name"},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]}},"age":{"anyOf":[{"type":"integer","minimum":0},{"type":"null"}]}},"required":["name"]}`), &m)
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(m); err != nil {
			b.Fatal(err)
		}
	}
}
