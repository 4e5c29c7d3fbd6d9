package schemapass

import (
	"reflect"
	"testing"
)

// TestDropAbsentNullsKeepsRequired: a null for a property that is required
// other than by its object's own "required" stays, as the doc says: by an
// allOf parent of the one object branch, by another allOf branch, by
// dependentRequired (draft-07: dependencies) when the property it depends
// on is present. Optional nulls beside them are still dropped.
func TestDropAbsentNullsKeepsRequired(t *testing.T) {
	for _, tc := range []struct {
		name, schema, args, want string
	}{
		{"required on the allOf parent", `{"type":"object","required":["a"],"allOf":[{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}]}`,
			`{"a":null,"b":null}`, `{"a":null}`},
		{"required in another allOf branch", `{"type":"object","allOf":[{"properties":{"a":{"type":"string"},"b":{"type":"string"}}},{"required":["a"]}]}`,
			`{"a":null,"b":null}`, `{"a":null}`},
		{"required in an allOf branch beside properties", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"allOf":[{"required":["a"]}]}`,
			`{"a":null,"b":null}`, `{"a":null}`},
		{"dependentRequired", `{"type":"object","properties":{"card":{"type":"string"},"cvv":{"type":"string"},"note":{"type":"string"}},"dependentRequired":{"card":["cvv"]}}`,
			`{"card":"4111","cvv":null,"note":null}`, `{"card":"4111","cvv":null}`},
		{"dependentRequired not triggered", `{"type":"object","properties":{"card":{"type":"string"},"cvv":{"type":"string"}},"dependentRequired":{"card":["cvv"]}}`,
			`{"cvv":null}`, `{}`},
		{"draft-07 dependencies", `{"type":"object","properties":{"card":{"type":"string"},"cvv":{"type":"string"}},"dependencies":{"card":["cvv"],"x":{"required":["y"]}}}`,
			`{"card":"4111","cvv":null}`, `{"card":"4111","cvv":null}`},
		{"nested allOf parent", `{"type":"object","properties":{"o":{"required":["z"],"allOf":[{"type":"object","properties":{"z":{"type":"string"},"w":{"type":"string"}}}]}}}`,
			`{"o":{"z":null,"w":null}}`, `{"o":{"z":null}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DropAbsentNulls(decode[map[string]any](t, tc.schema), decode[map[string]any](t, tc.args))
			if want := decode[map[string]any](t, tc.want); !reflect.DeepEqual(got, want) {
				t.Errorf("DropAbsentNulls(%s) = %v, want %s", tc.args, got, tc.want)
			}
		})
	}
}
