package callinput

// The fuzz target for what a model writes as Call input. Its seeds (f.Add
// and testdata/fuzz/FuzzDecodeCallInput) run in every go test; .ci/run
// fuzzes it briefly.

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeCallInput feeds Call inputs (what a model writes) and schemas
// to Decode: it never panics, decodes a JSON object input to that
// object (unless it is langchaingo's {"__arg1": ...} wrapper), and accepts
// only what it can stand behind.
func FuzzDecodeCallInput(f *testing.F) {
	schemas := []string{
		`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`,
		`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`,
		`{"type":"object","properties":{}}`,
		`{"type":"object","properties":{"__arg1":{"type":"string"}}}`,
		`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"]}`,
	}
	inputs := []string{
		`{"city":"Paris"}`, `Paris`, `"Paris"`, "```json\n{\"city\":\"Paris\"}\n```", "`{\"a\":1}`",
		`{"__arg1":"Paris"}`, `{"__arg1":"{\"city\":\"Rome\"}"}`, `{"__arg1":{"city":"Oslo"}}`,
		`{"a":1,"b":2.5e300}`, `{"a":1}}`, `{"a":1}]`, `{"a":1} {"b":2}`, `{}`, ``, `   `, `null`, `[1]`,
		`{"a":12345678901234567890123}`, "```\n```", "``", `{"__arg1":"\"x\""}`,
	}
	for i, in := range inputs {
		f.Add(in, schemas[i%len(schemas)])
	}
	f.Fuzz(func(t *testing.T, input, schemaJSON string) {
		var schema map[string]any
		if json.Unmarshal([]byte(schemaJSON), &schema) != nil {
			schema = nil
		}
		args, err := Decode(input, schema)
		again, err2 := Decode(input, schema)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(args, again) {
			t.Fatalf("Decode(%q) is not deterministic: %v, %v and %v, %v", input, args, err, again, err2)
		}
		if err != nil {
			return
		}
		if args == nil {
			t.Fatalf("Decode(%q) = nil, nil", input)
		}
		if _, err := json.Marshal(args); err != nil {
			t.Fatalf("Decode(%q) = %v, which does not marshal: %v", input, args, err)
		}
		s := unfence(strings.TrimSpace(input))
		if strings.HasPrefix(s, "{") {
			if !json.Valid([]byte(s)) {
				t.Fatalf("Decode(%q) accepted invalid JSON: %v", input, args)
			}
			obj, err := Object(s)
			if err != nil {
				t.Fatalf("Decode(%q) = %v, but Object fails: %v", input, args, err)
			}
			if _, wrapped := obj[argWrapper]; !wrapped && !reflect.DeepEqual(obj, args) {
				t.Fatalf("Decode(%q) = %v, want the object itself %v", input, args, obj)
			}
		}
	})
}
