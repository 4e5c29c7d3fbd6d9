package schemapass

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDropAbsentNulls: a null for an optional property whose schema does
// not accept null is dropped; every other null stays.
func TestDropAbsentNulls(t *testing.T) {
	for _, tc := range []struct {
		name, schema, args, want string
	}{
		{"optional number", `{"type":"object","properties":{"path":{"type":"string"},"head":{"type":"number"},"tail":{"type":"number"}},"required":["path"]}`,
			`{"path":"a.txt","head":null,"tail":null}`, `{"path":"a.txt"}`},
		{"required stays", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
			`{"path":null}`, `{"path":null}`},
		{"type list with null stays", `{"type":"object","properties":{"n":{"type":["integer","null"]}}}`,
			`{"n":null}`, `{"n":null}`},
		{"type list without null", `{"type":"object","properties":{"n":{"type":["integer","string"]}}}`,
			`{"n":null}`, `{}`},
		{"type null stays", `{"type":"object","properties":{"n":{"type":"null"}}}`, `{"n":null}`, `{"n":null}`},
		{"anyOf with null stays", `{"type":"object","properties":{"n":{"anyOf":[{"type":"integer"},{"type":"null"}]}}}`,
			`{"n":null}`, `{"n":null}`},
		{"oneOf without null", `{"type":"object","properties":{"n":{"oneOf":[{"type":"integer"},{"type":"string"}]}}}`,
			`{"n":null}`, `{}`},
		{"allOf one refuses", `{"type":"object","properties":{"n":{"allOf":[{"type":"integer"},{"minimum":1}]}}}`,
			`{"n":null}`, `{}`},
		{"enum without null", `{"type":"object","properties":{"u":{"enum":["c","f"]}}}`, `{"u":null}`, `{}`},
		{"enum with null stays", `{"type":"object","properties":{"u":{"enum":["c",null]}}}`, `{"u":null}`, `{"u":null}`},
		{"const null stays", `{"type":"object","properties":{"u":{"const":null}}}`, `{"u":null}`, `{"u":null}`},
		{"untyped stays", `{"type":"object","properties":{"u":{"description":"anything"}}}`, `{"u":null}`, `{"u":null}`},
		{"true schema stays", `{"type":"object","properties":{"u":true}}`, `{"u":null}`, `{"u":null}`},
		{"nullable stays", `{"type":"object","properties":{"u":{"type":"string","nullable":true}}}`, `{"u":null}`, `{"u":null}`},
		{"undeclared stays", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"b":null}`, `{"b":null}`},
		{"no properties", `{"type":"object"}`, `{"b":null}`, `{"b":null}`},
		{"nested object", `{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x"]}}}`,
			`{"o":{"x":1,"y":null}}`, `{"o":{"x":1}}`},
		{"ref into defs", `{"type":"object","properties":{"o":{"$ref":"#/$defs/O"}},"$defs":{"O":{"type":"object","properties":{"y":{"$ref":"#/$defs/N"}}},"N":{"type":"integer"}}}`,
			`{"o":{"y":null}}`, `{"o":{}}`},
		{"ref to nullable", `{"type":"object","properties":{"y":{"$ref":"#/definitions/N"}},"definitions":{"N":{"type":["integer","null"]}}}`,
			`{"y":null}`, `{"y":null}`},
		{"unresolvable ref stays", `{"type":"object","properties":{"y":{"$ref":"https://example.com/s"}}}`, `{"y":null}`, `{"y":null}`},
		{"array items", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"z":{"type":"string"}}}}}}`,
			`{"l":[{"z":null},{"z":"k"}]}`, `{"l":[{},{"z":"k"}]}`},
		{"nullable object branch", `{"type":"object","properties":{"o":{"anyOf":[{"type":"object","properties":{"z":{"type":"string"}}},{"type":"null"}]}}}`,
			`{"o":{"z":null}}`, `{"o":{}}`},
		{"two object branches stay", `{"type":"object","properties":{"o":{"anyOf":[{"type":"object","properties":{"z":{"type":"string"}}},{"type":"object","properties":{"w":{"type":"string"}}}]}}}`,
			`{"o":{"z":null}}`, `{"o":{"z":null}}`},
		{"recursive ref", `{"type":"object","properties":{"n":{"$ref":"#"},"v":{"type":"integer"}}}`,
			`{"n":{"n":{"v":null}},"v":1}`, `{"n":{"n":{}},"v":1}`},
		{"self ref loop", `{"type":"object","properties":{"n":{"$ref":"#/$defs/A"}},"$defs":{"A":{"$ref":"#/$defs/A"}}}`,
			`{"n":null}`, `{"n":null}`},
		{"nil args", `{"type":"object","properties":{"a":{"type":"string"}}}`, `null`, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema, args := decode[map[string]any](t, tc.schema), decode[map[string]any](t, tc.args)
			before := decode[map[string]any](t, tc.args)
			got := DropAbsentNulls(schema, args)
			if want := decode[map[string]any](t, tc.want); !reflect.DeepEqual(got, want) {
				t.Errorf("DropAbsentNulls(%s) = %v, want %s", tc.args, got, tc.want)
			}
			if !reflect.DeepEqual(args, before) {
				t.Errorf("DropAbsentNulls modified its arguments: %v, was %s", args, tc.args)
			}
			if reflect.DeepEqual(got, args) && tc.want == tc.args && got != nil && reflect.ValueOf(got).Pointer() != reflect.ValueOf(args).Pointer() {
				t.Errorf("nothing dropped, but the arguments were copied")
			}
		})
	}
}

// decode decodes JSON text into a T.
func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
