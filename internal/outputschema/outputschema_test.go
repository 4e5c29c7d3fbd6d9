package outputschema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		name   string
		schema any
		why    string // "" when it resolves
	}{
		{"object", map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}, ""},
		{"raw JSON", json.RawMessage(`{"type":"object"}`), ""},
		{"draft-07", map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}, ""},
		{"not an object", []any{1}, "not a JSON object"},
		{"reference", map[string]any{"$defs": map[string]any{"n": map[string]any{"type": "integer"}}, "properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/n"}}}, ""},
		{"reference cycle", map[string]any{"$ref": "#"}, "at the root: the references form a cycle"},
		{"nested dynamic reference", map[string]any{"properties": map[string]any{"a": map[string]any{"$dynamicRef": "#x"}}}, "at /properties/a: $dynamicRef"},
		{"other draft", map[string]any{"$schema": "http://json-schema.org/draft-04/schema#"}, "unsupported $schema"},
		{"bad keyword", map[string]any{"type": 5}, `invalid value for "type"`},
		{"does not resolve", map[string]any{"type": "object", "pattern": "("}, "jsonschema.Schema: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resolved, why := Resolve(tt.schema)
			if tt.why == "" {
				if resolved == nil || why != "" {
					t.Fatalf("Resolve() = %v, %q; want a resolved schema", resolved, why)
				}
				return
			}
			if resolved != nil || !strings.HasPrefix(why, tt.why) {
				t.Errorf("Resolve() = %v, %q; want nil, %q", resolved, why, tt.why)
			}
		})
	}
}

// TestResolveValidates: a resolved schema validates content.
func TestResolveValidates(t *testing.T) {
	resolved, _ := Resolve(map[string]any{"type": "object", "properties": map[string]any{"sky": map[string]any{"type": "string"}}})
	if err := resolved.Validate(map[string]any{"sky": "blue"}); err != nil {
		t.Errorf("Validate(match) = %v", err)
	}
	err := resolved.Validate(map[string]any{"sky": 4})
	if err == nil {
		t.Fatal("Validate(mismatch) = nil")
	}
	if path, reason := Explain(err); path != "/properties/sky" || !strings.Contains(reason, "type") {
		t.Errorf("Explain(%v) = %q, %q; want /properties/sky and the validator's reason", err, path, reason)
	}
}

func TestExplain(t *testing.T) {
	tests := []struct {
		err          string
		path, reason string
	}{
		{"validating root: validating /properties/a: type: 1 has type \"integer\"", "/properties/a", `type: 1 has type "integer"`},
		{"validating root: required: missing x", "", "required: missing x"},
		{"something else", "", "something else"},
		{"validating nowhere", "", "validating nowhere"},
	}
	for _, tt := range tests {
		if path, reason := Explain(errors.New(tt.err)); path != tt.path || reason != tt.reason {
			t.Errorf("Explain(%q) = %q, %q; want %q, %q", tt.err, path, reason, tt.path, tt.reason)
		}
	}
	_, reason := Explain(errors.New("validating root: " + strings.Repeat("é", MaxReason)))
	if len(reason) > MaxReason+len("…") || !utf8.ValidString(reason) || !strings.HasSuffix(reason, "…") {
		t.Errorf("Explain(long) gives %d bytes (valid UTF-8: %v), want at most %d and an ellipsis", len(reason), utf8.ValidString(reason), MaxReason)
	}
}
